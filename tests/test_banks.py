"""Bank conflicts computed from the index expressions a kernel runs (txlab.banks, PoolLayout.bank_conflicts)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab import banks


def test_warp_wavefronts_model():
    lanes = np.arange(32)
    on = np.ones(32, bool)
    # 4-byte, consecutive words: one wavefront for the warp
    assert banks.warp_wavefronts(lanes * 4, on, 4)[:3] == (1, 1, 1)
    # 4-byte, stride 32 words: every lane in bank 0 -> 32 ways
    wf, ideal, ways, colliding, bank, _ = banks.warp_wavefronts(lanes * 128, on, 4)
    assert (wf, ideal, ways, bank) == (32, 1, 32, 0) and colliding == list(range(32))
    # same word for every lane: broadcast, no conflict
    assert banks.warp_wavefronts(np.zeros(32, int), on, 4)[:3] == (1, 1, 1)
    # 16-byte vector accesses, consecutive: served per quarter warp, 4 wavefronts, conflict-free
    assert banks.warp_wavefronts(lanes * 16, on, 16)[:3] == (4, 4, 1)
    # 8-byte accesses with a stride of 2 elements (16 B): each half warp spans 256 B -> 2-way
    assert banks.warp_wavefronts(lanes * 16, on, 8)[:3] == (4, 2, 2)
    # inactive lanes do not count
    half = lanes < 16
    assert banks.warp_wavefronts(lanes * 128, half, 4)[2] == 16


@pytest.mark.parametrize("variant,ways", [("naive", 32), ("padded", 1), ("swizzled", 1)])
def test_transposes(variant, ways):
    from txlab.examples.transpose import expected_read_ways, transpose_kernel

    f = transpose_kernel(1024, variant)
    rows = txlab.pools.layout(f, arch="sm_90a").bank_conflicts()
    loads = [r for r in rows if r.access == "load"]
    stores = [r for r in rows if r.access == "store"]
    assert len(loads) == 1 and len(stores) == 1, rows.summary()
    assert loads[0].buffer == "tile" and stores[0].buffer == "tile"
    assert loads[0].ways == ways == expected_read_ways(variant)
    assert stores[0].ways == 1
    # 8 warps x 4 rows per CTA; the naive read needs 32 wavefronts per request
    assert loads[0].instructions == 32
    assert loads[0].total_wavefronts == 32 * ways
    assert loads[0].wavefronts == ways and loads[0].ideal_wavefronts == 1
    # the user's line: the statement that reads the tile
    assert "tile[lane" in (loads[0].source or "")
    if ways > 1:
        assert loads[0].lanes == list(range(32))
        assert "32-way" in rows.summary()
    tot = rows.totals()
    assert tot["load"]["conflicts"] == 32 * (ways - 1)


def test_grid_totals_from_compiled():
    from txlab.examples.transpose import transpose_kernel

    c = txlab.compile(transpose_kernel(256, "naive"), arch="sm_90a")
    rows = txlab.pools.layout(c).bank_conflicts()
    tot = rows.totals()
    # 8 x 8 CTAs, each 32 load instructions of 32 wavefronts
    assert tot["load"]["grid_wavefronts"] == 64 * 32 * 32
    assert tot["load"]["grid_conflicts"] == 64 * 32 * 31
    assert tot["store"]["grid_conflicts"] == 0


def test_guarded_and_vector_accesses(tmp_path):
    from tvm.script import tirx as T

    @T.prim_func
    def vec(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tid = T.thread_id([128])
        s = T.alloc_shared((32, 64), "float32")
        if tid < 64:
            for i in T.serial(32):
                s[i, tid] = A[i * 32 + tid]
        T.cuda.cta_sync()
        if tid < 16:
            B[tid] = s[tid, 0] + s[0, tid * 2]

    rows = txlab.pools.layout(vec, arch="sm_90a").bank_conflicts()
    by = {(r.access, r.ways) for r in rows}
    # the store: 64 lanes (2 warps), consecutive -> conflict-free
    store = [r for r in rows if r.access == "store"][0]
    assert store.ways == 1 and store.instructions == 2 * 32
    loads = sorted((r for r in rows if r.access == "load"), key=lambda r: -r.ways)
    # s[tid, 0] for 16 lanes: stride 64 words -> all in bank 0, 16 ways (only the active lanes)
    assert loads[0].ways == 16 and loads[0].lanes == list(range(16))
    # s[0, tid * 2]: stride 2 words over 16 lanes -> 16 distinct banks
    assert loads[1].ways == 1
    assert by


def test_pool_widget_shows_accesses():
    from txlab.examples.transpose import transpose_kernel
    from txlab.views.pool import PoolView
    import json

    w = PoolView(txlab.pools.layout(transpose_kernel(256, "naive"), arch="sm_90a"))
    rows = json.loads(w.data)["accesses"]
    assert {r["access"]: r["ways"] for r in rows} == {"load": 32, "store": 1}


# Nsight Compute 2025.3.1 on the H200 (the lead's sample run, tests/data/h200/sample_kernels.py; the
# transposes there launch 64 CTAs of 1024 threads): l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}
# and l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}, read from the .ncu-rep files.
NCU_H200 = {
    "transpose_naive": {"ld_wavefronts": 65536, "ld_conflicts": 63488, "st_wavefronts": 2048, "st_conflicts": 0},
    "transpose_padded": {"ld_wavefronts": 2048, "ld_conflicts": 0, "st_wavefronts": 2048, "st_conflicts": 0},
}


@pytest.mark.parametrize("name", sorted(NCU_H200))
def test_matches_nsight_compute_on_the_h200(name):
    import importlib.util
    import pathlib
    import sys

    path = pathlib.Path(__file__).parent / "data" / "h200" / "sample_kernels.py"
    mod = sys.modules.get("h200_sample_kernels")
    if mod is None:
        spec = importlib.util.spec_from_file_location("h200_sample_kernels", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["h200_sample_kernels"] = mod
        spec.loader.exec_module(mod)
    c = txlab.compile(getattr(mod, name), arch="sm_90a", progress=lambda s: None)
    tot = txlab.pools.layout(c).bank_conflicts().totals()
    want = NCU_H200[name]
    assert tot["load"]["grid_wavefronts"] == want["ld_wavefronts"]
    assert tot["load"]["grid_conflicts"] == want["ld_conflicts"]
    assert tot["store"]["grid_wavefronts"] == want["st_wavefronts"]
    assert tot["store"]["grid_conflicts"] == want["st_conflicts"]


# ---- ldmatrix / stmatrix / cp.async / TMA / wgmma (issue 29) ------------------------------------
def _mp():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "kernels"))
    import memory_patterns

    return memory_patterns


def _only(rows, access):
    got = [r for r in rows if r.access == access]
    assert len(got) == 1, rows.summary()
    return got[0]


@pytest.mark.parametrize(
    "row_halves,num,trans,ways,per_instruction",
    [(64, 4, False, 8, (32, 4)), (72, 4, False, 1, (4, 4)), (64, 2, True, 8, (16, 2)), (72, 1, False, 1, (1, 1))],
)
def test_ldmatrix_rows_from_lanes(row_halves, num, trans, ways, per_instruction):
    """LDSM: each 8x8 matrix is 8 rows of 16 bytes whose addresses come from 8 lanes, served 8 rows
    per wavefront: 128-byte rows put all 8 on the same banks (8 wavefronts per matrix), a 16-byte
    pad spreads them; .x1/.x2 read only lanes 0-7 / 0-15's addresses; .trans reads the same rows."""
    rows = txlab.pools.layout(_mp().ldmatrix_tile(row_halves, num, trans, ctas=2), arch="sm_90a").bank_conflicts()
    r = _only(rows, "ldmatrix")
    assert r.status == "analysed" and r.buffer == "S" and r.bytes_per_lane == 16
    assert (r.ways, (r.wavefronts, r.ideal_wavefronts)) == (ways, per_instruction)
    assert r.instructions == 4 and r.total_wavefronts == 4 * per_instruction[0]
    if ways > 1:
        assert r.lanes == list(range(8)) and r.bank == 0
    assert rows.totals()["ldmatrix"]["conflicts"] == 4 * (per_instruction[0] - per_instruction[1])
    assert rows.counts() == {"accesses": 2, "analysed": 2, "async": 0, "unknown": 0}


