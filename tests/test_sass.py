"""SASS control bits (txlab.sass, Compiled.sass_table, Compiled.instructions): decoded from the
real cubins of real kernels and checked against what must hold for the code to be correct (a
variable-latency result is waited for before it is read), against what NVIDIA's own disassembler
prints from the same bits (operand ``.reuse`` markers, ``DEPBAR.LE SBk``), and against the
independently published encoding of the padding NOP. No GPU needed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import txlab
from txlab import sass
from txlab import display
from txlab.magic import run_cell

BASICS = (Path(__file__).parent / "kernels" / "basics.py").read_text()

# an FMA chain with a value kept in one register (operand reuse) and a cp.async round trip
# (LDGSTS, LDGDEPBAR, DEPBAR)
EXTRA = """
@T.prim_func
def horner(A: T.Buffer((1 << 16,), "float32"), C: T.Buffer((16,), "float32"), B: T.Buffer((1 << 16,), "float32")):
    T.device_entry()
    bx = T.cta_id([256])
    tx = T.thread_id([256])
    acc = T.alloc_local((4,), "float32")
    x = T.alloc_local((1,), "float32")
    x[0] = A[bx * 256 + tx]
    for j in T.serial(4):
        acc[j] = C[j]
    for k in T.serial(16):
        for j in T.serial(4):
            acc[j] = acc[j] * x[0] + C[(k + j) % 16]
    B[bx * 256 + tx] = acc[0] + acc[1] + acc[2] + acc[3]

@T.prim_func
def cpasync(A: T.Buffer((1 << 16,), "float32"), B: T.Buffer((1 << 16,), "float32")):
    T.device_entry()
    bx = T.cta_id([256])
    tx = T.thread_id([256])
    sm = T.alloc_shared((256,), "float32")
    T.ptx.cp.async_.ca.shared.global_(T.address_of(sm[tx]), T.address_of(A[bx * 256 + tx]), 4)
    T.ptx.cp.async_.commit_group()
    T.ptx.cp.async_.wait_group(0)
    B[bx * 256 + tx] = sm[tx] * T.float32(3.0)
