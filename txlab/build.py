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
    #: what TVM warned while lowering, at the user's line where a tile primitive's dispatch warned
    #: ("line 28: Tx.cta.copy: copy/fallback (scalar single-thread) picked ...")
    warnings: tuple = ()


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


# ---------------------------------------------------------------------------------------------
# Tile-primitive dispatch. TVM replaces each tile primitive (Tx.cta.copy, Tx.gemm, ...) by the body
# its chosen variant returns (``tvm.tirx.operator.tile_primitive.dispatcher.run_dispatch``, looked
# up on every dispatch); that body's spans name TVM's implementation only. txlab wraps the
# function: on success the body gets the primitive's own span in front of its statements' spans
# (txlab.ir.spans.with_call_site: only spans change, the code is the same), so every reader of
# spans finds the user's line; on failure it keeps what was tried, for a CompileError at the
# primitive's line (error_from_tvm).
_dispatch = threading.local()  # .failure: the last dispatch failure on this thread
_dispatch_installed = False


@dataclass
class DispatchFailure:
    """A tile primitive no variant could lower: the op, where the user called it, every variant
    tried with its outcome (``raised`` / ``declined``) and reason, the raising variant's cause."""

    op: str  # e.g. "tirx.tile.sum"
    scope: str  # e.g. "cta"
    frame: tuple | None  # (user file, line) of the call
    variants: list  # [{"variant", "priority", "outcome", "reason"}], in dispatch order
    cause: str | None = None  # the raising variant's innermost message

    @property
    def spelling(self) -> str:
        return _tile_spelling(self.op, self.scope)


def _tile_spelling(op: str, scope: str) -> str:
    """How the user wrote a tile primitive: ``tirx.tile.copy`` at scope ``cta`` is ``Tx.cta.copy``."""
    short = op.rsplit(".", 1)[-1]
    scope = {"warpgroup": "wg"}.get(scope, scope)
    return f"Tx.{scope}.{short}" if scope else f"Tx.{short}"


_ROW = re.compile(r"^\|\s*(\w+) \(prio=(-?\d+)\)\s*\|\s*(.*?)\s*\|?\s*$")


def _failure_of(op_call, sctx, exc) -> DispatchFailure:
    rows = []
    for line in str(exc).splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        summary = m.group(3)
        if summary.startswith("exception"):
            outcome, reason = "raised", summary.split("—", 1)[-1].strip()
        else:
            outcome, reason = "declined", re.sub(r"^(declined|rejected:)\s*—?\s*", "", summary)
        rows.append(
            {
                "variant": m.group(1),
                "priority": int(m.group(2)),
                "outcome": outcome,
                "reason": reason.replace("; rejected: ", "; "),
            }
        )
    cause = _innermost_message(exc.__cause__) if exc.__cause__ is not None else None
    raised = [r for r in rows if r["outcome"] == "raised"]
    if cause and raised:
        raised[-1]["reason"] = cause
    return DispatchFailure(
        op=str(getattr(op_call.op, "name", op_call.op)),
        scope=str(getattr(sctx, "scope_kind", "") or ""),
        frame=ir.user_frame(op_call.span),
        variants=rows,
        cause=cause,
    )


_BOILERPLATE = ("Program is not well-formed", "During handling", "Traceback")


def _innermost_message(exc) -> str:
    """The message that says what went wrong, from an exception chain whose outer layers are
    TVM's generic wrappers ("Program is not well-formed ..."): the innermost specific line."""
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    best = None
    for e in chain:
        for line in str(e).splitlines():
            line = re.sub(r"^(Traceback: |error: )", "", line.strip())
            line = re.sub(r"^(tvm\.error\.)?\w*(Error|Exception): ", "", line)
            line = re.sub(r"^(tvm\.error\.)?\w*(Error|Exception): ", "", line)
            line = re.sub(r" at <root>\S*", "", line)
            if line and not line.startswith(_BOILERPLATE) and not line.startswith(("File ", "^", "-->")):
                best = line  # later (inner) exceptions win
                break
    return best or (str(chain[0]).splitlines() or [type(chain[0]).__name__])[0]


def _install_dispatch_hook():
    global _dispatch_installed
    if _dispatch_installed:
        return
    _dispatch_installed = True
    try:
        from tvm.tirx.operator.tile_primitive import dispatcher
    except ImportError:  # a TVM without tile primitives: nothing to wrap
        return
    upstream = dispatcher.run_dispatch
    if getattr(upstream, "__txlab_wrapped__", None) is not None:
        return

    def run_dispatch(op_call, sctx):
        import warnings

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res = upstream(op_call, sctx)
            _note_dispatch_warnings(op_call, sctx, caught)
        except Exception as exc:
            try:
                _dispatch.failure = _failure_of(op_call, sctx, exc)
            except Exception:  # noqa: BLE001 - the record is an extra; TVM's error stands
                _dispatch.failure = None
            raise
        if res is None:
            return res
        try:
            return res.with_body(ir.with_call_site(res.body, op_call.span))
        except Exception:  # noqa: BLE001 - spans are for the line map; never fail a build for them
            return res

    run_dispatch.__txlab_wrapped__ = upstream
    dispatcher.run_dispatch = run_dispatch


