"""``T.ptx`` floating-point math instructions: ``ex2``, ``lg2``, ``sin``, ``cos``, ``tanh`` (``.approx.f32``,
``.ftz`` optional), ``rcp`` and ``sqrt`` (``.approx.f32`` and ``.rn`` in f32 and f64).

``.rn`` forms are IEEE-754 operations, computed exactly rounded: bitwise what the GPU returns. ``.approx`` forms are
the MUFU approximations, whose bits NVIDIA does not publish: the emulator computes the function in float64 and rounds
once, which is within the bound the PTX ISA states for each (what ``docs/emulator-ops.md`` lists). ``.ftz`` flushes
denormal inputs and results to zero of the same sign. An f32 NaN result is the canonical NaN 0x7fffffff (MUFU and the
IEEE units keep no payload: txlab.emulator.nan); f64 ones keep numpy's (the payload propagated). The directed roundings
(``.rz``, ``.rm``, ``.rp``) and ``rcp.approx.ftz.f64`` are not emulated: a kernel reaching one stops with
``NotEmulatedError``.
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.mathfns import _rn, ex2_approx, lg2_approx
from txlab.emulator.nan import canonical
from txlab.emulator.ops import HANDLERS
from txlab.emulator.ptx_alu import _dest
from txlab.emulator.ptx_memory import _guard, decode, to_register
from txlab.ir import semantics as S

_DT = {"f32": np.float32, "f64": np.float64}


def _flushed(fn):
    """``fn`` with ``.ftz``: denormal inputs and results flushed to zero of the same sign."""
    return lambda x: S.ftz(fn(S.ftz(x)))


def _exact(op):
    """An IEEE operation of the operand's own width (numpy rounds it correctly)."""
    return lambda x: op(np.asarray(x))


_APPROX = {  # f32 only (PTX ISA 9.7.3): the unflushed function; .ftz wraps it
    "ex2": lambda x: ex2_approx(x, flush=False),
    "lg2": lambda x: lg2_approx(x, flush=False),
    "sin": _rn(np.sin),
    "cos": _rn(np.cos),
    "tanh": _rn(np.tanh),
    "rcp": _rn(lambda v: 1.0 / v),
    "sqrt": _rn(np.sqrt),
}
_RN = {"rcp": _exact(lambda v: np.divide(v.dtype.type(1), v)), "sqrt": _exact(np.sqrt)}

#: the precision each form is emulated to (docs/emulator-ops.md)
_MUFU = "approx: the function correctly rounded; the GPU's MUFU result differs within the PTX ISA's bound for it"
PRECISION = {
    "ex2": "approx: within ex2.approx's 2 ulp (PTX ISA)",
    "lg2": "approx: within lg2.approx's 2^-22 absolute in [0.5, 2], else 2^-22.6 relative (PTX ISA)",
    "sin": _MUFU,
    "cos": _MUFU,
    "tanh": _MUFU + " (about 2^-11 relative: expect different low bits)",
    "rcp": "rn (f32, f64): bitwise; " + _MUFU.replace("approx:", "approx.f32:"),
    "sqrt": "rn (f32, f64): bitwise; " + _MUFU.replace("approx:", "approx.f32:"),
}
#: what of each is not emulated (docs/emulator-ops.md)
MISSING = {
    "rcp": "the directed roundings (.rz, .rm, .rp) and rcp.approx.ftz.f64 are not emulated",
    "sqrt": "the directed roundings (.rz, .rm, .rp) are not emulated",
}


def _function(name: str, mods: dict):
    """The emulated function for ``name`` with ``mods``, or a string saying which form is not emulated."""
    mode, ftz, ty = mods.get("mode") or "", bool(mods.get("ftz")), mods.get("type") or "f32"
    if ty not in _DT:
        return f"{name}.{mode}.{ty}"
    if mode == "approx" and ty == "f32" and name in _APPROX:
        fn = _APPROX[name]
    elif mode == "rn" and name in _RN:
        fn = _RN[name]
    else:
        return f"{name}.{mode}{'.ftz' if ftz else ''}.{ty} (directed rounding and approx.f64 are not modelled)"
    return (_flushed(fn) if ftz and ty == "f32" else fn), _DT[ty]


def _float_op(name: str):
    def build(comp, call):
        ptx = decode(call)
        if ptx is None:
            return comp.not_emulated(call.op.name)
        picked = _function(name, ptx.mods)
        if isinstance(picked, str):
            return comp.not_emulated(call.op.name, picked)
        fn, dt = picked
        store, reg_dt, key = _dest(comp, call, ptx, "d")
        if store is None:
            return comp.not_emulated(call.op.name, "a destination that is not a buffer element")
        (src,) = [comp.expr(v[0]) for n, v in ptx.ops.items() if n != "d"]

        def f(g):
            x = np.asarray(src(g))
            if x.dtype != dt:  # an operand of another width (a .b32 register read as .f32): its bits
                x = x.view(dt) if x.dtype.itemsize == np.dtype(dt).itemsize else x.astype(dt)
            with np.errstate(all="ignore"):
                r = np.asarray(canonical(np.asarray(fn(x), dt)))
            r = np.broadcast_to(r, (g.L,))
            g.slots[key] = [to_register(r, r.dtype, reg_dt, False)]
            store(g)
            return np.int32(0)

        return _guard(comp, ptx, f)

    return build


for _name in _APPROX:
    HANDLERS[f"tirx.ptx.{_name}"] = _float_op(_name)
