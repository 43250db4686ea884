"""Numeric conversion and packed math: half/bf16/fp8 conversions, float2 packing, paired FMA ops."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

SCALAR = kernel_source(
    "conversions",
    ('H: T.Buffer((32,), "float16"), Bf: T.Buffer((32,), "bfloat16"),',
     'F: T.Buffer((32,), "float32"), Out: T.Buffer((8, 32), "float32"),',
     'Bits: T.Buffer((2, 32), "uint32")'),
    threads=32,
    body='''
    Out[0, tx] = T.cuda.half2float(H[tx])
    Out[1, tx] = T.cuda.bfloat162float(Bf[tx])
    Out[2, tx] = T.cuda.fdividef(F[tx], T.float32(4))
    Bits[0, tx] = T.cuda.float_as_uint(F[tx])
    Out[3, tx] = T.cuda.uint_as_float(T.cuda.float_as_uint(F[tx]))
    p = T.cuda.make_float2(F[tx], T.float32(2) * F[tx])
    Out[4, tx] = T.cuda.float2_x(p)
    Out[5, tx] = T.cuda.float2_y(p)
    b2 = T.cuda.float22bfloat162_rn(F[tx], T.float32(1))
    back = T.cuda.bfloat1622float2(b2)
    Out[6, tx] = T.cuda.float2_x(back)
    b2b = T.cuda.float22bfloat162_rn_from_float2(T.cuda.make_float2(F[tx], F[tx]))
    Out[7, tx] = T.cuda.float2_y(T.cuda.bfloat1622float2(b2b))
    Bits[1, tx] = T.cuda.fp8x4_e4m3_from_float4(F[tx], T.float32(1), T.float32(-2), T.float32(0.5))
''',
)


def _f32_to_bf16_rn(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return (b << 16).astype(np.uint32).view(np.float32)


def _e4m3(v):
    """float32 -> fp8 e4m3 byte, round to nearest even (ties happen here: the inputs are multiples
    of 1/8 and e4m3 steps by 1/2 above 4), as cvt.rn.satfinite.e4m3x2.f32 does."""
    import ml_dtypes

    return int(np.float32(v).astype(ml_dtypes.float8_e4m3fn).view(np.uint8))


def _conv_inputs():
    rng = np.random.default_rng(4)
    f = (rng.integers(-64, 64, 32) / 8).astype(np.float32)
    import ml_dtypes

    return [f.astype(np.float16), f.astype(ml_dtypes.bfloat16), f, np.zeros((8, 32), np.float32), np.zeros((2, 32), np.uint32)]


def _conv_expected(H, Bf, F, Out, Bits):
    out = np.zeros((8, 32), np.float32)
    out[0] = H.astype(np.float32)
    out[1] = Bf.astype(np.float32)
    out[2] = F / 4
    out[3] = F
    out[4] = F
    out[5] = 2 * F
    out[6] = _f32_to_bf16_rn(F)
    out[7] = _f32_to_bf16_rn(F)
    bits = np.zeros((2, 32), np.uint32)
    bits[0] = F.view(np.uint32)
    bits[1] = [_e4m3(x) | (_e4m3(1.0) << 8) | (_e4m3(-2.0) << 16) | (_e4m3(0.5) << 24) for x in F]
    return {"Out": out, "Bits": bits}


PACKED = kernel_source(
    "packed_half",
    ('A: T.Buffer((32,), "uint32"), B: T.Buffer((32,), "uint32"),',
     'F: T.Buffer((256,), "float32"), MinMax: T.Buffer((2, 32), "uint32"),',
     'H: T.Buffer((256,), "float16"), G: T.Buffer((256,), "float32")'),
    threads=32,
    body='''
    MinMax[0, tx] = T.cuda.hmin2(A[tx], B[tx])  # two fp16 lanes per uint32
    MinMax[1, tx] = T.cuda.hmax2(A[tx], B[tx])
    T.cuda.float22half2(T.address_of(H[8 * tx]), T.address_of(F[8 * tx]))  # one float2 -> half2
    T.cuda.float8tohalf8(T.address_of(F[8 * tx]), T.address_of(H[8 * tx]))  # 8 floats -> 8 halves
    T.cuda.half8tofloat8(T.address_of(H[8 * tx]), T.address_of(G[8 * tx]))  # and back
''',
)


def _packed_inputs():
    rng = np.random.default_rng(5)
    a = (rng.integers(-64, 64, 64) / 4).astype(np.float16)
    b = (rng.integers(-64, 64, 64) / 4).astype(np.float16)
    f = (rng.integers(-512, 512, 256) / 16).astype(np.float32)
    return [a.view(np.uint32).copy(), b.view(np.uint32).copy(), f, np.zeros((2, 32), np.uint32),
            np.zeros(256, np.float16), np.zeros(256, np.float32)]


def _packed_expected(A, B, F, MinMax, H, G):
    a, b = A.view(np.float16), B.view(np.float16)
    mm = np.stack([np.minimum(a, b).view(np.uint32), np.maximum(a, b).view(np.uint32)])
    return {"MinMax": mm, "H": F.astype(np.float16), "G": F.astype(np.float16).astype(np.float32)}


F32X2 = kernel_source(
    "packed_f32x2", 'F: T.Buffer((64,), "float32"), Out: T.Buffer((2, 32), "float32")',
    threads=32,
    body='''
    p = T.cuda.make_float2(F[2 * tx], F[2 * tx + 1])
    q = T.cuda.fadd2_rn(T.cuda.fmul2_rn(p, p), p)  # sm_100 paired f32 FMUL/FADD
    Out[0, tx] = T.cuda.float2_x(q)
    Out[1, tx] = T.cuda.float2_y(q)
''',
)


def _f32x2_inputs():
    rng = np.random.default_rng(7)
    return [rng.standard_normal(64).astype(np.float32), np.zeros((2, 32), np.float32)]


def _f32x2_expected(F, Out):
    p = F.reshape(32, 2).T  # (x, y) of each lane's float2
    return {"Out": (p * p).astype(np.float32) + p}  # fmul2_rn then fadd2_rn: two roundings


EXAMPLES = [
    Example(
        id="conversions", source=SCALAR, arch="sm_90",
        uses=("Tx.cuda.half2float", "Tx.cuda.bfloat162float", "Tx.cuda.fdividef",
              "Tx.cuda.float_as_uint", "Tx.cuda.uint_as_float", "Tx.cuda.make_float2",
              "Tx.cuda.float2_x", "Tx.cuda.float2_y",
              "Tx.cuda.float22bfloat162_rn", "Tx.cuda.bfloat1622float2",
              "Tx.cuda.float22bfloat162_rn_from_float2", "Tx.cuda.fp8x4_e4m3_from_float4"),
        inputs=_conv_inputs, expected=_conv_expected, outputs=("Out", "Bits"),
        note="inputs are multiples of 1/8 so every conversion is exact; fp8 bytes checked bit-exactly",
    ),
    Example(
        id="packed_half", source=PACKED, arch="sm_80",
        uses=("Tx.cuda.hmin2", "Tx.cuda.hmax2", "Tx.cuda.float22half2", "Tx.cuda.float8tohalf8",
              "Tx.cuda.half8tofloat8"),
        inputs=_packed_inputs, expected=_packed_expected, outputs=("MinMax", "H", "G"),
    ),
    Example(
        id="packed_f32x2", source=F32X2, arch="sm_100a",
        uses=("Tx.cuda.fmul2_rn", "Tx.cuda.fadd2_rn", "Tx.cuda.make_float2"),
        not_on_h200="__fmul2_rn / __fadd2_rn exist only on sm_100+ (Blackwell)",
        inputs=_f32x2_inputs, expected=_f32x2_expected, outputs=("Out",),
        note="compiled for sm_100a here; an H200 cannot run it (checked on the CPU emulator: two IEEE "
             "round-to-nearest operations per lane, never fused)",
    ),
]
