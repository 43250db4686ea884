"""Line info without a second nvdisasm run: txlab.sass.lines reads each SASS instruction's CUDA line
and inline frames from the cubin's line tables and the PTX, and the one nvdisasm run (text,
encodings, live registers) must give the same listing as the two runs it replaces
(``nvdisasm -c -gi -hex`` and ``nvdisasm --print-life-ranges``). Checked on the Hopper GEMM, the
notebooks' kernels (one module with two kernels among them) and upstream TIRx kernels. No GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import txlab
from txlab.sass import listing, lines

sys.path.insert(0, str(Path(__file__).parent))

FIELDS = ("kernel", "offset", "predicate", "opcode", "operands", "lo", "hi", "cuda_line", "inline", "inner_cuda")


def _two_runs(cubin: bytes):
    """The listing as it was made before: nvdisasm -gi for the lines, a second run for life ranges."""
    old = listing.from_text(listing.disassemble(cubin, listing.LINES), cubin=cubin)
    return old, listing.parse_life(listing.disassemble(cubin, listing.LIFE))


def _assert_same(compiled, tmp_path, monkeypatch):
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    new = listing.of_cubin(compiled.cubin, ptx=compiled.ptx)
    assert new.tool == "nvdisasm " + " ".join(listing.ONE)
    old, old_live = _two_runs(compiled.cubin)
    assert new.text == old.text == listing.disassemble(compiled.cubin, ("-c",))  # Compiled.sass
    assert len(new.instructions) == len(old.instructions)
    for a, b in zip(old.instructions, new.instructions):
        assert [getattr(a, f) for f in FIELDS] == [getattr(b, f) for f in FIELDS], (a, b)
        assert (a.sass_line, a.padding, a.control) == (b.sass_line, b.padding, b.control)
    assert new.live_registers() == old_live and old_live
    return new


@pytest.fixture(scope="module")
def gemm():
    from txlab.examples import hopper_gemm as hg

    return hg.build(8192, 8192, 8192, hg.GemmConfig())


def test_the_gemm_listing_equals_nvdisasm_gi(gemm, tmp_path, monkeypatch):
    new = _assert_same(gemm, tmp_path, monkeypatch)
    # the GEMM inlines CUDA helpers several levels deep (cooperative_groups, TVM's preamble)
    assert max(len(i.inline) for i in new.instructions) >= 4
    assert sum(i.padding for i in new.instructions) > 1  # the trailing NOPs, put back


@pytest.fixture(scope="module")
def notebook_kernels():
    """Notebook 01's kernels (tests/kernels/basics.py), and two of them in one module."""
    import tvm

    from txlab.magic import run_cell

    kernels = (Path(__file__).parent / "kernels" / "basics.py").read_text()
    built = run_cell(kernels, {}, arch="sm_90a")
    both = tvm.IRModule({name: built[name].ir_module[name] for name in ("scale", "warp_sums")})
    return {"row_sum_smem": built["row_sum_smem"], "Both": txlab.compile(both, arch="sm_90a")}


def test_notebook_kernels_equal_nvdisasm_gi(notebook_kernels, tmp_path, monkeypatch):
    _assert_same(notebook_kernels["row_sum_smem"], tmp_path, monkeypatch)
    both = _assert_same(notebook_kernels["Both"], tmp_path, monkeypatch)
    assert sorted(both.kernels) == ["scale_kernel", "warp_sums_kernel"]  # one address sequence each
    assert all(any(i.cuda_line for i in both.instructions if i.kernel == k) for k in both.kernels)


@pytest.mark.parametrize("case_id", ["codegen/warp_sum_partial_8", "hopper/ptx_stmatrix[trans-x2]"])
def test_upstream_kernels_equal_nvdisasm_gi(case_id, tmp_path, monkeypatch):
    """warp_sum_partial_8: a ptxas-made instruction (the memory descriptor's ULDC) that the PTX
    table puts at the kernel's header keeps the line nvdisasm shows; ptx_stmatrix: inlined
    helpers whose outer call site changes while the innermost line does not."""
    from upstream import corpus

    case = next(c for c in corpus.cases() if c.id == case_id)
    _assert_same(txlab.compile(case.build(), arch=case.arch), tmp_path, monkeypatch)


def test_another_kernels_ptx_is_refused(notebook_kernels, tmp_path, monkeypatch):
    """The line table's PTX line numbers only mean something for the PTX the cubin was built from:
    given another, the listing takes its lines from nvdisasm -gi instead."""
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path))
    a, b = notebook_kernels["row_sum_smem"], notebook_kernels["Both"]
    with pytest.raises(ValueError, match="PTX differs"):
        lines.frames_of(a.cubin, b.ptx, [])
    assert listing.of_cubin(a.cubin, ptx=b.ptx).tool == "nvdisasm " + " ".join(listing.LINES)


def test_trailing_words_that_are_not_nops_are_refused(notebook_kernels):
    c = notebook_kernels["row_sum_smem"]
    text = listing.text_of(c.cubin, listing.ONE)[0]
    assert "NOP;" not in text and "NOP;" in listing.fill_padding(text, c.cubin)
    start = c.cubin.rindex(bytes.fromhex("1879000000000000"))  # the last NOP's first word
    bad = c.cubin[:start] + bytes(8) + c.cubin[start + 8 :]
    with pytest.raises(ValueError, match="not a NOP"):
        listing.fill_padding(text, bad)
