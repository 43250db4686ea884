"""Diagnose the isolated worker on a GPU host: where does a process-mode run hang? Prints the
parent's stacks if it is still busy after 45 s, the worker's status, and each step's timing."""

import faulthandler
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402

import txlab  # noqa: E402
from txlab import worker  # noqa: E402
from txlab.magic import run_cell  # noqa: E402

SRC = """
@T.prim_func
def add_one(A: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    A[bx * 256 + tx] = A[bx * 256 + tx] + T.float32(1)
"""


def boot_phases():
    """What a fresh worker process pays before its first kernel: Python + TVM import, and CUDA
    context creation; and whether importing TVM initialises CUDA (which rules out forking)."""
    import subprocess

    code = (
        "import time; t=time.perf_counter(); import numpy; t1=time.perf_counter(); import tvm; "
        "t2=time.perf_counter(); from cuda.bindings import driver as d; e,n=d.cuDeviceGetCount(); "
        "print('numpy %.2f s, tvm %.2f s, CUDA initialised by the import: %s' % (t1-t, t2-t1, e.name)); "
        "t3=time.perf_counter(); from cuda.bindings import runtime as rt; rt.cudaSetDevice(0); rt.cudaFree(0); "
        "print('context %.2f s' % (time.perf_counter()-t3))"
    )
    for _ in range(2):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        print(
            r.stdout.strip().replace("\n", "; "),
            f"| process total {time.perf_counter() - t:.2f} s",
            r.stderr.strip()[-200:],
            flush=True,
        )


def main():
    boot_phases()
    faulthandler.dump_traceback_later(45, exit=True)
    (good,) = run_cell(SRC, {}).values()
    a = np.zeros(1024, np.float32)
    mode = sys.argv[1] if len(sys.argv) > 1 else "inline-first"
    if mode == "inline-first":
        txlab.config.isolation = "inline"
        good(a)
        print("inline ok", a[:2], flush=True)
    txlab.config.isolation = "process"
    t = time.perf_counter()
    try:
        good(a)
        print(f"process ok in {time.perf_counter() - t:.2f} s", a[:2], worker.status(), flush=True)
    except Exception as exc:  # noqa: BLE001
        print("process failed:", type(exc).__name__, exc, worker.status(), flush=True)
    t = time.perf_counter()
    good(a)
    print(f"second process run {time.perf_counter() - t:.3f} s", flush=True)
    print("worker boot:", worker.status()["boot"], flush=True)


if __name__ == "__main__":
    main()
