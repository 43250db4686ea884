"""Running API examples on a GPU and checking their outputs (txlab.run's comparison)."""

from __future__ import annotations

import datetime
import json

from txlab.api.coverage_rows import VERIFIED_JSON
from txlab.api.entries import entry, examples


# ---- running examples on a GPU ------------------------------------------------------------------
def _problem(got, want, rtol, atol) -> str | None:
    """What is wrong with one output, in words (None if it matches): txlab.run.compare with exact
    integers and NaN == NaN."""
    import numpy as np

    from txlab.run import compare

    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    r = compare(got, want, rtol, atol, exact_integers=True, equal_nan=True)
    if r["ok"]:
        return None
    i = int(np.ravel_multi_index(tuple(r["first_mismatch"]), got.shape)) if got.ndim else 0
    return (
        f"{r['mismatches']} of {got.size} differ; first at flat index {i}: got {got.ravel()[i]}, want {want.ravel()[i]}"
    )


def verify_example(example_id: str) -> dict:
    """Run one example on this GPU and check its outputs against the numpy expectation."""
    from txlab.compiler import compile as compile_kernel
    from txlab.run import expected_outputs, launch

    ex = examples()[example_id]
    if not ex.runnable:
        return {"id": ex.id, "ok": None, "reason": ex.not_on_h200 or "no GPU check written"}
    # ex.arch is the oldest arch the example needs; a cubin only loads on its own major arch,
    # so run it compiled for this GPU's arch.
    compiled = compile_kernel(ex.prim_func(), arch=None)
    args = ex.inputs()
    want = ex.expected(*[a.copy() for a in args])
    expected = expected_outputs(compiled, want, ex.outputs or None)
    launch(compiled, *args, device="gpu")  # verifying the hardware: never the emulator
    index = {p["name"]: i for i, p in enumerate(compiled.params)}
    problems = {}
    if ex.invariant is not None:  # runs first: it may also mask nondeterministic bits (timestamps)
        msg = ex.invariant(*args)
        if msg:
            problems["invariant"] = msg
    for n, w in expected.items():
        p = _problem(args[index[n]], w, ex.rtol, ex.atol)
        if p:
            problems[n] = p
    return {"id": ex.id, "ok": not problems, "problems": problems, "uses": list(ex.uses)}


def verify(name: str) -> list[dict]:
    """Verify every example that uses API ``name`` on this GPU."""
    from txlab.device import require_gpu

    require_gpu("verifying an API example")
    return [verify_example(i) for i in entry(name).examples]


def verify_all(gpu: bool = True, write: bool = False) -> dict:
    """Run every H200-runnable example; with ``write`` record the results in api_verified.json."""
    from txlab.device import probe, require_gpu

    if gpu:
        require_gpu("verifying the API examples")
    results = {}
    for ex_id, ex in examples().items():
        if not ex.runnable:
            continue
        try:
            results[ex_id] = verify_example(ex_id)
        except Exception as exc:  # noqa: BLE001 - any failure of one example is its row's result
            results[ex_id] = {"id": ex_id, "ok": False, "problems": {"error": f"{type(exc).__name__}: {exc}"}}
    info = probe()
    record = {
        "device": getattr(info, "name", None),
        "arch": getattr(info, "arch", None),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "tvm": _tvm_version(),
        "examples": results,
    }
    if write:
        VERIFIED_JSON.write_text(json.dumps(record, indent=1, default=str) + "\n")
    return record


def _tvm_version():
    from txlab.compat import tvm_version

    return tvm_version()


# ---- where an API name shows up in the generated CUDA (APIView) -----------------------------
# What a name lowers to when its own name does not appear in the CUDA (classes of
# tvm.backend.cuda.lang act through the PTX they emit). Keys are qualified names.
