"""The build layer: TIRx lowering, TVM's CUDA codegen and the runtime executable.

    lowered = build.lower(mod, "sm_90a", "my_kernel")    # TVM's tirx pipeline, once per kernel
    cuda = build.codegen_source(lowered, "my_kernel")   # TVM's CUDA C (nvcc compiles it)
    exe = build.executable(lowered, cubin)              # TVM's host code + txlab's cubin

txlab.compiler (the model, :class:`txlab.Compiled`) and txlab.worker use this module; it imports
nothing above the engine layer. ``lower`` keeps the host module, so the executable and a library
exported for the worker are built from the same lowering as the CUDA source.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from txlab import ir
from txlab.errors import CompileError

#: TVM's diagnostic location, ``--> file:line:col`` (the user's source line in an error)
TVM_LOCATION_RE = re.compile(r"--> (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)")


@dataclass
class Lowered:
    """A lowered kernel: TVM's finalized host module, its device modules (target -> IRModule), the
    host target, and each kernel's launch shape read from the host code before finalization."""

    host_mod: Any
    device_mods: dict
    target_host: Any
    launch: dict
    #: the host module before finalization (its launch calls and TMA descriptor encodes are still
    #: calls: what txlab.emulator binds arguments from)
    host_ir: Any = None


# ---------------------------------------------------------------------------------------------
# The CUDA compile callback. TVM calls ``tvm_callback_cuda_compile(code)`` when it builds a CUDA
# module on a machine with a GPU; txlab answers with the cubin it built (or has cached) so the
# executable runs exactly the code shown in the notebook.
_callback_state = threading.local()
_callback_installed = False


def _install_callback():
    global _callback_installed
    if _callback_installed:
        return
    import tvm_ffi
    from tvm.support import nvcc as tvm_nvcc

    upstream = tvm_nvcc.tvm_callback_cuda_compile

    def txlab_cuda_compile(code, *rest):
        hook = getattr(_callback_state, "hook", None)
        if hook is None:
            return upstream(code, *rest)
        return hook(code)

    tvm_ffi.register_global_func("tvm_callback_cuda_compile", txlab_cuda_compile, override=True)
    _callback_installed = True



def cuda_target(arch: str):
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": arch})


def params_of(mod) -> list[dict]:
    """The entry functions' parameters: buffers (name, shape, dtype) and scalars (name, dtype)."""
    import tvm

    out = []
    for gname, func in sorted(((gv.name_hint, f) for gv, f in mod.functions_items()), key=lambda x: x[0]):
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        for var in func.params:
            if type(var.ty).__name__ == "BufferType":
                shape = [int(d.value) if isinstance(getattr(d, "value", None), int) else str(d)
                         for d in var.shape]
                out.append({"function": gname, "name": var.name, "kind": "buffer", "shape": shape,
                            "dtype": str(var.dtype)})
            else:
                out.append({"function": gname, "name": var.name, "kind": "scalar", "dtype": str(var.ty)})
    return out


def launch_info(host_mod) -> dict:
    """Grid, block, cluster and dynamic shared memory of each kernel launch in the host code."""
    info: dict[str, dict] = {}
    for call in ir.calls(host_mod, "tirx.call_ffi_kernel"):
        params = [str(p) for p in call.attrs.launch_params]
        args = list(call.args)
        kname = str(args[0].value) if hasattr(args[0], "value") else str(args[0])
        values = [ir.expr_value(a) for a in args[len(args) - len(params):]]
        dims = dict(zip(params, values))
        grid = tuple(dims.get(f"blockIdx.{a}", 1) for a in "xyz")
        block = tuple(dims.get(f"threadIdx.{a}", 1) for a in "xyz")
        cluster = tuple(dims.get(f"clusterCtaIdx.{a}", 1) for a in "xyz")
        dyn = dims.get("tirx.use_dyn_shared_memory", 0)
        info[kname] = {
            "grid": grid, "block": block,
            "cluster": cluster if any(c != 1 for c in cluster) else None,
            "dynamic_smem_bytes": dyn,
            "threads_per_block": ir.prod(block),
        }
    return info


def error_from_tvm(stage: str, exc: BaseException, mod, kernel_name: str) -> CompileError:
    """A short CompileError from a TVM exception; points at the user's line when TVM names one
    (a ``--> file:line`` diagnostic, or the op call quoted in a dispatch-failure table)."""
    text = str(exc)
    lines = [l.rstrip() for l in text.strip().splitlines() if l.strip()]
    core = [l for l in lines if not re.match(r"^\s*(\d+:|File \"|at |Stack trace|\[bt\]|[|+^])", l)]
    message = core[0] if core else (lines[0] if lines else type(exc).__name__)
    message = re.sub(r"^(tvm\.error\.)?\w*Error: ", "", message).strip()
    # dispatch tables: "| fallback (prio=0) | rejected: <why> |" -- the last variant's reason
    rejected = re.findall(r"^\|\s*(\w+) \(prio=\d+\)\s*\|\s*rejected: (.*?)\s*\|\s*$", text, re.M)
    if rejected:
        variant, why = rejected[-1]
        message += f" (no variant applies; last tried {variant}: {why})"
    lineno, source_line, filename = user_location(text, mod)
    return CompileError(stage, message, lineno=lineno, source_line=source_line, filename=filename,
                        detail=text, kernel=kernel_name)


