"""The line map (Compiled.source_map): user line <-> CUDA <-> PTX <-> SASS, on the notebook
kernels and the Hopper GEMM; -lineinfo leaves the instructions alone; lazy SASS; options."""

import os
import re
from pathlib import Path

import nbformat
import pytest

import txlab
from txlab import toolchain
from txlab.magic import run_cell

ROOT = Path(__file__).resolve().parents[1]
KERNELS = (ROOT / "tests" / "kernels" / "basics.py").read_text()


def _prim_func_source(cell: str) -> str:
    """The ``@T.prim_func`` definition at the top of a notebook cell (up to the first line at
    column 0 after the def's body)."""
    lines = cell.splitlines()
    out, in_body = [], False
    for line in lines:
        if in_body and line and not line[0].isspace():
            break
        out.append(line)
        if line.startswith("def "):
            in_body = True
    return "\n".join(out) + "\n"


def notebook_cells():
    """(label, cell source) of every kernel cell in the notebooks: the %%tirx cells and plain
    @T.prim_func cells (their definition part)."""
    out = []
    for nb_path in sorted((ROOT / "notebooks").glob("0*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            src = cell.source
            if src.startswith("%%tirx"):
                out.append((f"{nb_path.stem}[{i}]", src.split("\n", 1)[1]))
            elif src.startswith("@T.prim_func"):
                out.append((f"{nb_path.stem}[{i}]", _prim_func_source(src)))
    return out


@pytest.fixture(autouse=True, scope="module")
def _own_cache(tmp_path_factory):
    """This module's compiles stay out of the session cache (other modules test cache misses)."""
    before = os.environ.get("TXLAB_CACHE_DIR")
    os.environ["TXLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache-" + __name__.rsplit(".", 1)[-1]))
    yield
    from txlab import magic

    magic.forget_cells()  # cells run here are not "unchanged cells" for the modules after this one
    if before is None:
        os.environ.pop("TXLAB_CACHE_DIR", None)
    else:
        os.environ["TXLAB_CACHE_DIR"] = before


@pytest.fixture(scope="module")
def basics():
    return run_cell(KERNELS, {}, arch="sm_90a")


@pytest.fixture(scope="module")
def gemm():
    from txlab.examples import hopper_gemm as hg

    return txlab.compile(hg.kernel_for(4096, 4096, 4096), arch="sm_90a")


def _report(label, c):
    m = c.source_map
    cov = m.coverage()
    lost = [f"{l}: {m.user_source[l - 1].strip()[:50]}" for l in cov["work_lines_without_sass"]]
    print(
        f"\n[line map] {label} ({c.name}): {cov['sass_with_line']}/{cov['sass']} SASS instructions "
        f"with a user line ({cov['share']:.1%}, {cov['padding']} end padding), "
        f"{len(cov['work_lines']) - len(lost)}/{len(cov['work_lines'])} working lines with SASS "
        f"({cov['work_share']:.0%}); exact CUDA: {cov['exact_cuda']}"
        + (f"; lines without SASS: {lost}" if lost else "")
    )
    return cov


def test_every_notebook_kernel_is_mapped():
    cells = notebook_cells()
    assert len(cells) >= 6, cells
    ns = {}
    from txlab.magic import lang_names

    ns.update(lang_names())
    from tvm.script import tirx as T

    ns["T"] = T
    failures = []
    for label, src in cells:
        try:
            compiled = run_cell(src, dict(ns), arch="sm_100a" if "tmem" in src else "sm_90a")
        except txlab.CompileError as err:
            print(f"\n[line map] {label}: does not compile here ({err.stage}): skipped")
            continue
        for c in compiled.values():
            cov = _report(label, c)
            if cov["share"] < 1.0:
                failures.append((label, cov["share"]))
            m = c.source_map
            assert m.exact, f"{label}: the marked CUDA differs from TVM's"
            # the map speaks in the cell's own line numbers
            for ln in m.lines():
                assert 1 <= ln <= len(src.splitlines())
                assert m.user_source[ln - 1] == src.splitlines()[ln - 1]
    assert not failures, failures


def test_basic_kernels_lines(basics):
    ws = basics["warp_sums"].source_map
    lines = KERNELS.splitlines()
    warp_line = next(i for i, l in enumerate(lines, 1) if "Tx.cuda.warp_sum" in l)
    store_line = next(i for i, l in enumerate(lines, 1) if "out[bx * 8" in l)
    sass = ws.sass_for(warp_line)
    assert sum(s.startswith("SHFL.BFLY") for s in sass) == 5, sass  # a 32-lane butterfly
    assert any(s.startswith("LDG") for s in sass)  # X[...] is read on this line
    assert any(s.startswith("STG") for s in ws.sass_for(store_line))
    assert "tvm_builtin_cuda_warp_reduce_sum_32" in ws.library_of(warp_line)
    assert any("warp_reduce_sum" in l for l in ws.cuda_for(warp_line))
    assert any(l.startswith("shfl.sync.bfly") for l in ws.ptx_for(warp_line))
    # back from SASS: every SHFL comes from the warp_sum line, by offset and by index
    for rec in ws.instructions:
        if rec.opcode.startswith("SHFL"):
            assert ws.line_of_sass(rec.offset) == warp_line
            assert ws.line_of_sass(f"{rec.offset:#06x}") == warp_line
            assert ws.line_of_sass(index=rec.index) == warp_line
    rs = basics["row_sum_smem"].source_map
    sync_lines = [i for i, l in enumerate(lines, 1) if "T.cuda.cta_sync()" in l and i < warp_line]
    for ln in sync_lines:
        assert any(s.startswith("BAR.SYNC") for s in rs.sass_for(ln)), (ln, rs.sass_for(ln))
    d = rs.to_dict()
    assert d["coverage"]["share"] == 1.0 and d["instructions"][0]["user_line"] is not None
    for label, c in basics.items():
        _report("basics.py", c)


def test_file_kernel_lines_are_file_lines(gemm):
    from txlab.examples import hopper_gemm as hg

    m = gemm.source_map
    path = hg.__file__
    assert os.path.samefile(m.user_file, path)
    text = Path(path).read_text().splitlines()
    start = next(i for i, l in enumerate(text, 1) if "def gemm_kernel(" in l)

    def find(needle):
        return next(i for i, l in enumerate(text, 1) if i > start and needle in l)

    mma, copy_a, wait = (
        find("T.ptx[MMA]("),
        find("Tx.copy_async(As[ps.stage, 0:AR, :]"),
        find("pipe.full.wait(cs.stage"),
    )
    assert (
        sum(s.startswith("HGMMA") for s in m.sass_for(mma))
        == sum(s.opcode.startswith("HGMMA") for s in m.instructions)
        > 0
    )
    assert any(s.startswith("UTMALDG") for s in m.sass_for(copy_a))
    assert any(s.startswith("SYNCS") for s in m.sass_for(wait))
    assert any("wait" in f for f in m.library_of(wait))  # MBarrier._wait, from TVM's lang


def test_gemm_attribution_share(gemm):
    cov = _report("hopper_gemm", gemm)
    assert cov["share"] >= 0.95
    # lines whose code nvcc/ptxas folded into a neighbour's instructions (a commit_group carried by
    # the last HGMMA, two bf16 casts packed into the store's F2FP, an identical second TMA issue
    # merged with the first) have no SASS of their own under -lineinfo: reported above
    assert cov["work_share"] >= 0.65, cov["work_lines_without_sass"]


def _instructions_without_lines(cuda, arch, flags):
    ptx = toolchain.cuda_to_ptx(cuda, arch, base_flags=flags)
    cubin, _ = toolchain.ptx_to_cubin(ptx, arch)
    from txlab.sass import of_cubin

    sass = of_cubin(cubin).text
    return [l.strip() for l in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l)]


