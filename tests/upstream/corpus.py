"""A corpus of kernels from Apache TVM's own TIRx tests (``tests/python/tirx/**`` at commit
``5d4dc8721307``), each with its inputs and a numpy reference, run on txlab's CPU emulator
(``tests/test_upstream_corpus.py``) and, on an H200, on the GPU too
(``scripts/emulator_vs_h200.py``).

The kernels live in the ``k_*.py`` modules next to this one, carried over from the upstream file
each case names (Apache License 2.0, the upstream header kept at the top of each module); the
inputs and references are ours where the upstream test only checked the generated CUDA text.
sm_80..sm_90a kernels run on an H200 as well; the sm_100a (Blackwell ``tcgen05`` / TMEM) ones
run on the emulator only until a B200 is lent.

    from upstream import corpus
    for case in corpus.cases():
        print(corpus.run(case))

A case's ``expect`` says what a correct emulator reports: ``"pass"`` (outputs equal the
reference), or ``"finding:<kind>"`` for an upstream kernel with a real bug, which the emulator must
report as that finding (a finding, not a failure).
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

UPSTREAM = "apache/tvm"
COMMIT = "5d4dc8721307"
MODULES = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.startswith("k_"))


@dataclass
class Case:
    id: str
    upstream: str                     # path::test[params] in apache/tvm at COMMIT
    build: Callable                   # () -> the @T.prim_func
    inputs: Callable                  # (np.random.Generator) -> list of kernel arguments
    reference: Callable               # (list of inputs, copied) -> {argument index: expected output}
    compare: str = "exact"            # "exact" (bitwise), "ulp:<n>" (float32 ulps), "close:<rtol>"
    expect: str = "pass"              # or "finding:<kind>" (an upstream bug the emulator must report)
    arch: str = "sm_90a"
    slow: bool = False                # emulation takes more than ~2 s on one core
    mufu: bool = False                # uses MUFU transcendentals (the GPU comparison is within ulps)
    note: str = ""
    gpu_differs: str = ""             # why the GPU's outputs are not comparable (uninitialised registers...)
    source_has: str = ""              # a regex the generated CUDA must match: the instruction (and rounding
                                      # mode) the reference models, or what the upstream test greps for
    module: str = field(default="", repr=False)


_CASES: list[Case] = []


def case(id, upstream, *, inputs, reference, **kw):  # noqa: A002 - the upstream test's parameter name
    """Register the decorated builder (returns the prim_func) as a corpus case."""
    def deco(build):
        mod = build.__module__.rsplit(".", 1)[-1]
        _CASES.append(Case(id=f"{mod[2:]}/{id}", upstream=upstream, build=build, inputs=inputs,
                           reference=reference, module=mod, **kw))
        return build
    return deco


def cases() -> list[Case]:
    # every module, even when one was imported directly before (importing again registers nothing)
    pkg = __name__.rsplit(".", 1)[0]
    for m in MODULES:
        importlib.import_module(f"{pkg}.{m}" if pkg != __name__ else m)
    return list(_CASES)


def ulps(got, want) -> int:
    g = np.asarray(got, np.float32).ravel()
    w = np.asarray(want, np.float32).ravel()
    both_nan = np.isnan(g) & np.isnan(w)
    gi = g.view(np.int32).astype(np.int64)
    wi = w.view(np.int32).astype(np.int64)
    gi = np.where(gi < 0, -(gi & 0x7FFFFFFF), gi)
    wi = np.where(wi < 0, -(wi & 0x7FFFFFFF), wi)
    d = np.where(both_nan, 0, np.abs(gi - wi))
    return int(d.max()) if d.size else 0


_F32_MAX = Fraction((2**24 - 1) * 2**104)
_F32_MIN_NORMAL = Fraction(1, 2**126)


def _f32_round(q: Fraction, neg: bool, mode: str, ftz: bool) -> np.float32:
    """The magnitude ``q`` > 0 (exact), of sign ``neg``, rounded to float32 by the PTX rounding
    modifier ``mode`` (rn: to nearest even, rz: toward zero, rm: toward -inf, rp: toward +inf);
    ``ftz`` flushes a subnormal result to a zero of its sign."""
    e = q.numerator.bit_length() - q.denominator.bit_length()  # 2**(e - 1) < q < 2**(e + 1)
    if q < Fraction(2) ** e:
        e -= 1  # now 2**e <= q < 2**(e + 1)
    step = Fraction(2) ** (max(e, -126) - 23)  # the float32 spacing at q (subnormals: 2**-149)
    k, rem = divmod(q / step, 1)
    up = {"rn": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and k % 2 == 1),
          "rz": False, "rm": neg and rem > 0, "rp": not neg and rem > 0}[mode]
    mag = (k + up) * step
    if mag > _F32_MAX:  # overflow: to infinity, or the largest finite value when rounding toward zero
        toward_zero = mode == "rz" or (mode == "rm" and not neg) or (mode == "rp" and neg)
        mag_f = np.float32(3.4028235e38) if toward_zero else np.float32(np.inf)
    elif ftz and mag < _F32_MIN_NORMAL:
        mag_f = np.float32(0.0)
    else:
        mag_f = np.float32(float(mag))  # exact: mag is a float32 value
    return -mag_f if neg else mag_f


def f32_arith(op: str, *xs, mode: str = "rn", ftz: bool = False) -> np.float32:
    """One float32 ``add``/``sub``/``mul``/``fma`` (a * b + c, one rounding) of float32 operands,
    computed exactly (rationals) and rounded once by ``mode``, as PTX's ``<op>.<mode>[.ftz].f32``
    does: with ``ftz``, subnormal operands read as zeros of their sign and a subnormal result is
    flushed. IEEE 754 signs an exact zero sum ``+0`` (``-0`` under ``rm``) unless both addends are
    zeros of one sign. An independent model for references: it shares no code with the emulator."""
    xs = [np.float32(x) for x in xs]
    if ftz:
        xs = [np.copysign(np.float32(0.0), x) if 0 < abs(x) < np.float32(2.0**-126) else x for x in xs]
    if op == "sub":
        op, xs = "add", [xs[0], -xs[1]]
    if not all(np.isfinite(xs)):  # infinities and NaN: no rounding involved
        a = [np.float64(x) for x in xs]
        with np.errstate(invalid="ignore"):  # inf * 0, inf - inf: NaN, as on the GPU
            return np.float32({"add": lambda: a[0] + a[1], "mul": lambda: a[0] * a[1],
                               "fma": lambda: a[0] * a[1] + a[2]}[op]())
    f = [Fraction(float(x)) for x in xs]
    sign = [bool(np.signbit(x)) for x in xs]
    if op == "add":
        exact, terms = f[0] + f[1], [sign[0], sign[1]]
    elif op == "mul":
        exact, terms = f[0] * f[1], [sign[0] != sign[1]] * 2
    elif op == "fma":
        exact, terms = f[0] * f[1] + f[2], [sign[0] != sign[1], sign[2]]
    else:
        raise ValueError(op)
    if exact == 0:
        neg = terms[0] if terms[0] == terms[1] else mode == "rm"
        return np.copysign(np.float32(0.0), np.float32(-1.0 if neg else 1.0))
    return _f32_round(abs(exact), exact < 0, mode, ftz)


def f32_map(op: str, *arrays, mode: str = "rn", ftz: bool = False) -> np.ndarray:
    """:func:`f32_arith` elementwise over broadcast arrays (or scalars)."""
    bs = np.broadcast_arrays(*[np.asarray(a, np.float32) for a in arrays])
    out = np.empty(bs[0].shape, np.float32)
    for i in np.ndindex(out.shape):
        out[i] = f32_arith(op, *(b[i] for b in bs), mode=mode, ftz=ftz)
    return out


def compare(got, want, mode: str) -> str | None:
    """None when ``got`` matches ``want`` under ``mode``, else what differs."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if mode == "exact":
        if got.dtype.kind == "f" or str(got.dtype) in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            g = got.view(np.dtype(f"u{got.dtype.itemsize}"))
            w = np.asarray(want, got.dtype).view(g.dtype)
            bad = (g != w) & ~(np.isnan(got.astype(np.float32)) & np.isnan(np.asarray(want, got.dtype).astype(np.float32)))
        else:
            bad = got != np.asarray(want, got.dtype)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return f"{int(bad.sum())} of {got.size} differ (bitwise); first at {i}: {got.ravel()[i]!r} != {want.ravel()[i]!r}"
        return None
    if mode.startswith("ulp:"):
        n = ulps(got, want)
        return None if n <= int(mode[4:]) else f"{n} ulps apart (allowed {mode[4:]})"
    if mode.startswith("close:"):
        rtol = float(mode[6:])
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol, equal_nan=True)
        return None if ok else f"not within rtol {rtol}: max |diff| {np.abs(got.astype(np.float64) - want.astype(np.float64)).max()}"
    raise ValueError(mode)


