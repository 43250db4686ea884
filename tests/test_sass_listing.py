"""txlab.sass as the one home of SASS: one nvdisasm caller (txlab.sass.listing), one disassembly
per cubin and flag set (cached under the cubin's digest), one instruction record that carries
every field, and live registers per instruction and per user line from
``nvdisasm --print-life-ranges`` (with spills marked at their lines). No GPU needed."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import txlab
from txlab import cache, sass
from txlab.magic import run_cell
from txlab.sass import listing

ROOT = Path(__file__).resolve().parent.parent / "txlab"


def _counting(monkeypatch):
    """Record every nvdisasm/cuobjdump run (through the one caller) and every listing cache write."""
    runs, writes = [], []
    real_run, real_store = listing.run_disassembler, cache.store

    def run(cubin, flags=listing.LINES):
        runs.append(tuple(flags))
        return real_run(cubin, flags)

    def store(key, files):
        if "listing.txt" in files:
            writes.append(json.loads(files["meta.json"])["flags"])
        return real_store(key, files)

    monkeypatch.setattr(listing, "run_disassembler", run)
    monkeypatch.setattr(cache, "store", store)
    return runs, writes


@pytest.fixture(scope="module")
def gemm():
    from txlab.examples import hopper_gemm as hg

    return hg.build(8192, 8192, 8192, hg.GemmConfig())


def test_source_view_on_the_gemm_runs_nvdisasm_once(gemm, tmp_path, monkeypatch):
    """Opening SourceView used to run nvdisasm twice (-gi for the line map, --print-life-ranges
    for the live-registers column: nvdisasm will not print both). Now one run gives the text, the
    encodings and the live registers, and the lines come from the cubin and the PTX; the map, the
    control column, the SASS table, diff and the summary all read that one listing."""
    from txlab import toolchain
    from txlab.views.source import SourceView

    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    runs, writes = _counting(monkeypatch)
    procs = []
    real_proc = toolchain._run

    def proc(cmd, *a, **k):  # every tool process, whoever starts it
        procs.append(Path(cmd[0]).name)
        return real_proc(cmd, *a, **k)

    monkeypatch.setattr(toolchain, "_run", proc)
    import dataclasses

    c = dataclasses.replace(gemm)  # the same build, nothing disassembled yet
    d = json.loads(SourceView(c).data)
    assert runs == [listing.ONE] and procs.count("nvdisasm") == 1, (runs, procs)
    assert writes == [list(listing.ONE)], writes
    assert d["live"] and all("control" in s for s in d["sass"])
    assert all("live_registers" in s for s in d["sass"] if not s["padding"])
    assert any(s.get("cuda_line") for s in d["sass"]) or c.sass_listing.has_lines
    # everything else reads the same listing: no further run
    c.sass_table(), c.instructions("^HGMMA"), sass.summary(c), txlab.diff(c, c), c.sass
    SourceView(c)
    assert len(runs) == 1 and len(writes) == 1 and procs.count("nvdisasm") == 1
    # a fresh Compiled of the same cubin (another process, a compile-cache hit) reads the cache
    fresh = dataclasses.replace(gemm)
    SourceView(fresh)
    assert len(runs) == 1 and len(writes) == 1 and procs.count("nvdisasm") == 1
    assert fresh.sass == c.sass


def test_without_live_registers_one_run_serves_every_reader(gemm, tmp_path, monkeypatch):
    import dataclasses

    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    runs, writes = _counting(monkeypatch)
    c = dataclasses.replace(gemm)
    c.sass, c.source_map.lines(), c.sass_table(), sass.summary(c), txlab.diff(c, c)
    from txlab.tune.engine import facts

    facts(c)
    assert runs == [listing.ONE] and len(writes) == 1


def test_nvdisasm_cannot_print_line_info_with_life_ranges(gemm):
    """Why live registers are a second run: with --print-life-ranges, nvdisasm ignores -gi."""
    both = listing.disassemble(gemm.cubin, ("-c", "-gi", "--print-life-ranges", "--life-range-mode", "count"))
    assert "//## File" not in both and "| GPR" in both
    assert "//## File" in listing.disassemble(gemm.cubin, listing.LINES)


_RUNNERS = {
    "find_tool",
    "_need",
    "which",
    "tool_status",
    "tool_version",
    "run",
    "_run",
    "Popen",
    "check_output",
    "check_call",
    "call",
    "system",
}


def _calls_naming(tree, names):
    """Lines of calls that find or run a tool given by a literal name (argument or command list)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if fn not in _RUNNERS:
                continue
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for sub in ast.walk(arg):
                    if (
                        isinstance(sub, ast.Constant)
                        and isinstance(sub.value, str)
                        and any(n in sub.value for n in names)
                    ):
                        yield node.lineno


