"""Narrow, version-guarded workarounds for defects in apache-tvm 0.27.0.post1.

Applied by ``import txlab.compat`` and by ``txlab.compile``. Each patch replaces one exact function
and only when the installed TVM is the version it was written against; with any other TVM nothing is
patched and :func:`report` says which patches were left out, so a newer TVM is checked, not masked.

Using wgmma from TIRx (sm_90a) with these patches
--------------------------------------------------
A warpgroup (128 threads, ``T.thread_id([128])``) issues one ``wgmma.mma_async``; A and B are in
shared memory, named by 64-bit matrix descriptors, and D is a per-thread register fragment
(M*N/128 f32 registers: 32 for m64n64).

1. Descriptors: ``desc: T.uint64`` then
   ``T.cuda.wgmma.encode_matrix_descriptor(T.address_of(desc), smem_buf.data, ldo, sdo, swizzle)``.
   ``ldo``/``sdo`` are the leading/stride byte offsets in 16-byte units (the helper stores them as
   given), ``swizzle`` uses TMA's numbering: 0 none, 1 32B, 2 64B, 3 128B. The smem tile must be
   aligned to the swizzle atom (``align=1024`` is always safe). For a K x 64 f16 tile that TMA wrote
   with ``CU_TENSOR_MAP_SWIZZLE_128B`` (tensor-map swizzle argument 3), use ``1, 64, 3``: 64 x 16 B
   = 1024 B between 8-row core-matrix groups.
2. Fence the accumulator registers so the compiler cannot move their reads/writes across the async
   MMA: ``T.cuda.wgmma.noop_barrier(C_local[i])`` for every element (uint32 or float32 scalars),
   before the fence and after the wait. (Patched: 0.27 raised AttributeError here.)
3. ``T.ptx.wgmma.fence.sync.aligned()`` after writing the accumulators / smem operands.
4. The MMA: ``T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"](*[C_local[i] for i in
   range(32)], descA, descB, scale_d, 1, 1, trans_a, trans_b)``. ``scale_d`` is a *predicate*: write
   ``T.bool(False)`` for D = A*B and ``T.bool(True)`` (or a bool expression such as ``k > 0``) for
   D += A*B. ``imm-scale-a/b`` are ``1`` or ``-1`` (negate); ``trans`` flags 0/1 (f16/bf16 only).
   The rs form passes four uint32 A registers (``T.decl_buffer(..., "uint32", data=A_local.data)``)
   instead of ``descA`` and drops ``trans_a``. (Patched: 0.27 rejected the literal 0/1 that TVM's own
   wgmma tests pass for scale_d; a bool is still the clearer spelling.)
5. ``T.ptx.wgmma.commit_group.sync.aligned()`` then ``T.ptx.wgmma.wait_group.sync.aligned(0)``
   (or N to keep N groups in flight), then ``noop_barrier`` on the accumulators again.
6. Fragment layout of D (f32, m64nN): thread t, register i holds row ``(t%32)//4 + 16*(t//32) +
   8*((i//2)%2)``, column ``8*(i//4) + 2*(t%4) + i%2``.

``txlab.compat.PATCHES`` lists every patch with the upstream fix it stands for.
"""

from __future__ import annotations

import functools
import importlib.metadata
import threading
import warnings
from dataclasses import asdict, dataclass

TARGET_VERSION = "0.27.0.post1"
_lock = threading.Lock()
_state: dict[str, str] = {}  # patch id -> "applied" | "skipped: ..." | "failed: ..."


@dataclass(frozen=True)
class Patch:
    """One upstream defect and the narrow workaround txlab applies for it."""

    id: str
    target: str  # module:function that is replaced
    symptom: str
    cause: str
    workaround: str
    upstream_fix: str
    test: str  # the txlab test that shows the defect and the fix
    applies_to: str = TARGET_VERSION

    def to_dict(self) -> dict:
        return {**asdict(self), "status": _state.get(self.id, "not applied")}