def user_location(text: str, mod):
    """(lineno, line, filename) of the user's source named in an error, if any."""
    import linecache

    m = TVM_LOCATION_RE.search(text)
    if m:
        fn, ln = m.group("file"), int(m.group("line"))
        return ln, linecache.getline(fn, ln) or None, fn
    # "opcall:" blocks quote the failing op, e.g. "T.cta.copy(B[0:64], A[0:64])"
    quoted = re.findall(r"^\|\s*\|\s*(?:T|Tx|tile)\.(?:\w+\.)*(\w+\(.*\))\s*\|\s*$", text, re.M)
    src = user_source(mod) if mod is not None else None
    if quoted and src:
        fn, _, user_lines = src
        want = re.sub(r"\s+", "", quoted[0])
        for i, line in enumerate(user_lines, 1):
            if want in re.sub(r"\s+", "", line):
                return i, line.rstrip("\n"), fn
    return None, None, None


def user_source(mod) -> tuple[str, int, list[str]] | None:
    """(filename, first line, lines) of the user's kernel source, from the IR's spans."""
    import linecache

    for _, func in mod.functions_items():
        span = getattr(getattr(func, "body", None), "span", None)
        if span is None or span.source_name is None:
            continue
        fn = span.source_name.name
        lines = linecache.getlines(fn)
        if lines:
            return fn, 1, lines
    return None


def point_at_user_line(exc: CompileError, mod) -> None:
    """For a toolchain error about an instruction (e.g. 'tcgen05.alloc'), find the user's line that
    emits it, keeping the generated-code location in ``detail``."""
    m = re.search(r"[Ii]nstruction '([^']+)'", exc.message) or re.search(r"'([a-z][\w.:]+)'", exc.message)
    src = user_source(mod)
    if not m or src is None:
        return
    needle = m.group(1).split(".")[0] + "." + m.group(1).split(".")[1] if "." in m.group(1) else m.group(1)
    fn, _, lines = src
    for i, line in enumerate(lines, 1):
        if needle in line:
            generated = f"{exc.filename} line {exc.lineno}: {exc.source_line}" if exc.lineno else ""
            exc.detail = (exc.detail or "") + (f"\n(generated code: {generated})" if generated else "")
            exc.lineno, exc.source_line, exc.filename = i, line.rstrip("\n"), fn
            return


def lower(mod, arch: str, entry: str) -> Lowered:
    """TVM's own tirx build steps (tvm.tirx.build), run one by one so each can be timed and
    its failure attributed to a stage. The result feeds both CUDA codegen and the executable,
    so a kernel is lowered once."""
    import tvm
    from tvm.tirx.build import split_host_device_mods

    target = cuda_target(arch)
    target_host = tvm.target.Target("llvm" if tvm.runtime.enabled("llvm") else "c")
    try:
        bound = tvm.tirx.transform.BindTarget(target.with_host(target_host))(mod)
        pipeline, finalize_host, finalize_device = tvm.tirx.get_tir_pipeline("tirx")
        with target:
            lowered = pipeline(bound)
        host_mod, device_mods = split_host_device_mods(lowered)
        launch = launch_info(host_mod)  # read before finalization lowers the launch calls
        host_ir = host_mod
        host_mod = finalize_host()(host_mod)
        device_mods = {t: finalize_device()(m) for t, m in device_mods.items()}
    except CompileError:
        raise
    except Exception as exc:  # TVM raises many types; all mean "lowering failed"
        raise error_from_tvm("lower", exc, mod, entry) from None
    return Lowered(host_mod, device_mods, target_host, launch, host_ir)


def codegen_source(lowered: Lowered, entry: str) -> str:
    """TVM's CUDA C for the lowered device modules (the text nvcc compiles)."""
    from tvm.tirx.build import codegen_build

    sources = []
    _install_callback()
    _callback_state.hook = lambda code: (sources.append(code), b"\x7fELF")[1]
    try:
        for target, dmod in lowered.device_mods.items():
            if len(dmod.functions) == 0:
                continue
            with target:
                rt = codegen_build(dmod, target)
            if not sources:
                sources.append(rt.inspect_source())
    except CompileError:
        raise
    except Exception as exc:
        raise error_from_tvm("codegen", exc, None, entry) from None
    finally:
        _callback_state.hook = None
    if not sources:
        raise CompileError("codegen", "the kernel has no device code: add T.device_entry() and "
                           "launch dimensions (T.cta_id / T.thread_id)", kernel=entry)
    return sources[0]


def executable(lowered: Lowered, cubin: bytes):
    """TVM executable whose CUDA module is ``cubin`` (txlab's build) and whose host code is TVM's,
    from an already lowered kernel (no parsing, no lowering)."""
    import tvm
    from tvm.tirx.build import tir_to_runtime

    _install_callback()
    _callback_state.hook = lambda code: bytearray(cubin)
    try:
        lib = tir_to_runtime(lowered.host_mod, dict(lowered.device_mods), lowered.target_host)
    finally:
        _callback_state.hook = None
    return tvm.runtime.Executable(lib)
