"""Importing TVM in a process that only runs kernels (the worker, the sanitizer's runner): its
runtime library alone when asked, torch kept out."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def import_tvm(runtime_only: bool, *, allow_torch: bool = False):
    """``import tvm`` for running exported kernels. ``runtime_only``: TVM's runtime library without
    the compiler (``TVM_USE_RUNTIME_LIB``), with the CUDA module loader the runtime-only build skips
    loaded explicitly. Unless ``allow_torch``, torch stays out: tvm_ffi imports it eagerly when it is
    installed (~3 s on the H200 host), and its caching allocator would hide out-of-bounds accesses."""
    if not allow_torch:
        sys.modules.setdefault("torch", None)
    if runtime_only:
        os.environ["TVM_USE_RUNTIME_LIB"] = "1"  # read by tvm.base at import
    import tvm

    if tvm.base._RUNTIME_ONLY:
        from tvm_ffi.libinfo import load_lib_ctypes

        runtime_dir = Path(tvm.base._LOADED_LIBS["tvm_runtime"]._name).resolve().parent
        tvm.base._LOADED_LIBS["tvm_runtime_cuda"] = load_lib_ctypes(
            "tvm", "tvm_runtime_cuda", "RTLD_LOCAL", extra_lib_paths=[runtime_dir]
        )
    return tvm
