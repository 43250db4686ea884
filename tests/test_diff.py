"""txlab.diff on two real builds: a shared-memory transpose with a 32x32 tile (the column read is
a 32-way bank conflict) and the same kernel with a 32x33 tile (padding removes it). No GPU."""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

import txlab
from txlab import sass, toolchain
from txlab.diff import CompileDiff, normalize
from txlab.magic import run_cell

TRANSPOSES = '''
@T.prim_func
def transpose_32(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32")):
    T.device_entry()
    bx, by = T.cta_id([32, 32])
    tx, ty = T.thread_id([32, 8])
    tile = T.alloc_shared((32, 32), "float32")
    for k in T.serial(4):
        tile[ty + 8 * k, tx] = A[by * 32 + ty + 8 * k, bx * 32 + tx]
    T.cuda.cta_sync()
    for k in T.serial(4):
        B[bx * 32 + ty + 8 * k, by * 32 + tx] = tile[tx, ty + 8 * k]

@T.prim_func
def transpose_33(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32")):
    T.device_entry()
    bx, by = T.cta_id([32, 32])
    tx, ty = T.thread_id([32, 8])
    tile = T.alloc_shared((32, 33), "float32")
    for k in T.serial(4):
        tile[ty + 8 * k, tx] = A[by * 32 + ty + 8 * k, bx * 32 + tx]
    T.cuda.cta_sync()
    for k in T.serial(4):
        B[bx * 32 + ty + 8 * k, by * 32 + tx] = tile[tx, ty + 8 * k]
'''


@pytest.fixture(scope="module")
def pair():
    out = run_cell(TRANSPOSES, {}, arch="sm_90a")
    return out["transpose_32"], out["transpose_33"]


class CudaLineMap:
    """Test adapter standing in for srcmap's Compiled.source_map: lines are those of the generated
    CUDA, read from ``nvdisasm -g`` on the same kernel built with -lineinfo (which leaves the
    SASS unchanged: checked here)."""

    def __init__(self, compiled):
        ptx = toolchain.cuda_to_ptx(compiled.cuda_source, compiled.arch, extra_flags=["-lineinfo"])
        cubin, _ = toolchain.ptx_to_cubin(ptx, compiled.arch)
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "k.cubin").write_bytes(cubin)
            text = subprocess.run([toolchain.find_tool("nvdisasm"), "-g", "-c", "k.cubin"], cwd=tmp,
                                  capture_output=True, text=True, check=True).stdout
        self.records, kernel, line = [], None, None
        mine = []
        for l in text.splitlines():
            if m := re.search(r"\.section\s+\.text\.(\S+?),", l):
                kernel = m.group(1)
            elif m := re.search(r'//## File ".*", line (\d+)', l):
                line = int(m.group(1))
            elif m := re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", l):
                self.records.append({"kernel": kernel, "offset": int(m.group(1), 16), "line": line})
                mine.append(m.group(2))
        plain = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", compiled.sass)]
        assert mine == plain, "-lineinfo changed the SASS"
        self._lines = compiled.cuda_source.splitlines()

    def sass_records(self):
        return self.records

    def user_lines(self):
        return self._lines


def _with_map(c):
    fresh = txlab.compile(c.ir_module, arch=c.arch)
    fresh.__dict__["source_map"] = CudaLineMap(fresh)
    return fresh


def test_resources_and_histogram(pair):
    a, b = pair
    d = txlab.diff(a, b)
    assert isinstance(d, CompileDiff)
    assert d.kernels == [("transpose_32_kernel", "transpose_33_kernel")]
    smem = next(r for r in d.resources if r["field"] == "static_smem_bytes")
    assert (smem["a"], smem["b"], smem["delta"]) == (4096, 4224, 128)
    regs = next(r for r in d.resources if r["field"] == "registers")
    assert regs["a"] == a.resources["transpose_32_kernel"]["registers"]
    assert regs["b"] == b.resources["transpose_33_kernel"]["registers"]
    for c, side in ((a, "a"), (b, "b")):
        table = c.sass_table()
        assert {k: v[side] for k, v in d.histogram.items() if v[side]} == table.histogram()
    assert d.histogram["memory"]["a"] >= 12   # 4 LDG, 4 STS, 4 LDS, 4 STG at least


def test_without_a_line_map_the_kernels_are_aligned(pair):
    a, b = pair
    d = txlab.diff(a, b)
    assert not d.by_line and len(d.lines) == 1
    row = d.lines[0]
    assert row["status"] == "changed"
    # the shared-memory addressing differs (stride 33 vs 32) -- and those rows are the marked ones
    marked_a = [i["text"] for i in row["a_sass"] if i["mark"] != "equal"]
    marked_b = [i["text"] for i in row["b_sass"] if i["mark"] != "equal"]
    assert marked_a and marked_b
    assert any(re.search(r"0x21\b|0x84\b", t) for t in marked_b), marked_b
    assert not any(re.search(r"0x21\b", t) for t in marked_a), marked_a


