"""The process compute-sanitizer watches: ``python -m txlab.sanitize_runner job.json``.

Loads the kernel the notebook process exported (TVM's host code + the cubin, as a shared library;
or, without one, rebuilds the executable from the TVMScript text and the cubin), copies each
argument into its own exactly-sized device buffer (``tvm.runtime.empty``: one ``cudaMalloc`` per
buffer, so compute-sanitizer knows every buffer's bounds), launches once, synchronises and writes
``{"status": "ok"|"fault"|"error", ...}`` to the job's result file. Nothing else runs on the GPU.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = json.loads(Path(argv[0]).read_text())
    result = Path(job["result"])
    out: dict = {"status": "error"}
    t0 = time.perf_counter()
    try:
        from txlab.worker.boot import import_tvm

        tvm = import_tvm("library" in job)  # torch out: exact buffer bounds
        import ctypes

        import numpy as np
        from tvm.runtime import _ffi_api

        if "library" in job:
            exe = tvm.runtime.Executable(tvm.runtime.load_module(job["library"]))
        else:
            from tvm.script import from_source

            import txlab.compat  # noqa: F401
            from txlab import build

            lowered = build.lower(from_source(job["script"]), job["arch"], job["name"])
            exe = build.executable(lowered, Path(job["cubin"]).read_bytes())
        out["loaded"] = "library" if "library" in job else "script"
        from cuda.bindings import runtime as rt

        dev = tvm.cuda(0)
        args, outs = [], []
        for a in job["args"]:
            if a["kind"] == "scalar":
                args.append(a["value"])
                continue
            t = tvm.runtime.empty(tuple(a["shape"]), a["dtype"], dev)
            data = np.fromfile(a["path"], dtype=np.uint8)
            if a["nbytes"] and a.get("upload", True):
                _ffi_api.TVMTensorCopyFromBytes(t, ctypes.c_void_p(data.ctypes.data), a["nbytes"])
            args.append(t)
            outs.append((t, a))
        (err,) = rt.cudaDeviceSynchronize()[:1]
        out["launched_at_s"] = time.perf_counter() - t0
        try:
            exe(*args)
            (err,) = rt.cudaDeviceSynchronize()[:1]
            if err != rt.cudaError_t.cudaSuccess:
                raise RuntimeError(err.name)
        except Exception as exc:  # noqa: BLE001 - the sanitizer's report says why; record what failed
            out.update(status="fault", error=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        else:
            for t, a in outs:  # results back to the job's files (a caller may compare them)
                if a["nbytes"]:
                    buf = np.empty(a["nbytes"], dtype=np.uint8)
                    _ffi_api.TVMTensorCopyToBytes(t, ctypes.c_void_p(buf.ctypes.data), a["nbytes"])
                    buf.tofile(a["path"] + ".out")
            out["status"] = "ok"
    except Exception as exc:  # noqa: BLE001
        out.update(status="error", error=f"{type(exc).__name__}: {exc}"[:2000])
    out["seconds"] = time.perf_counter() - t0
    result.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
