"""Conversions the way the build's PTX does them: float -> 8/16-bit integers through a 32-bit
``cvt.rzi`` (low bits kept), fp8 with ``.satfinite``, bfloat16 keeping float32 denormals under
fast math. Each test also reads the build's PTX, so a change in nvcc is caught."""

import ml_dtypes
import numpy as np

import txlab
from txlab.emulator import emulate

from test_emulator import kernel  # noqa: E402  (tests/ is on sys.path)

NARROW = """
@T.prim_func
def narrow(A: T.Buffer((32,), "SRC"), I8: T.Buffer((32,), "int8"), U8: T.Buffer((32,), "uint8"),
           I16: T.Buffer((32,), "int16"), U16: T.Buffer((32,), "uint16")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    I8[tx] = T.Cast("int8", A[tx])
    U8[tx] = T.Cast("uint8", A[tx])
    I16[tx] = T.Cast("int16", A[tx])
    U16[tx] = T.Cast("uint16", A[tx])
"""


def _narrow(src, vals):
    c = txlab.compile(kernel(NARROW.replace("SRC", src), "narrow"), arch="sm_90a")
    a = np.zeros(32, np.dtype(src) if src != "bfloat16" else ml_dtypes.bfloat16)
    a[: len(vals)] = vals
    outs = [np.zeros(32, t) for t in (np.int8, np.uint8, np.int16, np.uint16)]
    assert emulate(c, a, *outs).ok
    return c, [o[: len(vals)].tolist() for o in outs]


def test_float32_to_8_and_16_bits_keeps_the_low_bits_of_a_32_bit_conversion():
    c, (i8, u8, i16, u16) = _narrow("float32", [300.0, -300.5, 70000.5, 1e10, -1e10, np.inf, np.nan, -1.0, 100.7])
    ptx = c.ptx
    assert "cvt.rzi.ftz.s32.f32" in ptx and "cvt.rzi.ftz.u32.f32" in ptx and "st.global.u8" in ptx
    assert ".s8.f32" not in ptx and ".s16.f32" not in ptx  # nvcc has no narrow float conversion here
    # s32 saturates (1e10 -> 0x7fffffff, -1e10 -> 0x80000000), then the store keeps the low bits
    assert i8 == [44, -44, 112, -1, 0, -1, 0, -1, 100]
    assert u8 == [44, 0, 112, 255, 0, 255, 0, 0, 100]  # u32 saturates negatives to 0
    assert i16 == [300, -300, 4464, -1, 0, -1, 0, -1, 100]
    assert u16 == [300, 0, 4464, 65535, 0, 65535, 0, 0, 100]


def test_float16_and_bfloat16_to_narrow_integers():
    c, (i8, u8, i16, u16) = _narrow("float16", [300.0, -300.0, 65504.0, -np.inf])
    assert "cvt.rzi.s32.f16" in c.ptx and "cvt.rzi.s16.f16" in c.ptx
    assert i8 == [44, -44, -32, 0] and u8 == [44, 0, 224, 0]  # through 32 bits
    assert i16 == [300, -300, 32767, -32768] and u16 == [300, 0, 65504, 0]  # saturate at 16 bits
    c, (i8, u8, i16, u16) = _narrow("bfloat16", [300.0, -300.0, 1e10])
    assert "cvt.rzi.s8.bf16" in c.ptx
    assert i8 == [127, -128, 127] and u8 == [255, 0, 255]  # bfloat16 saturates to the target
    assert i16 == [300, -300, 32767] and u16 == [300, 0, 65535]


TO_FP8 = """
@T.prim_func
def to_fp8(A: T.Buffer((32,), "float32"), E4: T.Buffer((32,), "float8_e4m3fn"),
           E5: T.Buffer((32,), "float8_e5m2"), Bf: T.Buffer((32,), "bfloat16")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    E4[tx] = T.Cast("float8_e4m3fn", A[tx])
    E5[tx] = T.Cast("float8_e5m2", A[tx])
    Bf[tx] = T.Cast("bfloat16", A[tx])
"""


def test_fp8_saturates_to_finite_and_bfloat16_keeps_denormals_under_fast_math():
    c = txlab.compile(kernel(TO_FP8, "to_fp8"), arch="sm_90a")  # fast math, txlab's default
    assert "cvt.rn.satfinite.e4m3x2.f32" in c.ptx and "cvt.rn.satfinite.e5m2x2.f32" in c.ptx
    assert "cvt.rn.bf16.f32" in c.ptx and "cvt.rn.ftz.bf16" not in c.ptx
    vals = np.array([480.0, 1000.0, np.inf, -np.inf, 61440.0, 7e4, 300.0, np.nan, 1e-40, -3e-39], np.float32)
    a = np.zeros(32, np.float32)
    a[: vals.size] = vals
    e4 = np.zeros(32, ml_dtypes.float8_e4m3fn)
    e5 = np.zeros(32, ml_dtypes.float8_e5m2)
    bf = np.zeros(32, ml_dtypes.bfloat16)
    assert emulate(c, a, e4, e5, bf).ok
    n = vals.size
    assert e4[:n].astype(np.float32)[:7].tolist() == [448.0, 448.0, 448.0, -448.0, 448.0, 448.0, 288.0]
    assert e5[:n].astype(np.float32)[:7].tolist() == [512.0, 1024.0, 57344.0, -57344.0, 57344.0, 57344.0, 320.0]
    assert np.isnan(e4[7].astype(np.float32)) and np.isnan(e5[7].astype(np.float32))
    # cvt.rn.bf16.f32 has no .ftz: a float32 denormal stays a bfloat16 denormal
    assert bf[8:10].view(np.uint16).tolist() == [0x0001, 0x8021]


def _local_cast_kernel(shape, src, dst):
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    lay = TileLayout(S[shape])

    @T.prim_func
    def cast_local(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, src, layout=lay)
        B = T.match_buffer(B_ptr, shape, dst, layout=lay)
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([32])
        A_local = T.alloc_local(shape, dtype=src, layout=lay)
        B_local = T.alloc_local(shape, dtype=dst, layout=lay)
        Tx.copy(A_local, A)
        Tx.cast(B_local, A_local)
        if tid == 0:
            Tx.copy(B, B_local)

    return cast_local


def test_tile_cast_of_thread_local_tiles_is_emulated_bitwise():
    """``Tx.cast`` of a thread-local tile (an epilogue's fp32 -> fp16/bf16, and back) lowers to TVM's paired helper
    on register addresses (``tvm_builtin_cast_float32x2_float16x2(&B_local[2 f], &A_local[2 f])``, checked in the
    CUDA): each pair cast as ``__float22half2_rn`` does, round to nearest even."""
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(3)
    for shape, src, dst in [
        ((8,), "float32", "float16"),
        ((16, 16), "float32", "bfloat16"),
        ((16, 16), "float16", "float32"),
        ((8,), "bfloat16", "float32"),
    ]:
        k = _local_cast_kernel(shape, src, dst)
        assert f"tvm_builtin_cast_{src}x2_{dst}x2" in txlab.compile(k, arch="sm_90a").cuda_source
        npd = {"float32": np.float32, "float16": np.float16, "bfloat16": bf16}
        a = (rng.standard_normal(shape) * 100).astype(np.float32).astype(npd[src])
        b = np.zeros(shape, npd[dst])
        res = emulate(k, a, b)
        assert res.ok, res.summary()
        want = a.astype(np.float32).astype(npd[dst])
        assert np.array_equal(b.view(np.uint8), want.view(np.uint8)), (shape, src, dst)
