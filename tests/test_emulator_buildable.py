"""The emulator refuses what the GPU build refuses, so an emulated check never passes a kernel that cannot be
built: an intrinsic TVM's CUDA codegen has no lowering for is the build's own CompileError, and a function that
needs a newer architecture than the emulated one is an ArchError naming it and its line."""

import numpy as np
import pytest
from tvm.script import tirx as T

import txlab
from txlab.emulator import emulate
from txlab.errors import ArchError, CompileError


@T.prim_func
def with_tirx_fma(A: T.Buffer((64,), "float32"), O: T.Buffer((64,), "float32")):
    T.device_entry()
    T.cta_id([1])
    i = T.thread_id([64])
    O[i] = T.fma(A[i], A[i], T.float32(1))


@T.prim_func
def with_fmul2(A: T.Buffer((64,), "float32"), O: T.Buffer((64,), "float32")):
    T.device_entry()
    T.cta_id([1])
    i = T.thread_id([32])
    r = T.cuda.fmul2_rn(T.cuda.make_float2(A[2 * i], A[2 * i + 1]), T.cuda.make_float2(A[2 * i], A[2 * i + 1]))
    O[2 * i] = T.cuda.float2_x(r)
    O[2 * i + 1] = T.cuda.float2_y(r)


def test_an_intrinsic_with_no_cuda_is_the_builds_compile_error():
    a, o = np.ones(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(CompileError) as built:
        txlab.compile(with_tirx_fma, arch="sm_90a")
    with pytest.raises(CompileError) as emulated:
        emulate(with_tirx_fma, a, o, arch="sm_90a")
    with pytest.raises(CompileError):
        txlab.check(with_tirx_fma, (a, o), reference=lambda a, o: a * a + 1, device="cpu")
    for e in (built.value, emulated.value):
        assert e.stage == "codegen" and e.lineno is not None and "T.fma(" in e.source_line, e
        assert "tirx.fma" in e.message and "a * b + c" in e.message, e.message
    assert not o.any()


def test_a_newer_archs_function_is_an_arch_error_at_its_line():
    a, o = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(ArchError) as e:
        emulate(with_fmul2, a, o, arch="sm_90a")
    assert "Tx.cuda.fmul2_rn" in str(e.value) and "sm_100a" in str(e.value) and "line" in str(e.value)
    res = emulate(with_fmul2, a, o, arch="sm_100a")  # built for Blackwell it runs
    assert res.ok and np.array_equal(o, a * a)
