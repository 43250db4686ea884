"""The bugs planted in notebook 10 (txlab.examples.bugs), found by the CPU emulator at the line the
sanitizer names on the H200: the ``# BUG(name)`` marker line, the recorded compute-sanitizer
report's line (txlab/data/sanitizer_reports.json, when the lead has recorded it) and, for the
over-arrival, the pipeline checker's line."""

from __future__ import annotations

import inspect
import re

import pytest

from txlab.emulator import emulate
from txlab.examples import bugs

#: planted bug -> the kind of emulator finding that is that bug
EMULATED = {
    "oob_write": "out_of_bounds",
    "shared_race": "shared_race",
    "divergent_barrier": "divergent_barrier",
    "over_arrival": "over_arrival",
}


def _lines(f) -> set:
    return {x for x in (f.line, f.other_line) if x is not None}


def _marked(text: str) -> int:
    """Line of txlab/examples/bugs.py containing ``text`` (the source as the file has it)."""
    src, first = inspect.getsourcelines(bugs)
    hits = [max(first, 1) + i for i, line in enumerate(src) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def _emulated(name):
    res = emulate(bugs.kernel(name), *bugs.inputs(name), arch="sm_90a")
    hits = res.by_kind(EMULATED[name])
    assert hits, res.summary()
    return hits, res


@pytest.mark.parametrize("name", list(EMULATED))
def test_emulator_finds_the_planted_bug_at_its_marker_line(name):
    hits, res = _emulated(name)
    line = bugs.bug_line(name)
    assert all(f.line == line for f in hits), res.summary()
    if name == "oob_write":  # thread 232 of CTA 3 is i == n == 1000: one past B's 1000 floats
        f = hits[0]
        assert f.buffer == "B" and f.cta == (3, 0, 0) and f.threads == [232] and f.count == 1, f
        assert "write" in f.message and "element 1000" in f.message
    if name == "shared_race":  # the read at the marker, the other thread's write two lines up
        assert _lines(hits[0]) == {line, _marked("# the write")}
    if name == "divergent_barrier":
        assert "128 of 256 threads" in hits[0].message
    # nothing else is reported, except the over-arrival's consequences: the next phase completes
    # early (a phase skip, at the same line) and the ring then hangs (as it does on a GPU)
    after = ("phase_skip", "deadlock") if name == "over_arrival" else ()
    others = [f for f in res.findings if f.kind not in (EMULATED[name], "note") + after]
    assert not others, res.summary()
    assert all(f.line == line for f in res.by_kind("phase_skip"))
    fixed = emulate(bugs.kernel(name, fixed=True), *bugs.inputs(name), arch="sm_90a")
    assert fixed.ok, fixed.summary()


@pytest.mark.parametrize("name", ["oob_write", "shared_race", "divergent_barrier"])
def test_emulator_lines_equal_the_recorded_sanitizer_report(name):
    from txlab import sanitizer

    try:
        rep = sanitizer.recorded(name)
    except FileNotFoundError:
        pytest.skip(
            "txlab/data/sanitizer_reports.json is not recorded yet (scripts/sanitize_h200.py "
            "on the H200); the marker-line comparison above still runs"
        )
    except KeyError as exc:
        pytest.fail(f"the recorded sanitizer reports lack {name!r}: {exc}")
    tool, kind = bugs.EXPECTED[name]
    sanitized = [
        {x for x in (f.lineno, (f.other or {}).get("lineno")) if x is not None}
        for f in rep.findings
        if f.tool == tool and f.kind == kind
    ]
    assert sanitized, rep.summary()
    hits, _ = _emulated(name)
    # some finding of that tool names exactly the emulator's line(s) -- both of a race's accesses
    assert _lines(hits[0]) in sanitized, (sorted(_lines(hits[0])), sanitized)
    assert bugs.bug_line(name) in _lines(hits[0])


def test_over_arrival_line_equals_the_pipeline_checkers():
    from txlab import pipelines as P

    over = [p for p in P.from_kernel(bugs.kernel("over_arrival")).simulate(32).problems if p.kind == "over_arrival"]
    hits, _ = _emulated("over_arrival")
    assert over and over[0].lineno == hits[0].line == bugs.bug_line("over_arrival")
    # the emulator counts the arrivals the threads really make: 32 per warp where init expects 1
    assert re.search(r"32 thread\(s\) arrived 32 time\(s\).*only 4 arrival", hits[0].message), hits[0]