"""


@pytest.fixture(scope="module")
def k90():
    out = run_cell(BASICS + EXTRA, {}, arch="sm_90a")
    return out


@pytest.fixture(scope="module")
def gemm():
    from txlab.examples import hopper_gemm as hg

    return txlab.compile(hg.simple_kernel(256, 256, 256, bn=128), arch="sm_90a")


def _seq(compiled):
    return [i for i in sass.instructions(compiled) if not i.padding]


def _find(seq, opcode_rx, start=0):
    rx = re.compile(opcode_rx)
    return next(k for k in range(start, len(seq)) if rx.search(seq[k].opcode))


# ---- decoding, field by field --------------------------------------------------------------
def test_field_layout_on_synthetic_words():
    # every field set to a distinct value, packed at the documented positions of hi >> 41
    c = sass.Control.from_field(0b1010 | (0 << 4) | (3 << 5) | (5 << 8) | (0b100101 << 11) | (0b0110 << 17))
    assert (c.stall, c.yield_, c.wr_bar, c.rd_bar, c.wait_mask, c.reuse) == (10, True, 3, 5, 0b100101, 0b0110)
    assert c.waits_on == [0, 2, 5]
    assert c.text() == "B0-2--5:R5:W3:Y:S10"
    none = sass.Control.from_hi((0x7F0 | 15) << 41)  # barriers 7 = none, yield bit set = no yield
    assert (none.wr_bar, none.rd_bar, none.yield_, none.stall) == (None, None, False, 15)


def test_padding_nop_matches_the_published_encoding(k90):
    """ptxas pads each kernel with NOPs whose control field is 0x7e0 -- the padding constant
    CuAssembler documents as [B------:R-:W-:Y:S00]: no barriers, no wait, yield, zero stall."""
    pads = [i for i in sass.instructions(k90["scale"]) if i.padding and i.opcode == "NOP"]
    assert pads
    for p in pads:
        assert p.control.raw == 0x7E0 and p.control.text() == "B------:R-:W-:Y:S00"
    # and the self-branch after the last EXIT is padding too, with yield and zero stall
    tail = [i for i in sass.instructions(k90["scale"]) if i.padding and i.opcode == "BRA"]
    assert len(tail) == 1 and tail[0].control.text() == "B------:R-:W-:Y:S00"


def test_load_use_waits_on_the_loads_write_barrier(k90):
    seq = _seq(k90["scale"])
    ld = _find(seq, r"^LDG")
    k = seq[ld].control.wr_bar
    assert k is not None, seq[ld].text
    dest = seq[ld].operands.split(",")[0].strip()
    use = next(j for j in range(ld + 1, len(seq)) if re.search(rf"\b{dest}\b", seq[j].operands.split(",", 1)[-1]))
    assert seq[use].opcode.startswith("FADD") or seq[use].opcode.startswith("FMUL"), seq[use].text
    assert seq[use].control.wait_mask >> k & 1, (seq[ld].control.text(), seq[use].control.text())
    # nothing in between waits on it: the wait sits on the consumer
    assert not any(seq[t].control.wait_mask >> k & 1 for t in range(ld + 1, use))
    # S2R (special registers) is variable latency as well
    for ins in seq:
        if ins.opcode == "S2R":
            assert ins.control.wr_bar is not None, ins.text


def test_store_read_barrier_protects_its_source_register(k90):
    """STS sets a read barrier; the next instruction that overwrites the stored register waits
    on it (write-after-read)."""
    seq = _seq(k90["row_sum_smem"])
    checked = 0
    for i, ins in enumerate(seq):
        if not ins.opcode.startswith("STS") or ins.control.rd_bar is None:
            continue
        src = {("R", int(m.group(1))) for m in re.finditer(r"\bR(\d+)\b", ins.operands.split(",")[-1])}
        j = next((j for j in range(i + 1, len(seq)) if _dests(seq[j]) & src), None)
        if j is not None:
            assert any(seq[t].control.wait_mask >> ins.control.rd_bar & 1 for t in range(i + 1, j + 1)), (
                ins.text,
                seq[j].text,
            )
            checked += 1
    assert checked >= 1


def test_depbar_names_the_barrier_ldgdepbar_sets(k90):
    seq = _seq(k90["cpasync"])
    ops = [i.opcode for i in seq]
    assert "LDGSTS.E" in ops and "LDGDEPBAR" in ops
    commit = seq[ops.index("LDGDEPBAR")]
    wait = next(i for i in seq if i.opcode.startswith("DEPBAR"))
    m = re.match(r"SB(\d)", wait.operands)
    assert m and commit.control.wr_bar == int(m.group(1)), (commit.control.text(), wait.text)


def test_reuse_flags_match_the_disassemblers_reuse_markers(k90):
    """nvdisasm prints `.reuse` on the source operands whose reuse bit is set; the decoded field
    must name exactly those operand slots (slot i = i-th source operand, bit i)."""
    with_reuse = 0
    for name in ("horner", "scale", "row_sum_smem"):
        for ins in sass.instructions(k90[name]):
            sources = [s.strip() for s in ins.operands.split(",")[1:]]
            marked = {i for i, s in enumerate(sources) if s.endswith(".reuse")}
            bits = {i for i in range(4) if ins.control.reuse >> i & 1}
            assert marked == bits, (ins.text, bin(ins.control.reuse))
            with_reuse += bool(bits)
    assert with_reuse >= 20


def test_branches_and_exit(k90):
    seq = _seq(k90["row_sum_smem"])
    for ins in seq:
        if ins.opcode in ("EXIT", "BRA"):
            assert ins.cls == "control"
            assert ins.control.wr_bar is None and ins.control.rd_bar is None, ins.text
    # the loop's back edge waits for the STS (read barrier) issued in the loop body
    back = next(i for i in seq if i.opcode == "BRA" and i.predicate)
    sts = [i for i in seq if i.opcode.startswith("STS") and i.offset < back.offset][-1]
    assert sts.control.rd_bar is not None and back.control.wait_mask >> sts.control.rd_bar & 1


def test_mbarrier_try_wait_result_is_waited_for(gemm):
    """SYNCS.PHASECHK...TRYWAIT writes its predicate through a barrier; the instruction guarded
    by that predicate waits on it. The HGMMAs are tensor-core rows, the SYNCS barrier rows."""
    seq = _seq(gemm)
    tries = [k for k, i in enumerate(seq) if i.opcode.startswith("SYNCS.PHASECHK")]
    assert tries
    for k in tries:
        t = seq[k]
        pred = t.operands.split(",")[0].strip()
        j = next(j for j in range(k + 1, len(seq)) if pred in seq[j].predicate or pred in seq[j].operands)
        assert any(seq[u].control.wait_mask >> t.control.wr_bar & 1 for u in range(k + 1, j + 1)), (t.text, seq[j].text)
    assert {i.cls for i in seq if i.opcode.startswith("HGMMA")} == {"tensor"}
    assert {i.cls for i in seq if i.opcode.startswith("SYNCS")} == {"barrier"}
    assert {i.cls for i in seq if i.opcode.startswith("UTMALDG")} == {"memory"}


# ---- properties over several archs ----------------------------------------------------------
_REG = re.compile(r"\b(U?R)(\d+)\b")


def _width(ins):
    return 4 if ".128" in ins.opcode else 2 if ".64" in ins.opcode else 1


def _dests(ins):
    if ins.cls in ("control", "barrier") or re.match(r"^(ST|RED|UTMA|UBLK|SYNCS|LDGSTS)", ins.opcode):
        return set()
    m = re.match(r"^(U?R)(\d+)$", ins.operands.split(",")[0].strip())
    if not m:
        return set()
    n = _width(ins) if ins.cls == "memory" else 1
    return {(m.group(1), int(m.group(2)) + i) for i in range(n)}


def _sources(ins):
    ops = ins.operands.split(",")[1:] if _dests(ins) else ins.operands.split(",")
    out = set()
    for o in ops:
        for m in _REG.finditer(o):
            n = 2 if o[m.end() :].startswith(".64") else 1
            out |= {(m.group(1), int(m.group(2)) + i) for i in range(n)}
    return out


def _dependency_pairs(seq):
    """(producer index, consumer index) for each register written and next read in straight-line code."""
    for i, p in enumerate(seq):
        d = _dests(p)
        if not d:
            continue
        for j in range(i + 1, len(seq)):
            c = seq[j]
            if c.cls == "control" or c.opcode.startswith("BAR"):
                break
            if d & _sources(c):
                yield i, j
                break
            if d & _dests(c):
                break


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90a", "sm_100a", "sm_120"])
def test_every_variable_latency_result_is_waited_for(arch, k90):
    """Volta+ hardware does not track register hazards of variable-latency instructions: the
    compiler must make the reader wait on the producer's write barrier. A wrong field boundary
    breaks this on almost every pair. Fixed-latency producers are instead covered by stall
    cycles (>= 4 for the vector pipes, >= 2 for the uniform datapath)."""
    compiled = (
        k90 if arch == "sm_90a" else run_cell(BASICS + EXTRA.split("@T.prim_func\ndef cpasync")[0], {}, arch=arch)
    )
    variable = fixed = 0
    for c in compiled.values():
        seq = _seq(c)
        set_somewhere = {ins.control.wr_bar for ins in seq} | {ins.control.rd_bar for ins in seq}
        for ins in seq:
            assert set(ins.control.waits_on) <= set_somewhere, (c.name, ins.text, ins.control.text())
        for i, j in _dependency_pairs(seq):
            p = seq[i]
            if p.control.wr_bar is not None:
                assert any(seq[t].control.wait_mask >> p.control.wr_bar & 1 for t in range(i + 1, j + 1)), (
                    arch,
                    c.name,
                    p.text,
                    seq[j].text,
                )
                variable += 1
            else:
                cycles = sum(seq[t].control.stall for t in range(i, j))
                assert cycles >= (2 if p.opcode.startswith("U") else 4), (arch, p.text, seq[j].text, cycles)
                fixed += 1
    assert variable >= 10 and fixed >= 10, (variable, fixed)


# ---- the table ----------------------------------------------------------------------------
def test_sass_table_rows_and_html(k90):
    c = k90["scale"]
    t = c.sass_table()
    assert len(t) == len(sass.instructions(c))
    plain = [l for l in c.sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", l)]
    assert len(plain) == len(t), "the -hex disassembly has the instructions of Compiled.sass"
    row = t.filter(opcode=r"^LDG")[0]
    assert set(row) >= {
        "kernel",
        "offset",
        "opcode",
        "operands",
        "predicate",
        "stall",
        "yield",
        "wr_bar",
        "rd_bar",
        "wait_mask",
        "reuse",
        "line",
        "cls",
        "control",
    }
    assert row["kernel"] == "scale_kernel" and row["cls"] == "memory" and row["wr_bar"] is not None
    exit_row = t.filter(opcode="EXIT")[0]
    assert exit_row["predicate"] == "@P0"
    d = t.to_dict()
    assert d["rows"] == t.rows and "wait_mask" in d["columns"]
    assert t.histogram()["memory"] >= 4 and "other" in t.histogram()
    page = display.html_of(t)
    assert "LDG.E.CONSTANT" in page and "<script" not in page
    # user strings are escaped
    evil = sass.SassTable("<img src=x onerror=alert(1)>", "sm_90a", [dict(t.rows[0], operands="<b>x</b>")])
    page = display.html_of(evil)
    assert "<img" not in page and "<b>x" not in page and "&lt;b&gt;x" in page
    # the second call is served from the Compiled (no second disassembly)
    assert sass.instructions(c) is sass.instructions(c)


def test_table_from_the_compile_cache(k90, monkeypatch):
    """A fresh Compiled for the same key reads the -hex disassembly from the compile cache."""
    c = k90["warp_sums"]
    first = c.sass_table().rows
    again = txlab.compile(c.ir_module, arch="sm_90a")
    assert again.cache_hit
    monkeypatch.setattr(sass.listing, "run_disassembler", lambda cubin, flags=None: pytest.fail("disassembled again"))
    assert again.sass_table().rows == first


def test_user_lines_come_from_the_source_map(k90):
    """Each row carries the user's line from Compiled.source_map (cell lines for %%tirx)."""
    rows = k90["scale"].sass_table().rows
    cell = (BASICS + EXTRA).splitlines()
    ldg = next(r for r in rows if r["opcode"].startswith("LDG"))
    assert "B[i] = A[i] * T.float32(2.0)" in cell[ldg["line"] - 1]
    fadd = next(r for r in rows if r["opcode"].startswith("FADD") or r["opcode"].startswith("FMUL"))
    assert fadd["line"] == ldg["line"]
    assert all(r["line"] is not None for r in rows if not r["padding"])
    sm = k90["scale"].source_map
    assert [r["line"] for r in rows if not r["padding"]] == [
        sm.line_of_sass(r["offset"], kernel=r["kernel"]) for r in rows if not r["padding"]
    ]