def test_same_kernel_twice_is_all_same(pair):
    a, _ = pair
    d = txlab.diff(a, txlab.compile(a.ir_module, arch="sm_90a"))
    assert all(r["delta"] == 0 for r in d.resources)
    assert [r["status"] for r in d.lines] == ["same"]
    assert "0 of 1 kernels changed" in d.summary()


def test_aligned_per_user_line_with_a_line_map(pair):
    a, b = (_with_map(c) for c in pair)
    d = txlab.diff(a, b)
    assert d.by_line
    n_a = len([i for i in sass.instructions(a) if not i.padding])
    n_b = len([i for i in sass.instructions(b) if not i.padding])
    assert sum(len(r["a_sass"]) for r in d.lines) == n_a and sum(len(r["b_sass"]) for r in d.lines) == n_b
    cuda_a, cuda_b = a.cuda_source.splitlines(), b.cuda_source.splitlines()
    for r in d.lines:
        if r["a_line"] is not None:
            assert r["a_text"] == cuda_a[r["a_line"] - 1]
        if r["b_line"] is not None:
            assert r["b_text"] == cuda_b[r["b_line"] - 1]
    # the line that fills the tile changed: its row stores step by 33 floats instead of 32
    fill = [r for r in d.lines if r["b_text"] and "tile_ptr[" in r["b_text"].split("=")[0]]
    assert len(fill) == 1 and fill[0]["status"] == "changed", [(r["b_text"], r["status"]) for r in fill]
    sts_a = [i["text"] for i in fill[0]["a_sass"] if i["opcode"] == "STS" and i["mark"] == "changed"]
    sts_b = [i["text"] for i in fill[0]["b_sass"] if i["opcode"] == "STS" and i["mark"] == "changed"]
    assert [re.search(r"\+(0x[0-9a-f]+)\]", t).group(1) for t in sts_a] == ["0x400", "0x800", "0xc00"]
    assert [re.search(r"\+(0x[0-9a-f]+)\]", t).group(1) for t in sts_b] == ["0x420", "0x840", "0xc60"]
    assert any(r["status"] == "same" for r in d.lines)
    # every changed line has a marked instruction; the same lines have none
    for r in d.lines:
        marks = {i["mark"] for i in r["a_sass"] + r["b_sass"]}
        assert (marks != {"equal"}) == (r["status"] != "same"), r
    s = d.summary()
    assert "static_smem 4096 -> 4224 (+128)" in s and "user lines changed" in s


def test_to_dict_and_html_escape(pair):
    a, b = pair
    d = txlab.diff(a, b)
    js = d.to_dict()
    assert js["kind"] == "compile" and js["a"]["name"] == "transpose_32" and js["changed"] == 1
    import json

    json.dumps(js)
    page = d._repr_html_()
    assert "transpose_32" in page and "<script" not in page
    d.a_name = "<img src=x onerror=alert(1)>"
    d.lines[0]["a_sass"][0]["text"] = "<b>evil</b>"
    page = d._repr_html_()
    assert "<img" not in page and "<b>evil" not in page


def test_normalize_ignores_register_numbers_only():
    assert normalize("IMAD R5, R4.reuse, 0x100, R7") == normalize("IMAD R9, R2, 0x100, R3")
    assert normalize("LDS R2, [R5+0x84]") != normalize("LDS R2, [R5+0x80]")
    assert normalize("@!P0 BRA `(.L_x_0)") == "@!P BRA `(.L_x_0)"


def test_dispatch_and_extension_point(pair):
    with pytest.raises(TypeError, match="two txlab.Compiled"):
        txlab.diff(1, 2)
    with pytest.raises(TypeError):
        txlab.diff(pair[0], "x")

    class Profile:  # another model registers its own comparison (the profiler's)
        pass

    txlab.diff.register(lambda a, b: isinstance(a, Profile) and isinstance(b, Profile),
                        lambda a, b, **kw: ("profile diff", kw), "two Profiles")
    try:
        assert txlab.diff(Profile(), Profile(), metric="x") == ("profile diff", {"metric": "x"})
    finally:
        txlab.diff._HANDLERS.pop()


def test_diff_module_and_function_are_one():
    import txlab.diff as mod

    assert txlab.diff is mod and callable(mod) and mod.CompileDiff is CompileDiff


def test_import_txlab_stays_light():
    code = "import sys, txlab; txlab.diff; txlab.sass; print('tvm' in sys.modules)"
    out = subprocess.run([__import__("sys").executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "False", out.stderr