def test_nvdisasm_is_run_from_one_module():
    """No txlab module but txlab/sass/listing.py finds or runs nvdisasm or cuobjdump by name
    (find_tool, _need, shutil.which, subprocess, a command list). (toolchain's version probe and
    doctor loop over tool names: no literal there.)"""
    found = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).as_posix()
        lines = list(_calls_naming(ast.parse(path.read_text()), {"nvdisasm", "cuobjdump"}))
        if lines:
            found[rel] = lines
    assert set(found) == {"txlab/sass/listing.py"}, found
    text = (ROOT / "sass" / "listing.py").read_text()
    assert text.count("toolchain._run(") == 2  # nvdisasm, and cuobjdump as the fallback


def test_the_record_carries_every_field(gemm):
    c = gemm
    recs = sass.instructions(c)
    assert recs is c.source_map.instructions  # one record list: the map's
    hg = next(r for r in recs if r.opcode.startswith("HGMMA"))
    assert hg.kernel in c.kernels and hg.offset % 16 == 0 and hg.text.startswith("HGMMA")
    assert hg.cls == "tensor" and hg.control is not None and hg.encoding.startswith("0x")
    assert hg.cuda_line and "kernel.cu" in hg.inline[-1] and hg.user_line is not None
    assert c.source_map.user_source[hg.user_line - 1].strip()
    inlined = next(r for r in recs if len(r.inline) > 1)
    assert inlined.inline[-1] == f"kernel.cu:{inlined.cuda_line}"
    d = hg.to_dict()
    assert {
        "kernel",
        "offset",
        "text",
        "opcode",
        "cls",
        "control",
        "cuda_line",
        "user_line",
        "inline",
        "encoding",
        "live_registers",
        "predicate",
        "operands",
        "padding",
        "library",
    } <= set(d)
    assert json.dumps(d)
    # the same records, with the SASS table's spelling
    row = c.sass_table().filter(opcode="^HGMMA").rows[0]
    assert (row["offset"], row["line"], row["control"]) == (hg.offset, hg.user_line, hg.control.text())
    # live registers, once read, are in the records too
    c.source_map.load_live_registers()
    hg2 = c.source_map.instruction(hg.offset, kernel=hg.kernel)
    assert 0 < hg2.live_registers <= 255 and set(hg2.live) >= {"gpr", "pred"}
    # the old line-map record name is the same class
    from txlab.sourcemap import SassInstruction

    assert SassInstruction is sass.Instruction


# ---- live registers and spills ----------------------------------------------------------------
HUNGRY = """
@T.prim_func
def hungry(A: T.Buffer((1 << 20,), "float32"), B: T.Buffer((1 << 20,), "float32")):
    T.device_entry()
    bx = T.cta_id([1024])
    tx = T.thread_id([{threads}])
    acc = T.alloc_local((96,), "float32")
    for j in T.unroll(96):
        acc[j] = A[(bx * {threads} + tx + j * 977) % 1048576]
    for k in T.serial(8):
        for j in T.unroll(96):
            acc[j] = acc[j] * acc[(j + 1) % 96] + T.float32(1.0)
    for j in T.unroll(96):
        B[(bx * {threads} + tx + j * 131) % 1048576] = acc[j]
"""


@pytest.fixture(scope="module")
def hungry():
    """96 values live across a loop: fits in registers at 256 threads (255 registers per thread
    allowed), spills at 1024 (__launch_bounds__(1024) caps a thread at 64 registers)."""
    return {t: run_cell(HUNGRY.format(threads=t), {}, arch="sm_90a")["hungry"] for t in (256, 1024)}