@pytest.mark.parametrize("row_halves,num,ways", [(64, 4, 8), (72, 4, 1), (64, 1, 8)])
def test_stmatrix_rows_from_lanes(row_halves, num, ways):
    rows = txlab.pools.layout(_mp().stmatrix_tile(row_halves, num, ctas=2), arch="sm_90a").bank_conflicts()
    r = _only(rows, "stmatrix")
    assert r.status == "analysed" and r.ways == ways and r.ideal_wavefronts == num
    assert r.wavefronts == num * ways


def test_tvm_tile_copy_ldmatrix_through_pointer_offset():
    """Apache TVM's Tx.warp.copy to registers lowers to ldmatrix on tvm_builtin_pointer_offset(smem, off):
    the walk follows the offset (the 64-byte rows of its layout give a 4-way conflict)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from upstream import k_copy_ldstmatrix as ls

    rows = txlab.pools.layout(ls._build_warp_kernel(4, "ld", False)[0], arch="sm_90a").bank_conflicts()
    r = _only(rows, "ldmatrix")
    assert r.buffer == "A_smem" and r.status == "analysed" and (r.ways, r.wavefronts, r.ideal_wavefronts) == (4, 16, 4)
    swz = txlab.pools.layout(ls._build_warp_kernel(4, "ld", False, swizzle=True)[0], arch="sm_90a").bank_conflicts()
    assert _only(swz, "ldmatrix").ways == 1


@pytest.mark.parametrize("stride", [1, 2])
def test_cp_async_is_unknown_with_the_measured_reason(stride):
    """LDGSTS: on the H200 ncu counted 4x the wavefronts an STS of the same layout takes (lanes 32
    bytes apart), and its global requests changed with the shared layout: no figure, a reason."""
    k = _mp().cp_async_copy(stride, ctas=2)
    rows = txlab.pools.layout(k, arch="sm_90a").bank_conflicts()
    r = _only(rows, "cp.async")  # commit_group / wait_group are not accesses
    assert r.status == "unknown" and r.ways is None and "LDGSTS" in r.reason and "H200" in r.reason
    assert len(rows) == 2
    glob = txlab.pools.coalescing(k, arch="sm_90a")
    (g,) = [x for x in glob if x.access == "cp.async"]
    assert g.status == "unknown" and g.buffer == "A" and "shared destination" in g.reason and len(glob) == 2


@pytest.mark.parametrize(
    "which,line_text,want",
    [
        # fp16 stores of an unrolled (t, w) loop: nvcc pairs w = 0, 1 into one 32-bit STS (ncu: 16/4)
        ("tvm_ld", "A_smem[row, cp, t, w] = A[gr, gc]", (16, 4, 4)),
        # four float loads S[4 tx + j]: one LDS.128 per lane (ncu: 1024/1024 over 64 CTAs = 16/16 per CTA)
        ("cp1", "B[(bx * threads + tx) * 4 + j] = S[tx * 4 * stride + j]", (16, 16, 16)),
    ],
)
def test_accesses_the_compiler_merged_count_as_the_sass_instruction(which, line_text, want):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from upstream import k_copy_ldstmatrix as ls

    k = ls._build_warp_kernel(4, "ld", False)[0] if which == "tvm_ld" else _mp().cp_async_copy(1, ctas=4)
    c = txlab.compile(k, arch="sm_90a", progress=lambda s: None)
    (r,) = [r for r in txlab.pools.layout(c).bank_conflicts() if r.source and line_text in r.source]
    assert r.status == "analysed" and (r.total_wavefronts, r.total_ideal_wavefronts, r.bytes_per_lane) == want
    # a prim_func that was not compiled has no SASS to say so: the IR's own accesses are counted
    (ir,) = [r for r in txlab.pools.layout(k, arch="sm_90a").bank_conflicts() if r.source and line_text in r.source]
    assert ir.total_wavefronts > r.total_wavefronts or ir.instructions > r.instructions


def test_tma_and_wgmma_operands_are_async_proxy_never_conflict_free():
    from txlab.api_examples import wgmma

    rows = txlab.pools.layout(wgmma.ss_kernel(), arch="sm_90a").bank_conflicts()
    assert rows.counts() == {"accesses": 3, "analysed": 0, "async": 3, "unknown": 0}
    assert sorted((r.access, r.buffer) for r in rows) == [
        ("TMA", "A_smem"),
        ("TMA", "B_smem"),
        ("wgmma", "A_smem, B_smem"),
    ]
    for r in rows:
        assert r.status == "async" and r.ways is None and r.conflicts is None
        assert "not the load/store unit" in r.reason and "128B swizzle" in r.reason
    assert "tensor map A_map: 128B swizzle" in _only_line(rows, "TMA", "A_smem").reason
    mma = _only(rows, "wgmma")  # at the wgmma, not the descriptors: ncu counts (64*16 + 64*16) * 2 / 128
    assert "wgmma.mma_async" in mma.source and (mma.total_wavefronts, mma.total_ideal_wavefronts) == (32, 32)
    assert all(r.total_wavefronts == 0 for r in rows if r.access == "TMA")
    assert "3 by the async proxy" in rows.summary() and "ways  1" not in rows.summary()
    assert rows.totals()["load"]["wavefronts"] == 0
    tma = [r for r in txlab.pools.coalescing(wgmma.ss_kernel(), arch="sm_90a") if r.access == "TMA"]
    assert {r.buffer for r in tma} == {"A_map", "B_map"} and all(r.status == "unknown" for r in tma)
    rs = _only(txlab.pools.layout(wgmma.rs_kernel(), arch="sm_90a").bank_conflicts(), "wgmma")
    assert rs.buffer == "B_smem" and rs.total_wavefronts == 16  # A comes from registers


def _only_line(rows, access, buffer):
    (r,) = [r for r in rows if r.access == access and r.buffer == buffer]
    return r


@pytest.mark.parametrize("advance", [True, False])
def test_hopper_gemm_every_shared_and_global_access_and_nothing_else(advance, monkeypatch):
    """On the TMA + wgmma GEMM: TMA loads/stores and wgmma descriptors are async-proxy rows naming
    their swizzle (from the host's tensor maps and the descriptors, whether each wgmma takes an encoded
    descriptor or one with an offset added to its start address); fences, commit/wait groups, tensor-map
    prefetches and setmaxnreg are not accesses (they were listed as unknown ones)."""
    from txlab.examples import hopper_gemm as hg

    monkeypatch.setattr(hg, "_DESC_ADVANCE", advance)
    c = txlab.compile(hg.kernel_for(256, 256, 256), arch="sm_90a", progress=lambda s: None)
    rows = txlab.pools.layout(c).bank_conflicts()
    assert rows.counts() == {"accesses": 5, "analysed": 1, "async": 4, "unknown": 0}, rows.summary()
    tma = [r for r in rows if r.access == "TMA"]
    assert len(tma) == 3 and all("_tensormap: 128B swizzle" in r.reason for r in tma)
    (mma,) = [r for r in rows if r.access == "wgmma"]
    assert mma.buffer == "As, Bs" and "128B swizzle" in mma.reason
    glob = txlab.pools.coalescing(c)
    assert {r.access for r in glob} <= {"TMA", "load", "store"} and glob.counts()["accesses"] >= 3
    assert all(r.status != "analysed" or r.access != "TMA" for r in glob)


def _corpus_case(case_id):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from upstream import corpus, k_codegen  # noqa: F401 (registers its cases, whatever was imported before)

    (c,) = [c for c in corpus.cases() if c.id == case_id]
    return c.build()


@pytest.mark.parametrize("width", [32, 64, 128])
def test_ptx_ld_st_are_analysed_at_their_width(width):
    """T.ptx.ld / ld_vec / st / st_vec on shared memory: the address and the vector x type width."""
    rows = txlab.pools.layout(_corpus_case(f"codegen/ld_st_shared_copy[{width}b]"), arch="sm_90a").bank_conflicts()
    ptx = [r for r in rows if r.bytes_per_lane == width // 8 and r.access in ("load", "store")]
    assert {r.access for r in ptx} == {"load", "store"} and all(r.status == "analysed" for r in ptx), rows.summary()
    assert rows.counts()["unknown"] == 0


def test_casts_in_index_arithmetic_do_not_stop_the_walk():
    """TVM 0.27's Cast has .ty, not .dtype: the walk of a shuffle reduction used to raise."""
    rep = txlab.pools.coalescing(_corpus_case("codegen/warp_sum_full"), arch="sm_90a")
    assert rep.counts()["analysed"] >= 1 and rep.counts()["unknown"] == 0


