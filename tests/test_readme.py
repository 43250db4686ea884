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
    table = doc[doc.index("| name |") :].strip()
    assert table in block, "README's API table is stale: copy docs/api-coverage.md's table into it"


def test_every_catalogued_name_is_in_the_readme_table():
    import txlab.api as api

    readme = (ROOT / "README.md").read_text()
    missing = [e.name for e in api.catalogue() if f"`{e.name}`" not in readme]
    assert not missing, missing


def _table_cells(doc: str) -> dict:
    """{name: {column header: cell}} of the coverage table (cells split at unescaped pipes)."""
    import re

    lines = doc[doc.index("| name |") :].splitlines()
    split = lambda ln: [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip().strip("|"))]  # noqa: E731
    head = split(lines[0])
    return {cols[0].strip("`"): dict(zip(head, cols)) for cols in map(split, lines[2:]) if cols[0].startswith("`")}


def test_api_table_signatures_are_the_catalogues():
    """The signature column is generated from the catalogue (the real TVM objects), like help()."""
    import txlab.api as api
    from txlab.api.markdown import signature_cell

    for doc in ((ROOT / "docs" / "api-coverage.md").read_text(), (ROOT / "README.md").read_text()):
        cells = _table_cells(doc)
        stale = {
            e.name: cells[e.name]["signature"]
            for e in api.catalogue()
            if cells[e.name]["signature"] != signature_cell({"signature": e.plain_signature})
        }
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
    stale = {
        r["name"]: (cells[r["name"]], api.verified_cell(r)) for r in rows if cells[r["name"]] != api.verified_cell(r)
    }
    assert not stale, f"regenerate docs/api-coverage.md: {stale}"


def _t_spellings(text: str) -> list[str]:
    """Lines that spell TIRx as ``T`` (``T.prim_func``, ``import tirx as T``) rather than ``Tx``."""
    import re

    rx = re.compile(r"(?<![\w.])T\.(?=[A-Za-z_])|import tirx as T\b(?!x)")
    return [ln.strip() for ln in text.splitlines() if rx.search(ln)]


def test_readme_and_notebooks_spell_tirx_one_way():
    """`Tx` everywhere a user reads or copies from (README code and notebooks); README says once
    that `T` is the same module."""
    import re

    import nbformat

    readme = (ROOT / "README.md").read_text()
    code = "\n".join(re.findall(r"```.*?```", readme, flags=re.S))
    assert not _t_spellings(code), _t_spellings(code)
    prose = re.sub(r"```.*?```", "", readme, flags=re.S)
    assert not _t_spellings(prose), _t_spellings(prose)
    assert "`T`, as TVM's own examples import it, is the same module" in readme
    assert "python -m txlab.export --trusted" in readme
    bad = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")) + [ROOT / "tests" / "first_hour.ipynb"]:
        if not path.exists():
            continue
        nb = nbformat.read(path, 4)
        hits = [ln for c in nb.cells for ln in _t_spellings(c.source)]
        if hits:
            bad[path.name] = hits[:3]
    assert not bad, bad


def test_notebooks_carry_no_leftovers():
    """No fallbacks for features that exist (``hasattr(txlab, ...)``) and no notes about how the
    work was done."""
    import re

    import nbformat

    rx = re.compile(r"hasattr\(txlab\b|the lead\b|lead's|earlier H200 sample|\bissue \d+", re.I)
    bad = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, 4)
        hits = [ln.strip() for c in nb.cells for ln in c.source.splitlines() if rx.search(ln)]
        if hits:
            bad[path.name] = hits
    assert not bad, bad


def test_tuning_notebook_writes_its_build_function_in_the_open():
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "11_tuning.ipynb", 4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "def build(" in code and "@Tx.prim_func" in code and "txlab.autotune(build," in code
    assert "copy_build(" not in code
