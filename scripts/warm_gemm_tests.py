"""Compile the kernels the GPU-marked Hopper GEMM tests build, in parallel worker processes, so that the
tests themselves (one process, one kernel after another) find them in the compile cache.

    python scripts/warm_gemm_tests.py [tests/test_hopper_gemm.py tests/test_hopper_gemm_fp8.py] [--jobs 15]

It collects the tests with pytest (``-m gpu``), reads each parametrised test's ``shape`` and ``config``
and builds what the test builds (``num_sms`` of this machine's GPU 0, 132 without one). Tests it does not
know are left to compile themselves.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _sms() -> int:
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(0).multi_processor_count
    except ImportError:
        pass
    return 132


def jobs_from(files) -> list:
    """``(kind, shape, config)`` of every collected GPU test this script knows how to build."""
    import pytest

    items = []

    class Grab:
        def pytest_collection_finish(self, session):
            items.extend(session.items)

    pytest.main(
        ["-q", "--collect-only", "-p", "no:nbval", "-p", "no:cacheprovider", "-m", "gpu", *files], plugins=[Grab()]
    )
    jobs = []
    for it in items:
        name = it.originalname if hasattr(it, "originalname") else it.name
        params = getattr(getattr(it, "callspec", None), "params", {})
        shape, config = params.get("shape"), params.get("config")
        if name in ("test_gemm_on_gpu", "test_split_k_on_gpu_is_right_and_bitwise_reproducible"):
            if "_tma" in config and shape[1] % 8:
                continue
            jobs.append(("bf16", tuple(shape), config))
        elif name == "test_fp8_gemm_on_gpu":
            jobs.append(("e4m3", tuple(shape), config))
        elif name == "test_simple_kernel_on_gpu":
            jobs.append(("simple", (512, 384, 320), None))
    return list(dict.fromkeys(jobs))


def _build(job, sms):
    import txlab
    from txlab.examples import hopper_gemm as hg

    kind, shape, config = job
    t = time.perf_counter()
    if kind == "bf16":
        kernel = hg.gemm_kernel(*shape, hg.parse_config(config, num_sms=sms))
    elif kind == "e4m3":
        from txlab.examples import hopper_gemm_fp8 as f8

        kernel = f8.kernel(*shape, config)
    else:
        kernel = hg.simple_kernel(*shape, bn=128)
    txlab.compile(kernel, arch="sm_90a")
    return job, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", default=["tests/test_hopper_gemm.py", "tests/test_hopper_gemm_fp8.py"])
    ap.add_argument("--jobs", type=int, default=min(15, os.cpu_count() or 1))
    args = ap.parse_args(argv)
    t0 = time.time()
    jobs = jobs_from(args.files)
    sms = _sms()
    failed = 0
    with cf.ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn")) as ex:
        for fut in cf.as_completed([ex.submit(_build, j, sms) for j in jobs]):
            try:
                fut.result()
            except Exception as exc:  # noqa: BLE001 - the test itself reports it
                failed += 1
                print(f"warm: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    print(
        f"warmed {len(jobs) - failed} of {len(jobs)} test kernels in {time.time() - t0:.1f} s ({args.jobs} workers)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
