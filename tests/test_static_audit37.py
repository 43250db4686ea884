"""The static memory-access reports against the SASS nvcc makes (audit 37, defects 1, 2 and 4), compiled on the CPU:

* a shared atomic nvcc aggregates over the warp (``ATOMS.POPC.INC`` on one address; a leader lane's ``@P ATOMS.ADD``
  after ``VOTEU.ANY``/``FLO``) is one operation per warp and distinct address, not a 32-way bank conflict; a plain
  ``ATOMS.ADD`` of per-lane data stays serialised;
* a load the compiler reused from an earlier line is not counted on its own line because another load of the same kind
  is there (global: the SASS's loads, each traced to its kernel argument, name the buffers; shared: the line's LDS move
  fewer bytes than its loads, by exactly the repeated one's); such a row is partial and out of the line's totals, and
  rows the SASS does make (an unrolled loop, a vector load, a repeat reloaded after a barrier) stay analysed;
* a global atomic row says how many lanes of a warp share one address, which SASS instruction makes it, and whether
  every CTA walked makes it on the same addresses; 32 lanes on one word is "serialised", never "coalesced".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tvm.script import tirx as Tx

import txlab
from txlab import pools

ARCH = "sm_90a"
N = 1 << 20


def _line_of(start):
    """The line of this file that starts with ``start`` (once, indentation aside)."""
    (n,) = [i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if line.strip().startswith(start)]
    return n


def _compiled(kernel):
    return txlab.compile(kernel, arch=ARCH, progress=lambda s: None)


def _opcodes(c, line):
    return [s.opcode for s in c.source_map.sass_records_for(line)]


def _row(rows, line, access, buffer):
    (r,) = [r for r in rows if r.lineno == line and r.access == access and r.buffer == buffer]
    return r


# ---- 1. warp-aggregated shared atomics ---------------------------------------------------------------------------
@Tx.prim_func
def shared_counter(C_ptr: Tx.handle):
    C = Tx.match_buffer(C_ptr, (N // 256,), "int32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    cnt = Tx.alloc_shared((1,), "int32")
    if tx == 0:
        cnt[0] = 0
    Tx.cuda.cta_sync()
    Tx.cuda.atomic_add(Tx.address_of(cnt[0]), 1)  # the block-wide counter
    Tx.cuda.cta_sync()
    if tx == 0:
        C[bx] = cnt[0]


@Tx.prim_func
def compaction(X_ptr: Tx.handle, O_ptr: Tx.handle, C_ptr: Tx.handle):
    X = Tx.match_buffer(X_ptr, (N,), "float32")
    O = Tx.match_buffer(O_ptr, (N,), "float32")
    C = Tx.match_buffer(C_ptr, (N // 256,), "int32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    cnt = Tx.alloc_shared((1,), "int32")
    if tx == 0:
        cnt[0] = 0
    Tx.cuda.cta_sync()
    slot = Tx.cuda.atomic_add(Tx.address_of(cnt[0]), 1)  # the queue slot
    O[bx * 256 + slot] = X[bx * 256 + tx]
    Tx.cuda.cta_sync()
    if tx == 0:
        C[bx] = cnt[0]


@Tx.prim_func
def shared_scatter(X_ptr: Tx.handle, C_ptr: Tx.handle):
    X = Tx.match_buffer(X_ptr, (N,), "int32")
    C = Tx.match_buffer(C_ptr, (N,), "int32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    sh = Tx.alloc_shared((1024,), "int32")
    for k in range(4):
        sh[k * 256 + tx] = 0
    Tx.cuda.cta_sync()
    Tx.cuda.atomic_add(Tx.address_of(sh[tx % 32 * 32]), X[bx * 256 + tx])  # 32 words of bank 0
    Tx.cuda.cta_sync()
    C[bx * 256 + tx] = sh[tx]


def test_a_block_counter_is_one_wavefront_per_warp():
    """``atomic_add(&cnt[0], 1)``: nvcc makes one ``ATOMS.POPC.INC.32 RZ, [UR4]`` (the warp's lanes counted in one
    operation on a uniform address): 1 wavefront, no conflict. It read "32-way conflict, lanes 0-31 in bank 0"."""
    line = _line_of("Tx.cuda.atomic_add(Tx.address_of(cnt[0]), 1)  # the block-wide counter")
    c = _compiled(shared_counter)
    assert any(op.startswith("ATOMS.POPC.INC") for op in _opcodes(c, line)), _opcodes(c, line)
    rows = pools.layout(c).bank_conflicts()
    atom = _row(rows, line, "atomic", "cnt")
    assert atom.status == "analysed" and (atom.ways, atom.wavefronts, atom.ideal_wavefronts) == (1, 1, 1), atom
    assert atom.instructions == 8 and atom.total_wavefronts == 8 and atom.conflicts == 0
    assert any(n.startswith("warp-aggregated by the compiler") for n in atom.notes), atom.notes
    assert "warp-aggregated by the compiler" in rows.summary() and "32-way" not in rows.summary()
    # with no SASS to read (a prim_func), every lane's atomic is what the code says: serialised on one word
    plain = _row(pools.layout(shared_counter, arch=ARCH).bank_conflicts(), line, "atomic", "cnt")
    assert plain.ways == 32 and plain.wavefronts == 32


def test_a_queue_slot_is_the_leader_lanes_atomic():
    """``slot = atomic_add(&cnt[0], 1)`` (stream compaction): ``VOTEU.ANY / FLO / @P ATOMS.ADD / SHFL.IDX``, the
    leader lane adds the warp's count: 1 wavefront per warp, where it read 32-way and 32 wavefronts."""
    line = _line_of("slot = Tx.cuda.atomic_add(Tx.address_of(cnt[0]), 1)  # the queue slot")
    c = _compiled(compaction)
    sass = [s.text for s in c.source_map.sass_records_for(line)]
    assert any(t.startswith("VOTEU.ANY") for t in sass) and any(t.startswith("@P") and "ATOMS.ADD" in t for t in sass)
    atom = _row(pools.layout(c).bank_conflicts(), line, "atomic", "cnt")
    assert (atom.ways, atom.wavefronts, atom.total_wavefronts) == (1, 1, 8), atom
    assert any(n.startswith("warp-aggregated by the compiler") for n in atom.notes)


