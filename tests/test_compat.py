"""The TVM workarounds in txlab.compat: each defect is shown on the unpatched function, and the
patched toolchain builds a real wgmma kernel whose SASS contains HGMMA for sm_90a."""

from __future__ import annotations

import pytest

import txlab
import txlab.compat as compat
from txlab.api_examples import wgmma as wg


def test_patches_are_applied_on_the_pinned_tvm():
    status = compat.apply()
    assert set(status) == {p.id for p in compat.PATCHES}
    if compat.tvm_version() == compat.TARGET_VERSION:
        assert all(s == "applied" for s in status.values()), status
    else:
        assert all(s.startswith("skipped") for s in status.values()), status
    for p in compat.report():
        assert p["upstream_fix"] and p["target"].count(":") == 1 and p["test"].startswith("tests/")


def test_markdown_table_lists_every_patch():
    md = compat.markdown()
    for p in compat.PATCHES:
        assert p.id in md
    assert md.count("\n") == len(compat.PATCHES) + 1


def test_noop_barrier_codegen():
    """Unpatched codegen reads reg.dtype and fails on a buffer element; the patch emits the fence."""
    from tvm.backend.cuda.cpp import asm

    c = txlab.compile(wg.ss_kernel(), arch="sm_90a")
    assert "ptx_wgmma_fence_float" in c.cuda_source
    original = asm.codegen_cuda_wgmma_noop_barrier.__txlab_original__
    load = _a_buffer_element("float32")
    with pytest.raises(AttributeError, match="dtype"):
        original([load])
    call, _ = asm.codegen_cuda_wgmma_noop_barrier([load])
    assert "wgmma_noop_barrier_float32" in str(call) or "fence" in str(call)
    with pytest.raises(ValueError, match="uint32 or float32"):
        asm.codegen_cuda_wgmma_noop_barrier([_a_buffer_element("float16")])


def _a_buffer_element(dtype):
    import tvm

    buf = tvm.tirx.decl_buffer((4,), dtype, scope="local")
    return tvm.tirx.BufferLoad(buf, [0])


def test_scale_d_literal_only_relaxed_for_wgmma():
    from tvm.backend.cuda.ptx import engine

    original = engine._coerce_pred_operand.__txlab_original__

    class Slot:
        name, rw = "scale_d", "r"

    class Entry:
        name, mnemonic = "wgmma_f16_ss", "wgmma"

    with pytest.raises(ValueError, match="pred"):
        original(Entry, Slot, [0])
    (out,) = engine._coerce_pred_operand(Entry, Slot, [0])
    assert int(out.value) == 0 and out.ty.dtype == "uint32"
    Entry.mnemonic = "cp"  # every other .pred operand keeps TVM's strict rule
    with pytest.raises(ValueError, match="pred"):
        engine._coerce_pred_operand(Entry, Slot, [0])


@pytest.mark.parametrize("form", ["ss", "rs"])
def test_wgmma_hgmma(form):
    """TVM's two wgmma codegen shapes (smem x smem and regs x smem), written as TVM's tests write
    them (scale_d=0), build to a cubin with one HGMMA for sm_90a."""
    kernel = wg.ss_kernel() if form == "ss" else wg.rs_kernel()
    c = txlab.compile(kernel, arch="sm_90a")
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" in c.cuda_source
    hgmma = c.instructions("HGMMA")
    assert len(hgmma) == 1 and "64x64x16.F32" in hgmma[0], hgmma


def test_wgmma_ss_hgmma():
    test_wgmma_hgmma("ss")


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["ss", "rs"])
def test_wgmma_result_on_gpu(form):
    kernel = wg.ss_kernel() if form == "ss" else wg.rs_kernel()
    c = txlab.compile(kernel, arch="sm_90a")
    args = wg.inputs(form)
    res = txlab.check(c, args, reference=lambda *a: wg.expected(form, *a), rtol=1e-2, atol=1e-2)
    res.assert_ok()


def test_fast_frame_inspection_keeps_parsing_identical(tmp_path):
    """The parser-frame-inspection patch changes speed only: the same source parses to the same
    IR with and without it, closures and class-scope checks included."""
    import subprocess
    import sys
    import textwrap

    src = textwrap.dedent("""
        import sys, time
        import tvm
        from tvm.script import tirx as T
        SRC = open(sys.argv[1]).read()
        def parse():
            ns = {"T": T}
            exec(compile(SRC, sys.argv[1], "exec"), ns)
            return ns["outer"]().script()
        plain = parse()
        import txlab.compat
        assert txlab.compat.apply()["parser-frame-inspection"] == "applied"
        patched = parse()
        print("SAME" if plain == patched else "DIFFERENT")
    """)
    kernel = textwrap.dedent("""
        def outer():
            width = 64          # a closure variable the parser must resolve through the frames
            @T.prim_func
            def k(A: T.Buffer((64,), "float32")):
                T.device_entry()
                tx = T.thread_id([width])
                A[tx] = A[tx] * T.float32(2.0)
            return k
    """)
    (tmp_path / "k.py").write_text(kernel)
    (tmp_path / "run.py").write_text(src)
    import os

    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(__import__("pathlib").Path(__file__).parents[1])] + sys.path)
    )
    out = subprocess.run(
        [sys.executable, str(tmp_path / "run.py"), str(tmp_path / "k.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("SAME")


def test_warp_and_cta_reductions_in_one_kernel_build():
    """A warp reduction and a CTA reduction of the same op in one kernel (a layernorm's pattern): unpatched, the
    CUDA source defines the 32-lane warp-reduction template twice and nvcc refuses it; patched, the second copy is
    guarded away, nvcc builds it, and the emulator's sums are numpy's."""
    import numpy as np
    from tvm.backend.cuda.cpp import builtins
    from tvm.script import tirx as Tx

    @Tx.prim_func
    def both(X: Tx.Buffer((128,), "float32"), O: Tx.Buffer((4, 128), "float32")):
        Tx.device_entry()
        Tx.cta_id([1])
        tx = Tx.thread_id([128])
        s = Tx.alloc_shared((4,), "float32")
        t = Tx.alloc_shared((4,), "float32")
        O[0, tx] = Tx.cuda.warp_sum(X[tx])
        O[1, tx] = Tx.cuda.cta_sum(X[tx], 4, s.data)
        O[2, tx] = Tx.cuda.warp_max(X[tx])
        O[3, tx] = Tx.cuda.cta_max(X[tx], 4, t.data)

    original = builtins._warp_reduce_source.__txlab_original__
    assert original("f", 32, "x;").count("template") == 1
    c = txlab.compile(both, arch="sm_90a")
    src = c.cuda_source
    assert src.count("T tvm_builtin_cuda_warp_reduce_sum_32(T val)") == 2  # the second copy TVM pastes ...
    assert src.count("#ifndef TXLAB_DEFINED_tvm_builtin_cuda_warp_reduce_sum_32") == 2  # ... is guarded away
    assert "SHFL.BFLY" in c.sass  # nvcc built it
    x = np.random.default_rng(0).standard_normal(128).astype(np.float32)
    o = np.zeros((4, 128), np.float32)
    assert txlab.emulate(c, x, o).ok
    w = x.reshape(4, 32)
    np.testing.assert_allclose(o[0], np.repeat(w.sum(1), 32), rtol=1e-5)
    np.testing.assert_allclose(o[1], np.full(128, x.sum()), rtol=1e-5)
    assert (o[2] == np.repeat(w.max(1), 32)).all() and (o[3] == x.max()).all()