def test_classes():
    cases = {
        "HGMMA.64x128x16.F32.BF16": "tensor",
        "HMMA.16816.F32": "tensor",
        "UTCHMMA": "tensor",
        "LDG.E.128": "memory",
        "UTMALDG.2D": "memory",
        "LDSM.16.M88.4": "memory",
        "ATOMS.ADD": "memory",
        "SYNCS.ARRIVE.TRANS64.A1T0": "barrier",
        "BAR.SYNC.DEFER_BLOCKING": "barrier",
        "DEPBAR.LE": "barrier",
        "WARPGROUP.ARRIVE": "barrier",
        "MEMBAR.ALL.GPU": "barrier",
        "BRA": "control",
        "EXIT": "control",
        "BSSY": "control",
        "SHFL.BFLY": "warp",
        "FFMA.FTZ": "alu",
        "MUFU.EX2": "alu",
        "IMAD.WIDE": "alu",
        "S2R": "other",
        "NOP": "other",
        # the opcodes the line map's old classifier put elsewhere (one classifier now)
        "NANOSLEEP.SYNCS": "control",
        "ELECT": "warp",
        "LDGDEPBAR": "barrier",
        "FENCE.VIEW.ASYNC.S": "barrier",
        "PREEXIT": "control",
        "UTMACMDFLUSH": "memory",
        "UCGABAR_ARV": "barrier",
        "QSPC.E.S": "alu",
    }
    assert {op: sass.classify(op) for op in cases} == cases
    assert set(cases.values()) == set(sass.CLASSES)