def _note_dispatch_warnings(op_call, sctx, caught) -> None:
    """Keep what a tile primitive's dispatch warned (TVM's "copy/fallback (scalar single-thread) picked ...": a
    slow variant chosen) with the primitive's spelling and the user's line, for ``Compiled.warnings``; printed
    raw to stderr it named neither, and a cache hit lost it."""
    if not caught:
        return
    frame = ir.user_frame(op_call.span)
    spelling = _tile_spelling(str(getattr(op_call.op, "name", op_call.op)), str(getattr(sctx, "scope_kind", "") or ""))
    notes = getattr(_dispatch, "warnings", None)
    if notes is None:
        notes = _dispatch.warnings = []
    for w in caught:
        where = f"line {frame[1]}: " if frame else ""
        text = f"{where}{spelling}: {str(w.message).strip()}"
        if text not in notes:
            notes.append(text)


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
                shape = [int(d.value) if isinstance(getattr(d, "value", None), int) else str(d) for d in var.shape]
                out.append(
                    {"function": gname, "name": var.name, "kind": "buffer", "shape": shape, "dtype": str(var.dtype)}
                )
            else:
                out.append({"function": gname, "name": var.name, "kind": "scalar", "dtype": str(var.ty)})
    return out


#: launch parameters that are flags, not operands of the launch (TVM's ``runtime::launch_param``): a kernel whose
#: ``tirx.kernel_launch_params`` attribute names them launches cooperatively (what ``Tx.cuda.grid_sync`` needs) or
#: with programmatic dependent launch (TVM's spelling of "programmatic" kept)
LAUNCH_FLAGS = ("tirx.use_cooperative_launch", "tirx.use_programtic_dependent_launch")
#: a grid barrier in a launch that is not cooperative: what a GPU does there, and the declaration that makes TVM
#: launch it cooperatively (the compile warning's and the emulator's ``grid_sync_not_cooperative`` finding's words)
NOT_COOPERATIVE_FAULT = "a GPU faults at the barrier (H100: cudaErrorLaunchFailure, the CUDA context unusable after it)"
COOPERATIVE_DECLARATION = 'Tx.func_attr({"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]})'


def launch_info(host_mod) -> dict:
    """Grid, block, cluster, dynamic shared memory and launch flags (``cooperative``, ``programmatic_dependent``) of
    each kernel launch in the host code."""
    info: dict[str, dict] = {}
    for call in ir.calls(host_mod, "tirx.call_ffi_kernel"):
        tags = [str(p) for p in call.attrs.launch_params]
        params = [p for p in tags if p not in LAUNCH_FLAGS]  # flags carry no operand of the call
        args = list(call.args)
        kname = str(args[0].value) if hasattr(args[0], "value") else str(args[0])
        values = [ir.expr_value(a) for a in args[len(args) - len(params) :]]
        dims = dict(zip(params, values))
        grid = tuple(dims.get(f"blockIdx.{a}", 1) for a in "xyz")
        block = tuple(dims.get(f"threadIdx.{a}", 1) for a in "xyz")
        cluster = tuple(dims.get(f"clusterCtaIdx.{a}", 1) for a in "xyz")
        dyn = dims.get("tirx.use_dyn_shared_memory", 0)
        info[kname] = {
            "grid": grid,
            "block": block,
            "cluster": cluster if any(c != 1 for c in cluster) else None,
            "dynamic_smem_bytes": dyn,
            "threads_per_block": ir.prod(block),
            "cooperative": LAUNCH_FLAGS[0] in tags,
            "programmatic_dependent": LAUNCH_FLAGS[1] in tags,
        }
    return info


def error_from_tvm(stage: str, exc: BaseException, mod, kernel_name: str) -> CompileError:
    """A short CompileError from a TVM exception; points at the user's line when TVM names one
    (a ``--> file:line`` diagnostic in the user's file, or the op call quoted in a dispatch-failure
    table). A tile-dispatch failure is reported at the primitive's line, naming every variant tried."""
    text = str(exc)
    failure = getattr(_dispatch, "failure", None)
    _dispatch.failure = None
    if failure is not None and f"dispatch failed: op={failure.op}" in text:
        return _dispatch_error(stage, failure, text, mod, kernel_name)
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
    return CompileError(
        stage, message, lineno=lineno, source_line=source_line, filename=filename, detail=text, kernel=kernel_name
    )


