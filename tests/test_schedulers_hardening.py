"""Scheduler traces: size cap, names, bools (issue 20, items 8 and 11)."""

import pytest

from txlab import schedulers
from txlab.errors import InputError


@pytest.mark.parametrize("m, n", [(40000, 40000), (4000, 4000), (2**30, 2**30)])
def test_tile_product_is_capped_before_anything_runs(m, n):
    with pytest.raises(InputError) as info:
        schedulers.trace("ClusterPersistentScheduler2D", 132, num_m_tiles=m, num_n_tiles=n)
    msg = str(info.value)
    assert f"{m * n:,} tiles" in msg and "max_tiles=" in msg, msg
    assert info.value.param == "max_tiles"


def test_cap_applies_to_every_family():
    with pytest.raises(InputError, match="max_tiles="):
        schedulers.trace("GroupMajor3D", 8, m_tiles=2048, n_tiles=2048, k_tiles=2)
    with pytest.raises(InputError, match="max_tiles="):
        schedulers.trace("FlashAttentionLinearScheduler", 8, num_batches=1024, num_heads=1024, num_m_blocks=16)


def test_max_tiles_raises_and_lowers_the_cap():
    with pytest.raises(InputError, match="max_tiles=64"):
        schedulers.trace("GroupMajor3D", 4, m_tiles=8, n_tiles=8, max_tiles=63)
    t = schedulers.trace("GroupMajor3D", 4, m_tiles=8, n_tiles=8, max_tiles=64)
    assert len(t.cta) == 64
    with pytest.raises(InputError, match="max_tiles"):
        schedulers.trace("GroupMajor3D", 4, m_tiles=8, n_tiles=8, max_tiles=0)


def test_message_of_a_caret_only_error_is_not_a_caret_line():
    # the shape of TVM's DiagnosticError for a 2**30 x 2**30 grid (before the cap existed)
    text = (
        "error: Check failed: (small.has_value() && (bits == 64)) is false: Literal value "
        "1152921504606846976 exceeds range of int32\n --> tile_scheduler.py:311:33\n     |  \n"
        " 311 |          if (FULL_GROUPS > 0) & (tile_linear < FULL_GROUPS * GROUP_SPAN):\n"
        "     |                                  ^^^^^^^^^^^^^^^^^^^^^^  "
    )
    assert schedulers.last_message_line(text) == "Literal value 1152921504606846976 exceeds range of int32"
    assert schedulers.last_message_line("  ^^^^\n") == "(no message)"


@pytest.mark.parametrize("name", [None, 123, 4.5, ["GroupMajor3D"]])
def test_scheduler_named_by_a_non_string(name):
    with pytest.raises(InputError) as info:
        schedulers.trace(name, 4)
    assert repr(name) in str(info.value) and "''" not in str(info.value)


@pytest.mark.parametrize("value", ["no", "yes", 0, 1, None, "False"])
def test_bools_must_be_bools(value):
    with pytest.raises(InputError, match="serpentine must be True or False"):
        schedulers.trace("ClusterPersistentScheduler2D", 4, num_m_tiles=4, num_n_tiles=4, serpentine=value)
