"""The static walk (txlab.simt) under txlab.pools.coalescing, audit 37 items 5-7: kernel arguments bound with
``params=``; a local a vectorized loop writes (TVM keeps one cell: the last lane's value); a row gathered by an
index read once per warp."""

import sys
from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab import coalescing as co
from txlab import simt
from txlab.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from test_emulator import kernel  # noqa: E402

ARCH = "sm_90a"


def _compiled(src: str, name: str):
    return txlab.compile(kernel(src, name), arch=ARCH, progress=lambda s: None)


def _one(report, access, buffer):
    rows = [r for r in report if r.access == access and r.buffer == buffer]
    assert len(rows) == 1, report.summary()
    return rows[0]


def _per_instruction(row):
    return row.sectors / row.instructions, row.requests / row.instructions


# -- 5: kernel arguments bound with params= ------------------------------------------------------------------

ROWSUM = """
@T.prim_func
def k_rowsum_runtime(A_ptr: T.handle, B_ptr: T.handle, m: T.int32, k: T.int32):
    A = T.match_buffer(A_ptr, (m, k), "float32")
    B = T.match_buffer(B_ptr, (m,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(m, 8)])
    tx = T.thread_id([256])
    acc = T.alloc_local((1,), "float32")
    acc[0] = T.float32(0)
    row = bx * 8 + tx // 32
    for j in range(T.ceildiv(k, 32)):
        if j * 32 + tx % 32 < k:
            acc[0] = acc[0] + A[row, j * 32 + tx % 32]
    for o in T.unroll(5):
        acc[0] = acc[0] + T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), acc[0], 16 >> o, 32)
    if tx % 32 == 0:
        B[row] = acc[0]
"""


@pytest.fixture(scope="module")
def rowsum():
    return _compiled(ROWSUM, "k_rowsum_runtime")


def test_an_unbound_argument_names_params_as_the_way_out(rowsum):
    a = _one(txlab.pools.coalescing(rowsum), "load", "A")
    assert a.status == "unknown" and "the kernel argument k" in a.reason, a.reason
    assert "params={'k': ...}" in a.reason and "read from memory" not in a.reason, a.reason


