"""Global-memory coalescing from the index expressions a kernel runs (txlab.coalescing), against
known patterns and against the per-line sectors/requests Nsight Compute measured on the H200
(the shipped profiles in txlab/data)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab import coalescing as co

sys.path.insert(0, str(Path(__file__).parent / "kernels"))
import memory_patterns as mp  # noqa: E402

DATA = Path(txlab.__file__).parent / "data"


def _one(report, access, buffer):
    rows = [r for r in report if r.access == access and r.buffer == buffer]
    assert len(rows) == 1, report.summary()
    return rows[0]


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (4, 16), (32, 32)])
def test_strided_reads(stride, sectors):
    """Per warp: the sectors the lanes' words fall in; one L1 request per cache line touched (ncu's
    tag requests on the H200: 4 sectors/request at strides 1, 2, 4, 1 sector/request at 32)."""
    rep = txlab.pools.coalescing(mp.strided_read(stride), arch="sm_90a")
    a = _one(rep, "load", "A")
    assert a.status == "analysed" and a.sectors_per_instruction == sectors and a.instructions == 8
    assert a.requests == 8 * {1: 1, 2: 2, 4: 4, 32: 32}[stride]
    assert a.sectors_per_request == (4 if stride < 32 else 1)
    assert a.ideal_sectors == 8 * 4 and a.coalesced is (stride == 1) and a.efficiency == pytest.approx(4 / sectors)
    assert _one(rep, "store", "B").coalesced


def test_gather_is_unknown_not_coalesced():
    rep = txlab.pools.coalescing(mp.gather(), arch="sm_90a")
    a = _one(rep, "load", "A")
    assert a.status == "unknown" and a.coalesced is None and a.sectors_per_request is None
    assert "depends on a value read from memory" in a.reason
    assert _one(rep, "load", "I").coalesced
    assert rep.counts() == {"accesses": 3, "analysed": 2, "unknown": 1}
    assert "unknown: the index depends on a value read from memory" in rep.summary()


def test_vector_lanes_and_atomics():
    v = txlab.pools.coalescing(mp.vector_copy(), arch="sm_90a")
    a = _one(v, "load", "A")
    assert a.bytes_per_lane == 16 and a.requests == 4 * a.instructions and a.sectors_per_request == 4
    cs = txlab.pools.coalescing(mp.column_sum(), arch="sm_90a")
    rows = _one(cs, "load", "A")  # every lane on a row of its own: 32 lines, 32 sectors, 1 per request
    assert rows.sectors_per_instruction == 32 and rows.sectors_per_request == 1 and rows.efficiency == 1 / 8
    atom = _one(cs, "atomic", "S")
    assert atom.status == "analysed" and atom.sectors_per_request == 4
    lines = cs.by_line()
    assert lines[atom.lineno]["status"] == "analysed"


def test_warp_sectors_edge_cases():
    lanes = np.arange(32)
    on = np.ones(32, bool)
    assert co.warp_sectors(lanes * 4, on, 4) == (1, 4, 4, 1)
    assert co.warp_sectors(np.zeros(32, np.int64), on, 4) == (1, 1, 1, 1)  # broadcast
    assert co.warp_sectors(lanes * 4 + 16, on, 4) == (2, 5, 4, 2)  # misaligned
    half = lanes < 16
    assert co.warp_sectors(lanes * 8, half, 8)[:3] == (1, 4, 4)  # one half-warp
    assert co.warp_sectors(lanes * 16, on, 16) == (4, 16, 16, 4)  # 16-byte lanes
    assert co.warp_sectors(lanes * 4, np.zeros(32, bool), 4) == (0, 0, 0, 0)


def _ncu_sectors_per_request(profile: dict, text: str) -> float:
    rows = [r for r in profile["lines"] if r["text"].startswith(text) and r.get("l1_requests_global")]
    assert len(rows) == 1, [r["text"] for r in profile["lines"]]
    return rows[0]["l2_sectors_global"] / rows[0]["l1_requests_global"]


@pytest.mark.parametrize("variant", ["naive", "padded", "swizzled"])
def test_transposes_match_ncu_on_h200(variant):
    """The shipped ncu profiles (8192^2 transposes on the H200): sectors per request per line."""
    from txlab.examples import transpose as tr

    prof = json.loads((DATA / f"transpose_{variant}.profile.json").read_text())
    rep = txlab.pools.coalescing(tr.transpose_kernel(8192, variant), arch="sm_90a")
    assert _one(rep, "load", "A").sectors_per_request == _ncu_sectors_per_request(prof, "tile[") == 4
    assert _one(rep, "store", "B").sectors_per_request == _ncu_sectors_per_request(prof, "B[") == 4


def test_vector_copy_matches_ncu_on_h200():
    from txlab.examples import bandwidth as bw

    prof = json.loads((DATA / "vec_copy.profile.json").read_text())
    rep = txlab.pools.coalescing(bw.copy_kernel(67108864), arch="sm_90a")
    assert _one(rep, "load", "src").sectors_per_request == _ncu_sectors_per_request(prof, "reg[")
    assert _one(rep, "store", "dst").sectors_per_request == _ncu_sectors_per_request(prof, "dst[")


def test_one_site_walker_keys_sites_and_unknown_indices():
    """txlab.simt.visit_accesses owns what banks and coalescing share: which executions make one
    site (line, kind, buffer, order in the statement; unrolled copies share the line) and what an
    unknown index records (the site class's reason, never a value)."""
    from txlab import simt

    class Count(simt.AccessSite):
        unknown_index_reason = "depends on memory (test)"

        def __init__(self, v, access):
            super().__init__(v, access)
            self.executions = 0

        def add(self, v, access):
            self.executions += 1

    def glob(v):
        return co.global_access(v)

    (name, func), *_ = simt.device_functions(mp.gather(1 << 12), "sm_90a")
    sites, walk = simt.visit_accesses(func, glob, Count)
    by = {(s.kind, s.buf.name): s for s in sites}
    assert set(by) == {("load", "I"), ("load", "A"), ("store", "B")}
    assert by["load", "A"].unknowns == 1 and list(by["load", "A"].reasons) == ["depends on memory (test)"]
    assert by["load", "I"].executions == 1 and by["load", "I"].unknowns == 0
    assert walk.notes == []

    (name, func), *_ = simt.device_functions(mp.column_sum(512), "sm_90a")
    sites, _ = simt.visit_accesses(func, glob, Count)
    loads = [s for s in sites if s.kind == "load"]
    # the serial j-loop runs the statement 4 times: one site, 4 executions
    assert len(loads) == 1 and loads[0].executions == 4


@pytest.mark.parametrize("limit", ["visits", "seconds"])
def test_a_walk_cut_short_keeps_every_access_and_says_partial(limit):
    """Past the walk's visit limit or time budget, every access still gets its row (a statement's
    first execution is always reported), and the row and its line read as partial, never as known."""
    from txlab import simt

    class Short(simt.Limits):
        max_visits = 2 if limit == "visits" else simt.Limits.max_visits
        max_seconds = 0.0 if limit == "seconds" else None

    rep = txlab.pools.coalescing(mp.column_sum(512), arch="sm_90a", limits=Short)
    full = txlab.pools.coalescing(mp.column_sum(512), arch="sm_90a")
    assert [(r.access, r.buffer) for r in rep] == [(r.access, r.buffer) for r in full]
    assert all(r.status == "partial" and "beyond the walk's limit" in r.reason for r in rep)
    assert {v["status"] for v in rep.by_line().values()} == {"partial"}
    assert {v["status"] for v in full.by_line().values()} == {"analysed"}


def test_ptx_atom_and_vector_red_are_rows_at_their_width():
    """``Tx.ptx.atom`` (atom, atom_cas, ...) was not recognised as an atomic: it was missing from the
    report; a ``red .v4.f32`` was counted at 4 bytes per lane instead of 16."""
    rep = txlab.pools.coalescing(mp.ptx_atomics("global"), arch="sm_90a")
    atom = _one(rep, "atomic", "A")
    assert atom.status == "analysed" and atom.bytes_per_lane == 4, rep.summary()
    assert atom.requests == 32 and atom.sectors == 32 and not atom.coalesced  # a cache line per lane
    red = _one(rep, "atomic", "B")
    assert red.bytes_per_lane == 16 and red.requests == 4 and red.coalesced, rep.summary()
    assert rep.counts() == {"accesses": 3, "analysed": 3, "unknown": 0}


def test_unknowns_name_what_they_depend_on_and_invent_no_loop_limit():
    """A shape or bound that is a kernel argument is not "a value read from memory", a ragged loop
    is not a gather, and an uncertain guard alone is not "loop iterations beyond the walk's limit"
    (the old reason matched the note's words "were followed")."""
    rep = txlab.pools.coalescing(mp.symbolic_rowsum(), arch="sm_90a")
    a = _one(rep, "load", "A")
    assert a.status == "unknown" and "the loop variable j" in a.reason and "kernel argument n" in a.reason, a.reason
    assert "read from memory" not in a.reason and "beyond the walk's limit" not in a.reason
    b = _one(rep, "store", "B")  # outside the loop, guarded by tx == 0: fully known
    assert b.status == "analysed" and not b.reason, b.reason
    assert not any(n.startswith("line ?") for n in rep.notes), rep.notes

    ragged = _one(txlab.pools.coalescing(mp.ragged_rows(), arch="sm_90a"), "load", "A")
    assert ragged.status == "unknown" and "trip count depends on a value read from memory" in ragged.reason
    assert "gather" not in ragged.reason

    scale = txlab.compile(mp.tail_guarded_scale(), arch="sm_90a", progress=lambda s: None)
    for r in txlab.pools.coalescing(scale):
        assert r.status == "partial" and r.coalesced, r
        assert r.reason == "a guard on its path depends on the kernel argument n (both branches were followed)"


@pytest.mark.parametrize("form", ["if_then_else", "select", "ptx_pred"])
def test_guarded_operands_count_the_lanes_that_load(form):
    """``if_then_else`` used to crash the walk (``UNKNOWN in args`` compared numpy arrays); a
    ``Select`` operand and a ``pred=`` PTX load were counted for all 32 lanes, not the 16 that load."""
    rep = txlab.pools.coalescing(mp.guarded_operands(form), arch="sm_90a")
    a = _one(rep, "load", "A")
    assert a.status == "analysed" and a.instructions == 1, rep.summary()
    assert a.requests == 16 and a.sectors == 16 and a.ideal_sectors == 2, rep.summary()


def test_a_load_repeated_in_one_statement_is_one_access():
    """``S[32 (tx % 32)] * S[32 (tx % 32)] + A[2 tx] * A[2 tx]``: nvcc loads each value once (one LDS,
    one LDG on the line, checked in the SASS); the analyses counted two of each (twice the 32-way
    wavefronts, a second 50%-used global row)."""
    from tvm.script import tirx as T

    @T.prim_func
    def squares(A: T.Buffer((512,), "float32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([256])
        S = T.alloc_shared((1024,), "float32")
        S[tid] = A[tid]
        T.cuda.cta_sync()
        B[tid] = S[(tid % 32) * 32] * S[(tid % 32) * 32] + A[tid * 2] * A[tid * 2]

    c = txlab.compile(squares, arch="sm_90a", progress=lambda s: None)
    shared = [r for r in txlab.pools.layout(c).bank_conflicts() if r.access == "load"]
    glob = [r for r in txlab.pools.coalescing(c) if r.access == "load" and r.lineno == shared[0].lineno]
    opcodes = [s.opcode for s in c.source_map.sass_records_for(shared[0].lineno)]
    assert opcodes.count("LDS") == 1 and opcodes.count("LDG.E.CONSTANT") == 1, opcodes
    assert len(shared) == 1 and shared[0].instructions == 8 and shared[0].total_wavefronts == 8 * 32
    assert len(glob) == 1 and glob[0].instructions == 8 and glob[0].sectors == 8 * 8


@pytest.mark.parametrize("pitch", [1000, 1024])
def test_an_access_that_differs_between_ctas_is_partial(pitch):
    """Row ``bx`` of a float32 matrix, 32 lanes over 128 contiguous bytes: CTA 0's row starts on a
    cache line (4 sectors, 1 request). With a 1000-float pitch CTA 1's row starts 4000 bytes in,
    32 bytes past a line: the same 4 sectors span 2 lines, 2 requests (and so 63 of 64 CTAs); CTA 0
    alone read as 4 sectors per request. A 1024-float pitch keeps every row on a line."""
    from tvm.script import tirx as T

    @T.prim_func
    def rows(A: T.Buffer((64, pitch), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([64])
        tx = T.thread_id([32])
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for j in T.serial(31):
            acc[0] = acc[0] + A[bx, j * 32 + tx]
        if tx == 0:
            B[bx] = acc[0]

    rep = txlab.pools.coalescing(rows, arch="sm_90a")
    a = _one(rep, "load", "A")
    assert a.requests == a.instructions == 31 and a.sectors_per_request == 4  # CTA 0's figures
    if pitch == 1024:
        assert a.status == "analysed" and not a.reason, a.reason
    else:
        assert a.status == "partial" and rep.by_line()[a.lineno]["status"] == "partial"
        assert a.reason.startswith("CTA (1, 0, 0) needs 4.0 sectors and 2.0 requests per instruction"), a.reason
    assert _one(rep, "store", "B").status == "analysed"


def test_a_32_byte_vector_is_two_128_bit_accesses():
    """``S[8 t : 8 t + 8] = A[8 t : 8 t + 8]`` (8 floats a lane): sm_90 has no 32-byte load or store,
    nvcc makes two LDG.E.128 and two STS.128 a lane, 16 bytes at offsets 0 and 16 (checked in the
    SASS). Each has lanes 32 bytes apart: LDG.128 touches 32 sectors over 8 lines (ideal 16), STS.128
    puts lanes l and l + 4 of a quarter warp on the same banks (2-way, 8 wavefronts for 4). Counted
    as one 32-byte access the load read as coalesced and the store as conflict-free."""
    from tvm.script import tirx as T

    @T.prim_func
    def wide(A: T.Buffer((512,), "float32"), B: T.Buffer((512,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([64])
        S = T.alloc_shared((512,), "float32")
        for v in T.vectorized(8):
            S[tid * 8 + v] = A[tid * 8 + v]
        T.cuda.cta_sync()
        B[tid] = S[tid]

    c = txlab.compile(wide, arch="sm_90a", progress=lambda s: None)
    a = _one(txlab.pools.coalescing(c), "load", "A")
    ops = [s.opcode for s in c.source_map.sass_records_for(a.lineno)]
    assert ops.count("LDG.E.128.CONSTANT") == 2 and ops.count("STS.128") == 2, ops
    assert a.bytes_per_lane == 16 and a.instructions == 2 * 2, a  # 2 warps, 2 instructions each
    assert (a.sectors, a.requests, a.ideal_sectors) == (4 * 32, 4 * 8, 4 * 16) and not a.coalesced
    (s,) = [r for r in txlab.pools.layout(c).bank_conflicts() if r.access == "store"]
    assert (s.bytes_per_lane, s.ways, s.wavefronts, s.ideal_wavefronts, s.instructions) == (16, 2, 8, 4, 4)


def test_a_global_load_the_compiler_reused_from_another_line_is_partial():
    """``B[i] = A[i]`` then ``C[i] = A[i]``: nvcc loads ``A[i]`` once, on the first line (``__restrict__``),
    so the second line makes only its store (checked in the SASS); its load row read as a request
    the hardware made there."""
    from tvm.script import tirx as T

    @T.prim_func
    def twice(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([4])
        tid = T.thread_id([256])
        B[bx * 256 + tid] = A[bx * 256 + tid]
        C[bx * 256 + tid] = A[bx * 256 + tid]

    c = txlab.compile(twice, arch="sm_90a", progress=lambda s: None)
    rep = txlab.pools.coalescing(c)
    first, second = sorted((r for r in rep if r.access == "load"), key=lambda r: r.lineno)
    m = c.source_map
    assert any(s.opcode.startswith("LDG") for s in m.sass_records_for(first.lineno))
    assert not any(s.opcode.startswith("LDG") for s in m.sass_records_for(second.lineno))
    assert first.status == "analysed" and not first.reason
    assert second.status == "partial" and "no global load on this line" in second.reason, second
    assert all(r.status == "analysed" for r in txlab.pools.coalescing(twice, arch="sm_90a"))  # no SASS to ask


def _line_of(start):
    """The line of this file that starts with ``start`` (once, indentation aside)."""
    (n,) = [i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if line.strip().startswith(start)]
    return n


def test_what_a_loop_header_reads_is_at_the_loops_line():
    """``for j in T.serial(L[tx + 1] - L[tx])``: TVM's passes drop the loop's span, and the walk put
    the two loads of ``L`` at the statement before the loop, where the SASS has no load ("partly
    unknown") although the line map has both LDGs at the loop's line; the loop-bound note named the
    body's line. Both are now the header's line."""
    from tvm.script import tirx as T

    @T.prim_func
    def ragged(A: T.Buffer((64, 256), "float32"), L: T.Buffer((65,), "int32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([32])
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for j in T.serial(L[tx + 1] - L[tx]):  # the ragged loop's header
            acc[0] = acc[0] + A[bx * 32 + tx, j]
        B[bx * 32 + tx] = acc[0]

    line = _line_of("for j in T.serial(L[tx + 1] - L[tx]):")
    c = txlab.compile(ragged, arch="sm_90a", progress=lambda s: None)
    assert sum(s.opcode.startswith("LDG") for s in c.source_map.sass_records_for(line)) == 2
    rep = txlab.pools.coalescing(c)
    loads = [r for r in rep if r.buffer == "L"]
    assert [(r.lineno, r.status) for r in loads] == [(line, "analysed")] * 2, rep.summary()
    assert loads[0].source.startswith("for j in T.serial(L[tx + 1] - L[tx])")
    assert any(n.startswith(f"line {line}: a loop bound depends on") for n in rep.notes), rep.notes


def test_a_cut_loop_is_named_by_its_line():
    """A 1024-iteration loop over a constant: the walk follows 256 of them and its note read
    "line ?: loop of 1024 iterations" (the loop has no span after lowering, nor its bounds)."""
    from tvm.script import tirx as T

    @T.prim_func
    def long_loop(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([8])
        tx = T.thread_id([128])
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for r in T.serial(1024):  # the long loop's header
            acc[0] = acc[0] + A[bx * 128 + tx, r]
        B[bx * 128 + tx] = acc[0]

    notes = co.coalescing(long_loop, arch="sm_90a").notes
    line = _line_of("for r in T.serial(1024):")
    assert f"line {line}: loop of 1024 iterations; the first 256 were followed" in notes, notes


HALO = """
@T.prim_func
def halo(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n + 2,), "float32")
    B = T.match_buffer(B_ptr, (n + 1,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n + 1, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i <= n:
        B[i] = A[i] + A[i + 1]
"""


def test_a_scalar_bound_in_the_kernel_is_not_a_value_read_from_memory():
    """``i = bx * 256 + tx`` lives in a one-cell local buffer the walk knows: a guard ``i <= n`` depends on the
    kernel argument n alone (the reason said "a value read from memory and the kernel argument n")."""
    from test_emulator import kernel

    rep = txlab.pools.coalescing(kernel(HALO, "halo"), arch="sm_90a")
    assert rep.counts()["accesses"] == 3, rep.summary()
    for r in rep:
        assert "read from memory" not in r.reason, r.reason
        assert "kernel argument n" in r.reason, r.reason
