"""README promises: the documented test command is what CI runs, and the API coverage table in
README matches docs/api-coverage.md (regenerate with `python -m txlab.api coverage --markdown ...`)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_documented_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "**`make test`**" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_coverage_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text()
    doc = (ROOT / "docs" / "api-coverage.md").read_text()
    block = readme.split("<!-- api-coverage:start", 1)[1].split("<!-- api-coverage:end -->", 1)[0]
    table = doc[doc.index("| name |"):].strip()
    assert table in block, "README's API table is stale: copy docs/api-coverage.md's table into it"


def test_every_catalogued_name_is_in_the_readme_table():
    import txlab.api as api

    readme = (ROOT / "README.md").read_text()
    missing = [e.name for e in api.catalogue() if f"`{e.name}`" not in readme]
    assert not missing, missing


def _table_cells(doc: str) -> dict:
    """{name: {column header: cell}} of the coverage table (cells split at unescaped pipes)."""
    import re

    lines = doc[doc.index("| name |"):].splitlines()
    split = lambda ln: [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip().strip("|"))]  # noqa: E731
    head = split(lines[0])
    return {cols[0].strip("`"): dict(zip(head, cols)) for cols in map(split, lines[2:]) if cols[0].startswith("`")}


def test_api_table_signatures_are_the_catalogues():
    """The signature column is generated from the catalogue (the real TVM objects), like help()."""
    import txlab.api as api
    from txlab.api.markdown import signature_cell

    for doc in ((ROOT / "docs" / "api-coverage.md").read_text(), (ROOT / "README.md").read_text()):
        cells = _table_cells(doc)
        stale = {e.name: cells[e.name]["signature"] for e in api.catalogue()
                 if cells[e.name]["signature"] != signature_cell({"signature": e.plain_signature})}
        assert not stale, f"regenerate docs/api-coverage.md: {stale}"
    assert cells["Tx.cuda.__shfl_xor_sync"]["signature"] == "`(mask, var, lane_mask, width)`"
    assert cells["Tx.cuda.atomic_add"]["signature"] == "`(res_addr, value)`"
    assert cells["tvm.backend.cuda.lang.MBarrier"]["signature"] == "`(pool, depth, phase_offset=0, leader=None)`"


def test_coverage_doc_matches_the_recorded_gpu_runs():
    """docs/api-coverage.md's "verified on H200" column is what the records in txlab/data say now
    (a record left out of the repository, or a stale table, fails here)."""
    import txlab.api as api

    doc = (ROOT / "docs" / "api-coverage.md").read_text()
    cells = {name: cols["verified on H200"] for name, cols in _table_cells(doc).items()}
    rows = api.coverage(compile=False)
    assert {r["name"] for r in rows} == set(cells)
    stale = {r["name"]: (cells[r["name"]], api.verified_cell(r)) for r in rows
             if cells[r["name"]] != api.verified_cell(r)}
    assert not stale, f"regenerate docs/api-coverage.md: {stale}"

