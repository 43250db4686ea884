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

SRC = '''
@T.prim_func
def add_one(A: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    A[bx * 256 + tx] = A[bx * 256 + tx] + T.float32(1)
'''
def main():
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


if __name__ == "__main__":
    main()
