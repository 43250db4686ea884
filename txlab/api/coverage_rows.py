"""Coverage: per API name, whether it has an example, whether that compiles here, and whether it
was verified on a GPU (the records in ``txlab/data``)."""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from txlab.api.entries import catalogue, examples
from txlab.api.nvshmem import build_nvshmem

VERIFIED_JSON = Path(__file__).resolve().parent.parent / "data" / "api_verified.json"
# Multi-GPU runs (scripts/nvshmem_2gpu.py --json): same "examples" layout, plus "n_gpus".
VERIFIED_MULTI_GPU_JSON = Path(__file__).resolve().parent.parent / "data" / "api_verified_multi_gpu.json"
# Runs under NVIDIA's run-iket on an H200 (scripts/iket_h200.py --record=...): same "examples" layout.
VERIFIED_IKET_JSON = Path(__file__).resolve().parent.parent / "data" / "api_verified_iket.json"


def _compile_one(example_id: str) -> tuple[str, bool, str]:
    """(id, ok, reason). Runs in a worker process; txlab's disk cache makes repeats instant."""
    from txlab.compiler import compile as compile_kernel

    ex = examples()[example_id]
    try:
        if "nvshmem" in ex.needs:
            build_nvshmem(example_id)
        elif ex.compile is not None:
            ex.compile(ex)
        else:
            compile_kernel(ex.prim_func(), arch=ex.arch, progress=lambda *_: None)
        return example_id, True, ""
    except Exception as exc:  # noqa: BLE001 - the reason is reported per example
        return example_id, False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"


def compile_examples(ids=None, workers: int | None = None) -> dict[str, tuple[bool, str]]:
    """Compile examples to cubin for their arch, in a pool of ``workers`` processes (default 2)."""
    ids = list(ids if ids is not None else examples())
    workers = workers or min(2, os.cpu_count() or 1)
    if workers <= 1 or len(ids) <= 1:
        results = [_compile_one(i) for i in ids]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_compile_one, ids))
    return {i: (ok, why) for i, ok, why in results}


def _verified(path: Path | None = None) -> dict:
    try:
        return json.loads((path or VERIFIED_JSON).read_text())
    except FileNotFoundError:
        return {}


def coverage(compile: bool = True, workers: int | None = None) -> list[dict]:  # noqa: A002
    """One dict per API entry: name, signature (without annotations), category, arch, has_example,
    compiles, verified_gpu, examples.

    ``compiles`` is True when every example using the name builds to a cubin for its arch here
    (False with ``compile_error`` otherwise; None when ``compile=False``). ``verified_gpu`` comes
    from txlab/data/api_verified.json (written by ``python -m txlab.api verify --write`` on an
    H200): True/False per the recorded run, None where an H200 cannot run the example.
    ``verified_multi_gpu`` (present only for names whose examples have a multi-GPU record in
    txlab/data/api_verified_multi_gpu.json, written from ``scripts/nvshmem_2gpu.py --json``): True when
    every such recorded run passed.
    """
    exs = examples()
    built = compile_examples(workers=workers) if compile else {}
    verified = _verified().get("examples", {})
    multi = _verified(VERIFIED_MULTI_GPU_JSON).get("examples", {})
    under_iket = _verified(VERIFIED_IKET_JSON).get("examples", {})
    rows = []
    for e in catalogue():
        used = [exs[i] for i in e.examples]
        row = {
            "name": e.name,
            "signature": e.plain_signature,
            "category": e.category,
            "arch": e.arch,
            "has_example": bool(used),
            "examples": list(e.examples),
            "compiles": None,
            "verified_gpu": False,
        }
        if compile:
            oks = [built[x.id][0] for x in used]
            row["compiles"] = bool(used) and all(oks)
            errs = [f"{x.id}: {built[x.id][1]}" for x in used if not built[x.id][0]]
            if errs:
                row["compile_error"] = "; ".join(errs)
        runnable = [x for x in used if x.runnable]
        multi_ids = [x.id for x in used if x.id in multi]
        if multi_ids:  # checked on several GPUs (e.g. NVSHMEM): True/False per the recorded run
            row["verified_multi_gpu"] = all(multi[i].get("ok") is True for i in multi_ids)
        if used and not runnable and all(x.id in under_iket for x in used):
            # IKET examples run only under run-iket; an H200 with NVIDIA's runtime checked them
            row["verified_gpu"] = all(under_iket[x.id].get("ok") is True for x in used)
            row["verified_by"] = "run-iket on an H200 (scripts/iket_h200.py)"
        elif used and not runnable:
            row["verified_gpu"] = None
            row["not_on_h200"] = "; ".join(sorted({x.not_on_h200 or "no GPU check written" for x in used}))
        elif runnable:
            row["verified_gpu"] = all(verified.get(x.id, {}).get("ok") is True for x in runnable)
        rows.append(row)
    return rows
