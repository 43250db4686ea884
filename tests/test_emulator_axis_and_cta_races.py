"""Two emulator false negatives: an index past its own axis of a multi-dimensional buffer that stays inside the buffer
(txlab/emulator/axes.py), and a global-memory race between warps (or lanes of one warp) of one CTA
(txlab/emulator/warp_global.py); and the cross-CTA global_race finding naming its buffer. Each bug has a clean twin
that must stay clean (ok, no findings)."""

from __future__ import annotations

import numpy as np
import pytest

from txlab.emulator import emulate

from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)

# ---- A: an index past its own axis ---------------------------------------------------------------------------------

DIFF = """
@T.prim_func
def k(X: T.Buffer((4, 100), "float32"), Y: T.Buffer((4, 100), "float32")):
    T.device_entry()
    r = T.cta_id([3])
    c = T.thread_id([128])
    if c < GUARD:
        Y[r, c] = X[r, c + 1] - X[r, c]
"""


def _rand(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def test_a_global_column_off_by_one_is_out_of_bounds_at_its_line():
    """``c + 1 == 100`` reads X[r, 100], really X[r + 1, 0]: inside X (rows 0-2 run), so only its axis says so."""
    src = DIFF.replace("GUARD", "100")
    x = _rand(4, 100)
    res = emulate(kernel(src, "k"), x, np.zeros_like(x), arch="sm_90a")
    (f,) = res.findings
    assert f.kind == "out_of_bounds" and f.line == line_of(src, "Y[r, c] =") and f.buffer == "X", f
    assert "X[0, 100]" in f.message and "axis 1" in f.message and "holds 100" in f.message, f.message
    assert "X[1, 0]" in f.message and f.threads == [99] and f.count == 3, f
    assert f.index == [100, 200, 300], f.index


def test_a_guarded_column_is_clean():
    src = DIFF.replace("GUARD", "99")
    x = _rand(4, 100)
    y = np.zeros_like(x)
    res = emulate(kernel(src, "k"), x, y, arch="sm_90a")
    assert res.ok and not res.findings, res.summary()
    np.testing.assert_array_equal(y[:3, :99], x[:3, 1:] - x[:3, :99])


ALL_ROWS = """
@T.prim_func
def k(X: T.Buffer((4, 100), "float32"), Y: T.Buffer((4, 100), "float32")):
    T.device_entry()
    r = T.cta_id([4])
    c = T.thread_id([128])
    if c < 100:
        Y[r, c] = X[r, c + 1]
"""


def test_the_last_row_past_the_buffer_and_the_others_past_their_axis_are_one_finding():
    """The last row's X[3, 100] leaves X (the whole-buffer check's finding), the others' stay in it (the axis'):
    one finding for the line, counting all four."""
    x = _rand(4, 100)
    res = emulate(kernel(ALL_ROWS, "k"), x, np.zeros_like(x), arch="sm_90a")
    (f,) = res.findings
    assert f.kind == "out_of_bounds" and f.line == line_of(ALL_ROWS, "Y[r, c] =") and f.count == 4, f


STORE = """
@T.prim_func
def k(X: T.Buffer((8, 16), "int32")):
    T.device_entry()
    T.cta_id([1])
    r, c = T.thread_id([8, 16])
    X[r, c + SHIFT] = r * 100 + c
"""


def test_a_write_before_its_axis_is_found_and_a_shifted_one_within_it_is_clean():
    src = STORE.replace("SHIFT", "-1")
    res = emulate(kernel(src, "k"), np.zeros((8, 16), np.int32), arch="sm_90a")
    (f,) = res.findings
    assert f.kind == "out_of_bounds" and f.line == line_of(src, "X[r, c + -1]") and "write of X" in f.message, f
    assert "index -1 of axis 1 is before the start" in f.message, f.message
    # rows 1-7 past their axis, and row 0's X[0, -1] before X (the whole-buffer check's): one finding
    assert f.count == 8 and f.threads == [1, 2, 3, 4, 5, 6, 7], f
    ok = STORE.replace("X[r, c + SHIFT]", "X[r, c]")
    res = emulate(kernel(ok, "k"), np.zeros((8, 16), np.int32), arch="sm_90a")
    assert res.ok and not res.findings, res.summary()


TILE = """
@T.prim_func
def k(X: T.Buffer((8, 32), "float32"), Y: T.Buffer((8, 32), "float32")):
    T.device_entry()
    T.cta_id([1])
    ty, tx = T.thread_id([8, 32])
    s = T.alloc_shared((8, 32), "float32")
    s[ty, tx] = X[ty, tx]
    T.cuda.cta_sync()
    if ty < 7:
        Y[ty, tx] = s[READ]
"""


@pytest.mark.parametrize("read, bad", [("ty, tx + 1", True), ("ty + 1, tx", False), ("ty, (tx + 1) % 32", False)])
def test_a_shared_tile_read_past_its_row(read, bad):
    src = TILE.replace("READ", read)
    x = _rand(8, 32)
    y = np.zeros_like(x)
    res = emulate(kernel(src, "k"), x, y, arch="sm_90a")
    if not bad:
        assert res.ok and not res.findings, res.summary()
        return
    (f,) = res.findings
    assert f.kind == "out_of_bounds" and f.buffer == "s" and f.line == line_of(src, "Y[ty, tx] ="), f
    assert "s[0, 32]" in f.message and "s[1, 0]" in f.message and f.count == 7, f.message


LOCAL = """
@T.prim_func
def k(X: T.Buffer((64,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    acc = T.alloc_local((2, 4), "float32")
    for i in T.serial(2):
        for j in T.serial(4):
            acc[i, j] = T.float32(0)
    for j in T.serial(LAST):
        acc[0, j] = acc[0, j] + T.float32(1)
    X[tx] = acc[0, 0] + acc[1, 0]
    X[tx + 32] = acc[1, 3]
"""


def test_a_local_buffer_written_past_its_row():
    src = LOCAL.replace("LAST", "5")
    res = emulate(kernel(src, "k"), np.zeros(64, np.float32), arch="sm_90a")
    assert {(f.kind, f.buffer) for f in res.findings} == {("out_of_bounds", "acc")}, res.summary()
    assert all(f.line == line_of(src, "acc[0, j] = acc[0, j]") for f in res.findings), res.summary()
    assert any("acc[0, 4]" in f.message and "acc[1, 0]" in f.message for f in res.findings), res.summary()
    res = emulate(kernel(LOCAL.replace("LAST", "4"), "k"), np.zeros(64, np.float32), arch="sm_90a")
    assert res.ok and not res.findings, res.summary()


MATCHED = """
@T.prim_func
def k(A_ptr: T.handle, B_ptr: T.handle):
    A = T.match_buffer(A_ptr, (4, 64), "float32")
    B = T.match_buffer(B_ptr, (4, 64), "float32")
    T.device_entry()
    r = T.cta_id([2])
    c = T.thread_id([64])
    B[r, c] = A[r, READ]
"""


def test_a_match_buffer_over_an_argument_is_checked_per_axis():
    a = _rand(4, 64)
    src = MATCHED.replace("READ", "c * 2")
    res = emulate(kernel(src, "k"), a, np.zeros_like(a), arch="sm_90a")
    (f,) = res.findings  # rows 0 and 1 of A (4, 64): A[1, 126] is element 190, inside A
    assert f.kind == "out_of_bounds" and f.buffer == "A" and "A[0, 64]" in f.message and "axis 1" in f.message, f
    res = emulate(kernel(MATCHED.replace("READ", "63 - c"), "k"), a, np.zeros_like(a), arch="sm_90a")
    assert res.ok and not res.findings, res.summary()


VIEW = """
@T.prim_func
def k(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    s = T.alloc_shared((256,), "float32")
    v = T.decl_buffer((8, 32), "float32", data=s.data)
    s[tx] = X[tx]
    T.cuda.cta_sync()
    Y[tx] = v[0, tx]
"""


def test_a_view_of_another_buffers_data_is_not_checked_per_axis():
    """A decl_buffer over another buffer's data may be used as a pointer (its row 0 the start of the whole): nothing
    says its shape is the allocation's, so only the allocation's bounds count."""
    x = _rand(256)
    y = np.zeros_like(x)
    res = emulate(kernel(VIEW, "k"), x, y, arch="sm_90a")
    assert res.ok and not res.findings, res.summary()
    np.testing.assert_array_equal(x, y)


VECTOR = """
@T.prim_func
def k(X: T.Buffer((4, 128), "float32"), Y: T.Buffer((4, 128), "float32")):
    T.device_entry()
    r = T.cta_id([4])
    c = T.thread_id([32])
    for j in T.vectorized(4):
        Y[r, c * 4 + j] = X[r, c * 4 + j] * T.float32(2)
"""


def test_a_vectorized_row_is_clean():
    x = _rand(4, 128)
    y = np.zeros_like(x)
    res = emulate(kernel(VECTOR, "k"), x, y, arch="sm_90a")
    assert res.ok and not res.findings, res.summary()
    np.testing.assert_array_equal(y, x * 2)


def test_a_tile_primitive_copying_2d_tiles_is_clean():
    """A tile primitive's own accesses (TVM's code, TVM's spans) are not the user's: not checked."""
    src = """
@T.prim_func
def k(X: T.Buffer((16, 64), "float32"), Y: T.Buffer((16, 64), "float32")):
    T.device_entry()
    T.cta_id([1])
    T.thread_id([128])
    s = T.alloc_shared((16, 64), "float32")
    Tx.cta.copy(s[0:16, 0:64], X[0:16, 0:64])
    T.cuda.cta_sync()
    Tx.cta.copy(Y[0:16, 0:64], s[0:16, 0:64])
"""
    x = _rand(16, 64)
    y = np.zeros_like(x)
    res = emulate(kernel(src, "k"), x, y, arch="sm_90a")
    assert res.ok and not res.findings, res.summary()
    np.testing.assert_array_equal(x, y)


# ---- B: a global race between warps of one CTA ---------------------------------------------------------------------

HIST = """
@T.prim_func
def k(X: T.Buffer((CTAS * 256,), "int32"), H: T.Buffer((64,), "int32")):
    T.device_entry()
    bx = T.cta_id([CTAS])
    tx = T.thread_id([256])
    UPDATE
"""
PLAIN = "H[X[bx * 256 + tx]] = H[X[bx * 256 + tx]] + 1"
ATOMIC = "T.cuda.atomic_add(T.address_of(H[X[bx * 256 + tx]]), 1)"


def _hist(update, ctas):
    src = HIST.replace("UPDATE", update).replace("CTAS", str(ctas))
    x = np.random.default_rng(0).integers(0, 64, ctas * 256).astype(np.int32)
    h = np.zeros(64, np.int32)
    return src, x, h, emulate(kernel(src, "k"), x, h, arch="sm_90a")


def test_a_histogram_without_atomics_in_one_cta_is_a_global_race():
    src, _, _, res = _hist(PLAIN, 1)
    (f,) = res.findings
    line = line_of(src, "H[X[")
    assert f.kind == "global_race" and f.line == f.other_line == line and f.buffer == "H", f
    assert "between warps of CTA (0, 0, 0)" in f.message and "atomic" in f.message, f.message
    assert f.threads[0] // 32 != f.threads[1] // 32, f.threads


def test_a_histogram_with_atomics_is_clean():
    _, x, h, res = _hist(ATOMIC, 1)
    assert res.ok and not res.findings, res.summary()
    np.testing.assert_array_equal(h, np.bincount(x, minlength=64))


def test_the_race_between_ctas_names_its_buffer():
    _, _, _, res = _hist(PLAIN, 16)
    races = res.by_kind("global_race")
    assert races and all(f.buffer == "H" for f in races), res.summary()


COLLIDE = """
@T.prim_func
def k(X: T.Buffer((256,), "float32"), Y: T.Buffer((128,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    BODY
"""


@pytest.mark.parametrize(
    "body, race",
    [
        ("Y[tx % 128] = X[tx]", True),  # warps w and w + 4 store different values to one element
        ("Y[tx % 128] = T.float32(1)", False),  # the same value: whichever lands, Y holds it
        ("if tx < 128:\n        Y[tx] = X[tx]", False),
        # two phases a barrier orders
        (
            "if tx < 128:\n        Y[tx] = X[tx]\n    T.cuda.cta_sync()\n    if tx >= 128:\n        Y[tx - 128] = X[tx]",
            False,
        ),
        ("if tx < 128:\n        Y[tx] = X[tx]\n    if tx >= 128:\n        Y[tx - 128] = X[tx]", True),
    ],
)
def test_two_warps_storing_to_one_element(body, race):
    src = COLLIDE.replace("BODY", body)
    res = emulate(kernel(src, "k"), np.arange(256, dtype=np.float32), np.zeros(128, np.float32), arch="sm_90a")
    if not race:
        assert res.ok and not res.findings, res.summary()
        return
    (f,) = res.findings
    assert f.kind == "global_race" and f.buffer == "Y" and "write" in f.message, f


EXCHANGE = """
@T.prim_func
def k(X: T.Buffer((128,), "float32"), G: T.Buffer((128,), "float32"), Out: T.Buffer((128,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    G[tx] = X[tx] * T.float32(2)
    SYNC
    Out[tx] = G[127 - tx]
"""


@pytest.mark.parametrize("sync", ["T.cuda.cta_sync()", "T.evaluate(0)"])
def test_a_read_of_another_warps_global_store(sync):
    src = EXCHANGE.replace("SYNC", sync)
    x = _rand(128)
    out = np.zeros_like(x)
    res = emulate(kernel(src, "k"), x, np.zeros_like(x), out, arch="sm_90a")
    if "cta_sync" in sync:
        assert res.ok and not res.findings, res.summary()
        np.testing.assert_array_equal(out, (x * 2)[::-1])
        return
    (f,) = res.findings
    assert f.kind == "global_race" and f.buffer == "G", f
    assert (f.other_line, f.line) == (line_of(src, "G[tx] ="), line_of(src, "Out[tx] =")), f


HANDOFF = """
@T.prim_func
def k(G: T.Buffer((128,), "int32"), Out: T.Buffer((128,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    bar = T.shared_scalar("uint64")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(128))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    G[tx] = tx * 3
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar))
    WAIT
    Out[tx] = G[127 - tx]
"""


@pytest.mark.parametrize("wait", [True, False])
def test_an_mbarrier_orders_warps_global_accesses(wait):
    """Warps run as coroutines here (an mbarrier wait): the wait acquires every warp's arrive, so the reads of the
    other warps' stores are ordered; without it they race."""
    src = HANDOFF.replace("WAIT", "T.cuda.mbarrier_wait(T.address_of(bar), 0)" if wait else "T.evaluate(0)")
    out = np.zeros(128, np.int32)
    res = emulate(kernel(src, "k"), np.zeros(128, np.int32), out, arch="sm_90a")
    if wait:
        assert res.ok and not res.findings, res.summary()
        np.testing.assert_array_equal(out, 3 * (127 - np.arange(128)))
    else:
        assert [f.kind for f in res.findings] == ["global_race"], res.summary()


LANES = """
@T.prim_func
def k(X: T.Buffer((32,), "int32"), G: T.Buffer((32,), "int32"), Out: T.Buffer((32,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    BODY
"""


@pytest.mark.parametrize(
    "body, race",
    [
        # a warp-synchronous exchange through global memory: lanes of one warp are not in lockstep on a GPU
        ("G[tx] = X[tx]\n    Out[tx] = G[(tx + 1) % 32]", True),
        ("G[tx] = X[tx]\n    T.cuda.warp_sync()\n    Out[tx] = G[(tx + 1) % 32]", False),
        # every lane stores one value to G[0], and reads it back: each read is of its own store's value
        ("G[0] = 7\n    Out[tx] = G[0]", False),
        # every lane stores G[0] again (each lane's own stores land in order)
        ("G[0] = 7\n    G[0] = X[0] + 1", False),
        # lane 0 stores, lane 1 stores over it
        ("if tx == 0:\n        G[0] = 1\n    if tx == 1:\n        G[0] = 2", True),
    ],
)
def test_lanes_of_one_warp_and_global_memory(body, race):
    src = LANES.replace("BODY", body)
    x = np.arange(32, dtype=np.int32) + 100
    out = np.zeros(32, np.int32)
    res = emulate(kernel(src, "k"), x, np.zeros(32, np.int32), out, arch="sm_90a")
    if not race:
        assert res.ok and not res.findings, res.summary()
        return
    (f,) = res.findings
    assert f.kind == "global_race" and f.buffer == "G" and "within warp 0" in f.message, f
    assert "warp_sync" in f.message and f.threads[0] != f.threads[1], f