def test_lineinfo_does_not_change_the_instructions(basics, gemm):
    without = [f for f in toolchain.NVCC_FLAGS if f != "-lineinfo"]
    assert "-lineinfo" in toolchain.NVCC_FLAGS
    for c in [*basics.values(), gemm]:
        a = _instructions_without_lines(c.cuda_source, c.arch, without)
        b = [l.strip() for l in c.sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l)]
        assert a == b, c.name
        assert ".loc" in c.ptx


def test_sass_is_lazy_and_cached(tmp_path, monkeypatch):
    from txlab.sass import listing

    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    calls = []
    real = listing.run_disassembler

    def counting(cubin, flags=listing.LINES):
        calls.append(flags)
        return real(cubin, flags)

    monkeypatch.setattr(listing, "run_disassembler", counting)
    # a cell text of its own: an earlier test's identical cell would be served from memory
    cell = "# lazy SASS\n" + KERNELS.split("\n\n@T.prim_func")[0]
    c = run_cell(cell, {}, arch="sm_90a", use_cache=True)["scale"]
    assert calls == [] and "disasm" not in c.timings and "sass_listing" not in c.__dict__
    assert c.resources["scale_kernel"]["registers"] > 0  # the resources need no SASS
    assert "EXIT" in c.sass and calls == [listing.ONE] and "disasm" in c.timings
    assert c.source_map.lines() and calls == [listing.ONE]  # disassembled once
    from txlab import cache

    assert cache.load(listing.cache_key(c.cubin, listing.ONE))  # the listing is cached by cubin
    again = txlab.compile(c.ir_module, arch="sm_90a", name="scale")
    assert again.cache_hit and again.sass == c.sass and calls == [listing.ONE]