PATCHES: tuple[Patch, ...] = (
    Patch(
        id="wgmma-noop-barrier-dtype",
        target="tvm.backend.cuda.cpp.asm:codegen_cuda_wgmma_noop_barrier",
        symptom="T.cuda.wgmma.noop_barrier(C_local[i]) fails in codegen: "
        "AttributeError: 'TensorLoad' object has no attribute 'dtype'.",
        cause="The codegen reads reg.dtype, but in 0.27 a buffer element is an ir.TensorLoad whose "
        "type is carried by its buffer (reg.buffer.dtype) / reg.ty, not a .dtype attribute.",
        workaround="Register a codegen for tirx.cuda_wgmma_noop_barrier that reads the dtype the way "
        "the ptx engine does (tvm.backend.cuda.ptx.engine.arg_dtype) and then dispatches "
        "to TVM's own uint32/float32 intrinsics unchanged.",
        upstream_fix="In backend/cuda/cpp/asm.py use engine.arg_dtype(reg) (or reg.ty.dtype) "
        "instead of str(reg.dtype).",
        test="tests/test_compat.py::test_noop_barrier_codegen",
    ),
    Patch(
        id="wgmma-scale-d-literal",
        target="tvm.backend.cuda.ptx.engine:_coerce_pred_operand",
        symptom="TVM's own tests test_wgmma_ss_nt / test_wgmma_rs_nt fail with 'no ptx instruction "
        "matches these operands; ... operand 'scale_d' is a .pred argument'.",
        cause="The ptx engine deliberately refuses integers for .pred operands (cp.async has two "
        "syntax lines that differ only in whether an operand is a predicate or a count), but "
        "wgmma's scale-d is a predicate on every wgmma line and TVM's tests (and code written "
        "from them) pass the literal 0.",
        workaround="For the wgmma mnemonic's scale_d operand only, accept the Python/IntImm literals "
        "0 and 1 as False/True; every other .pred operand keeps TVM's strict rule.",
        upstream_fix="Either update tests/python/tirx/codegen/test_codegen_hopper.py to pass "
        "T.bool(False) for scale-d, or let _coerce_pred_operand accept 0/1 literals "
        "where no candidate syntax line has an integer operand at that position.",
        test="tests/test_compat.py::test_wgmma_ss_hgmma",
    ),
    Patch(
        id="parser-frame-inspection",
        target="tvm.script.parser.core.parser + tvm.tirx.script.parser.entry:inspect",
        symptom="Parsing a kernel costs 70-750 ms, most of it in inspect.getmodule (measured: 0.86 s "
        "of a 1.4 s scheduler trace, 1172 calls).",
        cause="The parser calls inspect.stack() / inspect.getouterframes() for every prim_func and "
        "every macro call. Those build source context for each frame through getsourcefile -> "
        "getmodule, which rescans all of sys.modules for every frame whose file is not a "
        "module's (<frozen ...>, notebook cells, generated code). The parser only reads "
        ".frame, and one line of context for the class-scope check.",
        workaround="Give those two modules an inspect namespace whose stack()/getouterframes() build "
        "FrameInfo from the frame chain and linecache (one line of context) without "
        "getmodule; everything else is the real inspect module.",
        upstream_fix="Walk frames with sys._getframe()/frame.f_back (or inspect.stack(context=0)) and "
        "read the one needed line from linecache.",
        test="tests/test_compat.py::test_fast_frame_inspection_keeps_parsing_identical",
    ),
    Patch(
        id="warp-reduce-defined-twice",
        target="tvm.backend.cuda.cpp.builtins:_warp_reduce_source",
        symptom="A kernel that calls both Tx.cuda.warp_sum and Tx.cuda.cta_sum (or warp_max and cta_max, "
        "warp_min and cta_min), as a layernorm does, fails in nvcc: 'function template "
        '"tvm_builtin_cuda_warp_reduce_sum_32" has already been defined\'.',
        cause="The CTA reduction's helper source carries its own copy of the 32-lane warp-reduction "
        "template, and the warp reduction adds the same template under the same name: the "
        "module's helper list deduplicates by helper name, not by the templates inside.",
        workaround="Wrap the warp-reduction template in an include guard named after it, so the "
        "second copy compiles to nothing; the helpers and the code that calls them are unchanged.",
        upstream_fix="Let cuda_cta_reduce reference the warp reduction as a separate helper (or guard "
        "the template) instead of pasting its source.",
        test="tests/test_compat.py::test_warp_and_cta_reductions_in_one_kernel_build",
    ),
)


def tvm_version() -> str | None:
    try:
        return importlib.metadata.version("apache-tvm")
    except importlib.metadata.PackageNotFoundError:
        return None


# ---- the replacement functions ------------------------------------------------------------------
def _noop_barrier_codegen(reg):
    from tvm.backend.cuda.codegen.registry import CODEGEN_REGISTRY
    from tvm.backend.cuda.ptx.engine import arg_dtype

    dtype = arg_dtype(reg)
    if dtype == "uint32":
        op_name = "tirx.cuda_wgmma_noop_barrier_uint32"
    elif dtype == "float32":
        op_name = "tirx.cuda_wgmma_noop_barrier_float32"
    else:
        raise ValueError(f"T.cuda.wgmma.noop_barrier takes a uint32 or float32 register, got {dtype}")
    result = CODEGEN_REGISTRY[op_name]([reg])
    return result[0] if isinstance(result, tuple) else result