def test_ptx_atom_on_shared_memory_is_a_serialised_row():
    """``Tx.ptx.atom.shared`` was missing from the report (only ``atomic_*``/``red`` were atomics)."""
    sys.path.insert(0, str(Path(__file__).parent / "kernels"))
    import memory_patterns as mp

    rows = txlab.pools.layout(mp.ptx_atomics("shared"), arch="sm_90a").bank_conflicts()
    (atom,) = [r for r in rows if r.access == "atomic"]
    assert atom.status == "analysed" and atom.ways == 32 and atom.buffer == "S", rows.summary()


# ---- values the walk follows through locals and shuffles ---------------------------------------
def _local_paths(form):
    """``S[k]`` where the local ``k`` is ``tx * 16`` (16-way: every even lane in bank 0) unless a path
    the walk cannot choose changes it: a branch on a value read from memory (to ``tx``: 1-way), a
    loop or a while loop run a number of times read from memory (``k`` doubles each time)."""
    from tvm.script import tirx as T

    @T.prim_func
    def paths(X: T.Buffer((256,), "int32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_shared((8192,), "float32")
        k = T.local_scalar("int32")
        k = tx * 16
        if form == "if":
            if X[tx] > 0:
                k = tx
        elif form == "for":
            for j in T.serial(X[0]):
                k = k * 2 % 8192
        elif form == "while":
            while k < X[0]:
                k = k * 2
        else:  # a guard the walk evaluates: only lanes >= 16 change k
            if tx % 32 >= 16:
                k = tx
        S[k] = T.float32(1)
        T.cuda.cta_sync()
        B[tx] = S[tx]

    return paths


@pytest.mark.parametrize(
    "form,why",
    [
        ("if", "k, set under a condition that depends on a value read from memory"),
        ("for", "k, updated in a loop whose trip count depends on a value read from memory"),
        ("while", "k, updated in a while loop whose condition depends on a value read from memory"),
    ],
)
def test_a_local_set_on_a_path_the_walk_cannot_choose_is_unknown(form, why):
    """The walk follows both branches of an unknown condition, and an unknown loop's body once;
    a local they set was kept at the last value written (the ``if`` form read as conflict-free)."""
    rows = txlab.pools.layout(_local_paths(form), arch="sm_90a").bank_conflicts()
    (store,) = [r for r in rows if r.access == "store"]
    assert store.status == "unknown" and store.ways is None and store.conflicts is None, rows.summary()
    assert store.reason == f"the index depends on {why}"


def test_a_local_set_under_a_known_guard_stays_analysed():
    """Lanes 0-15 keep ``k = 16 tx`` (banks 0 and 16, 8 words each), lanes 16-31 take ``k = tx``
    (banks 16-31, one word each): in warps 1-7 bank 16 has 8 + 1 distinct words, a 9-way conflict
    (in warp 0 lane 16's word is lane 1's, broadcast: 8-way)."""
    rows = txlab.pools.layout(_local_paths("known"), arch="sm_90a").bank_conflicts()
    (store,) = [r for r in rows if r.access == "store"]
    assert store.status == "analysed" and store.ways == 9 and store.bank == 16, rows.summary()


@pytest.mark.parametrize("kind,ways", [("xor", 32), ("down", 16), ("up", 16)])
def test_every_shuffle_kind_is_followed(kind, ways):
    """``S[shfl(tx) * 32]``: every lane in bank 0. xor 1 swaps neighbours (32 words); down 16 gives
    lanes 0-15 the value of lanes 16-31, which keep their own (PTX: a source outside the segment
    reads the own lane): 16 words, each read by two lanes (broadcast); up 16 the same mirrored."""
    from tvm.script import tirx as T

    shfl = {"xor": T.cuda.__shfl_xor_sync, "down": T.cuda.__shfl_down_sync, "up": T.cuda.__shfl_up_sync}[kind]
    off = 1 if kind == "xor" else 16

    @T.prim_func
    def shuffled(B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_shared((8192,), "float32")
        S[tx] = T.float32(1)
        T.cuda.cta_sync()
        B[tx] = S[shfl(T.uint32(0xFFFFFFFF), tx, off, 32) * 32 % 8192]

    (load,) = [r for r in txlab.pools.layout(shuffled, arch="sm_90a").bank_conflicts() if r.access == "load"]
    assert load.status == "analysed" and load.ways == ways and load.bank == 0, load.reason


def test_a_local_array_read_at_a_per_thread_index():
    """``idx[tx % 4]`` of a local array the unrolled loop filled with ``q * 256``: lane l stores to
    ``256 (l % 4) + l // 4 + 8 w``, bank ``l // 4 + 8 w``: 8 banks of 4 words each, 4-way."""
    from tvm.script import tirx as T

    @T.prim_func
    def regs(B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_shared((1024,), "float32")
        idx = T.alloc_local((4,), "int32")
        for q in T.unroll(4):
            idx[q] = q * 256
        S[idx[tx % 4] + tx // 4] = T.float32(1)
        T.cuda.cta_sync()
        B[tx] = S[tx]

    (store,) = [r for r in txlab.pools.layout(regs, arch="sm_90a").bank_conflicts() if r.access == "store"]
    assert store.status == "analysed" and store.ways == 4 and store.lanes == [0, 1, 2, 3], store.reason


def _loop_exits(form):
    """``S[32 tx + j]`` (every lane in bank 0) in ``for j in range(8)``, left three ways: a ``break``
    at ``j == 2``, a ``continue`` by the odd lanes, a ``break`` on a value read from memory."""
    from tvm.script import tirx as T

    @T.prim_func
    def exits(X: T.Buffer((256,), "int32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_shared((8192,), "float32")
        for j in T.serial(8):
            if form == "break":
                if j == 2:
                    break
            elif form == "continue":
                if tx % 2 == 1:
                    continue
            elif X[j] > 0:
                break
            S[tx * 32 + j] = T.float32(1)
        T.cuda.cta_sync()
        B[tx] = S[tx]

    return exits


@pytest.mark.parametrize(
    "form,instructions,ways",
    [("break", 2 * 8, 32), ("continue", 8 * 8, 16)],  # 2 iterations of 8 warps; the 16 even lanes
)
def test_break_and_continue_leave_the_loop(form, instructions, ways):
    """The walk used to run every iteration with every thread past a break/continue (a note at most):
    4x the wavefronts of the break, a 32-way conflict for the 16 lanes that store."""
    rows = txlab.pools.layout(_loop_exits(form), arch="sm_90a").bank_conflicts()
    (store,) = [r for r in rows if r.access == "store"]
    assert store.status == "analysed" and store.instructions == instructions and store.ways == ways, rows.summary()
    assert store.total_wavefronts == instructions * ways


def test_a_break_on_memory_makes_the_rest_of_the_loop_partly_unknown():
    rows = txlab.pools.layout(_loop_exits("unknown"), arch="sm_90a").bank_conflicts()
    (store,) = [r for r in rows if r.access == "store"]
    assert store.status == "partial" and "depends on a value read from memory" in store.reason, rows.summary()
    assert any("a break depends on a value read from memory" in n for n in rows.notes)


def test_a_shared_atomic_the_sass_makes_a_cas_loop_is_partial():
    """``atomicAdd`` of a float on shared memory is a compare-and-swap loop on sm_90 (LDS +
    ATOMS.CAST.SPIN, again for the lanes that lost): its wavefronts are not one ATOMS's, and Nsight
    Compute's count depends on the retries, so the row is partial. The integer add of 1 is one
    ``ATOMS.POPC.INC``: one operation per distinct address (the count of the lanes on it), so lanes l and
    l + 16 on one word are one access of 16 words in 16 banks."""
    from tvm.script import tirx as T

    @T.prim_func
    def hist(O: T.Buffer((256,), "float32"), N: T.Buffer((256,), "int32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_shared((256,), "float32")
        C = T.alloc_shared((256,), "int32")
        S[tx] = T.float32(0)
        C[tx] = 0
        T.cuda.cta_sync()
        T.cuda.atomic_add(T.address_of(S[tx % 16]), T.float32(1))
        T.cuda.atomic_add(T.address_of(C[tx % 16]), 1)
        T.cuda.cta_sync()
        O[tx] = S[tx]
        N[tx] = C[tx]

    c = txlab.compile(hist, arch="sm_90a", progress=lambda s: None)
    rows = {r.buffer: r for r in txlab.pools.layout(c).bank_conflicts() if r.access == "atomic"}
    f, i = rows["S"], rows["C"]
    m = c.source_map
    assert any(op.startswith("ATOMS.CAS") for op in (s.opcode for s in m.sass_records_for(f.lineno)))
    assert not any(op.startswith("ATOMS.CAS") for op in (s.opcode for s in m.sass_records_for(i.lineno)))
    assert f.status == "partial" and "compare-and-swap loop" in f.reason, f
    assert any(op.startswith("ATOMS.POPC.INC") for op in (s.opcode for s in m.sass_records_for(i.lineno)))
    assert i.status == "analysed" and i.ways == 1 and not i.reason, i
    plain = {r.buffer: r for r in txlab.pools.layout(hist, arch="sm_90a").bank_conflicts() if r.access == "atomic"}
    assert plain["C"].ways == 2  # no SASS to read: lanes l and l + 16 on one word, serialised


@pytest.mark.parametrize("swizzled,ways", [(False, 8), (True, 1)])
def test_a_vector_read_of_a_swizzled_tile(swizzled, ways):
    """Thread t reads row t of a 64 x 64 fp16 tile, 16 bytes at column 0. Rows are 128 bytes: unswizzled,
    the 8 lanes of a quarter warp hit the same 4 banks (8-way, 32 wavefronts for 4). The 128-byte
    swizzle (ComposeLayout(3, 3, 3)) puts row t's chunk 0 at chunk t % 8: conflict-free. Its lowered
    index is ``t * 64 + (Ramp(0, 1, 8) ^ Broadcast((t & 7) << 3))``, which the walk called "unknown:
    the index depends on a value read from memory" (a vector XOR was not evaluated)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import ComposeLayout, S, TileLayout

    lay = ComposeLayout(3, 3, 3, TileLayout(S[(64, 64)])) if swizzled else TileLayout(S[(64, 64)])

    @T.prim_func
    def rows(A: T.Buffer((64, 64), "float16"), B: T.Buffer((64, 64), "float16")):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([64])
        As = T.alloc_buffer((64, 64), "float16", scope="shared", layout=lay)
        Tx.cta.copy(As[0:64, 0:64], A[0:64, 0:64])
        T.cuda.cta_sync()
        for v in T.vectorized(8):
            B[tid, v] = As[tid, v]

    rows_ = txlab.pools.layout(rows, arch="sm_90a").bank_conflicts()
    (load,) = [r for r in rows_ if r.access == "load"]
    assert load.status == "analysed" and load.bytes_per_lane == 16, rows_.summary()
    assert (load.ways, load.wavefronts, load.ideal_wavefronts) == (ways, 4 * ways, 4)


def test_an_index_unknown_for_no_memory_read_does_not_blame_memory():
    """``S[4 t + (v ^ 1)]`` vectorized: lanes 1, 0, 3, 2 are not evenly spaced, the walk does not
    follow the index; it is unknown, but no value read from memory is involved."""
    from tvm.script import tirx as T

    @T.prim_func
    def pairs(B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([64])
        S = T.alloc_shared((256,), "float32")
        S[tid] = T.float32(1)
        T.cuda.cta_sync()
        for v in T.vectorized(4):
            B[tid * 4 + v] = S[tid * 4 + T.bitwise_xor(v, 1)]

    (load,) = [r for r in txlab.pools.layout(pairs, arch="sm_90a").bank_conflicts() if r.access == "load"]
    assert load.status == "unknown" and load.reason == "the index is an expression the walk does not evaluate"


def test_a_shared_load_the_compiler_moved_to_another_line_is_partial():
    """``a = S[2 t]`` and ``b = S[2 t + 1]`` on two lines: nvcc makes one LDS.64 (conflict-free) on the
    first line and none on the second (checked in the SASS), where the rows read two 2-way loads; the
    second read as a fully analysed conflict the hardware never makes there."""
    from tvm.script import tirx as T

    @T.prim_func
    def pair(A: T.Buffer((512,), "float32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([256])
        S = T.alloc_shared((512,), "float32")
        S[tid] = A[tid]
        S[tid + 256] = A[tid + 256]
        T.cuda.cta_sync()
        a = T.local_scalar("float32")
        b = T.local_scalar("float32")
        a = S[tid * 2]
        b = S[tid * 2 + 1]
        B[tid] = a + b

    c = txlab.compile(pair, arch="sm_90a", progress=lambda s: None)
    first, second = sorted(
        (r for r in txlab.pools.layout(c).bank_conflicts() if r.access == "load"), key=lambda r: r.lineno
    )
    m = c.source_map
    assert [s.opcode for s in m.sass_records_for(first.lineno) if s.opcode.startswith("LDS")] == ["LDS.64"]
    assert not [s for s in m.sass_records_for(second.lineno) if s.opcode.startswith("LDS")]
    assert second.status == "partial" and "no shared load on this line" in second.reason, second
    assert first.status == "partial"  # its LDS.64 is wider than its own 4-byte load: said, counted one by one
    # a kernel that was not compiled has no SASS to say so: its IR accesses are what is counted
    assert all(r.status == "analysed" for r in txlab.pools.layout(pair, arch="sm_90a").bank_conflicts())


# ---- kernels the analyses had not seen, against hand derivations (tests/kernels/unseen.py) -------
def _unseen(name):
    sys.path.insert(0, str(Path(__file__).parent / "kernels"))
    import unseen

    return getattr(unseen, name)()


# (kernel, access, buffer): (ways, warp-instructions, wavefronts) per CTA, from each kernel's docstring
UNSEEN_SHARED = {
    ("transpose_bf16", "load", "tile"): (16, 32, 32 * 16),
    ("transpose_bf16", "store", "tile"): (1, 32, 32),
    ("transpose_xor8", "load", "tile"): (4, 32, 32 * 4),
    ("interleaved_reduce", "store", "sm"): (8, 12, 47),
    ("let_bound", "store", "S"): (2, 8, 16),
    ("let_bound", "load", "S"): (16, 8, 128),
    ("padded_nested", "load", "S"): (1, 64, 64),
    ("warp_specialized", "load", "ring"): (4, 32, 128),
    ("warp_specialized", "store", "ring"): (1, 32, 32),
    ("fp8_copy", "load", "S"): (1, 8, 8),
}


@pytest.mark.parametrize("kernel,access,buffer", sorted(UNSEEN_SHARED))
def test_unseen_kernels_shared(kernel, access, buffer):
    rows = [r for r in txlab.pools.layout(_unseen(kernel), arch="sm_90a").bank_conflicts() if r.access == access]
    r = max((r for r in rows if r.buffer == buffer), key=lambda r: r.ways)
    assert r.status == "analysed", r.reason
    assert (r.ways, r.instructions, r.total_wavefronts) == UNSEEN_SHARED[kernel, access, buffer], rows


# (kernel, access, buffer): (sectors, requests, ideal sectors) per warp-instruction
UNSEEN_GLOBAL = {
    ("transpose_bf16", "load", "A"): (2, 1, 2),
    ("lane_masks", "load", "A"): [(8, 2, 2), (8, 4, 1)],
    ("warp_specialized", "store", "Y"): (16, 4, 4),
    ("fp8_copy", "load", "A"): (1, 1, 1),
}


@pytest.mark.parametrize("kernel,access,buffer", sorted(UNSEEN_GLOBAL))
def test_unseen_kernels_global(kernel, access, buffer):
    from txlab import coalescing as co

    rows = [r for r in co.coalescing(_unseen(kernel), arch="sm_90a") if (r.access, r.buffer) == (access, buffer)]
    want = UNSEEN_GLOBAL[kernel, access, buffer]
    got = [(r.sectors / r.instructions, r.requests / r.instructions, r.ideal_sectors / r.instructions) for r in rows]
    assert all(r.status == "analysed" for r in rows) and got == (want if isinstance(want, list) else [want])


def test_unseen_lane_masks_shared():
    rows = sorted(
        (r for r in txlab.pools.layout(_unseen("lane_masks"), arch="sm_90a").bank_conflicts() if r.access == "store"),
        key=lambda r: r.lineno,
    )
    assert [(r.ways, r.status) for r in rows] == [(16, "analysed"), (2, "analysed"), (1, "analysed")]
    assert rows[1].lanes == [1, 17] and rows[2].instructions == 8  # elect_sync: one lane in each of 8 warps


def test_an_access_that_differs_between_ctas_is_partial():
    """``s[(bx % 2) * tx * 32]``: CTA 0 reads one word (a broadcast, 1-way), CTA 1 a word per lane all
    in bank 0 (32-way). Only CTA 0 was walked, and the row read conflict-free with no caveat; the
    second CTA's walk (as coalescing makes) now marks it partial, naming both."""
    from tvm.script import tirx as T

    @T.prim_func
    def cta_dependent(B: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([16])
        tx = T.thread_id([256])
        s = T.alloc_shared((8192,), "float32")
        s[tx] = T.float32(1)
        T.cuda.cta_sync()
        B[bx * 256 + tx] = s[(bx % 2) * tx * 32]

    rows = txlab.pools.layout(cta_dependent, arch="sm_90a").bank_conflicts()
    (load,) = [r for r in rows if r.access == "load"]
    (store,) = [r for r in rows if r.access == "store"]
    assert load.status == "partial" and load.ways == 1, rows.summary()
    assert load.reason.startswith("CTA (1, 0, 0) needs 32.0 wavefronts per instruction (ideal 1.0, ways 32)")
    assert "partly unknown: CTA (1, 0, 0)" in rows.summary()
    assert store.status == "analysed" and store.ways == 1  # the same in every CTA: no caveat
    other = banks.bank_conflicts(cta_dependent, arch="sm_90a", cta=(1, 0, 0))
    (load1,) = [r for r in other if r.access == "load"]
    assert load1.ways == 32 and load1.status == "partial" and "CTA (2, 0, 0)" in load1.reason


def test_an_access_to_an_aliased_pool_buffer_is_named_for_its_own_buffer():
    """Two pool buffers over the same bytes (``move_base_to``): a row was named for the first allocation holding
    the byte, so the float32 ``Alias`` stores read as stores to the float16 ``As``. The access's dtype picks the
    buffer where one alias has it; otherwise every alias is named."""
    from tvm.backend.cuda.lang import SMEMPool
    from tvm.script import tirx as T

    @T.prim_func
    def aliased(A: T.Buffer((128, 64), "float16"), F: T.Buffer((4,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        pool = SMEMPool()
        As = pool.alloc((64, 64), "float16", align=1024)
        pool.move_base_to(0)
        Alias = pool.alloc((16, 16), "float32", align=16)
        pool.commit()
        As[tx // 2, tx % 64] = A[tx, 0]
        T.cuda.cta_sync()
        Alias[tx // 16, tx % 16] = F[0]
        T.cuda.cta_sync()
        F[0] = T.float32(As[0, 0]) + Alias[0, 0]

    from txlab.banks import _pool_name

    plan = txlab.pools.layout(aliased, arch="sm_90a")
    rows = plan.bank_conflicts()
    stores = {r.buffer for r in rows if r.access == "store"}
    assert stores == {"As", "Alias"}, rows.summary()
    assert _pool_name(plan, 0, "float32") == "Alias" and _pool_name(plan, 0) == "As / Alias"


OFF_DIAGONAL = """
@T.prim_func
def k(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.device_entry()
    by, bx = T.cta_id([4, 4])
    tid = T.thread_id([256])
    lane = tid % 32
    warp = tid // 32
    tile = T.alloc_shared((32, 33), "float32")
    tileu = T.alloc_shared((32, 32), "float32")
    if bx == by:
        for j in T.unroll(4):
            tile[warp + j * 8, lane] = A[bx * 32 + warp + j * 8, by * 32 + lane]
        T.cuda.cta_sync()
        for j in T.unroll(4):
            C[by * 32 + warp + j * 8, bx * 32 + lane] = tile[lane, warp + j * 8]
    else:
        for j in T.unroll(4):
            tileu[warp + j * 8, lane] = A[bx * 32 + warp + j * 8, by * 32 + lane]
        T.cuda.cta_sync()
        for j in T.unroll(4):
            C[by * 32 + warp + j * 8, bx * 32 + lane] = tileu[lane, warp + j * 8]
"""


def test_accesses_only_off_diagonal_ctas_reach_get_rows_from_the_second_walk():
    """A 2-D grid whose diagonal tiles use a padded tile and the others an unpadded one: CTA (0, 0) is diagonal,
    and the second CTA walked used to be (1, 1), diagonal too, so the unpadded tile's 32-way read had no row (12
    of 16 CTAs run it). The second CTA is now off the diagonal and what only it reaches is a row, partial."""
    from test_emulator import kernel

    rep = txlab.pools.layout(kernel(OFF_DIAGONAL, "k"), arch="sm_90a").bank_conflicts()
    rows = {(r.lineno, r.access, r.buffer): r for r in rep}
    worst = [r for r in rows.values() if r.buffer == "tileu" and r.access == "load"]
    assert worst and worst[0].ways == 32 and worst[0].status == "partial", rep.summary()
    assert "reached by CTA (1, 3, 0) and not by CTA (0, 0, 0)" in worst[0].reason
    assert any(r.buffer == "tile" for r in rows.values()), rep.summary()  # the diagonal's rows stay


LAST_CTA = """
@T.prim_func
def k(A: T.Buffer((8192,), "float32"), B: T.Buffer((8192,), "float32")):
    T.device_entry()
    bx = T.cta_id([8])
    tid = T.thread_id([32])
    s = T.alloc_shared((1024,), "float32")
    if bx == 7:
        s[tid * 32] = A[tid * 32]
        T.cuda.cta_sync()
        B[bx * 1024 + tid] = s[tid * 32]
    else:
        B[bx * 1024 + tid] = A[bx * 1024 + tid]
"""

TRIPS = """
@T.prim_func
def k(B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tid = T.thread_id([32])
    s = T.alloc_shared((64,), "float32")
    acc = T.alloc_local((1,), "float32")
    acc[0] = T.float32(0)
    for i in T.serial(bx + 1):
        s[tid * 2] = T.float32(i)
        acc[0] = acc[0] + s[tid * 2]
    B[bx * 32 + tid] = acc[0]
"""


def test_code_only_the_last_cta_runs_and_trip_counts_by_cta_are_not_left_out():
    """A tail branch only CTA 7 of 8 runs (32-way shared, 32 sectors a global read) had no row at all: the walk
    covered CTA 0 and CTA 1. The last CTA is walked too; its rows are partial, saying so. A loop whose trip count
    grows with the CTA index keeps its per-instruction figures and says the grid totals scale CTA 0's."""
    from test_emulator import kernel

    k = kernel(LAST_CTA, "k")
    rep = txlab.pools.layout(k, arch="sm_90a").bank_conflicts()
    shared = [r for r in rep if r.buffer == "s"]
    assert {r.access for r in shared} == {"load", "store"} and all(r.ways == 32 for r in shared), rep.summary()
    assert all(r.status == "partial" and "reached by CTA (7, 0, 0)" in r.reason for r in shared)
    co = txlab.pools.coalescing(k, arch="sm_90a")
    gather = [r for r in co if r.access == "load" and "reached by CTA (7, 0, 0)" in (r.reason or "")]
    assert gather and gather[0].sectors_per_instruction == 32, co.summary()
    trips = txlab.pools.layout(kernel(TRIPS, "k"), arch="sm_90a").bank_conflicts()
    rows = [r for r in trips if r.buffer == "s"]
    assert rows and all(r.status == "partial" and "makes it" in r.reason for r in rows), trips.summary()


CTA_SUM = """
@T.prim_func
def k(X: T.Buffer((256,), "float32"), Out: T.Buffer((256,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    scratch = T.alloc_buffer((8,), "float32", scope="shared")
    Out[tx] = T.cuda.cta_sum(X[tx], 8, scratch.data)
"""


def test_a_helper_given_a_shared_pointer_is_an_unknown_row_not_nothing():
    """T.cuda.cta_sum(x, 8, scratch.data) stores and loads shared memory inside the helper (STS/LDS in the SASS); the
    report said 0 accesses, 0 unknown."""
    from test_emulator import kernel

    rep = txlab.pools.layout(kernel(CTA_SUM, "k"), arch="sm_90a").bank_conflicts()
    (row,) = list(rep)
    assert row.buffer == "scratch" and row.status == "unknown" and "takes a pointer to shared memory" in row.reason


def test_a_tma_store_issued_by_a_later_warp_names_the_buffer_it_reads():
    """The attention kernel's O store is issued by an elected lane of each consumer warpgroup at an offset that
    depends on the warp: the row named the buffer at warp 0's offset (Vs), not the lanes that issue it (Os)."""
    from txlab.examples import hopper_attention as ha

    rep = txlab.pools.layout(ha.attention_kernel(1, 2, 2, 256, 256, 128), arch="sm_90a").bank_conflicts()
    stores = [r for r in rep if r.access == "TMA" and "O_tensormap" in (r.reason or "")]
    assert stores and all(r.buffer == "Os" for r in stores), [(r.lineno, r.buffer) for r in stores]


def _pairs_kernel(stride, loop):
    from tvm.script import tirx as T

    n = 64 * stride * loop

    @T.prim_func
    def pairs(A: T.Buffer((n,), "float32"), B: T.Buffer((32,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        sm = T.alloc_shared((n,), "float32")
        for i in T.serial(n // 32):
            sm[tx + 32 * i] = A[tx + 32 * i]
        T.cuda.cta_sync()
        acc = T.local_scalar("float32")
        acc = T.float32(0)
        for j in T.unroll(loop):
            acc = acc + sm[2 * stride * tx + 64 * stride * j] + sm[2 * stride * tx + 64 * stride * j + 1]
        B[tx] = acc

    return pairs


@pytest.mark.parametrize(("stride", "loop", "ways"), [(1, 1, 1), (1, 3, 1), (2, 1, 2)])
def test_two_loads_of_one_line_the_compiler_made_one_lds64(stride, loop, ways):
    """``sm[2 tx] + sm[2 tx + 1]``: nvcc makes the two 4-byte loads one LDS.64 per lane (checked in the SASS), so
    the line is one 8-byte access (2 wavefronts, conflict-free; at twice the stride 2-way), counted at the first
    load's row; the second says it was joined and counts nothing, in an unrolled loop too."""
    c = txlab.compile(_pairs_kernel(stride, loop), arch="sm_90a", progress=lambda s: None)
    lds = [s.opcode for s in c.source_map.instructions if s.opcode.startswith("LDS")]
    assert lds == ["LDS.64"] * loop, lds
    first, second = sorted(
        (r for r in txlab.pools.layout(c).bank_conflicts() if r.access == "load"), key=lambda r: r.instructions
    )[::-1]
    assert first.status == second.status == "analysed", (first, second)
    assert (first.ways, first.bytes_per_lane, first.instructions) == (ways, 8, loop)
    assert (first.total_wavefronts, first.total_ideal_wavefronts) == (2 * ways * loop, 2 * loop)
    assert second.instructions == 0 and second.total_wavefronts == 0 and "counted in sm's row" in second.notes[0]


def test_a_line_with_shared_loads_of_two_widths_is_no_merge():
    """A float16 and a float32 buffer read on one line: an LDS.U16 and an LDS, nothing merged; both rows stay
    analysed (the line's 4-byte load is the float32 one's, not two float16 loads joined)."""
    from tvm.script import tirx as T

    @T.prim_func
    def mixed(B: T.Buffer((32,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        h = T.alloc_shared((32,), "float16")
        f = T.alloc_shared((32,), "float32")
        h[tx] = T.float16(1)
        f[tx] = T.float32(2)
        T.cuda.cta_sync()
        B[tx] = T.float32(h[31 - tx]) + f[31 - tx]

    c = txlab.compile(mixed, arch="sm_90a", progress=lambda s: None)
    loads = [r for r in txlab.pools.layout(c).bank_conflicts() if r.access == "load"]
    assert sorted((r.buffer, r.bytes_per_lane, r.status) for r in loads) == [
        ("f", 4, "analysed"),
        ("h", 2, "analysed"),
    ], loads


def test_a_tile_copys_pointer_offset_is_no_access():
    """``Tx.cta.copy`` into shared memory computes ``tvm_builtin_pointer_offset(&As[0], off)``: address arithmetic,
    not an access, so no "unknown" row for it; its STS.128 is the one store row."""
    from tvm.script import tirx as Tx
    from tvm.tirx.layout import S, TileLayout

    L = TileLayout(S[(32, 64)])

    @Tx.prim_func
    def tcopy(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (32, 64), "float32", layout=L)
        B = Tx.match_buffer(B_ptr, (32, 64), "float32", layout=L)
        Tx.device_entry()
        Tx.cta_id([1])
        tid = Tx.thread_id([128])
        As = Tx.alloc_buffer((32, 64), "float32", scope="shared", layout=L)
        Tx.cta.copy(As[:, :], A[:, :])
        Tx.cuda.cta_sync()
        B[tid // 4, tid % 4] = As[tid // 4, tid % 4]

    c = txlab.compile(tcopy, arch="sm_90a", progress=lambda s: None)
    rep = txlab.pools.layout(c).bank_conflicts()
    assert rep.counts() == {"accesses": 2, "analysed": 2, "async": 0, "unknown": 0}, rep.summary()
    store = _only(rep, "store")
    assert (store.ways, store.bytes_per_lane) == (1, 16)
