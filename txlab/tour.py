"""``python -m txlab.tour NOTEBOOK OUT.html``: execute a notebook headless (nbclient), export it to
self-contained HTML with its widget state (:func:`txlab.export.export_html`: the widgets render
with no network), and print a short summary. Used by ``make demo``."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def run(notebook: str, out_html: str, timeout: int = 900) -> dict:
    from nbclient import NotebookClient

    from txlab.device import probe
    from txlab.export import export_html, read_notebook

    nb = read_notebook(notebook)  # (a file that is not a notebook: ExportError, one line)
    t0 = time.perf_counter()
    total = sum(c.cell_type == "code" for c in nb.cells)
    done = {"n": 0}

    def on_cell_executed(cell, cell_index, execute_reply, **_):
        if cell.cell_type == "code":
            done["n"] += 1
            sys.stderr.write(
                f"\r  running {Path(notebook).name}: cell {done['n']}/{total} ({time.perf_counter() - t0:.0f} s)"
            )
            sys.stderr.flush()

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        store_widget_state=True,
        on_cell_executed=on_cell_executed,
        resources={"metadata": {"path": str(Path(notebook).parent)}},
    )
    client.execute()
    sys.stderr.write("\n")
    seconds = time.perf_counter() - t0
    errors, expected = [], 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        raises = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        text = "".join(
            str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", [])
        )
        if raises and "Error" in text:
            expected += 1  # txlab errors are shown as a message, not as an error output
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                if raises:
                    expected += 1
                else:
                    errors.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}")
    exported = export_html(nb, out_html, title=Path(notebook).stem)
    gpu = probe()
    return {
        "notebook": notebook,
        "html": out_html,
        "seconds": seconds,
        "code_cells": sum(c.cell_type == "code" for c in nb.cells),
        "errors": errors,
        "expected_errors": expected,
        "html_bytes": exported.html_bytes,
        "widgets": exported.widget_views,
        "gpu": gpu.name if gpu.available else f"none ({gpu.reason})",
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m txlab.tour NOTEBOOK.ipynb OUT.html", file=sys.stderr)
        return 2
    from txlab.export import ExportError

    try:
        r = run(*argv)
    except ExportError as exc:
        print(f"txlab tour: {exc}", file=sys.stderr)
        return 1
    print(f"txlab tour: ran {r['code_cells']} code cells of {r['notebook']} in {r['seconds']:.1f} s (GPU: {r['gpu']})")
    print(
        f"  wrote {r['html']} ({r['html_bytes'] / 1024:.0f} KiB, {r['widgets']} widget(s), "
        "self-contained: opens offline)"
    )
    print(f"  unexpected errors: {len(r['errors'])}; demonstrated errors: {r['expected_errors']}")
    for e in r["errors"]:
        print(f"  ! {e}")
    return 1 if r["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
