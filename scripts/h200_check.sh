#!/usr/bin/env bash
# One-call GPU verification on a lent H200 (see docs/gpu-runs.md): GPU-marked tests, every notebook,
# the isolation benchmark, real timeline traces and the API examples. Logs go to $OUT.
# usage (on the GPU host, after `source .gpu/setup.sh`): bash scripts/h200_check.sh [tests|notebooks|bench|data|all]
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TXLAB_CACHE_DIR=${TXLAB_CACHE_DIR:-/tmp/txcache}
what=${1:-all}
step() { echo; echo "=== $* ==="; }
if [[ $what == all || $what == tests ]]; then
  step "GPU-marked tests"
  timeout 420 python3 -m pytest -q -p no:cacheprovider -m gpu ${TESTS:-tests/} --timeout 150 -rfEs 2>&1 | tee "$OUT/gpu-tests.log" | tail -45
fi
if [[ $what == all || $what == notebooks ]]; then
  step "notebooks (nbval-lax, GPU cells run)"
  timeout 420 python3 -m pytest -q -p no:cacheprovider --nbval-lax ${NOTEBOOKS:-notebooks/} --timeout 300 2>&1 | tee "$OUT/notebooks.log" | tail -25
fi
if [[ $what == all || $what == bench ]]; then
  step "isolation benchmark"
  timeout 240 python3 benchmarks/isolation.py 2>&1 | tee "$OUT/isolation.log" | tail -20
fi
if [[ $what == all || $what == data ]]; then
  step "real timeline traces and API verification"
  timeout 120 python3 -m txlab.timeline record-examples 2>&1 | tail -8
  timeout 200 python3 -m txlab.api verify --write 2>&1 | tail -16
  tar czf "$OUT/data.tgz" txlab/data
fi