def test_the_line_map_the_table_and_diff_share_one_classifier(k90, gemm):
    """SourceView (source_map.instructions) and diff/the SASS table (sass.instructions) show the
    same class for every instruction."""
    for c in (k90["row_sum_smem"], gemm):
        by_table = {(i.kernel, i.offset): i.cls for i in sass.instructions(c)}
        by_map = {(s.kernel, s.offset): s.cls for s in c.source_map.instructions}
        assert by_map == by_table
        assert set(by_map.values()) >= {"memory", "barrier", "control", "alu"}


def test_instructions_match_the_opcode_with_the_predicate_left_out(k90, gemm):
    c = k90["row_sum_smem"]
    lds = c.instructions(r"^LDS")
    assert any(i.startswith("@!P0 LDS") for i in lds), lds  # predicated ones are found by ^LDS
    assert len(lds) == len(c.sass_table().filter(opcode=r"^LDS"))
    syncs = gemm.instructions(r"^SYNCS")
    table = gemm.sass_table().filter(opcode=r"^SYNCS")
    assert len(syncs) == len(table) and any(r["predicate"] for r in table)
    assert c.instructions(r"^EXIT") == ["@P0 EXIT", "EXIT"]


def test_old_arch_is_refused():
    c = txlab.Compiled(
        name="k",
        arch="sm_61",
        script="",
        cuda_source="",
        ptx="",
        cubin=b"",
        resources={},
        launch={},
        params=[],
        compile_seconds=0.0,
        cache_hit=False,
    )
    with pytest.raises(txlab.ArchError, match="sm_70 and newer"):
        c.sass_table()