def _dispatch_error(stage: str, failure: DispatchFailure, text: str, mod, kernel_name: str) -> CompileError:
    import linecache

    tried = "; ".join(f"{v['variant']} (prio {v['priority']}) {v['outcome']}: {v['reason']}" for v in failure.variants)
    raised = [v for v in failure.variants if v["outcome"] == "raised"]
    if raised:
        head = (
            f"{failure.spelling} ({failure.op}) dispatch failed: variant {raised[-1]['variant']} raised: "
            f"{raised[-1]['reason']}"
        )
    elif failure.variants:
        head = f"{failure.spelling} ({failure.op}) dispatch failed: no variant applies"
    else:
        head = f"{failure.spelling} ({failure.op}) dispatch failed: no variant is registered for this target"
    message = head.rstrip(".") + (f". Tried: {tried}" if tried else "")
    lineno = filename = source_line = None
    if failure.frame is not None:
        filename, lineno = failure.frame
        source_line = linecache.getline(filename, lineno).rstrip("\n") or None
    else:
        lineno, source_line, filename = user_location(text, mod)
    err = CompileError(
        stage,
        message,
        lineno=lineno,
        source_line=source_line,
        filename=filename,
        detail=text,
        kernel=kernel_name,
        hint=_dispatch_hint(failure),
    )
    err.op, err.variants = failure.op, failure.variants
    return err


# A defect of apache-tvm 0.27 itself, not of the user's call: the shared-memory variant of the tile reductions binds
# threadIdx.x to a name its own prim_func cannot see (docs/compat.md, "Defects seen, not patched").
_SHARED_REDUCTION_DEFECT = (
    "this is a defect of apache-tvm 0.27, not of your call: the shared-memory variant of the tile reductions "
    "(Tx.cta.sum/max/min with a shared source) does not build. Reduce what each thread holds instead: "
    "Tx.cuda.cta_sum(value, num_warps, scratch.data) (cta_max, cta_min), or Tx.cuda.warp_sum within a warp, or "
    "a reduction whose source is in registers (the local variant); see docs/compat.md"
)


def _dispatch_hint(failure: DispatchFailure) -> str:
    if any(v["outcome"] == "raised" and "tid_in_scope" in str(v["reason"]) for v in failure.variants):
        return _SHARED_REDUCTION_DEFECT
    return "the variants' reasons say what each needs (scope, layout, storage, arch)"


def user_location(text: str, mod):
    """(lineno, line, filename) of the user's source named in an error, if any."""
    import linecache

    for m in TVM_LOCATION_RE.finditer(text):  # TVM's own files (a library's template) are not the user's
        fn, ln = m.group("file"), int(m.group("line"))
        if not ir.is_library(fn):
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

    fn = ir.user_file_of(mod)
    lines = linecache.getlines(fn) if fn else []
    return (fn, 1, lines) if lines else None


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
    _install_dispatch_hook()
    _dispatch.failure = None
    _dispatch.warnings = []
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
    except Exception as exc:  # noqa: BLE001 - TVM raises many types; all mean "lowering failed"
        raise error_from_tvm("lower", exc, mod, entry) from None
    return Lowered(host_mod, device_mods, target_host, launch, host_ir, tuple(_dispatch.warnings))


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
    except Exception as exc:  # noqa: BLE001 - TVM's codegen raises many types; each becomes a CompileError
        raise _unresolved_call(exc, lowered, entry) or error_from_tvm("codegen", exc, None, entry) from None
    finally:
        _callback_state.hook = None
    if not sources:
        raise CompileError(
            "codegen",
            "the kernel has no device code: add T.device_entry() and launch dimensions (T.cta_id / T.thread_id)",
            kernel=entry,
        )
    return sources[0]


#: intrinsics TVM's CUDA codegen has no lowering for (a build stops at codegen), and what to write instead
NO_CUDA_LOWERING = {
    "tirx.fma": 'write a * b + c (nvcc contracts it to one fma.rn), or T.call_pure_extern("float32", "fmaf", a, b, c)',
}


def _unresolved_call(exc, lowered: Lowered, entry: str) -> CompileError | None:
    """TVM's codegen stops at an intrinsic it has no CUDA for ("Unresolved call ir.Op(... name="tirx.fma" ...)"):
    a CompileError naming it, at the user's first line that calls it (found in the lowered device code's spans),
    with what to write instead where one is known; None for any other failure."""
    import linecache

    text = str(exc)
    m = re.search(r'Unresolved call ir\.Op\(.*?name="([\w.]+)"', text, re.S)
    if m is None:
        return None
    op = m.group(1)
    frames = (ir.user_frame(c.span) for dmod in lowered.device_mods.values() for c in ir.calls(dmod, op))
    filename, lineno = next((f for f in frames if f is not None), (None, None))
    spelled = "T." + op.split(".", 1)[1] if op.startswith("tirx.") else op
    instead = NO_CUDA_LOWERING.get(op)
    return CompileError(
        "codegen",
        f"{op} ({spelled}(...)) has no CUDA lowering in TVM's codegen, so this kernel cannot be built for a GPU"
        + (f": {instead}" if instead else ""),
        lineno=lineno,
        source_line=(linecache.getline(filename, lineno).rstrip("\n") or None) if lineno else None,
        filename=filename,
        detail=text,
        kernel=entry,
    )


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
