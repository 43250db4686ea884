#!/usr/bin/env python
"""Measure how far the CPU emulator's math is from the H200's, per function and build.

    OUT=/tmp/out python scripts/emulator_math_h200.py        # on a GPU host (an H200 here)

For each function (``T.exp``, ``T.tanh``, ``A[i] / B[i]``, casts, min/max, contracted
multiply-adds, ...) it compiles one elementwise kernel twice (``fast_math=True``, txlab's default
``--use_fast_math`` build, and ``fast_math=False``), runs each on the GPU and on the emulator
(``txlab.emulate(compiled, ...)``: the emulator reads the build's option) over ~1M inputs (random
values over the function's domain plus the special ones: +-0, denormals, +-inf, NaN, huge), and
prints the largest distance in float32 ulps and the number of differing elements. Functions
docs/emulator-ops.md calls *bitwise* must print 0 / 0; the others say what their bound is.
Writes ``$OUT/emulator_math_h200.json`` (rows and versions) and ``$OUT/emulator_math_h200.txt``.
Exit code 0 when every bitwise row is 0 ulp. ``TXLAB_MATH_N`` (default 2^20) sets the inputs per
function, ``TXLAB_MATH_ONLY=expf,div`` picks functions.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = Path(os.environ.get("OUT") or "emulator-math-out")
N = int(os.environ.get("TXLAB_MATH_N", str(1 << 20)))

ELEM = """
@T.prim_func
def k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    C = T.match_buffer(C_ptr, (n,), "OUT")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < n:
        C[i] = EXPR