# ---- dependency barriers: producers and consumers ----------------------------------------------
def _ins(i, *, wait=0, wr=None, rd=None, opcode="FADD", operands="R0, R1, R2", kernel="k"):
    field_ = (7 if wr is None else wr) << 5 | (7 if rd is None else rd) << 8 | wait << 11
    return sass.Instruction(
        kernel=kernel,
        index=i,
        offset=16 * i,
        predicate="",
        opcode=opcode,
        operands=operands,
        lo=0,
        hi=0,
        control=sass.Control.from_field(field_),
        cls=sass.classify(opcode),
    )


def test_dependencies_follow_the_barrier_counters():
    """SBk is a counter: a wait on it waits for every setter since the previous wait on it, and
    DEPBAR.LE SBk, n leaves the n most recent in flight."""
    seq = [
        _ins(0, wr=1, opcode="LDG.E"),
        _ins(1, wr=1, opcode="LDG.E"),
        _ins(2, rd=2, opcode="STG.E"),
        _ins(3, wait=0b10),
        _ins(4, wait=0b10),
        _ins(5, wait=0b100),
        _ins(6, wr=0, opcode="LDGDEPBAR"),
        _ins(7, wr=0, opcode="LDGDEPBAR"),
        _ins(8, opcode="DEPBAR.LE", operands="SB0, 0x1"),
        _ins(9, kernel="other", wait=0b1),
    ]
    deps = sass.dependencies(seq)
    assert deps[3]["producers"] == [(0, 1, "w"), (1, 1, "w")]
    assert deps[4]["producers"] == []  # SB1 was cleared by the wait at 3
    assert deps[5]["producers"] == [(2, 2, "r")]  # write-after-read through the read barrier
    assert deps[0]["consumers"] == [(3, 1, "w")] and deps[2]["consumers"] == [(5, 2, "r")]
    assert deps[8]["producers"] == [(6, 0, "w")]  # the older commit; the newer one stays in flight
    assert deps[7]["consumers"] == [] and deps[9]["producers"] == []  # barriers are per kernel


def test_dependencies_link_a_real_load_to_its_use(k90):
    instrs = sass.instructions(k90["scale"])
    deps = sass.dependencies(instrs)
    ld = next(i for i, s in enumerate(instrs) if s.opcode.startswith("LDG"))
    users = [j for j, b, kind in deps[ld]["consumers"] if kind == "w"]
    assert users and instrs[users[0]].opcode.startswith(("FADD", "FMUL", "FFMA")), [instrs[j].text for j in users]
    assert (ld, instrs[ld].control.wr_bar, "w") in deps[users[0]]["producers"]
    # cp.async: the DEPBAR waits for the LDGDEPBAR commit
    cp = sass.instructions(k90["cpasync"])
    dcp = sass.dependencies(cp)
    wait = next(i for i, s in enumerate(cp) if s.opcode.startswith("DEPBAR"))
    assert any(cp[j].opcode == "LDGDEPBAR" for j, _, _ in dcp[wait]["producers"]), cp[wait].text