def fresh_inputs(c: Case, seed: int = 0) -> list:
    return c.inputs(np.random.default_rng(seed))


def run(c: Case, seed: int = 0) -> dict:
    """Emulate one case: {"id", "status" (pass / fail / not_emulated / finding / error), "detail",
    "seconds", "outputs" (argument index -> array)}."""
    from txlab.emulator import emulate
    from txlab.errors import NotEmulatedError

    t0 = time.perf_counter()
    out = {"id": c.id, "upstream": c.upstream, "expect": c.expect}
    try:
        func = c.build()
        args = fresh_inputs(c, seed)
        want = c.reference([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        res = emulate(func, *args, arch=c.arch)
    except NotEmulatedError as exc:
        out.update(status="not_emulated", detail=str(exc), function=getattr(exc, "name", None),
                   line=getattr(exc, "lineno", None), seconds=time.perf_counter() - t0)
        return out
    except Exception as exc:  # noqa: BLE001 - a corpus run reports every failure as data
        out.update(status="error", detail=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
        return out
    kinds = sorted({f.kind for f in res.findings})
    problems = {i: p for i, w in want.items() if (p := compare(args[i], w, c.compare))}
    if c.expect.startswith("finding:"):
        kind = c.expect.split(":", 1)[1]
        status = "finding" if kind in kinds and not problems else "fail"
        detail = "; ".join(str(f) for f in res.findings[:3]) or "the upstream bug was not reported"
        if problems:  # the bug is reported and the outputs are still right
            detail = "; ".join(f"arg {i}: {p}" for i, p in problems.items()) + "; " + detail
    elif res.findings:
        status, detail = "fail", "; ".join(str(f) for f in res.findings[:3])
    elif problems:
        status, detail = "fail", "; ".join(f"arg {i}: {p}" for i, p in problems.items())
    else:
        status, detail = "pass", ""
    out.update(status=status, detail=detail, findings=kinds, seconds=time.perf_counter() - t0,
               outputs={i: args[i] for i in want})
    return out


def ok(result: dict) -> bool:
    """The emulator answered this case right (its outputs, or the upstream bug's finding)."""
    return result["status"] == "pass" or (result["status"] == "finding" and result["expect"].startswith("finding:"))


def _init_worker(path):
    import sys

    if path not in sys.path:
        sys.path.insert(0, path)


def _run_ids(ids):
    by_id = {c.id: c for c in cases()}
    out = []
    for i in ids:
        r = run(by_id[i])
        r.pop("outputs", None)
        out.append(r)
    return out


def run_all(selected=None, workers: int = 2) -> list[dict]:
    """Emulate every case (or ``selected`` ids), in ``workers`` processes; results in corpus order,
    without their output arrays."""
    import concurrent.futures as cf
    import multiprocessing as mp

    ids = [c.id for c in cases() if selected is None or c.id in selected]
    if workers <= 1 or len(ids) < 4:
        return _run_ids(ids)
    tests_dir = str(Path(__file__).resolve().parent.parent)
    chunks = [ids[k::workers] for k in range(workers)]
    with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                                initargs=(tests_dir,)) as ex:
        parts = list(ex.map(_run_ids, chunks))
    got = {r["id"]: r for part in parts for r in part}
    return [got[i] for i in ids]
