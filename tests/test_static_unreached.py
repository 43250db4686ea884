"""The static memory-access reports (txlab.pools.coalescing, PoolLayout.bank_conflicts, a plan's occupancy) never
read as an all-clear when something is unknown:

* every access in the code is a row: one that only a CTA the walk does not visit reaches (``if bx == 5``) or only a
  loop iteration past those it follows (``if r == 700``) is analysed by a further walk of that CTA / that far
  (a ``partial`` row saying so); one no walk reaches is ``unknown`` with the reason (the CTAs and iterations walked,
  the guard it runs under), never left out;
* the headline counts partly unknown rows apart from the fully analysed ones;
* a plan's occupancy is txlab.occupancy_of's (the same rules: registers per SM sub-partition, shared memory in
  128-byte units).
"""

from __future__ import annotations

import pytest
import tvm
from tvm.script import tirx as Tx

import txlab
from txlab import pools

ARCH = "sm_90a"


@Tx.prim_func
def middle_cta(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (4096,), "float32")
    B = Tx.match_buffer(B_ptr, (4096 * 32,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([16])
    tx = Tx.thread_id([256])
    s = Tx.alloc_shared((256 * 32,), "float32")
    B[bx * 256 + tx] = A[bx * 256 + tx]
    if bx == 5:
        s[tx * 32] = A[tx]
        Tx.cuda.cta_sync()
        B[tx * 32] = s[tx * 32]


@Tx.prim_func
def middle_cta_2d(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (4096,), "float32")
    B = Tx.match_buffer(B_ptr, (4096 * 32,), "float32")
    Tx.device_entry()
    by, bx = Tx.cta_id([4, 4])
    tx = Tx.thread_id([256])
    B[(by * 4 + bx) * 256 + tx] = A[(by * 4 + bx) * 256 + tx]
    if bx == 2 and by == 0:
        B[tx * 32] = A[tx]


@Tx.prim_func
def late_iteration(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (1024, 256), "float32")
    B = Tx.match_buffer(B_ptr, (256 * 32,), "float32")
    Tx.device_entry()
    Tx.cta_id([1])
    tx = Tx.thread_id([256])
    s = Tx.alloc_shared((256 * 32,), "float32")
    acc = Tx.alloc_local((1,), "float32")
    acc[0] = Tx.float32(0)
    for r in Tx.serial(1024):
        acc[0] = acc[0] + A[r, tx]
        if r == 700:
            s[tx * 32] = acc[0]
            B[tx * 32] = acc[0]
    B[tx] = acc[0]


@Tx.prim_func
def unsolved_guard(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (4096,), "float32")
    B = Tx.match_buffer(B_ptr, (4096 * 32,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([16])
    tx = Tx.thread_id([256])
    s = Tx.alloc_shared((256 * 32,), "float32")
    B[bx * 256 + tx] = A[bx * 256 + tx]
    if bx * 3 == 15:
        s[tx * 32] = A[tx]


@Tx.prim_func
def far_iteration(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (256,), "float32")
    B = Tx.match_buffer(B_ptr, (256 * 32,), "float32")
    Tx.device_entry()
    Tx.cta_id([1])
    tx = Tx.thread_id([256])
    acc = Tx.alloc_local((1,), "float32")
    acc[0] = Tx.float32(0)
    for r in Tx.serial(100000):
        acc[0] = acc[0] + A[tx]
        if r == 90000:
            B[tx * 32] = acc[0]


@Tx.prim_func
def guard_from_memory(A_ptr: Tx.handle, M_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (1 << 14,), "float32")
    M = Tx.match_buffer(M_ptr, (1 << 14,), "int32")
    B = Tx.match_buffer(B_ptr, ((1 << 14) * 32,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([64])
    tx = Tx.thread_id([256])
    s = Tx.alloc_shared((256 * 32,), "float32")
    if M[bx * 256 + tx] > 0:
        s[tx * 32] = A[bx * 256 + tx]
        B[(bx * 256 + tx) * 32] = A[bx * 256 + tx]
    Tx.cuda.cta_sync()
    B[bx * 256 + tx] = s[tx]


def _rows(report, access, buffer, source):
    rows = [r for r in report if r.access == access and r.buffer == buffer and source in (r.source or "")]
    assert len(rows) == 1, report.summary()
    return rows[0]


def test_an_access_only_a_middle_cta_reaches_is_analysed_in_that_cta():
    """k16: under ``if bx == 5`` of a 16-CTA grid, which none of the CTAs walked (0, 1, 15) runs: the coalescing
    report had 2 rows ("2 analysed, 0 unknown") and the bank report none, yet the SASS stores and loads there."""
    glob = pools.coalescing(middle_cta, arch=ARCH)
    assert len(glob) == 4, glob.summary()
    store = _rows(glob, "store", "B", "B[tx * 32] = s[tx * 32]")
    assert store.status == "partial" and not store.coalesced and store.sectors_per_instruction == 32
    assert "reached only by CTA (5, 0, 0)" in store.reason and "`if bx == 5` (line" in store.reason
    assert glob.counts() == {"accesses": 4, "analysed": 2, "partial": 2, "unknown": 0}
    assert "2 analysed, 2 partly unknown, 0 unknown" in glob.title()

    banks = pools.layout(middle_cta, arch=ARCH).bank_conflicts()
    assert sorted((r.access, r.buffer, r.ways, r.status) for r in banks) == [
        ("load", "s", 32, "partial"),
        ("store", "s", 32, "partial"),
    ], banks.summary()
    assert all("CTA (5, 0, 0)" in r.reason for r in banks)
    assert banks.counts() == {"accesses": 2, "analysed": 0, "partial": 2, "async": 0, "unknown": 0}


def test_a_two_dimensional_cta_guard_is_solved_per_dimension():
    """``by, bx = Tx.cta_id([4, 4])``: ``bx`` is blockIdx.y; ``bx == 2 and by == 0`` is CTA (0, 2, 0)."""
    glob = pools.coalescing(middle_cta_2d, arch=ARCH)
    store = _rows(glob, "store", "B", "B[tx * 32] = A[tx]")
    assert store.status == "partial" and store.sectors_per_instruction == 32 and not store.coalesced
    assert "reached only by CTA (0, 2, 0)" in store.reason
    assert _rows(glob, "load", "A", "B[tx * 32] = A[tx]").status == "partial"


def test_an_access_of_a_late_loop_iteration_is_walked_to():
    """k17: ``if r == 700`` in a 1024-iteration loop, past the 256 iterations the walk follows: its store had no
    row, only the generic note about the iterations followed."""
    glob = pools.coalescing(late_iteration, arch=ARCH)
    store = _rows(glob, "store", "B", "B[tx * 32] = acc[0]")
    assert store.status == "partial" and store.instructions == 8 and store.sectors_per_instruction == 32
    assert "at iteration 700 of the loop at line" in store.reason and "followed 701 iterations" in store.reason
    banks = pools.layout(late_iteration, arch=ARCH).bank_conflicts()
    (s,) = banks
    assert (s.access, s.buffer, s.ways, s.status) == ("store", "s", 32, "partial"), banks.summary()


def test_what_no_walk_reaches_is_an_unknown_row_saying_why():
    """A guard the walk cannot solve (``bx * 3 == 15``), an iteration too far to walk to (90000 of 100000): rows
    with no figures, counted as unknown, whose reason names the CTAs and iterations walked and the guard."""
    glob = pools.coalescing(unsolved_guard, arch=ARCH)
    a = _rows(glob, "load", "A", "s[tx * 32] = A[tx]")
    assert a.status == "unknown" and a.coalesced is None and a.instructions == 0
    assert a.reason.startswith("not reached by the CTAs/iterations walked (CTAs (0, 0, 0), (1, 0, 0) and (15, 0, 0))")
    assert "`if bx * 3 == 15`" in a.reason
    assert glob.counts() == {"accesses": 3, "analysed": 2, "unknown": 1} and glob.title().endswith("1 unknown")
    assert glob.by_line()[a.lineno]["status"] == "unknown"
    banks = pools.layout(unsolved_guard, arch=ARCH).bank_conflicts()
    (s,) = banks
    assert s.status == "unknown" and s.ways is None and s.conflicts is None
    assert s.reason.startswith("not reached by the CTAs/iterations walked") and "`if bx * 3 == 15`" in s.reason
    assert banks.counts()["unknown"] == 1 and "0 analysed" in banks.title()

    far = _rows(pools.coalescing(far_iteration, arch=ARCH), "store", "B", "B[tx * 32] = acc[0]")
    assert far.status == "unknown" and far.coalesced is None and far.instructions == 0
    assert far.reason.startswith("not reached by the CTAs/iterations walked (CTA (0, 0, 0);")
    assert "the first 256 of the 100000 iterations of the loop at line" in far.reason
    assert "`if r == 90000`" in far.reason and "iteration 90000" in far.reason


def test_the_headline_counts_partly_unknown_rows_apart():
    """k7: 3 of 5 rows are partly unknown (a guard read from memory): the headline said "5 analysed, 0 unknown"."""
    glob = pools.coalescing(guard_from_memory, arch=ARCH)
    assert sum(r.status == "partial" for r in glob) == 3, glob.summary()
    assert glob.counts() == {"accesses": 5, "analysed": 2, "partial": 3, "unknown": 0}
    assert "5 global-memory access(es), 2 analysed, 3 partly unknown, 0 unknown" in glob.summary()
    banks = pools.layout(guard_from_memory, arch=ARCH).bank_conflicts()
    assert banks.counts() == {"accesses": 2, "analysed": 1, "partial": 1, "async": 0, "unknown": 0}
    assert "2 shared-memory access(es), 1 analysed, 1 partly unknown, 0 unknown" in banks.title()


@Tx.prim_func
def small_tile(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (2064,), "float32")
    B = Tx.match_buffer(B_ptr, (2064,), "float32")
    Tx.device_entry()
    Tx.cta_id([1])
    tx = Tx.thread_id([64])
    s = Tx.alloc_shared((2064,), "float32")
    s[tx] = A[tx]
    Tx.cuda.cta_sync()
    B[tx] = s[tx]


def _fake_compiled(threads, registers, smem):
    class FakeCompiled:  # txlab.Compiled's interface as pools.layout reads it (ir_module/arch/resources/launch)
        ir_module = tvm.IRModule({"small_tile": small_tile})
        arch = ARCH
        resources = {"small_tile_kernel": {"registers": registers, "static_smem_bytes": smem, "dynamic_smem_bytes": 0}}
        launch = {"small_tile_kernel": {"grid": (1,), "block": (threads,), "cluster": None, "dynamic_smem_bytes": 0}}

    return FakeCompiled()


@pytest.mark.parametrize(
    "threads,registers,smem",
    [
        (64, 40, 8256),  # k4b.tile_pipeline: the plan said 25 CTAs/SM, occupancy_of 24
        (32, 33, 0),  # 1280 registers per warp: 12 warps per sub-partition (48), not 65536 // 1280 (51)
        (64, 33, 4000),  # 24 CTAs by registers, not 25; 5024 B of shared memory allocated as 5120: 45, not 46
        (96, 72, 20000),  # 21024 B of shared memory per CTA allocated as 21120
    ],
)
def test_a_plans_occupancy_is_occupancy_of(threads, registers, smem):
    occ = pools.layout(_fake_compiled(threads, registers, smem)).occupancy
    want = txlab.occupancy.calculate(ARCH, threads=threads, registers=registers, smem_bytes=smem)
    got = {"threads": occ.limits["threads"], "registers": occ.limits["registers"], "smem": occ.limits["smem"]}
    assert got == {
        "threads": want.limits["warps"],
        "registers": want.limits["registers"],
        "smem": want.limits["shared_memory"],
    }
    assert occ.ctas_per_sm == want.blocks_per_sm and occ.smem_per_cta_bytes == want.smem_per_cta


def test_tile_pipeline_plan_and_occupancy_of_agree():
    """D7: the compiled tile pipeline (40 registers, 64 threads, 8256 B static shared memory on sm_90a)."""
    from tvm.script.tirx import tile as Tt
    from tvm.tirx.layout import S, TileLayout

    M, K = 16, 64

    @Tx.prim_func
    def tile_pipeline(A_ptr: Tx.handle, B_ptr: Tx.handle, C_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (M, K), "float32", layout=TileLayout(S[(M, K)]))
        B = Tx.match_buffer(B_ptr, (M, K), "float32", layout=TileLayout(S[(M, K)]))
        C = Tx.match_buffer(C_ptr, (M,), "float32", layout=TileLayout(S[(M,)]))
        Tx.device_entry()
        _bx = Tx.cta_id([1])
        _tid = Tx.thread_id([64])
        As = Tx.alloc_buffer((M, K), "float32", scope="shared", layout=TileLayout(S[(M, K)]))
        Bs = Tx.alloc_buffer((M, K), "float32", scope="shared", layout=TileLayout(S[(M, K)]))
        Cs = Tx.alloc_buffer((M,), "float32", scope="shared", layout=TileLayout(S[(M,)]))
        Tt.cta.copy(As[:, :], A[:, :])
        Tt.cta.copy(Bs[:, :], B[:, :])
        Tx.cuda.cta_sync()
        Tt.cta.mul(As[:, :], As[:, :], Bs[:, :])
        Tx.cuda.cta_sync()
        Tt.cta.exp(Bs[:, :], As[:, :])
        Tx.cuda.cta_sync()
        Tt.cta.copy(B[:, :], Bs[:, :])
        Tt.cta.fill(Cs[:], Tx.float32(1.0))
        Tx.cuda.cta_sync()
        Tt.cta.copy(C[:], Cs[:])

    c = txlab.compile(tile_pipeline, arch=ARCH, progress=lambda s: None)
    plan, occ = pools.layout(c).occupancy, txlab.occupancy_of(c)
    assert plan.ctas_per_sm == occ.blocks_per_sm, (c.resources, plan.limits, occ.limits)
    assert plan.limits["registers"] == occ.limits["registers"]
    assert plan.limits["smem"] == occ.limits["shared_memory"]