def test_live_registers_per_instruction_and_per_line(hungry):
    roomy = hungry[256]
    sm = roomy.source_map
    per = sm.per_line(live=True)
    line = next(l for l in per if "acc[j] * acc" in sm.user_source[l - 1])
    recs = [r for r in sm.sass_records_for(line) if not r.padding]
    assert all(r.live_registers is not None for r in recs)
    assert sm.live_registers(line) == max(r.live_registers for r in recs) == per[line]["live_registers"]
    # 96 accumulators live through the loop: more than 96 registers, at most what ptxas allocated
    assert 96 < sm.live_registers(line) <= roomy.resources["hungry_kernel"]["registers"]
    assert not sm.spills() and all("local" not in d for d in per.values())
    rows = sm.to_dict()["lines"]
    assert rows[str(line)]["live_registers"] == sm.live_registers(line)


def test_spills_are_marked_at_their_lines(hungry):
    tight = hungry[1024]
    res = tight.resources["hungry_kernel"]
    assert res["registers"] <= 64 and res["spill_store_bytes"] > 0  # ptxas spilled
    sm = tight.source_map
    assert sm.spills()
    per = sm.per_line(live=True)
    spilled = {l: d["local"] for l, d in per.items() if "local" in d}
    loop = next(l for l in per if "acc[j] * acc" in sm.user_source[l - 1])
    assert spilled[loop]["kind"] == "spill" and spilled[loop]["loads"] and spilled[loop]["stores"]
    assert sum(v["loads"] + v["stores"] for v in spilled.values()) == sum(
        1 for r in sm.instructions if sass.is_local(r.opcode) and r.user_line is not None
    )
    assert all(n <= 64 for n in (d["live_registers"] for d in per.values()) if n is not None)
    assert sass.local_memory(tight) == spilled
    # SourceView: the column and the marks
    from txlab.views.source import SourceView

    d = json.loads(SourceView(tight).data)
    assert d["live"] and d["lines"][str(loop)]["local"]["kind"] == "spill"
    assert any("spilled" in n and str(loop) in n for n in d["notes"])
    assert all("live_registers" in s for s in d["sass"] if not s["padding"])


def test_live_registers_unknown_says_why(hungry, monkeypatch):
    import dataclasses

    from txlab.errors import CompileError

    def refuse(cubin, flags=listing.LINES):  # nvdisasm is missing: cuobjdump's text, no life ranges
        if flags == listing.LIFE:
            raise CompileError("disasm", "nvdisasm was not found (live registers need it)")
        if flags == listing.ONE:
            return real(cubin, ("-c", "-hex"))[0], "cuobjdump -sass"
        return real(cubin, flags)

    real = listing.run_disassembler
    monkeypatch.setattr(listing, "run_disassembler", refuse)
    monkeypatch.setattr(listing, "text_of", lambda cubin, flags=listing.LINES: (*refuse(cubin, flags), None))
    c = dataclasses.replace(hungry[256])
    sm = c.source_map
    why = sm.load_live_registers()
    assert why and "nvdisasm was not found" in why
    with pytest.raises(CompileError, match="live registers unknown"):
        sm.live_registers(sm.lines()[0])
    assert all(d["live_registers"] is None for d in sm.per_line(live=True).values())
    assert sass.live_registers(c)["unknown"] == why


def test_a_damaged_listing_in_the_cache_is_disassembled_again(tmp_path, monkeypatch, hungry):
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    cubin = hungry[256].cubin
    first = listing.of_cubin(cubin)
    assert first.seconds is not None
    entry = cache.entry_path(listing.cache_key(cubin, listing.LINES))
    (entry / "listing.txt").write_text("/*0000*/ EXIT ;\n")
    runs, _ = _counting(monkeypatch)
    again = listing.of_cubin(cubin)
    assert runs == [listing.LINES] and again.text == first.text
    assert listing.of_cubin(cubin).seconds is None  # and served from the cache after that


def test_parse_life_reads_the_columns_the_header_names():
    text = """
.text.k:                                   // +-------+--------+
                                           // | GPR   | UGPR   |
                                           // |   #   |    #   |
                                           // +-------+--------+
        /*0000*/  LDC R1, c[0x0][0x28] ;   // |   1   |        |
        /*0010*/  S2UR UR4, SR_CTAID.X ;   // |   1   |   1    |
"""
    assert listing.parse_life(text) == {("k", 0): {"gpr": 1, "ugpr": 0}, ("k", 16): {"gpr": 1, "ugpr": 1}}
