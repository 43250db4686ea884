#!/usr/bin/env bash
# One-call GPU verification on a lent H200 (see docs/gpu-runs.md): GPU-marked tests, every notebook,
# the isolation benchmark, real timeline traces and the API examples. Logs go to $OUT.
# usage (on the GPU host, after `source .gpu/setup.sh`): bash scripts/h200_check.sh [iket-stash] [tests] [notebooks] [bench] [data] [iket] | all
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TXLAB_CACHE_DIR=${TXLAB_CACHE_DIR:-/tmp/txcache}
what=" ${*:-all} "   # one or more of the words below
want() { [[ $what == *" all "* || $what == *" $1 "* ]]; }
step() { echo; echo "=== $* ==="; }
if [[ $what == *" iket-stash "* ]]; then
  # IKET's runtime (~100 MB as xz) travels in pieces, one per call, in .iket/ (see docs/gpu-runs.md)
  mkdir -p /tmp/iket-parts && cp .iket/* /tmp/iket-parts/ && ls -la /tmp/iket-parts
fi
if want tests; then
  step "GPU-marked tests"
  timeout 420 python3 -m pytest -q -p no:cacheprovider -m gpu ${TESTS:-tests/} --timeout 150 -rfEs 2>&1 | tee "$OUT/gpu-tests.log" | tail -45
fi
if want notebooks; then
  step "notebooks (nbval-lax, GPU cells run)"
  timeout 420 python3 -m pytest -q -p no:cacheprovider --nbval-lax ${NOTEBOOKS:-notebooks/} --timeout 300 2>&1 | tee "$OUT/notebooks.log" | tail -25
fi
if want bench; then
  step "isolation benchmark"
  timeout ${BENCH_TIMEOUT:-300} python3 benchmarks/isolation.py ${BENCH_ARGS:-} 2>&1 | tee "$OUT/isolation.log" | tail -30; cp benchmarks/results/isolation.json "$OUT/" 2>/dev/null
fi
if want data; then
  step "real timeline traces and API verification"
  timeout 120 python3 -m txlab.timeline record-examples --into-package --overwrite-recorded 2>&1 | tail -8
  timeout 200 python3 -m txlab.api verify --write 2>&1 | tail -16
  tar czf "$OUT/data.tgz" txlab/data
fi
if want iket; then
  step "IKET (run-iket, TVM's cutlass-4.6.0 profile)"
  if [[ ! -d /tmp/iket-site ]]; then
    ( cd /tmp/iket-parts && sha256sum -c SHA256SUMS ) && cat /tmp/iket-parts/part-* | xz -dc | tar -xf - -C /tmp
  fi
  export PYTHONPATH=/tmp/iket-site:/tmp/iket-site/nvidia_cutlass_dsl/dsl_packages:$PYTHONPATH PATH=/tmp/iket-site/bin:$PATH
  python3 -c 'from cuda.bindings import nvrtc; print("NVRTC loaded by cuda.bindings:", nvrtc.nvrtcVersion()[1:])'
  if ! python3 -c 'from cuda.bindings import nvrtc; import sys; sys.exit(nvrtc.nvrtcVersion()[1:] != (13, 2))'; then
    echo "cuda.bindings loads another NVRTC: preloading the 13.2 one"
    export LD_PRELOAD=/tmp/iket-site/nvidia/cu13/lib/libnvrtc.so.13
  fi
  timeout 400 python3 scripts/iket_h200.py "$OUT/iket" --record=txlab/data/api_verified_iket.json 2>&1 | tee "$OUT/iket.log" | tail -60
  unset LD_PRELOAD; cp txlab/data/api_verified_iket.json "$OUT/" 2>/dev/null
  rm -f "$OUT"/iket/*.html "$OUT"/iket/*.pftrace* "$OUT"/iket/txlab-perfetto.json  # $OUT returns at most 8 files
fi
