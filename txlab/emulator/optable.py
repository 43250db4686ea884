"""The emulator's op table (docs/emulator-ops.md), generated from the installed TVM's op registry
and the emulator's own handler registries, so it cannot drift from either.

    python -m txlab.emulator.optable            # print the Markdown
    python -m txlab.emulator.optable --write    # rewrite docs/emulator-ops.md

Rows: every TIR operator TVM registers (``tirx.*``, ``tirx.cuda.*``, ``tirx.ptx.*``, ``prim.*``);
every device function TVM's CUDA intrinsic rules lower a math op to (found by applying each
rule -- ``cuda.FLowerIntrinsic`` and ``cuda.fastmath.FLowerIntrinsic`` -- to a call of each float
type, so ``expf``/``__expf``/``hexp``...), and every device function the emulator itself knows
(``ops.EXTERNS``); and the IR expression and statement kinds the interpreter compiles. Each says
whether it is emulated, with its precision in the fast-math and the IEEE build, or why not.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "emulator-ops.md"
_MATH_TYPES = ("float16", "bfloat16", "float32", "float64")
_INT_TYPES = ("int32", "int64", "uint32", "uint64")

#: why an op is not emulated, by name prefix or part (first match wins)
_WHY_NOT = [
    (("tirx.nki.", "tirx.metal.", "tirx.webgpu."), "another backend's op (not CUDA)"),
    (("tirx.nvshmem.",), "NVSHMEM (multi-GPU): the emulator runs one device"),
    (
        (
            "tcgen05_alloc_exclusive",
            "tcgen05_dealloc_exclusive",
            "tcgen05_commit_multicast_width",
            "tcgen05_commit_sync_restrict",
            "tcgen05_ld_red",
            "tcgen05_ld_spcompress",
            "collector",
            "lut_b",
        ),
        "sm_103a / sm_107f tcgen05 form (PTX ISA 9.4): outside the sm_100a the emulator models",
    ),
    (("tcgen05_mma_ws", "tcgen05_mma_sp", "_ti16"), "weight-stationary / sparse tcgen05.mma: not modelled yet"),
    (("tcgen05_mma_block_scale",), "block-scaled tcgen05.mma (scale factors in TMEM): not modelled yet"),
    (
        (
            "tcgen05",
            "clusterlaunchcontrol",
            "tmem",
            "fmul2",
            "ffma2",
            "fadd2",
            "multimem",
            "_bitbucket",
            "block_scale",
            "cp_async_bulk_prefetch_tensor",
        ),
        "sm_100 / sm_120 (Blackwell) instruction not modelled yet (tcgen05 and TMEM are)",
    ),
    (
        (
            "tirx.TVMBackend",
            "tirx.tvm_call_",
            "tirx.tvm_struct_",
            "tirx.tvm_stack_",
            "tirx.anylist_",
            "tirx.tvm_throw_last_error",
            "tirx.lookup_param",
            "tirx.tvm_context_id",
            "tirx.tvm_static_handle",
            "tirx.call_ffi_kernel",
            "tirx.tensormap_encode_tiled",
            "tirx.nd_mem_alloc_with_scope",
        ),
        "host-side: runs in the host function, never in device code (the emulator binds its results)",
    ),
    (
        ("tirx.cuda.iket_official_event",),
        "emitted only by an IKET-enabled LowerIket (run-iket's build): not modelled; the frontend "
        "IKET annotations are (txlab.emulator.iket)",
    ),
    (("tirx.tile.",), "tile primitive: lowered by TVM into the ops it dispatches to, which are listed here"),
    (
        (
            "tirx.simdgroup_",
            "tirx.make_filled_simdgroup",
            "tirx.cooperative_tensor",
            "tirx.texture2d",
            "tirx.dma_",
            "tirx.call_spirv",
            "tirx.call_llvm",
            "tirx.q_multiply_shift",
            "tirx.vscale",
            "prim.vscale",
            "tirx.get_active_lane_mask",
            "tirx.tvm_bmma_sync",
            "tirx.dp4a",
        ),
        "not emitted by TVM's CUDA path for sm_80…sm_90a",
    ),
    (
        ("tirx.tvm_load_matrix_sync", "tirx.tvm_store_matrix_sync", "tirx.tvm_mma_sync", "tirx.tvm_fill_fragment"),
        "legacy WMMA fragments: not modelled (TIRx kernels use ptx.mma / wgmma)",
    ),
]


def _why_not(name: str) -> str:
    for parts, why in _WHY_NOT:
        if any(name.startswith(p) if p.startswith(("tirx.", "prim.")) else p in name for p in parts):
            return why
    return "not modelled yet: a kernel reaching it stops with NotEmulatedError naming it and the line"


def _registries():
    import txlab.emulator.bulk_copy  # noqa: F401
    import txlab.emulator.cluster  # noqa: F401  (importing them registers their handlers)
    import txlab.emulator.debug  # noqa: F401
    import txlab.emulator.iket  # noqa: F401
    import txlab.emulator.mathfns as mathfns
    import txlab.emulator.mma  # noqa: F401
    import txlab.emulator.ops as ops
    import txlab.emulator.packed_math  # noqa: F401
    import txlab.emulator.ptx_alu  # noqa: F401
    import txlab.emulator.ptx_farith  # noqa: F401
    import txlab.emulator.ptx_floatmath  # noqa: F401
    import txlab.emulator.ptx_iarith  # noqa: F401
    import txlab.emulator.ptx_mbarrier  # noqa: F401
    import txlab.emulator.ptx_memory  # noqa: F401
    import txlab.emulator.timers  # noqa: F401
    import txlab.emulator.tcgen05  # noqa: F401
    import txlab.emulator.tma  # noqa: F401
    import txlab.emulator.tmem  # noqa: F401
    import txlab.emulator.wgmma  # noqa: F401

    return ops.HANDLERS, ops.BLOCKING, ops.EXTERNS, mathfns.PRECISION


def lowered_externs() -> dict:
    """{device function: [TIR ops whose CUDA rule lowers to it]} from TVM's own rules."""
    import tvm
    from tvm import tirx

    out: dict = {}
    for name in sorted(str(n) for n in tvm.ir.Op.list_op_names()):
        if not name.startswith(("tirx.", "prim.")):
            continue
        op = tvm.ir.Op.get(name)
        for attr in ("cuda.FLowerIntrinsic", "cuda.fastmath.FLowerIntrinsic"):
            rule = op.get_attr(attr)
            if rule is None:
                continue
            types = _INT_TYPES if name.endswith(("clz", "popcount")) else _MATH_TYPES
            nargs = 2 if name.endswith(("pow", "fmod", "atan2", "hypot", "copysign", "nextafter", "ldexp")) else 1
            for t in types:
                args = [tirx.Var(f"x{i}", t) for i in range(nargs)]
                try:
                    lowered = rule(tirx.call_intrin(t, name, *args))
                except Exception:  # a rule that refuses this dtype  # noqa: BLE001
                    continue
                if getattr(getattr(lowered, "op", None), "name", "") in ("tirx.call_pure_extern", "tirx.call_extern"):
                    fn = str(lowered.args[0].value)
                    if fn and fn not in ("__exp", "__expll"):
                        out.setdefault(fn, [])
                        if name not in out[fn]:
                            out[fn].append(name)
    return out


