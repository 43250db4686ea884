"""How many CTAs of a launch that polls global memory the emulator runs at once: what 132 SMs hold of them (threads,
shared memory, registers), not a fixed 132 (a soft grid barrier of 200 small CTAs was a false deadlock); and a poll
that waits on a CTA ``ctas=`` left out is ``partial_grid_wait``, not a GPU hang."""

import numpy as np
import pytest

from txlab.emulator import emulate

from test_emulator import kernel, line_of

# every CTA arrives on a counter and waits for all of them: right on a GPU only while every CTA is resident
SOFT = """
@T.prim_func
def soft(P: T.Buffer((CTAS,), "int32"), C: T.Buffer((1,), "int32"), Out: T.Buffer((CTAS,), "int32")):
    T.device_entry()
    bx = T.cta_id([CTAS])
    tx = T.thread_id([64])
    pad = T.alloc_shared((SMEM,), "float32")
    seen = T.alloc_local((1,), "int32")
    pad[tx] = T.float32(0)
    if tx == 0:
        P[bx] = bx + 1
        T.cuda.thread_fence()
        T.cuda.atomic_add(T.address_of(C[0]), 1)
        T.cuda.wait_until(seen[0], T.address_of(C[0]), seen[0] >= CTAS)  # the wait
        T.cuda.thread_fence()
        Out[bx] = P[(bx + 1) % CTAS]
"""


def soft(ctas: int, smem_floats: int = 64):
    src = SOFT.replace("CTAS", str(ctas)).replace("SMEM", str(smem_floats))
    return kernel(src, "soft"), src


def run(k, n, **kw):
    p, c, out = np.zeros(n, np.int32), np.zeros(1, np.int32), np.zeros(n, np.int32)
    return emulate(k, p, c, out, timeout_s=120, **kw), out


@pytest.mark.parametrize("ctas", [133, 200])
def test_small_ctas_past_132_are_all_resident(ctas):
    k, _ = soft(ctas)
    res, out = run(k, ctas)
    assert res.ok, res.findings
    assert np.array_equal(out, (np.arange(ctas) + 1) % ctas + 1)
    assert "up to 4224 resident at once" in res.stats["resident"]  # 32 CTAs of 64 threads per SM


def test_ctas_that_fill_an_sm_each_still_stop_at_132():
    k, src = soft(133, smem_floats=30000)  # 117 KiB of shared memory: one CTA per SM
    res, _ = run(k, 133)
    (d,) = [f for f in res.findings if f.kind == "deadlock"]
    assert d.line == line_of(src, "# the wait") and "1 CTA(s) of the launch wait for a resident one to end" in d.message


def test_a_wait_on_a_cta_ctas_left_out_is_not_a_hang():
    k, src = soft(8)
    res, _ = run(k, 8, ctas=[0])
    kinds = [f.kind for f in res.findings]
    assert kinds == ["partial_grid_wait"], res.findings
    assert "ctas= ran 1 of the grid's 8 CTAs" in res.findings[0].message and "not a hang" in res.findings[0].message
