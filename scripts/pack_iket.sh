#!/usr/bin/env bash
# Packs NVIDIA's IKET runtime (the versions TVM 0.27's "cutlass-4.6.0" profile pins) for a GPU host
# that takes at most 64 MiB per upload and cannot reach PyPI: installs the wheels for CPython 3.12
# into a folder, drops what IKET never loads, compresses it and splits it into pieces that travel
# one per call (scripts/h200_check.sh iket-stash collects them, `iket` unpacks and runs).
#   usage: bash scripts/pack_iket.sh [PIECE_BYTES]     (writes .iket-all/part-* + SHA256SUMS)
# Dropped: the CuTe DSL's MLIR compiler extension (_cutlass_ir.cu13*.so, 180 MB: CuTe kernels'
# compiler, not used by run-iket's capture or post-processing) and the aarch64 stub libraries.
# Everything TVM's profile validates by hash (libiket_cubin_info, libsmodel_injection,
# libcute_dsl_runtime, nvdisasm, libnvrtc) is kept unchanged.
set -euo pipefail
piece=${1:-36000000}
root=$(git rev-parse --show-toplevel)
work=${TMPDIR:-/tmp}/txlab-iket
mkdir -p "$work/wheels"
grep -qxF "/.iket-all/" "$root/.git/info/exclude" || echo "/.iket-all/" >> "$root/.git/info/exclude"
grep -qxF "/.iket/" "$root/.git/info/exclude" || echo "/.iket/" >> "$root/.git/info/exclude"
plat="--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64"
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plat -d "$work/wheels" \
  nvidia-cutlass-dsl==4.6.0 nvidia-cutlass-dsl-libs-base==4.6.0 nvidia-cutlass-dsl-libs-core==4.6.0 \
  nvidia-cutlass-dsl-libs-cu13==4.6.0 nvidia-cuda-nvrtc==13.2.78 nvidia-cuda-nvdisasm==13.3.73
rm -rf "$work/iket-site"
python -m pip install -q --no-deps --no-compile --target "$work/iket-site" --python-version 3.12 --implementation cp \
  $plat --only-binary=:all: "$work"/wheels/*.whl
rm -f "$work"/iket-site/nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/_mlir_libs/_cutlass_ir.cu13*.so
rm -rf "$work"/iket-site/nvidia_cutlass_dsl/cu13/lib/stubs/aarch64*
sed -i '1s|.*|#!/usr/bin/env python3|' "$work/iket-site/bin/run-iket"
tar -cf - -C "$work" iket-site | xz -T2 -9 > "$work/iket-site.tar.xz"
rm -rf "$root/.iket-all"; mkdir -p "$root/.iket-all"
split -b "$piece" -d -a 1 "$work/iket-site.tar.xz" "$root/.iket-all/part-"
( cd "$root/.iket-all" && sha256sum part-* > SHA256SUMS )
ls -la "$root/.iket-all"