_TC = "bitwise: the H200's tensor-core arithmetic (txlab.emulator.tensorcore, fitted to its outputs)"
#: tensor-core ops: (precision, note); the forms a handler refuses by name are "not emulated"
_TENSOR_CORE = {
    "tirx.ptx.mma": (_TC, "f16/bf16 m16n8k8/k16, tf32 m16n8k4/k8, e4m3/e5m2 m16n8k32 (as ptxas lowers it for sm_90)"),
    "tirx.ptx.mma_f16acc": (_TC, "f16/bf16 with an f16 accumulator; fp8 with one is refused (not measured)"),
    "tirx.ptx.mma_int": ("bitwise (exact; wraps, .satfinite clamps)", "s8/u8 (either pairing) m16n8k16/k32"),
    **{
        f"tirx.ptx.wgmma_{t}_{f}": (_TC, "m64nNk16/k8/k32, f32 accumulator")
        for t in ("f16", "bf16", "tf32", "fp8")
        for f in ("ss", "rs")
    },
}
_TENSOR_CORE.update(
    {
        f"tirx.ptx.wgmma_{t}_f16acc_{f}": (_TC, "f16 accumulator (f16x2 registers)")
        for t in ("f16", "fp8")
        for f in ("ss", "rs")
    }
)
_TENSOR_CORE_REFUSED = (
    "tirx.ptx.wgmma_int_",
    "tirx.ptx.wgmma_b1_",
    "tirx.ptx.wgmma_fp8_rs",
    "tirx.ptx.wgmma_fp8_f16acc_rs",
)