def test_a_plain_shared_atomic_of_lane_data_stays_serialised():
    """``atomic_add(&sh[(tx % 32) * 32], X[i])``: per-lane values on 32 words of one bank, a plain ``ATOMS.ADD``
    (nothing aggregated): still 32-way."""
    line = _line_of("Tx.cuda.atomic_add(Tx.address_of(sh[tx % 32 * 32]), X[bx * 256 + tx])")
    c = _compiled(shared_scatter)
    ops = _opcodes(c, line)
    assert any(op.startswith("ATOMS.ADD") for op in ops) and not any(".POPC" in op for op in ops), ops
    atom = _row(pools.layout(c).bank_conflicts(), line, "atomic", "sh")
    assert atom.ways == 32 and atom.wavefronts == 32 and not any("aggregated" in n for n in atom.notes), atom


# ---- 2. loads reused from an earlier line ------------------------------------------------------------------------
@Tx.prim_func
def global_reuse(A_ptr: Tx.handle, C_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (N,), "float32")
    C = Tx.match_buffer(C_ptr, (N,), "float32")
    B = Tx.match_buffer(B_ptr, (N,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    x = Tx.alloc_local((1,), "float32")
    x[0] = A[bx * 256 + tx] * Tx.float32(3)  # A loaded here
    B[bx * 256 + tx] = x[0] + A[bx * 256 + tx] * C[bx * 256 + tx]  # A reused, C loaded


@Tx.prim_func
def shared_reuse(A_ptr: Tx.handle, B_ptr: Tx.handle, D_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (N,), "float32")
    B = Tx.match_buffer(B_ptr, (N,), "float32")
    D = Tx.match_buffer(D_ptr, (N,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    s = Tx.alloc_shared((256,), "float32")
    t = Tx.alloc_shared((8192,), "float32")
    s[tx] = A[bx * 256 + tx]
    t[tx * 32] = A[bx * 256 + tx]
    Tx.cuda.cta_sync()
    x = Tx.alloc_local((1,), "float32")
    x[0] = t[tx * 32] * Tx.float32(3)  # t's 32-way load
    B[bx * 256 + tx] = x[0] + t[tx * 32] * s[tx]  # t reused, s loaded
    Tx.cuda.cta_sync()
    t[tx * 32] = x[0]
    Tx.cuda.cta_sync()
    D[bx * 256 + tx] = t[tx * 32] + s[tx + 1]  # t reloaded after the barrier


@Tx.prim_func
def honest_loads(A_ptr: Tx.handle, B_ptr: Tx.handle, C_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (256, 1024), "float32")
    B = Tx.match_buffer(B_ptr, (256 * 256,), "float32")
    C = Tx.match_buffer(C_ptr, (256, 1024), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([256])
    tx = Tx.thread_id([256])
    acc = Tx.alloc_local((1,), "float32")
    acc[0] = A[bx, tx]
    for j in Tx.unroll(3):
        acc[0] = acc[0] + A[bx, (j + 1) * 256 + tx]  # three LDGs on one line
    for v in Tx.vectorized(4):
        C[bx, tx * 4 + v] = A[bx, tx * 4 + v] * acc[0]  # one LDG.128
    if tx < 100:
        B[bx * 256 + tx] = A[bx, tx + 1] + acc[0]  # a predicated load


def test_a_global_load_reused_from_an_earlier_line_is_not_counted_on_its_line():
    """``x = A[i] * 3`` then ``B[i] = x + A[i] * C[i]``: the second line's SASS has one LDG, of C (its address from
    C's argument, ``c[0x0][0x220]``), and the STG; A's value is the first line's register. A's row there read
    "coalesced, analysed" because C's LDG was on the line, and the line's totals counted 24 requests and 96 sectors
    per CTA where the hardware makes 16 and 64."""
    first = _line_of("x[0] = A[bx * 256 + tx] * Tx.float32(3)  # A loaded here")
    line = _line_of("B[bx * 256 + tx] = x[0] + A[bx * 256 + tx] * C[bx * 256 + tx]  # A reused, C loaded")
    c = _compiled(global_reuse)
    assert [op for op in _opcodes(c, line) if op.startswith("LDG")] == ["LDG.E.CONSTANT"]
    rep = pools.coalescing(c)
    a = _row(rep, line, "load", "A")
    assert a.status == "partial" and a.not_in_sass, a
    assert "access C only" in a.reason and "not A" in a.reason, a.reason
    assert "not made on this line" in rep.summary()
    assert _row(rep, first, "load", "A").status == "analysed"
    assert _row(rep, line, "load", "C").status == "analysed" and not _row(rep, line, "load", "C").not_in_sass
    totals = rep.by_line()[line]
    assert (totals["requests"], totals["sectors"], totals["not_in_sass"]) == (16, 64, 1), totals
    assert totals["status"] == "partial" and any("not A" in x for x in totals["reasons"])
    assert rep.to_dict()["accesses"][1]["not_in_sass"] in (True, False)
    # no SASS to ask: the code's accesses are counted
    assert all(r.status == "analysed" and not r.not_in_sass for r in pools.coalescing(global_reuse, arch=ARCH))


def test_a_shared_load_reused_from_an_earlier_line_is_no_phantom_conflict():
    """``x = t[32 tx] * 3`` then ``B[i] = x + t[32 tx] * s[tx]``: the second line's SASS is one ``LDS`` (of s), t's value
    is the first line's. t's row there read "32-way conflict" (counted twice over the two lines). It is partial and
    out of the totals; after a barrier the same load is made again (two LDS on the line) and stays analysed."""
    first = _line_of("x[0] = t[tx * 32] * Tx.float32(3)  # t's 32-way load")
    line = _line_of("B[bx * 256 + tx] = x[0] + t[tx * 32] * s[tx]  # t reused, s loaded")
    again = _line_of("D[bx * 256 + tx] = t[tx * 32] + s[tx + 1]  # t reloaded after the barrier")
    c = _compiled(shared_reuse)
    assert [op for op in _opcodes(c, line) if op.startswith("LDS")] == ["LDS"]
    assert len([op for op in _opcodes(c, again) if op.startswith("LDS")]) == 2
    rows = pools.layout(c).bank_conflicts()
    t = _row(rows, line, "load", "t")
    assert t.status == "partial" and t.not_in_sass and f"made on line {first}" in t.reason, t
    assert _row(rows, first, "load", "t").ways == 32 and _row(rows, first, "load", "t").status == "analysed"
    assert _row(rows, line, "load", "s").status == "analysed"
    assert _row(rows, again, "load", "t").status == "analysed" and not _row(rows, again, "load", "t").not_in_sass
    loads = [r for r in rows if r.access == "load" and not r.not_in_sass]
    assert rows.totals()["load"]["wavefronts"] == sum(r.total_wavefronts for r in loads)
    assert rows.totals()["load"]["wavefronts"] == 2 * 8 * 32 + 2 * 8  # t twice, s twice (8 warps)
    assert "not made on this line" in rows.summary()
    assert not any(r.not_in_sass for r in pools.layout(shared_reuse, arch=ARCH).bank_conflicts())


def test_loads_the_sass_makes_stay_analysed():
    """An unrolled loop (three LDGs on one line), a vector load (one LDG.128 for four elements) and a predicated
    load: every row is one the hardware makes, none partial."""
    c = _compiled(honest_loads)
    assert len([op for op in _opcodes(c, _line_of("acc[0] = acc[0] + A[bx, (j + 1) * 256 + tx]")) if "LDG" in op]) == 3
    rep = pools.coalescing(c)
    assert all(r.status == "analysed" and not r.not_in_sass for r in rep), rep.summary()
    assert {v["status"] for v in rep.by_line().values()} == {"analysed"}


def test_a_line_whose_only_load_is_reused_has_no_figures():
    """``B[i] = A[i]`` then ``C[i] = A[i] + 1`` on a line of its own: the second line's load is not made there; the
    line's totals are its store's alone (they counted the phantom load's sectors)."""
    from tvm.script import tirx as T

    @T.prim_func
    def twice(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([4])
        tid = T.thread_id([256])
        B[bx * 256 + tid] = A[bx * 256 + tid]
        C[bx * 256 + tid] = A[bx * 256 + tid] + T.float32(1)

    rep = pools.coalescing(_compiled(twice))
    second = max(r.lineno for r in rep)
    load = _row(rep, second, "load", "A")
    assert load.not_in_sass and "no global load on this line" in load.reason
    totals = rep.by_line()[second]
    store = _row(rep, second, "store", "C")
    assert (totals["requests"], totals["sectors"]) == (store.requests, store.sectors) == (8, 32), totals


# ---- 4. global atomics: lanes per address, the SASS, contention among CTAs ------------------------------------------
@Tx.prim_func
def global_atomics(X_ptr: Tx.handle, S_ptr: Tx.handle, H_ptr: Tx.handle, O_ptr: Tx.handle, C_ptr: Tx.handle):
    X = Tx.match_buffer(X_ptr, (N,), "float32")
    S = Tx.match_buffer(S_ptr, (1,), "float32")
    H = Tx.match_buffer(H_ptr, (256,), "float32")
    O = Tx.match_buffer(O_ptr, (N,), "float32")
    C = Tx.match_buffer(C_ptr, (1,), "int32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    Tx.cuda.atomic_add(Tx.address_of(S[0]), X[bx * 256 + tx])  # every lane on one word
    Tx.cuda.atomic_add(Tx.address_of(H[tx]), X[bx * 256 + tx])  # a word per lane, the same in every CTA
    Tx.cuda.atomic_add(Tx.address_of(O[bx * 256 + tx]), X[bx * 256 + tx])  # a word per lane and CTA
    Tx.cuda.atomic_add(Tx.address_of(C[0]), 1)  # a count: aggregated


@Tx.prim_func
def fetch_add(X_ptr: Tx.handle, S_ptr: Tx.handle, O_ptr: Tx.handle):
    X = Tx.match_buffer(X_ptr, (N,), "float32")
    S = Tx.match_buffer(S_ptr, (1,), "float32")
    O = Tx.match_buffer(O_ptr, (N,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([N // 256])
    tx = Tx.thread_id([256])
    O[bx * 256 + tx] = Tx.cuda.atomic_add(Tx.address_of(S[0]), X[bx * 256 + tx])  # the old value kept


def test_a_float_sum_on_one_word_is_serialised_not_coalesced():
    """``atomic_add(&S[0], X[i])``: ``REDG.E.ADD.F32.FTZ.RN.STRONG.GPU`` with all 32 lanes on one word (nvcc does not
    aggregate floats), from every CTA onto the same address. It read "1.0 sectors ... coalesced" and nothing else."""
    line = _line_of("Tx.cuda.atomic_add(Tx.address_of(S[0]), X[bx * 256 + tx])  # every lane on one word")
    rep = pools.coalescing(_compiled(global_atomics))
    s = _row(rep, line, "atomic", "S")
    assert s.status == "analysed" and s.sectors_per_instruction == 1 and s.efficiency == 1.0
    assert s.lanes_per_address == 32 and s.coalesced is False, s
    assert s.sass_opcode.startswith("REDG.E.ADD.F32"), s.sass_opcode
    assert s.same_address_every_cta is True
    text = next(t for t in rep.summary().splitlines() if f"line {line:>4}  atomic S " in t)
    assert "serialised: 32 lanes of a warp on one address" in text and "coalesced" not in text, text
    assert "REDG.E.ADD.F32" in text and "CTAs contend" in text
    d = s.to_dict()
    assert d["lanes_per_address"] == 32 and d["coalesced"] is False and d["same_address_every_cta"] is True


def test_atomic_rows_tell_lanes_per_address_and_ctas_apart():
    """A histogram's ``H[tx]``: one lane per word, the same words in every CTA (contention among CTAs, said);
    ``O[bx * 256 + tx]``: a word per lane and CTA; ``atomic_add(&C[0], 1)``: nvcc's leader lane adds the warp's count
    (``@P REDG`` after ``VOTEU.ANY``), one lane per address. Without SASS, no opcode and no aggregation."""
    lines = {
        key: _line_of(start)
        for key, start in (
            ("H", "Tx.cuda.atomic_add(Tx.address_of(H[tx]), X[bx * 256 + tx])"),
            ("O", "Tx.cuda.atomic_add(Tx.address_of(O[bx * 256 + tx]), X[bx * 256 + tx])"),
            ("C", "Tx.cuda.atomic_add(Tx.address_of(C[0]), 1)  # a count: aggregated"),
        )
    }
    c = _compiled(global_atomics)
    rep = pools.coalescing(c)
    h, o, cnt = (_row(rep, lines[k], "atomic", k) for k in ("H", "O", "C"))
    assert (h.lanes_per_address, h.coalesced, h.same_address_every_cta) == (1, True, True), h
    assert (o.lanes_per_address, o.coalesced, o.same_address_every_cta) == (1, True, False), o
    assert h.sass_opcode.startswith("REDG.E.ADD.F32") and o.sass_opcode.startswith("REDG.E.ADD.F32")
    assert any(t.startswith("VOTEU.ANY") for t in (s.text for s in c.source_map.sass_records_for(lines["C"])))
    assert cnt.lanes_per_address == 1 and cnt.sass_opcode.startswith("REDG.E.ADD") and cnt.coalesced, cnt
    assert any(n.startswith("warp-aggregated by the compiler") for n in cnt.notes), cnt.notes
    plain = pools.coalescing(global_atomics, arch=ARCH)
    p = _row(plain, lines["C"], "atomic", "C")
    assert p.lanes_per_address == 32 and p.sass_opcode is None and not p.coalesced
    assert all(r.lanes_per_address is None for r in rep if r.access != "atomic")


def test_an_atomic_whose_old_value_is_kept_is_an_atomg():
    """``O[i] = atomic_add(&S[0], X[i])``: the old value is used, so the SASS is an ``ATOMG`` (not a ``REDG``)."""
    line = _line_of("O[bx * 256 + tx] = Tx.cuda.atomic_add(Tx.address_of(S[0]), X[bx * 256 + tx])")
    s = _row(pools.coalescing(_compiled(fetch_add)), line, "atomic", "S")
    assert s.sass_opcode.startswith("ATOMG.E.ADD.F32"), s.sass_opcode
    assert s.lanes_per_address == 32 and not s.coalesced


@pytest.mark.parametrize("arch", ["sm_80", "sm_100a"])
def test_the_sass_is_read_on_other_archs(arch):
    """The kernel arguments start elsewhere in constant bank 0 (``c[0x0][0x160]`` on sm_80, ``0x380`` on sm_100) and
    sm_80's global atomic is a generic ``RED.E``: A's reused load and the float sum read the same there."""
    line = _line_of("B[bx * 256 + tx] = x[0] + A[bx * 256 + tx] * C[bx * 256 + tx]  # A reused, C loaded")
    rep = pools.coalescing(txlab.compile(global_reuse, arch=arch, progress=lambda s: None))
    assert _row(rep, line, "load", "A").not_in_sass and not _row(rep, line, "load", "C").not_in_sass
    atom_line = _line_of("Tx.cuda.atomic_add(Tx.address_of(S[0]), X[bx * 256 + tx])  # every lane on one word")
    s = _row(
        pools.coalescing(txlab.compile(global_atomics, arch=arch, progress=lambda s: None)), atom_line, "atomic", "S"
    )
    assert s.status == "analysed" and s.lanes_per_address == 32 and "ADD.F32" in s.sass_opcode, s


def test_the_source_view_cell_of_a_serialised_atomic_line():
    """The per-line figures SourceView shows carry the most lanes per address of the line's atomics (its global-memory
    cell read as a coalesced line before)."""
    from txlab.views.source import _coalescing

    line = _line_of("Tx.cuda.atomic_add(Tx.address_of(S[0]), X[bx * 256 + tx])  # every lane on one word")
    c = _compiled(global_atomics)
    assert pools.coalescing(c).by_line()[line]["lanes_per_address"] == 32
    cells, _ = _coalescing(c)
    assert cells[str(line)]["lanes_per_address"] == 32
    js = (Path(__file__).parents[1] / "txlab" / "static" / "source.js").read_text()
    assert "atomics serialised" in js  # the bundle that renders it is rebuilt from widgets/src/source.js
