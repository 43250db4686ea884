"""The coverage table as Markdown (docs/api-coverage.md)."""

from __future__ import annotations

from pathlib import Path

from txlab.api.coverage_rows import coverage


_MARK = {True: "yes", False: "no", None: "n/a"}


def verified_cell(row: dict) -> str:
    """The "verified on H200" cell of a coverage row, as the Markdown table shows it."""
    text = _MARK[row["verified_gpu"]]
    if "verified_by" in row and row["verified_gpu"] is not None:
        text += " (run-iket)"
    if "verified_multi_gpu" in row:
        text += f"; {_MARK[row['verified_multi_gpu']]} on 2 H200s"
    return text


EMULATED_RECORD = Path(__file__).resolve().parent.parent / "data" / "api_emulated.json"


def emulated_examples_cell(example_ids, record: dict | None = None) -> str:
    """The examples that use a name, with their emulation status ('-' when no runnable example
    uses it), from ``record`` or txlab/data/api_emulated.json (``python -m txlab.api.emulated``)."""
    import json

    rec = (
        record
        if record is not None
        else (json.loads(EMULATED_RECORD.read_text()) if EMULATED_RECORD.exists() else {"examples": {}})
    )
    rows = [rec["examples"].get(e) for e in example_ids]
    rows = [r for r in rows if r]
    if not rows:
        return "-"
    good = [r for r in rows if r["status"].startswith(("bitwise", "within"))]
    verdict = "yes" if len(good) == len(rows) else "no"
    return verdict + " (" + ", ".join(f"{r['id']}: {r['status']}" for r in rows) + ")"


def emulated_cell(row: dict) -> str:
    """The "emulated on CPU" cell: whether txlab.emulate reproduces the row's examples' verified
    results."""
    return emulated_examples_cell(row["examples"]).replace("|", "/")


def signature_cell(row: dict) -> str:
    """The "signature" cell: the name's parameters as ``txlab.api.help`` shows them, without
    annotations (``txlab.api.entry(name).plain_signature``)."""
    sig = row.get("signature") or "(...)"
    return "`" + sig.replace("|", "\\|") + "`"


def coverage_markdown(rows: list[dict] | None = None) -> str:
    rows = rows if rows is not None else coverage()
    n = len(rows)
    ex = sum(r["has_example"] for r in rows)
    ok = sum(bool(r["compiles"]) for r in rows)
    gpu = sum(r["verified_gpu"] is True for r in rows)
    na = sum(r["verified_gpu"] is None for r in rows)
    runnable = n - na
    by_iket = sum(r["verified_gpu"] is True and "verified_by" in r for r in rows)
    multi = sum(r.get("verified_multi_gpu") is True for r in rows)
    out = [
        f"{n} API names in the installed TVM; {ex} have an example kernel, {ok} of those compile "
        f"to cubin here, {runnable} have an example an H200 can run and check, {gpu} of them verified "
        f"on an H200 (txlab/data/api_verified.json; {by_iket} of them under NVIDIA's run-iket, "
        f"api_verified_iket.json), {na} cannot be checked on one H200 (sm_100a, multi-GPU NVSHMEM, "
        f"cooperative launch: see the last column); {multi} of those were verified on 2 H200s "
        f"(api_verified_multi_gpu.json).",
        "",
        "| name | signature | category | arch | example | compiles | verified on H200 | emulated on CPU | why not |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        why = "; ".join(x for x in (r.get("compile_error"), r.get("not_on_h200")) if x).replace("|", "/")
        out.append(
            f"| `{r['name']}` | {signature_cell(r)} | {r['category']} | {r['arch']} | "
            f"{', '.join(r['examples']) or '—'} | {_MARK[r['compiles']] if r['has_example'] else '—'} | "
            f"{verified_cell(r)} | {emulated_cell(r)} | {why} |"
        )
    return "\n".join(out) + "\n"