def rows() -> list[dict]:
    """One dict per op / device function / IR node: name, kind, status, fast, ieee, why."""
    import tvm

    from txlab.build import NO_CUDA_LOWERING

    handlers, blocking, externs, precision = _registries()
    import txlab.emulator.ptx_farith as ptx_farith
    import txlab.emulator.ptx_floatmath as ptx_floatmath
    import txlab.emulator.ptx_iarith as ptx_iarith

    FLOAT_PRECISION = {**ptx_farith.PRECISION, **ptx_floatmath.PRECISION}
    FLOAT_MISSING = {**ptx_iarith.MISSING, **ptx_farith.MISSING, **ptx_floatmath.MISSING}

    out = []
    for name in sorted(str(n) for n in tvm.ir.Op.list_op_names()):
        if not name.startswith(("tirx.", "prim.")):
            continue
        if name in handlers or name in blocking:
            r = {"status": "emulated", "fast": "bitwise", "ieee": "bitwise", "why": ""}
            if name.startswith("tirx.ptx.tcgen05_mma"):
                r["fast"] = r["ieee"] = (
                    "one instruction's exact sum rounded once to fp32; no B200 to compare"
                    if "block_scale" in name
                    else "the H200's tensor-core arithmetic (txlab.emulator.tensorcore); no B200 to compare"
                )
            if name in ("tirx.cuda.fdividef",):
                r["fast"] = r["ieee"] = precision["__fdividef"][0]
            if name in ("tirx.cuda.ldg",):
                r["why"] = "__ldg: a global load"
            if name.startswith("tirx.ptx.") and name[len("tirx.ptx.") :] in FLOAT_PRECISION:
                r["fast"] = r["ieee"] = FLOAT_PRECISION[name[len("tirx.ptx.") :]]
            if name.startswith("tirx.ptx.") and name[len("tirx.ptx.") :] in FLOAT_MISSING:
                r["why"] = "refused: " + FLOAT_MISSING[name[len("tirx.ptx.") :]]
            if name.startswith("tirx.cuda.iket_"):
                r["fast"] = r["ieee"] = ""
                r["why"] = (
                    "IKET annotation: an event per warp with emulated-work clocks under txlab.timeline.emulate "
                    "(emulate(..., iket=True)); the regular build strips it"
                )
            if name in blocking:
                r["why"] = "blocking: the group waits (barrier / mbarrier)"
            if name == "tirx.cuda.grid_sync":
                r["why"] = (
                    "a grid barrier: every CTA of the launch resident at once (a cooperative launch; one that is not "
                    "is a grid_sync_not_cooperative finding, one too large to be resident a launch_config fault)"
                )
            if name in ("tirx.cuda.warp_sync", "tirx.ptx.bar_warp_sync"):
                r["why"] = "lanes of a diverged warp wait here for the member lanes of its other branches"
            if name in _TENSOR_CORE:
                r["fast"] = r["ieee"] = _TENSOR_CORE[name][0]
                r["why"] = _TENSOR_CORE[name][1]
            if name.startswith(_TENSOR_CORE_REFUSED):
                r = {
                    "status": "not emulated",
                    "fast": "",
                    "ieee": "",
                    "why": "refused by name: wgmma is modelled with f16/bf16/tf32/fp8 operands (fp8 A from "
                    "shared memory), not integer or b1 ones",
                }
            if name in NO_CUDA_LOWERING:
                r["why"] = (
                    "TVM's CUDA codegen has no lowering for it, so a kernel using it cannot be built: txlab.emulate "
                    f"and txlab.compile both stop with a CompileError (stage codegen); {NO_CUDA_LOWERING[name]}"
                )
            if tvm.ir.Op.get(name).get_attr("cuda.FLowerIntrinsic") is not None:
                r["fast"] = r["ieee"] = "as the device function"
                r["why"] = "lowered by TVM's CUDA rules to a device function (below); run as that function"
        elif tvm.ir.Op.get(name).get_attr("cuda.FLowerIntrinsic") is not None:
            r = {
                "status": "lowered",
                "fast": "",
                "ieee": "",
                "why": "TVM's CUDA rules lower it to a device function (below)",
            }
        else:
            r = {"status": "not emulated", "fast": "", "ieee": "", "why": _why_not(name)}
        out.append({"name": name, "kind": "op", **r})
    lowered = lowered_externs()
    for fn in sorted(set(lowered) | set(externs)):
        src = ", ".join(f"`{o}`" for o in lowered.get(fn, []))
        if fn in externs:
            fast, ieee = precision.get(fn, ("bitwise", "bitwise"))
            why = f"from {src}" if src else ""
            out.append(
                {"name": fn, "kind": "device function", "status": "emulated", "fast": fast, "ieee": ieee, "why": why}
            )
        else:
            out.append(
                {
                    "name": fn,
                    "kind": "device function",
                    "status": "not emulated",
                    "fast": "",
                    "ieee": "",
                    "why": f"from {src}; not modelled yet (NotEmulatedError names it)",
                }
            )
    out.extend(_ir_rows())
    return out


