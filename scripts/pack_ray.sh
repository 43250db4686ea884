#!/usr/bin/env bash
# Packs Ray (slimmed: core only, ~28 MB as xz) and Optuna with the dependencies the H200 image lacks
# into .gpu-ray/ (ignored by git), for scripts/tune_h200.py on the GPU host, whose image has neither.
# Ray's wheel (79 MB) alone is over a call's 64 MiB carry; without its Java jars, dashboard front end
# and libraries txlab does not use (rllib, data, serve, train, tune, llm) it packs to ~28 MB.
#   here:          bash scripts/pack_ray.sh                      (needs pip and network)
#   on the host:   carry .gpu-ray, then  source scripts/pack_ray.sh --install   (PYTHONPATH gets /tmp/ray-site)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$here/.gpu-ray"
if [[ "${1:-}" == "--install" ]]; then
  if [[ ! -f /tmp/ray-site/.ready ]]; then
    mkdir -p /tmp/ray-site && tar -xJf "$dest/ray-site.tar.xz" -C /tmp/ray-site &&
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/ray-site "$dest"/*.whl &&
      touch /tmp/ray-site/.ready
  fi
  export PYTHONPATH="/tmp/ray-site${PYTHONPATH:+:$PYTHONPATH}"
  python3 -c 'import ray, optuna; print("ray", ray.__version__, "optuna", optuna.__version__)'
  return 0 2>/dev/null || exit 0
fi
mkdir -p "$dest" && rm -f "$dest"/*.whl "$dest"/ray-site.tar.xz
dl() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$1" "${@:2}"; }
tmp=$(mktemp -d)
dl "$tmp" ray==2.60.0 || exit 1
# what the image lacks (KINDS.md's list): Ray needs jsonschema; Optuna alembic, colorlog, sqlalchemy
dl "$dest" optuna==5.0.0 alembic colorlog sqlalchemy greenlet mako jsonschema jsonschema-specifications \
  referencing rpds-py || exit 1
( cd "$tmp" && unzip -q ray-*.whl && rm ray-*.whl &&
  rm -rf ray/jars ray/rllib ray/data ray/serve ray/llm ray/train ray/tune ray/dashboard/client &&
  find ray -name '*.map' -delete && tar cf - ray ray-*.dist-info | xz -T0 -6 > "$dest/ray-site.tar.xz" )
rm -rf "$tmp"
du -sh "$dest"/* | sort -h
du -sh "$dest"