def _rowsum_figures(k: int, rows=range(8)):
    """Sectors, requests and instructions of CTA 0's row reads by hand: warp w reads row w, 32 columns a step."""
    sectors = requests = instructions = 0
    for w in rows:
        for j in range(-(-k // 32)):
            lanes = np.arange(32)
            act = j * 32 + lanes < k
            req, sec, _ideal, _lines = co.warp_sectors((w * k + j * 32 + lanes) * 4, act, 4)
            sectors, requests, instructions = sectors + sec, requests + req, instructions + 1
    return sectors, requests, instructions


@pytest.mark.parametrize("k", [4096, 100, 4100])
def test_params_bind_the_pitch_and_the_loop_bound(rowsum, k):
    """A row sum over A (m, k): with k bound, the runtime pitch and the loop bound are that value and A's read is
    analysed (400 B rows move the warps off the line: the figures a hand count of CTA 0 gives)."""
    rep = txlab.pools.coalescing(rowsum, params={"k": k, "m": 1024})
    a = _one(rep, "load", "A")
    assert a.status == "analysed" and not a.reason, rep.summary()
    assert (a.sectors, a.requests, a.instructions) == _rowsum_figures(k), rep.summary()
    assert a.coalesced is (k % 32 == 0)
    # the prim_func is read the same way (its own lowering)
    again = _one(txlab.pools.coalescing(kernel(ROWSUM, "k_rowsum_runtime"), arch=ARCH, params={"k": k}), "load", "A")
    assert (again.sectors, again.requests, again.status) == (a.sectors, a.requests, "analysed")


def test_params_bind_the_grid(rowsum):
    """With m bound the grid (m + 7) // 8 is known: the last CTA is walked and a CTA past it is refused."""
    ok = txlab.pools.coalescing(rowsum, params={"k": 4096, "m": 1024}, cta=(127, 0, 0))
    assert ok.counts() == {"accesses": 2, "analysed": 2, "unknown": 0}, ok.summary()
    with pytest.raises(InputError, match=r"outside the grid \(128, 1, 1\)"):
        txlab.pools.coalescing(rowsum, params={"k": 4096, "m": 1024}, cta=(128, 0, 0))


@pytest.mark.parametrize("bad", [{"x": 1}, {"k": 1.5}, [1], {"k": True}])
def test_params_are_checked_as_pools_layout_checks_them(rowsum, bad):
    with pytest.raises(InputError) as layout_err:
        txlab.pools.layout(rowsum, params=bad)
    with pytest.raises(InputError) as coalescing_err:
        txlab.pools.coalescing(rowsum, params=bad)
    assert str(coalescing_err.value) == str(layout_err.value)
    assert coalescing_err.value.param == "params"


def test_the_walk_binds_params_itself(rowsum):
    """``simt.execute(..., params=)``: the bound argument is a value of the walk, the other one stays unknown."""
    (_, func), *_ = simt.device_functions(rowsum)
    walk = simt.execute(func, params={"k": 64})
    by_name = {p.name: walk.env[simt._key(p)] for p in func.params}
    assert by_name["k"] == 64 and by_name["m"] is simt.UNKNOWN


# -- 6: a local a vectorized loop writes ---------------------------------------------------------------------

GELU = """
@T.prim_func
def k_gelu(X_ptr: T.handle, Y_ptr: T.handle, n: T.int32):
    X = T.match_buffer(X_ptr, (n,), "float32")
    Y = T.match_buffer(Y_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 1024)])
    tx = T.thread_id([256])
    for v in T.vectorized(4):
        i = bx * 1024 + tx * 4 + v
        x = X[i]
        Y[i] = T.float32(0.5) * x * (T.float32(1) + T.tanh(T.float32(0.7978845608) * (x + T.float32(0.044715) * x * x * x)))
"""


def test_a_one_cell_local_a_vector_writes_holds_the_last_lane_and_is_flagged():
    """TVM writes ``i`` (one cell) four times and reads it once: the accesses use ``bx*1024 + tx*4 + 3`` (16-byte
    lane stride: 16 sectors and 4 requests an instruction, 25 %), not "a value read from memory"; a warning
    says the other lanes' values are lost."""
    c = _compiled(GELU, "k_gelu")
    rep = txlab.pools.coalescing(c)
    for access, buf in (("load", "X"), ("store", "Y")):
        r = _one(rep, access, buf)
        assert r.status == "analysed" and "memory" not in r.reason, rep.summary()
        assert _per_instruction(r) == (16, 4) and r.efficiency == 0.25, rep.summary()
    (warning,) = [n for n in rep.notes if "warning" in n]
    assert "all 4 lanes of a vector store write i[0]" in warning and "only the last lane's value stays" in warning
    # the walk itself: i[0] holds lane 3's index
    (_, func), *_ = simt.device_functions(c)
    seen = []
    simt.execute(func, on_visit=lambda v: seen.append(v.index) if v.kind == "load" else None)
    assert np.array_equal(seen[0], np.arange(256) * 4 + 3)


PER_CELL = """
@T.prim_func
def per_cell(A: T.Buffer((1 << 16,), "float32"), B: T.Buffer((1 << 16,), "float32")):
    T.device_entry()
    bx = T.cta_id([64])
    tx = T.thread_id([256])
    idx = T.alloc_local((4,), "int32")
    for v in T.vectorized(4):
        idx[v] = bx * 1024 + tx * 4 + v
    for v in T.unroll(4):
        B[idx[v]] = A[idx[v]]
"""


def test_a_vector_store_into_its_own_cells_keeps_each_lane():
    """``idx[Ramp(0, 1, 4)] = Ramp(...)``: each lane its cell (the walk forgot the whole local, and the reads blamed
    memory); no warning where no two lanes share a cell."""
    rep = txlab.pools.coalescing(kernel(PER_CELL, "per_cell"), arch=ARCH)
    for access, buf in (("load", "A"), ("store", "B")):
        r = _one(rep, access, buf)
        assert r.status == "analysed" and _per_instruction(r) == (16, 4), rep.summary()
    assert not any("warning" in n for n in rep.notes), rep.notes


PER_THREAD_CELL = """
@T.prim_func
def per_thread_cell(A: T.Buffer((1 << 16,), "float32"), B: T.Buffer((1 << 16,), "float32")):
    T.device_entry()
    bx = T.cta_id([64])
    tx = T.thread_id([256])
    idx = T.alloc_local((4,), "int32")
    idx[tx % 4] = bx * 256 + tx
    B[bx * 256 + tx] = A[idx[0]]
"""


def test_a_local_the_walk_does_not_follow_is_not_blamed_on_memory():
    """A cell written at a per-thread index is unknown to the walk, but nothing was read from memory."""
    a = _one(txlab.pools.coalescing(kernel(PER_THREAD_CELL, "per_thread_cell"), arch=ARCH), "load", "A")
    assert a.status == "unknown" and "read from memory" not in a.reason, a.reason
    assert "idx, a local written with a vector or at a per-thread index" in a.reason, a.reason


# -- 7: a row gathered by an index read once per warp --------------------------------------------------------

GATHER = """
@T.prim_func
def g(E_ptr: T.handle, I_ptr: T.handle, O_ptr: T.handle, X_ptr: T.handle):
    E = T.match_buffer(E_ptr, (50000, PITCH), "float32")
    I = T.match_buffer(I_ptr, (4096,), "int32")
    O = T.match_buffer(O_ptr, (4096, PITCH), "float32")
    X = T.match_buffer(X_ptr, (4096,), "int32")
    T.device_entry()
    bx = T.cta_id([4096])
    tx = T.thread_id([128])
    r = T.alloc_local((1,), "int32")
    r[0] = 0
    SETUP
    for j in range(4):
        O[bx, j * 32 + tx % 32] = E[ROW, j * 32 + tx % 32]
"""


def _gather(pitch, setup, row="r[0]"):
    src = GATHER.replace("PITCH", str(pitch)).replace("SETUP", setup).replace("ROW", row)
    return _one(txlab.pools.coalescing(kernel(src, "g"), arch=ARCH), "load", "E")


EMBEDDING = """
@T.prim_func
def k_gather_rows(E_ptr: T.handle, I_ptr: T.handle, O_ptr: T.handle):
    E = T.match_buffer(E_ptr, (50000, 512), "float32")
    I = T.match_buffer(I_ptr, (4096,), "int32")
    O = T.match_buffer(O_ptr, (4096, 512), "float32")
    T.device_entry()
    bx = T.cta_id([4096])
    tx = T.thread_id([128])
    r = T.alloc_local((1,), "int32")
    r[0] = I[bx]
    for j in range(4):
        O[bx, j * 128 + tx] = E[r[0], j * 128 + tx]
"""


def test_an_embedding_row_gather_is_exact():
    """``E[r[0], j*128 + tx]`` with ``r[0] = I[bx]``: one row per CTA, 2048-byte rows, so every value of ``r`` gives
    each warp 4 sectors in 1 request (the same as row 0, and as any other row by hand)."""
    c = _compiled(EMBEDDING, "k_gather_rows")
    e = _one(txlab.pools.coalescing(c), "load", "E")
    assert e.status == "analysed" and not e.reason and e.coalesced, e
    assert _per_instruction(e) == (4, 1) and e.instructions == 16
    for r in (0, 7, 12345, 49999):
        lanes = np.arange(32)
        assert co.warp_sectors((r * 512 + lanes) * 4, np.ones(32, bool), 4)[:2] == (1, 4)


@pytest.mark.parametrize(
    "setup,row",
    [
        ("r[0] = 0", "I[bx]"),  # read in the index itself
        ("r[0] = I[bx * 4 + tx // 32]", "r[0]"),  # one row per warp
        ("if tx < 64:\n        r[0] = I[bx]", "r[0]"),  # two warps store it, two keep row 0
        ("r[0] = I[bx] + X[bx]", "r[0]"),  # a sum of two such values
        ("r[0] = I[X[bx]]", "r[0]"),  # read at an address read once per warp
    ],
)
def test_an_index_read_once_per_warp_is_a_row_of_whole_lines(setup, row):
    e = _gather(512, setup, row)
    assert e.status == "analysed" and _per_instruction(e) == (4, 1), e


def test_a_pitch_off_the_line_leaves_the_gather_unknown_saying_why():
    """400-byte rows: where a row starts within a line (a multiple of 16 B) changes the sectors, so no figures;
    scaled by 32 rows (12800 B, whole lines) the figures hold again."""
    e = _gather(100, "r[0] = I[bx]")
    assert e.status == "unknown" and "in steps of 400 B" in e.reason and "a multiple of 16 B" in e.reason, e.reason
    scaled = _gather(100, "r[0] = 0", "I[bx] * 32")
    assert scaled.status == "analysed" and _per_instruction(scaled) == (4, 1), scaled


@pytest.mark.parametrize(
    "setup,why",
    [
        ("if tx == 0:\n        r[0] = I[bx]", "a value read from memory"),  # lane 0 only: the others keep 0
        ("r[0] = I[tx]", "a value read from memory"),  # a value per lane
        ("r[0] = I[bx] * X[bx]", "a value read from memory"),  # a product of two unknowns
        ("if X[0] > 0:\n        r[0] = I[bx]\n    else:\n        r[0] = I[bx + 1]", "set under a condition"),
    ],
)
def test_an_index_not_known_to_be_one_per_warp_stays_unknown(setup, why):
    e = _gather(512, setup)
    assert e.status == "unknown" and why in e.reason, e.reason


LET = """
@T.prim_func
def g(E_ptr: T.handle, I_ptr: T.handle, O_ptr: T.handle):
    E = T.match_buffer(E_ptr, (50000, 512), "float32")
    I = T.match_buffer(I_ptr, (4096,), "int32")
    O = T.match_buffer(O_ptr, (4096, 512), "float32")
    T.device_entry()
    bx = T.cta_id([4096])
    tx = T.thread_id([128])
    r: T.let[T.int32] = I[bx]
    for v in T.vectorized(4):
        O[bx, tx * 4 + v] = E[r, tx * 4 + v]
"""


def test_a_bound_row_index_and_a_vector_row_read():
    """``r: T.let = I[bx]`` (a Bind) and 16-byte lanes over the row: 16 sectors in 4 requests, coalesced."""
    e = _one(txlab.pools.coalescing(kernel(LET, "g"), arch=ARCH), "load", "E")
    assert e.status == "analysed" and e.bytes_per_lane == 16 and _per_instruction(e) == (16, 4) and e.coalesced, e
