"""Launch extents TVM leaves symbolic (``T.Cast("int64", n) * T.int64(4)`` bytes of dynamic shared memory,
``(n + 255) // 256`` CTAs) are evaluated from the arguments by reading the expression, never by running it."""

import numpy as np
import pytest

from txlab.errors import InputError
from txlab.launch import eval_dims, eval_int_text


@pytest.mark.parametrize(
    "text, names, want",
    [
        ('T.Cast("int64", n) * T.int64(4)', {"n": 4096}, 16384),
        ("(n + 255) // 256", {"n": 1000}, 4),
        ("T.max(m, 1)", {"m": 0}, 1),
        ("T.min(m, 8) * 32", {"m": 3}, 96),
        ("T.truncdiv(0 - n, 3)", {"n": 7}, -2),
        ("T.floordiv(0 - n, 3)", {"n": 7}, -3),
        ("T.truncmod(0 - n, 3)", {"n": 7}, -1),
        ("T.if_then_else(n < 64, 64, n) * 2", {"n": 100}, 200),
        ("T.shift_left(n, 2) + n % 5", {"n": 7}, 30),
        ('T.uint32(n) * T.Cast("uint64", m)', {"n": 3, "m": np.int64(5)}, 15),
    ],
)
def test_integer_launch_expressions(text, names, want):
    assert eval_int_text(text, names) == want
    assert eval_dims((text, 1), names) == (want, 1)


@pytest.mark.parametrize(
    "text, names",
    [
        ('__import__("os").getcwd()', {}),  # nothing is executed
        ("n.bit_length()", {"n": 3}),
        ('T.Cast("float32", n) * 2', {"n": 3}),  # not integer arithmetic
        ("T.exp(n)", {"n": 3}),
        ("x * 4", {"x": 2.5}),
        ("n * 4", {}),  # unbound: the text comes back
    ],
)
def test_anything_else_stays_text(text, names):
    assert eval_dims(text, names) == text


DYN_SMEM = """
from tvm.script import tirx as Tx

@Tx.prim_func
def rowsum(A_ptr: Tx.handle, B_ptr: Tx.handle, n: Tx.int32):
    A = Tx.match_buffer(A_ptr, (64, n), "float32")
    B = Tx.match_buffer(B_ptr, (64,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([64])
    tx = Tx.thread_id([128])
    buf = Tx.alloc_buffer((n,), "float32", scope="shared.dyn")
    for j in range(Tx.ceildiv(n, 128)):
        if j * 128 + tx < n:
            buf[j * 128 + tx] = A[bx, j * 128 + tx]
    Tx.cuda.cta_sync()
    if tx == 0:
        acc = Tx.alloc_local((1,), "float32")
        acc[0] = Tx.float32(0)
        for j in range(n):
            acc[0] = acc[0] + buf[j]
        B[bx] = acc[0]
"""


@pytest.fixture(scope="module")
def dyn_smem_kernel(tmp_path_factory):
    import importlib.util

    import txlab

    path = tmp_path_factory.mktemp("dyn") / "rowsum.py"
    path.write_text(DYN_SMEM)
    spec = importlib.util.spec_from_file_location("rowsum_dyn", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return txlab.compile(mod.rowsum, arch="sm_90a", progress=lambda s: None)


def test_dynamic_shared_memory_sized_by_an_argument(dyn_smem_kernel):
    import txlab
    from txlab.launch import launch_shape

    c = dyn_smem_kernel
    (info,) = c.launch.values()
    assert isinstance(info["dynamic_smem_bytes"], str)  # TVM's host code computes it from n
    n = 12288  # 48 KiB of the row in shared memory: 4 CTAs of 228 KiB per SM
    a = np.zeros((64, n), np.float32)
    b = np.zeros(64, np.float32)
    assert launch_shape(c, (a, b, n))["dynamic_smem_bytes"] == 4 * n
    occ = txlab.occupancy_of(c, args=(a, b, n))
    assert occ.blocks_per_sm == 4 and occ.limiter == ["shared_memory"]
    with pytest.raises(InputError, match=r"\(symbolic\); pass args="):
        txlab.occupancy_of(c)


def test_emulating_a_kernel_with_argument_sized_shared_memory(dyn_smem_kernel):
    import txlab

    n = 300
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, n)).astype(np.float32)
    b = np.zeros(64, np.float32)
    res = txlab.emulate(dyn_smem_kernel, a, b, n)
    assert res.ok, res.findings
    np.testing.assert_allclose(b, a.sum(1, dtype=np.float64), rtol=1e-5, atol=1e-4)
