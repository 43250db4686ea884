"""pipelines.simulate validates every parameter and caps its work (issue 20, item 5)."""

import pytest

from txlab import pipelines as P
from txlab.errors import TxlabError

PROD = [("wait", "empty"), ("arrive", "full"), ("advance",)]
CONS = [("wait", "full"), ("arrive", "empty"), ("advance",)]


def test_script_error_is_a_txlab_error():
    assert issubclass(P.ScriptError, TxlabError) and issubclass(P.ScriptError, ValueError)


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(producer_phase=2), "producer_phase"),
        (dict(consumer_phase=-1), "consumer_phase"),
        (dict(producer_phase=True), "producer_phase"),
        (dict(producers=-2), "producers"),
        (dict(producers=0), "producers"),
        (dict(consumers=0), "consumers"),
        (dict(consumers=10**9), "consumers"),
        (dict(iterations=-1), "iterations"),
        (dict(iterations=10**12), "iterations"),
        (dict(iterations=2.5), "iterations"),
        (dict(init_full=10**18), "init_full"),
        (dict(init_empty=True), "init_empty"),
        (dict(tx_bytes=-5), "tx_bytes"),
        (dict(tx_bytes=(1, 2, 3)), "tx_bytes"),
        (dict(tx_bytes="big"), "tx_bytes"),
        (dict(tx_bytes=10**18), "tx_bytes"),
    ],
)
def test_bad_parameters_are_refused(kwargs, needle):
    kw = dict(iterations=4)
    kw.update(kwargs)
    with pytest.raises(P.ScriptError, match=needle):
        P.simulate(2, **kw)


@pytest.mark.parametrize("stages", [0, -1, 10**9, True, "4"])
def test_bad_stages(stages):
    with pytest.raises(P.ScriptError, match="stages"):
        P.simulate(stages, iterations=4)


def test_role_with_negative_iterations_is_refused_not_looped_forever():
    with pytest.raises(P.ScriptError, match="iterations"):
        P.simulate(2, iterations=4, roles={"producer": {"ops": PROD, "iterations": -1}, "consumer": CONS})


def test_huge_arrival_count_is_refused_not_looped():
    with pytest.raises(P.ScriptError, match="arrival count"):
        P.simulate(
            2,
            iterations=4,
            roles={"producer": [("wait", "empty"), ("arrive", "full", 10**18), ("advance",)], "consumer": CONS},
        )
    with pytest.raises(P.ScriptError, match="tx-count"):
        P.simulate(
            2,
            iterations=4,
            roles={
                "producer": [("wait", "empty"), ("arrive_expect_tx", "full", 10**18), ("advance",)],
                "consumer": CONS,
            },
        )


def test_event_cap_says_how_to_raise_it():
    with pytest.raises(P.ScriptError, match="max_events="):
        P.simulate(4, iterations=2_000_000)
    t = P.simulate(4, iterations=2000, max_events=20_000)
    assert t.finished
    with pytest.raises(P.ScriptError, match="max_events="):
        P.simulate(4, iterations=2000, max_events=1000)


def test_a_good_protocol_still_runs():
    t = P.simulate(3, iterations=16, producers=1, consumers=2)
    assert t.finished and t.deadlock is None


def test_pipeline_view_of_something_else_is_a_typed_error():
    """PipelineView(42) failed with an AttributeError from deep inside; it names what it shows."""
    from txlab.errors import InputError
    from txlab.views import PipelineView

    with pytest.raises(InputError, match="PipelineView shows a txlab.pipelines.PipelineTrace.*not int"):
        PipelineView(42)


def test_a_pipeline_the_kernel_never_waits_on_is_not_called_sound():
    """from_kernel reads a declared pipeline the kernel never waits on with assumed kinds and phases; a finished
    simulation of that assumption said 'no problem found' as if it spoke for the kernel. The trace keeps what was
    assumed and its summary says the kernel does not run the pipeline as simulated."""
    from txlab.pipelines.spec import PipelineSpec

    quiet = PipelineSpec(stages=3, notes=["no wait on the empty barriers found", "no wait on the full barriers found"])
    t = quiet.simulate(4)
    assert t.ok and t.assumed == ("no wait on the empty barriers found", "no wait on the full barriers found")
    assert "does not run this pipeline as simulated" in t.summary()
    used = PipelineSpec(stages=3, notes=["consumers = init_empty = 1 (one arrival per consumer role assumed)"])
    assert used.simulate(4).assumed == () and used.simulate(4).summary().endswith("no problem found.")