#: ptxas fuses float16/bfloat16 mul + add (no .rn) into HFMA2: the emulator models products written inline
#: (txlab.emulator.contract), not ones bound to a variable
_HALF_FMA = (
    "; float16/bfloat16: a*b+c with the product written inline fused into HFMA2 as ptxas does; a product "
    "bound to a variable (t = a*b; t + c) is rounded first, where the GPU may fuse it (1 ulp)"
)


#: TVM's CUDA prelude defines max/min of half and nv_bfloat16 as a compare and select
_HALF_MINMAX = "; float16/bfloat16: TVM's a %s b ? a : b, so a NaN on either side gives b, bits kept)"


def _ir_rows() -> list[dict]:
    from txlab.emulator.interpreter import Compiler

    notes = {
        "Div": (
            "float32: div.approx.ftz (within 2 ulp for |b| in [2^-126, 2^126]); ints truncate",
            "bitwise (div.rn); ints truncate",
        ),
        "Add": (
            "bitwise (.ftz; a*b+c contracted to fma.rn as nvcc does" + _HALF_FMA + ")",
            "bitwise (a*b+c contracted as nvcc does" + _HALF_FMA + ")",
        ),
        "Sub": (
            "bitwise (.ftz; a*b-c contracted as nvcc does" + _HALF_FMA + ")",
            "bitwise (a*b-c contracted as nvcc does" + _HALF_FMA + ")",
        ),
        "Min": (
            "bitwise (fminf: NaN gives the other operand, two NaNs the canonical NaN; .ftz" + _HALF_MINMAX % "<",
            "bitwise (fminf: as fast math, no .ftz" + _HALF_MINMAX % "<",
        ),
        "Max": (
            "bitwise (fmaxf: NaN gives the other operand, two NaNs the canonical NaN; .ftz" + _HALF_MINMAX % ">",
            "bitwise (fmaxf: as fast math, no .ftz" + _HALF_MINMAX % ">",
        ),
        "Cast": (
            "bitwise (float->int truncates, NaN->0, saturates at 32 bits then keeps the low bits for 8/16-bit"
            " targets as nvcc does; fp8 satfinite)",
            "bitwise (as fast math, but float32->float64 keeps denormals)",
        ),
    }
    out = []
    for attr in sorted(dir(Compiler)):
        if attr.startswith(("e_", "s_")):
            kind = "IR expression" if attr.startswith("e_") else "IR statement"
            n = attr[2:]
            fast, ieee = notes.get(n, ("bitwise", "bitwise"))
            status, why = "emulated", ""
            if n in ("Break", "Continue") and "not_emulated" in _source(getattr(Compiler, attr)):
                status, fast, ieee, why = "not emulated", "", "", "not modelled yet"
            out.append({"name": n, "kind": kind, "status": status, "fast": fast, "ieee": ieee, "why": why})
    return out