def test_compile_options(basics):
    from txlab.options import CompileOptions

    c = basics["warp_sums"]
    assert c.options == CompileOptions()
    assert ".FTZ" in c.sass
    precise = txlab.compile(c.ir_module, arch="sm_90a", name="warp_sums", fast_math=False)
    assert precise.key != c.key and ".FTZ" not in precise.sass
    assert "fast math off" in precise.options.describe()
    g = txlab.compile(
        basics["row_sum_smem"].ir_module,
        arch="sm_90a",
        name="row_sum_smem",
        maxrregcount=16,
        nvcc_flags=["-Xptxas", "-warn-spills"],
    )
    assert "register count of 16" in g.ptxas_report  # ptxas got the cap (sm_90's floor is 24)
    assert g.options.ptxas_args() == ["-maxrregcount=16", "-warn-spills"]
    with pytest.raises(txlab.InputError):
        txlab.compile(c.ir_module, arch="sm_90a", maxrregcount=3)
    with pytest.raises(txlab.InputError):
        txlab.compile(c.ir_module, arch="sm_90a", nvcc_flags=["-arch=sm_80"])
    from txlab.display import compiled_html

    assert "fast math on" in compiled_html(c, show=["resources"])


def test_source_view_payload_and_magic(basics):
    import json

    from txlab.views import SourceView

    c = basics["warp_sums"]
    v = SourceView(c, heat={37: {"samples": 5, "stalls": {"long_scoreboard": 4}}})
    d = json.loads(v.data)
    assert len(d["sass"]) == len(c.source_map.instructions) and d["heat"]["37"]["samples"] == 5
    assert len(d["cuda"]) == len(d["cuda_user"]) and len(d["ptx"]) == len(d["ptx_user"])
    assert d["user"][d["first"] - 1 + 0] == c.source_map.user_source[d["first"] - 1]
    from IPython.testing import globalipapp

    ip = globalipapp.start_ipython() or globalipapp.get_ipython()  # one global shell per session
    ip.run_line_magic("load_ext", "txlab")
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        ip.run_cell_magic(
            "tirx",
            "--arch sm_90a --show resources,source --no-fast-math --maxrregcount 32",
            KERNELS.split("\n\n@T.prim_func")[0],
        )
    kinds = [set(o.data) for o in cap.outputs]
    assert any("application/vnd.jupyter.widget-view+json" in k for k in kinds), kinds
    sc = ip.user_ns["scale"]
    assert sc.options.fast_math is False and sc.options.maxrregcount == 32
    from txlab.display import compiled_html

    head = compiled_html(sc, show=["resources"])
    assert "fast math off" in head and "maxrregcount 32" in head


def test_a_cache_hit_shows_the_text_that_was_compiled(tmp_path, monkeypatch):
    """Two cells with the same IR and line numbering share a cache entry; each one's map still
    shows its own text (comments differ), not the first cell's."""
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    body = KERNELS.split("\n\n@T.prim_func")[0]
    first = run_cell("# first version\n" + body, {}, arch="sm_90a")["scale"]
    second = run_cell("# second version\n" + body, {}, arch="sm_90a")["scale"]
    assert second.cache_hit and second.key == first.key
    assert first.source_map.user_source[0] == "# first version"
    assert second.source_map.user_source[0] == "# second version"


MACRO_ABOVE = """@Tx.macro
def twice_into(dst, src, i):
    dst[i] = src[i] * Tx.float32(2.0)
@Tx.prim_func
def k(A: Tx.Buffer((256,), "float32"), B: Tx.Buffer((256,), "float32")):
    Tx.device_entry()
    Tx.cta_id([1])
    tx = Tx.thread_id([256])
    twice_into(B, A, tx)
"""


