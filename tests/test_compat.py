"""The TVM workarounds in txlab.compat: each defect is shown on the unpatched function, and the
patched toolchain builds a real wgmma kernel whose SASS contains HGMMA for sm_90a."""
from __future__ import annotations

import numpy as np
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