def _source(fn) -> str:
    import inspect

    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _cell(s: str) -> str:
    return (s or "").replace("|", "\\|")


def markdown(table: list[dict] | None = None) -> str:
    table = rows() if table is None else table
    by = {}
    for r in table:
        by.setdefault(r["kind"], []).append(r)
    n_emul = sum(r["status"] == "emulated" for r in table)
    head = [
        "# What the CPU emulator runs",
        "",
        "Generated by `python -m txlab.emulator.optable --write` from the installed TVM's op registry and "
        "the emulator's handlers; `tests/test_emulator_math.py` regenerates it and fails if it differs.",
        "",
        "Precision is the distance from what an H200 returns, in the build the emulator emulates: "
        "`txlab.emulate(..., fast_math=...)` (default: a `Compiled`'s own option, else `True`, txlab's "
        "default `--use_fast_math` build). *bitwise*: the same bits. *within ...*: NVIDIA does not publish "
        "the hardware's bits (MUFU approximations, libdevice routines); the emulator computes the "
        "function in float64, rounds once and applies the build's flushing, which is within the stated "
        "bound of the GPU's result; `scripts/emulator_math_h200.py` measures the actual largest ulp "
        "distance on an H200. An op marked *not emulated* stops the run with `NotEmulatedError` naming "
        "it and the user's line; nothing is guessed.",
        "",
        "NaNs (`txlab/emulator/nan.py`, bit for bit with an H100 on payload, signalling and negative NaNs): a "
        "float32, float16 or bfloat16 NaN result of arithmetic (`-x` and `fabs` included: FADD/HADD2 in the "
        "SASS), of a math function or of a conversion from a format of at most 32 bits is the format's canonical "
        "NaN (0x7fffffff, 0x7fff; fp8: 0x7f), whatever payload went in; moves, selects (float16/bfloat16 "
        "`Min`/`Max` among them: TVM's `a > b ? a : b`), shuffles, `copysign` and bfloat16 -> float32 (a shift) "
        "keep every bit. float64 follows x86's rules: a NaN operand comes out quieted with its payload (of two, "
        "the first; `fabs` keeps its sign), an invalid operation gives 0xfff8000000000000, and a conversion from "
        "float64 keeps the payload's top bits, quieted.",
        "",
        f"{n_emul} of {len(table)} entries are emulated.",
        "",
    ]
    parts = head
    titles = {
        "IR expression": "IR expressions",
        "IR statement": "IR statements",
        "device function": "Device functions (`call_pure_extern` / `call_extern` / `cuda.func_call`)",
        "op": "TIR operators (`tirx.*`, `prim.*`)",
    }
    for kind in ("IR expression", "IR statement", "device function", "op"):
        rs = by.get(kind, [])
        parts += [
            f"## {titles[kind]}",
            "",
            "| name | status | fast math | IEEE | why / from |",
            "|---|---|---|---|---|",
        ]
        for r in rs:
            parts.append(
                f"| `{r['name']}` | {r['status']} | {_cell(r['fast'])} | {_cell(r['ieee'])} | {_cell(r['why'])} |"
            )
        parts.append("")
    return "\n".join(parts)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    md = markdown()
    if "--write" in argv:
        DOC.write_text(md)
        print(f"wrote {DOC}")
    else:
        print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
