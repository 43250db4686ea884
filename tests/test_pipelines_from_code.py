"""``txlab.pipelines.from_kernel`` on rings it was not written around (tests/kernels/pipes.py): a wait parity
written as a nested XOR or computed from the loop index is read (a wrong one is found at its wait), an arrive
with a count counts that many, and an arrive some iterations skip is a problem of those phases."""

import sys
from pathlib import Path

import pytest

from txlab import pipelines as P

sys.path.insert(0, str(Path(__file__).parent / "kernels"))
import pipes  # noqa: E402


def _src_line(kernel_fn, text):
    import inspect

    src, start = inspect.getsourcelines(kernel_fn)
    return start + next(i for i, t in enumerate(src) if text in t)


def _problems(kernel):
    t = P.from_kernel(kernel).simulate(12)
    return t, [(p.kind, p.lineno) for p in t.problems]


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: pipes.two_stage(cons_xor=1), "pipe.full.wait(cs.stage, cs.phase ^ cons_xor)"),
        (lambda: pipes.five_stage(bad_wait_xor=1), "full.wait(k % S"),
        (lambda: pipes.five_stage(prod_phase=0), "empty.wait(k % S"),
    ],
)
def test_a_wrong_wait_parity_is_found_at_its_wait(make, text):
    t, probs = _problems(make())
    want = _src_line(pipes.two_stage if "cs.phase" in text else pipes.five_stage, text)
    assert not t.ok and ("deadlock", want) in probs, (probs, t.summary())


@pytest.mark.parametrize("make", [lambda: pipes.two_stage(), lambda: pipes.five_stage()])
def test_the_right_rings_pass_with_their_parities_read(make):
    spec = P.from_kernel(make())
    t = spec.simulate(12)
    assert t.ok and not t.assumed, (t.summary(), spec.notes)


def test_an_arrive_with_a_count_counts_that_many():
    spec = P.from_kernel(pipes.two_stage(arrive="count4", init_empty=4))
    assert spec.arrivals_empty == 4 and spec.simulate(12).ok
    t, probs = _problems(pipes.two_stage(arrive="count4", init_empty=1))
    assert not t.ok and any(k == "over_arrival" for k, _ in probs), probs


def test_an_arrive_skipped_in_one_iteration_is_that_phases_problem():
    t, probs = _problems(pipes.five_stage(skip_first_arrive=True))
    line = _src_line(pipes.five_stage, "if tid % 32 == 0 and (tid < 96 or k > 0):") + 1
    assert ("under_arrival", line) in probs, (probs, t.summary())
    (p,) = [p for p in t.problems if p.kind == "under_arrival"]
    assert "phase 0" in p.message and "receives 2 arrival(s)" in p.message and "initialised for 3" in p.message