def test_a_macro_above_the_kernel_leaves_the_prologue_on_device_entry():
    """The launch set-up (LDC/S2R before the first statement) belongs to ``Tx.device_entry()``, as
    in a kernel without helpers; a same-cell macro written above the kernel used to move it to the
    ``def`` line. And no PTX outside the function (the debug sections' labels) gets a user line."""
    m = run_cell(MACRO_ABOVE, {}, arch="sm_90a")["k"].source_map
    src = MACRO_ABOVE.splitlines()
    entry = src.index("    Tx.device_entry()") + 1
    def_line = next(i + 1 for i, l in enumerate(src) if l.startswith("def k("))
    assert m.table.entry_line == entry
    assert m.sass_for(entry) and not m.sass_for(def_line)
    assert {"LDG", "STG"} <= {s.opcode[:3] for s in m.sass_records_for(3)}  # the macro's body line
    ptx = m._ptx_lines
    end = max(i for i, l in enumerate(ptx) if l.rstrip() == "}")
    assert all(u is None for u in m.ptx_user[end:]), [ptx[i] for i in range(end, len(ptx)) if m.ptx_user[i]]


GUARDED = """@Tx.prim_func
def scale(A_ptr: Tx.handle, B_ptr: Tx.handle, n: Tx.int32):
    A = Tx.match_buffer(A_ptr, (n,), "float32")
    B = Tx.match_buffer(B_ptr, (n,), "float32")
    Tx.device_entry()
    bx = Tx.cta_id([Tx.ceildiv(n, 256)])
    tx = Tx.thread_id([256])
    if bx * 256 + tx < n:
        B[bx * 256 + tx] = A[bx * 256 + tx] * Tx.float32(2.0)
"""


def test_a_guards_compare_and_exit_are_on_the_if_line():
    """TVM's passes drop the span of README's guard ``if bx * 256 + tx < n:``; its compare and
    early exit were shown on ``Tx.device_entry()``. The body's first line finds the ``if``."""
    m = run_cell(GUARDED, {}, arch="sm_90a")["scale"].source_map
    ops = {ln: {s.opcode.split(".")[0] for s in m.sass_records_for(ln)} for ln in m.lines()}
    assert {"ISETP", "EXIT"} <= ops[8], ops
    assert "ISETP" not in ops.get(5, set()), ops
    assert any(l.lstrip().startswith("if (") for l in m.cuda_for(8)), m.cuda_for(8)
    assert 8 in m.coverage()["work_lines"]


def _writer(instrs, k, reg):
    """The last instruction before ``instrs[k]`` whose destination (first operand) is ``reg``."""
    for s in reversed(instrs[:k]):
        ops = s.text.split(None, 1)
        if len(ops) == 2 and ops[0] == s.opcode and ops[1].split(",")[0].strip() == reg:
            return s
    return None


