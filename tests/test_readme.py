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