def _apply_noop_barrier() -> None:
    from tvm.backend.cuda.codegen import registry
    from tvm.backend.cuda.cpp import asm

    original = asm.codegen_cuda_wgmma_noop_barrier
    # Re-register under both op names the registry maps (tirx.cuda_wgmma_noop_barrier and its
    # canonical tirx.cuda.wgmma_noop_barrier); the old function stays importable for inspection.
    fixed = registry.register_codegen("cuda_wgmma_noop_barrier")(_noop_barrier_codegen)
    fixed.__txlab_original__ = original
    asm.codegen_cuda_wgmma_noop_barrier = fixed


def _apply_scale_d_literal() -> None:
    from tvm.backend.cuda.ptx import engine
    from tvm.runtime import const

    original = engine._coerce_pred_operand
    if getattr(original, "__txlab_patch__", False):
        return

    @functools.wraps(original)
    def coerce_pred_operand(entry, slot, values):
        if entry.mnemonic == "wgmma" and slot.name == "scale_d" and slot.rw == "r" and len(values) == 1:
            value = values[0]
            literal = value if isinstance(value, int) and not isinstance(value, bool) else None
            if literal is None and type(value).__name__ == "IntImm":
                literal = int(value.value)
            if literal in (0, 1):
                return [const(literal, "uint32")]
        return original(entry, slot, values)

    coerce_pred_operand.__txlab_patch__ = True
    coerce_pred_operand.__txlab_original__ = original
    engine._coerce_pred_operand = coerce_pred_operand


class _FastInspect:
    """The ``inspect`` module, except that stack()/getouterframes() skip getmodule scans."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _frames(self, frame, context):
        import linecache

        out = []
        while frame is not None:
            code = frame.f_code
            filename = code.co_filename
            lineno = frame.f_lineno
            lines = index = None
            if context > 0:
                line = linecache.getline(filename, lineno, frame.f_globals)
                lines, index = ([line], 0) if line else (None, None)
            out.append(self._real.FrameInfo(frame, filename, lineno, code.co_name, lines, index))
            frame = frame.f_back
        return out

    def stack(self, context=1):
        import sys

        return self._frames(sys._getframe(1), context)

    def getouterframes(self, frame, context=1):
        return self._frames(frame, context)


def _apply_fast_frame_inspection() -> None:
    import inspect

    from tvm.script.parser.core import parser as core_parser
    from tvm.tirx.script.parser import entry as tirx_entry

    for module in (core_parser, tirx_entry):
        if not isinstance(module.inspect, _FastInspect):
            module.inspect = _FastInspect(inspect)


def _apply_warp_reduce_guard() -> None:
    from tvm.backend.cuda.cpp import builtins

    original = builtins._warp_reduce_source
    if getattr(original, "__txlab_patch__", False):
        return

    @functools.wraps(original)
    def warp_reduce_source(func_name, width_int, step_expr):
        guard = f"TXLAB_DEFINED_{func_name}"
        return f"\n#ifndef {guard}\n#define {guard}{original(func_name, width_int, step_expr)}#endif\n"

    warp_reduce_source.__txlab_patch__ = True
    warp_reduce_source.__txlab_original__ = original
    builtins._warp_reduce_source = warp_reduce_source


_APPLIERS = {
    "warp-reduce-defined-twice": _apply_warp_reduce_guard,
    "parser-frame-inspection": _apply_fast_frame_inspection,
    "wgmma-noop-barrier-dtype": _apply_noop_barrier,
    "wgmma-scale-d-literal": _apply_scale_d_literal,
}


def apply() -> dict[str, str]:
    """Apply every patch that targets the installed TVM (idempotent). Returns {patch id: status}."""
    with _lock:
        if _state:
            return dict(_state)
        version = tvm_version()
        for patch in PATCHES:
            if version != patch.applies_to:
                _state[patch.id] = (
                    f"skipped: apache-tvm {version} is not {patch.applies_to}; "
                    f"check whether upstream fixed it ({patch.test})"
                )
                continue
            try:
                _APPLIERS[patch.id]()
                _state[patch.id] = "applied"
            except Exception as exc:  # noqa: BLE001 - a patch must never break import; it is reported instead
                _state[patch.id] = f"failed: {type(exc).__name__}: {exc}"
        skipped = [p for p, s in _state.items() if not s.startswith("applied")]
        if skipped:
            warnings.warn(
                f"txlab.compat: not applied on apache-tvm {version}: {', '.join(skipped)} (see txlab.compat.report())",
                stacklevel=2,
            )
        return dict(_state)


def report() -> list[dict]:
    """Every patch with its status, for display or docs."""
    return [p.to_dict() for p in PATCHES]


def markdown() -> str:
    """The patch table as Markdown (used by docs/compat.md)."""
    rows = [
        "| patch | replaces | symptom | cause | what upstream should change | status |",
        "|---|---|---|---|---|---|",
    ]
    for p in report():
        cells = [p["id"], f"`{p['target']}`", p["symptom"], p["cause"], p["upstream_fix"], p["status"]]
        rows.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(rows)


apply()
