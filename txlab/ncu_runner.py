"""The process Nsight Compute launches: ``python -m txlab.ncu_runner <job.pkl>``.

It is the isolated worker (``txlab.worker.child_main``: TVM runtime only, the kernel's exported
library, arguments from shared memory, typed fault replies) fed its requests from the job file
instead of a pipe; every message it sends (ready, heartbeats, the reply) is appended to the
job's message file as it happens, so the parent learns the runner's pid and the outcome even if
the process is killed or exits after a sticky CUDA error.
"""

from __future__ import annotations

import pickle
import sys


class _FileConn:
    """The two ends of the worker's pipe: ``recv`` yields the job's requests then ``exit``;
    ``send`` appends each message to a file (pickled, flushed)."""

    def __init__(self, requests, out_path):
        self._requests = list(requests)
        self._out = open(out_path, "ab", buffering=0)  # noqa: SIM115 - lives as long as the process

    def recv(self):
        return self._requests.pop(0) if self._requests else ("exit", {})

    def send(self, msg):
        self._out.write(pickle.dumps(msg))

    def close(self):
        self._out.close()


def read_messages(path) -> list:
    """The messages a runner wrote (an incomplete last one, from a killed runner, is dropped)."""
    out = []
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    out.append(pickle.load(f))
                except EOFError:
                    break
                except Exception:  # noqa: BLE001 - truncated write of a killed process
                    break
    except FileNotFoundError:
        pass
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], "rb") as f:
        job = pickle.load(f)
    # The parent owns (and unlinks) the argument segments. This process is not a multiprocessing
    # child, so it has a resource tracker of its own, which would unlink "leaked" segments at
    # exit: attach without registering them.
    from multiprocessing import resource_tracker

    resource_tracker.register = lambda *a, **k: None
    from txlab.worker import child_main

    conn = _FileConn([("run", job["request"])], job["messages"])
    child_main(conn, job.get("tvm_mode", "runtime"))
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
