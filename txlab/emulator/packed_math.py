"""sm_100 packed fp32 arithmetic: ``fmul2_rn`` / ``fadd2_rn`` (CUDA's ``__fmul2_rn`` / ``__fadd2_rn``
on a ``float2`` carried in 64 bits, ``x`` in the low word) -- two IEEE round-to-nearest operations,
never contracted into an FMA; in the fast-math build (``-ftz=true``) denormal inputs and results
flush to zero of the same sign, as ``mul.rn.ftz.f32x2`` does; a NaN result is the canonical NaN
(txlab.emulator.nan). Bitwise."""

from __future__ import annotations

import numpy as np

from txlab.emulator.nan import canonical
from txlab.emulator.ops import HANDLERS
from txlab.ir import semantics as S


def _halves(v):
    u = np.asarray(v).astype(np.uint64)
    lo = (u & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    hi = (u >> np.uint64(32)).astype(np.uint32).view(np.float32)
    return lo, hi


def _pack(lo, hi):
    a = np.asarray(lo, np.float32).view(np.uint32).astype(np.uint64)
    b = np.asarray(hi, np.float32).view(np.uint32).astype(np.uint64)
    r = a | (b << np.uint64(32))
    return r if r.ndim else r[()]


def _packed(op):
    def build(comp, call):
        a, b = (comp.expr(x) for x in call.args)
        flush = comp.fast_math

        def f(g):
            (a0, a1), (b0, b1) = _halves(a(g)), _halves(b(g))
            out = []
            for x, y in ((a0, b0), (a1, b1)):
                if flush:
                    x, y = np.asarray(S.ftz(x), np.float32), np.asarray(S.ftz(y), np.float32)
                r = op(x, y, dtype=np.float32)
                out.append(canonical(S.ftz(r) if flush else r))
            return _pack(*out)

        return f

    return build


HANDLERS["tirx.cuda.fmul2_rn"] = _packed(np.multiply)
HANDLERS["tirx.cuda.fadd2_rn"] = _packed(np.add)