"""

#: (label, expression, input domain, output dtype, expected bitwise in (fast, ieee))
CASES = [
    ("expf", "T.exp(A[i])", (-80, 80), "float32", (False, False)),
    ("exp2f", "T.exp2(A[i])", (-120, 120), "float32", (False, False)),
    ("logf", "T.log(A[i])", (1e-30, 1e30), "float32", (False, False)),
    ("log2f", "T.log2(A[i])", (1e-30, 1e30), "float32", (False, False)),
    ("log10f", "T.log10(A[i])", (1e-30, 1e30), "float32", (False, False)),
    ("sqrtf", "T.sqrt(A[i])", (0, 1e30), "float32", (False, True)),
    ("rsqrtf", "T.rsqrt(A[i])", (1e-30, 1e30), "float32", (False, False)),
    ("tanhf", "T.tanh(A[i])", (-10, 10), "float32", (False, False)),
    ("sinf", "T.sin(A[i])", (-3.14159, 3.14159), "float32", (False, False)),
    ("cosf", "T.cos(A[i])", (-3.14159, 3.14159), "float32", (False, False)),
    ("erff", "T.erf(A[i])", (-5, 5), "float32", (False, False)),
    ("sigmoid", "T.sigmoid(A[i])", (-30, 30), "float32", (False, False)),
    ("powf", "T.pow(A[i], B[i])", (0.01, 10), "float32", (False, False)),
    ("fabsf", "T.fabs(A[i])", (-1e30, 1e30), "float32", (True, True)),
    ("floorf", "T.floor(A[i])", (-1e8, 1e8), "float32", (True, True)),
    ("nearbyintf", "T.round(A[i])", (-1e8, 1e8), "float32", (True, True)),
    ("ldexpf", "T.ldexp(A[i], T.Cast('int32', B[i]))", (-150, 150), "float32", (True, True)),
    ("nextafterf", "T.nextafter(A[i], B[i])", (-1e3, 1e3), "float32", (True, True)),
    ("add", "A[i] + B[i]", (-1e3, 1e3), "float32", (True, True)),
    ("mul", "A[i] * B[i]", (-1e3, 1e3), "float32", (True, True)),
    ("div", "A[i] / B[i]", (-1e3, 1e3), "float32", (False, True)),
    ("fminf", "T.min(A[i], B[i])", (-1e3, 1e3), "float32", (True, True)),
    ("fmaxf", "T.max(A[i], B[i])", (-1e3, 1e3), "float32", (True, True)),
    ("lt", "T.Cast('float32', A[i] < B[i])", (-1e3, 1e3), "float32", (True, True)),
    ("f2i", "T.Cast('int32', A[i] * T.float32(1e6))", (-1e4, 1e4), "int32", (True, True)),
    ("f2u", "T.Cast('uint32', A[i] * T.float32(1e6))", (-1e4, 1e4), "uint32", (True, True)),
    ("f2f16", "T.Cast('float16', A[i])", (-7e4, 7e4), "float16", (True, True)),
    ("fma shape 1", "A[i] * T.float32(1.7) + B[i] * A[i] + T.float32(0.1)", (-1e3, 1e3), "float32", (True, True)),
    ("fma shape 2", "A[i] * B[i] - T.float32(1.5)", (-1e3, 1e3), "float32", (True, True)),
    ("fma shape 3", "(A[i] * B[i]) * (A[i] + B[i]) + A[i] * A[i] * B[i]", (-1e2, 1e2), "float32", (True, True)),
    ("fma shape 4", "(A[i] + B[i]) * A[i] + B[i] * B[i]", (-1e3, 1e3), "float32", (True, True)),
    ("fma shape 5", "A[i] - B[i] * A[i]", (-1e3, 1e3), "float32", (True, True)),
]

SPECIAL = np.array(
    [0.0, -0.0, 1e-39, -1e-39, 1e-45, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1.0, -1.0, 0.5, 2.0, 1.1754944e-38],
    np.float32,
)


def inputs(lo, hi, rng):
    def draw():
        if lo > 0 and hi / lo > 1e6:  # log-uniform over wide positive domains
            return np.exp(rng.uniform(np.log(lo), np.log(hi), N)).astype(np.float32)
        return rng.uniform(lo, hi, N).astype(np.float32)

    a, b = draw(), draw()
    k = SPECIAL.size
    a[: k * k] = np.repeat(SPECIAL, k)
    b[: k * k] = np.tile(SPECIAL, k)
    return a, b


def ulps(got, want) -> tuple[int, int]:
    """(largest float32 ulp distance, differing elements); NaN == NaN, integers by value."""
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype.kind in "iu":
        d = np.abs(g.astype(np.int64) - w.astype(np.int64))
        return int(d.max(initial=0)), int(np.count_nonzero(d))
    from txlab.ir.semantics import ulp_distance

    d = ulp_distance(g, w)
    return int(d.max(initial=0)), int(np.count_nonzero(d))


def main() -> int:
    import txlab
    from txlab.emulator import emulate
    from txlab.magic import register_source, tirx_namespace

    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rows, lines, ok = [], [], True
    head = f"{'function':14s} {'build':5s} {'max ulp':>10s} {'differ':>9s} {'expected':>9s}  {'emu s':>6s}"
    print(head)
    lines.append(head)
    only = [x for x in os.environ.get("TXLAB_MATH_ONLY", "").split(",") if x]
    for label, expr, (lo, hi), out_dt, bitwise in CASES:
        if only and label not in only:
            continue
        src = ELEM.replace("EXPR", expr).replace('"OUT"', f'"{out_dt}"').strip("\n") + "\n"
        fn = register_source(src, tag=f"math-{label}")
        ns = tirx_namespace()
        exec(compile(src, fn, "exec"), ns)  # noqa: S102
        a, b = inputs(lo, hi, rng)
        for fast, want_bitwise in zip((True, False), bitwise):
            row = {
                "function": label,
                "expr": expr,
                "fast_math": fast,
                "n": int(a.size),
                "expected_bitwise": want_bitwise,
            }
            try:
                c = txlab.compile(ns["k"], fast_math=fast)
                gpu = np.zeros(a.size, out_dt)
                c(a, b, gpu, a.size)
                emu = np.zeros(a.size, out_dt)
                t = time.perf_counter()
                res = emulate(c, a, b, emu, a.size)
                row["emulate_seconds"] = time.perf_counter() - t
                row["max_ulp"], row["differ"] = ulps(emu, gpu)
                row["findings"] = [str(f) for f in res.findings]
                if row["differ"]:
                    from txlab.ir.semantics import ulp_distance

                    # the input the emulator is furthest from the GPU on, in ulps (NaN-aware)
                    worst = int(np.argmax(ulp_distance(emu.astype(np.float32), gpu.astype(np.float32))))
                    row["worst"] = {
                        "a": float(a[worst]),
                        "b": float(b[worst]),
                        "gpu": float(gpu[worst]),
                        "emulator": float(emu[worst]),
                    }
            except Exception as exc:  # noqa: BLE001 - report and go on
                row["error"] = f"{type(exc).__name__}: {exc}"
            rows.append(row)
            bad = "error" in row or (want_bitwise and row.get("max_ulp", 1) != 0)
            ok &= not bad
            line = (
                f"{label:14s} {'fast' if fast else 'ieee':5s} {row.get('max_ulp', '-')!s:>10s} "
                f"{row.get('differ', '-')!s:>9s} {'bitwise' if want_bitwise else 'bound':>9s}  "
                f"{row.get('emulate_seconds', 0):6.2f}"
                + ("  FAIL" if bad else "")
                + (f"  {row['error']}" if "error" in row else "")
            )
            print(line, flush=True)
            lines.append(line)
    import tvm

    meta = {"python": platform.python_version(), "tvm": getattr(tvm, "__version__", "?"), "n": N, "gpu": _gpu_name()}
    (OUT / "emulator_math_h200.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (OUT / "emulator_math_h200.txt").write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}/emulator_math_h200.json; {'all bitwise rows agree' if ok else 'SOME ROWS FAIL'}")
    return 0 if ok else 1


def _gpu_name() -> str:
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