def test_atomics_of_two_calls_of_one_helper_go_to_their_calls():
    """ptxas's line info gave both REDGs of two ``bump`` calls (an @T.inline helper in another module)
    the first call's line, while the PTX's ``.loc`` of each atom is right. The ground truth is the
    SASS's own data flow: each REDG's address comes from arithmetic ptxas puts on its call's line."""
    import sys

    from tvm.script import tirx as T

    sys.path.insert(0, str(ROOT / "tests" / "kernels"))
    from helpers import bump

    @T.prim_func
    def bump_twice(H: T.Buffer((64,), "int32"), G: T.Buffer((64,), "int32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        bump(H, tx % 64)
        bump(G, tx % 64)

    c = txlab.compile(bump_twice, arch="sm_90a", progress=lambda s: None)
    m = c.source_map
    calls = [i for i, l in enumerate(m.user_source, 1) if l.strip().startswith("bump(")]
    assert len(calls) == 2, calls
    code = [s for s in m.instructions if not s.padding]
    reds = [(k, s) for k, s in enumerate(code) if s.opcode.startswith("REDG")]
    assert sorted(s.user_line for _, s in reds) == calls, [(s.user_line, s.text) for _, s in reds]
    for k, s in reds:
        addr = re.search(r"\[(R\d+)\.64\]", s.text).group(1)
        assert _writer(code, k, addr).user_line == s.user_line, (s.text, _writer(code, k, addr).text)


TILE_COPIES = """from tvm.tirx.layout import S, TileLayout
L = TileLayout(S[(512, 64)])


@Tx.prim_func
def big_copy(A_ptr: Tx.handle, B_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (512, 64), "float32", layout=L)
    B = Tx.match_buffer(B_ptr, (512, 64), "float32", layout=L)
    Tx.device_entry()
    Tx.cta_id([1])
    Tx.thread_id([128])
    As = Tx.alloc_buffer((512, 64), "float32", scope="shared", layout=L)
    Tx.cta.copy(As[:, :], A[:, :])
    Tx.cuda.cta_sync()
    Tx.cta.copy(B[:, :], As[:, :])
"""


def test_a_tile_primitives_element_loop_is_on_its_call_line():
    """The loop a lowering pass makes for ``Tx.cta.copy`` has no span, its body has the call's: the loop's
    CUDA header was shown on ``Tx.device_entry()``. It is the call's line now, each copy its own loop."""
    m = run_cell(TILE_COPIES, {}, arch="sm_90a")["big_copy"].source_map
    src = TILE_COPIES.splitlines()
    entry = src.index("    Tx.device_entry()") + 1
    first, second = (i + 1 for i, l in enumerate(src) if "Tx.cta.copy(" in l)
    loops = {ln: [c for c in m.cuda_for(ln) if c.lstrip().startswith("for (")] for ln in (entry, first, second)}
    assert not loops[entry] and len(loops[first]) == 1 and len(loops[second]) == 1, loops
    assert loops[first] != loops[second]


TILE_BARRIERS = """@Tx.prim_func
def rowexp(A: Tx.Buffer((64, 64), "float32"), B: Tx.Buffer((64, 64), "float32"), R: Tx.Buffer((64,), "float32")):
    Tx.device_entry()
    Tx.cta_id([1])
    Tx.thread_id([128])
    As = Tx.alloc_shared((64, 64), "float32")
    Rs = Tx.alloc_shared((64,), "float32")
    Tx.cta.copy(As[:, :], A[:, :])
    Tx.cuda.cta_sync()
    Tx.cta.exp(As[:, :], As[:, :])
    Tx.cuda.cta_sync()
    Tx.cta.fill(Rs[:], Tx.float32(1.5))
    Tx.cuda.cta_sync()
    Tx.cuda.cta_sync()
    Tx.cta.copy(B[:, :], As[:, :])
    Tx.cta.copy(R[:], Rs[:])
"""


def test_each_barrier_is_on_its_own_line():
    """A tile primitive's closing barrier and the user's ``cta_sync`` after it, and two ``cta_sync`` in a row:
    ptxas's line info gave both BARs the first line, while each ``bar.sync``'s PTX ``.loc`` is its own line. Every
    line with a ``bar.sync`` in the PTX has as many BARs in the SASS."""
    m = run_cell(TILE_BARRIERS, {}, arch="sm_90a")["rowexp"].source_map
    src = TILE_BARRIERS.splitlines()
    syncs = [i + 1 for i, l in enumerate(src) if l.strip() == "Tx.cuda.cta_sync()"]
    assert len(syncs) == 4
    lines = sorted({*syncs, *(i + 1 for i, l in enumerate(src) if "Tx.cta." in l)})
    want = {ln: sum(bool(re.match(r"\s*bar\.sync", p)) for p in m.ptx_for(ln)) for ln in lines}
    got = {ln: sum(s.startswith("BAR.SYNC") for s in m.sass_for(ln)) for ln in lines}
    assert all(want[ln] == 1 for ln in syncs), want
    assert got == want, (got, want)


BARRIER_INITS = """
@Tx.prim_func
def inits(A_ptr: Tx.handle):
    A = Tx.match_buffer(A_ptr, (96,), "float32")
    Tx.device_entry()
    Tx.cta_id([1])
    tid = Tx.thread_id([96])
    pool = SMEMPool()
    full = TMABar(pool, 3)
    empty = MBarrier(pool, 3)
    full.init(1)
    empty.init(2)
    pool.commit()
    Tx.cuda.cta_sync()
    A[tid] = Tx.float32(1)
"""


def test_each_mbarrier_init_is_on_its_own_line():
    """Two ring's ``.init`` lines in a row: ptxas's line info put all six SYNCS.EXCH.64 at the first (the second had
    no SASS at all), while each ``mbarrier.init``'s PTX ``.loc`` is its own line."""
    m = run_cell(BARRIER_INITS, {}, arch="sm_90a")["inits"].source_map
    src = BARRIER_INITS.splitlines()
    lines = [i + 1 for i, l in enumerate(src) if l.strip().endswith(".init(1)") or l.strip().endswith(".init(2)")]
    want = {ln: sum(bool(re.match(r"\s*mbarrier\.init", p)) for p in m.ptx_for(ln)) for ln in lines}
    got = {ln: sum(s.startswith("SYNCS.EXCH.64") for s in m.sass_for(ln)) for ln in lines}
    assert want == {lines[0]: 3, lines[1]: 3}, want
    assert got == want, (got, want)
