# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
#
# Carried from apache/tvm at commit 5d4dc8721307 (see tests/upstream/corpus.py):
#   tests/python/tirx/operator/tile_primitive/cuda/gemm/test_gemm_mma_m16n8k_.py
# Lines 17-353 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
# fmt: off
# ---- upstream ----
"""Tests for the CUDA synchronous ``gemm`` (mma.sync) tensor-core dispatch.

The dispatch lowers ``tirx.tile.gemm`` over pure-register fragments to warp-level
``mma.sync.aligned.m16n8k16/k8`` for bf16/f16 inputs with f32 accumulation.

The fragment layouts below are the standard m16n8 register maps (PTX ISA
§9.7.13; see ``tests/python/tirx-base/test_tir_ptx_mma.py``):

    lane = 4*g + t        (g = lane >> 2 in [0, 8),  t = lane & 3 in [0, 4))
    D/C[M, N]: M = g + 8*rM,  N = 2*t + rN,          c_id = 2*rM + rN
    A[M, K]:   M = g + 8*rM,  K = 2*t + p + 8*kHi,   ma   = p + 2*rM + 4*kHi
    B[K, N]:   N = g,         K = 2*t + p + 8*kHi,   mb   = p + 2*kHi

Most assertions run the CPU-only ``LowerTIRx`` transform; the numerical check
is guarded by ``requires_cuda`` since it needs a real device.
"""

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.operator.tile_primitive import list_registered_schedules

# Single-tile m16n8k8 fragment layouts -- the smallest unit everything else is
# built from. A is 16x8, B is 8x8 as [K, N], D/C is 16x8 (the accumulator does
# not depend on K). Every other layout (the k16 single tile, all tilings, and
# the transposed orientations) is derived from these three via ``tile_to`` /
# ``group`` + ``permute_by_groups``.
D_FRAG = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
A_FRAG_K8 = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
B_FRAG_K8 = TileLayout(S[(4, 2, 8) : (1 @ laneid, 1, 4 @ laneid)])
# m16n8k16 single tile = two k8 tiles stacked along K.
A_FRAG = A_FRAG_K8.tile_to([16, 16], [16, 8])
B_FRAG = B_FRAG_K8.tile_to([16, 8], [8, 8])


def _transpose_frag(layout, shape):
    """Swap the two logical axes of a 2D fragment layout.

    The transposed input orientations (A as [K, M], B as [N, K]) hold the exact
    same per-lane/per-register element distribution as the K-major fragments --
    only the buffer's logical axes are swapped. So instead of writing them out
    by hand, derive them: ``group`` the shard into the logical dims, then
    ``permute_by_groups`` to exchange the two groups.
    """
    grouped, seps = layout.group(shape)
    return grouped.permute_by_groups(seps, [1, 0])


# Transposed input orientations of the same single tile: A as [K, M], B as
# [N, K]. The dispatch swaps axes per the transpose flags; the .row.col mma is
# unchanged.
A_KM_FRAG = _transpose_frag(A_FRAG, [16, 16])
B_NK_FRAG = _transpose_frag(B_FRAG, [16, 8])


def _frag(Mt, Nt, Kt, kinst):
    """Fragment layouts for an Mt x Nt x Kt tiling of m16n8k{8,16}.

    Logical shapes: A = (16*Mt, kinst*Kt), B = (kinst*Kt, 8*Nt), D/C = (16*Mt, 8*Nt).
    Each operand's tiled layout is the single-tile base ``tile_to`` the full
    logical shape -- ``tile_to`` repeats the base's per-lane/per-register element
    map over the tile grid, so a tiling is just a grid of the single-tile
    fragments (the base is the single source of truth, k8 and k16 alike).
    """
    A_base = A_FRAG if kinst == 16 else A_FRAG_K8
    B_base = B_FRAG if kinst == 16 else B_FRAG_K8
    D = D_FRAG.tile_to([16 * Mt, 8 * Nt], [16, 8])
    A = A_base.tile_to([16 * Mt, kinst * Kt], [16, kinst])
    B = B_base.tile_to([kinst * Kt, 8 * Nt], [kinst, 8])
    return D, A, B


def _build_tiled(Mt, Nt, Kt, kinst, *, beta=0.0, dtype="float16", store=False):
    """A single-warp kernel issuing one ``T.gemm`` over an Mt x Nt x Kt tiling.

    With ``store=True`` the result is written back to a global buffer (a full
    kernel for codegen); otherwise only the ``T.gemm`` is emitted (for
    ``LowerTIRx`` dispatch checks).
    """
    Dl, Al, Bl = _frag(Mt, Nt, Kt, kinst)
    M, N, K = 16 * Mt, 8 * Nt, kinst * Kt

    if not store:

        @T.prim_func
        def gemm():
            T.device_entry()
            _cta = T.cta_id([1])
            _warp = T.warp_id([1])
            _lane = T.lane_id([32])
            A = T.alloc_buffer((M, K), dtype, scope="local", layout=Al)
            B = T.alloc_buffer((K, N), dtype, scope="local", layout=Bl)
            C = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
            D = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
            Tx.warp.gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=1.0, beta=beta)

        return gemm

    @T.prim_func
    def gemm(D_ptr: T.handle):
        D_g = T.match_buffer(D_ptr, (M, N), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        A = T.alloc_buffer((M, K), dtype, scope="local", layout=Al)
        B = T.alloc_buffer((K, N), dtype, scope="local", layout=Bl)
        C = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
        D = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
        Tx.warp.gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=1.0, beta=beta)
        # Decode D's per-thread registers (c = ((mt*Nt + nt)*2 + rM)*2 + rN)
        # back to logical (M, N) and store, exercising the whole tiling.
        D_reg = D.local(Mt * Nt * 4)
        for c in T.unroll(Mt * Nt * 4):
            rN = c % 2
            rM = (c // 2) % 2
            nt = (c // 4) % Nt
            mt = c // (4 * Nt)
            D_g[mt * 16 + lane // 4 + rM * 8, nt * 8 + (lane % 4) * 2 + rN] = D_reg[c]

    return gemm


def _build_gemm(alpha=1.0, beta=0.0, dtype="bfloat16"):
    """A single-warp kernel issuing one ``T.gemm`` over register fragments."""

    @T.prim_func
    def gemm_min():
        T.device_entry()
        _cta = T.cta_id([1])
        _tid = T.thread_id([32])
        D = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
        C = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
        A = T.alloc_buffer((16, 16), dtype, scope="local", layout=A_FRAG)
        B = T.alloc_buffer((16, 8), dtype, scope="local", layout=B_FRAG)
        Tx.warp.gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=alpha, beta=beta)

    return gemm_min


def _build_transpose(transpose_A, transpose_B, *, store=False):
    """Single m16n8k16 tile with the requested A/B input orientations."""
    Al = A_KM_FRAG if transpose_A else A_FRAG
    Bl = B_NK_FRAG if transpose_B else B_FRAG
    A_shape = (16, 16)  # [K, M] or [M, K] -- both 16x16 for one tile
    B_shape = (8, 16) if transpose_B else (16, 8)

    if not store:

        @T.prim_func
        def gemm():
            T.device_entry()
            _cta = T.cta_id([1])
            _warp = T.warp_id([1])
            _lane = T.lane_id([32])
            A = T.alloc_buffer(A_shape, "float16", scope="local", layout=Al)
            B = T.alloc_buffer(B_shape, "float16", scope="local", layout=Bl)
            C = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
            D = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
            Tx.warp.gemm(
                D,
                A,
                B,
                C,
                transpose_A=transpose_A,
                transpose_B=transpose_B,
                alpha=1.0,
                beta=0.0,
            )

        return gemm

    @T.prim_func
    def gemm(D_ptr: T.handle):
        D_g = T.match_buffer(D_ptr, (16, 8), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        A = T.alloc_buffer(A_shape, "float16", scope="local", layout=Al)
        B = T.alloc_buffer(B_shape, "float16", scope="local", layout=Bl)
        C = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
        D = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
        Tx.warp.gemm(
            D,
            A,
            B,
            C,
            transpose_A=transpose_A,
            transpose_B=transpose_B,
            alpha=1.0,
            beta=0.0,
        )
        D_reg = D.local(4)
        for c in T.unroll(4):
            D_g[lane // 4 + (c // 2) * 8, (lane % 4) * 2 + c % 2] = D_reg[c]

    return gemm


def _build_dtypes(a_dtype, b_dtype, c_dtype, d_dtype):
    """Single tile with explicit per-operand dtypes (for decline checks)."""

    @T.prim_func
    def gemm_min():
        T.device_entry()
        _cta = T.cta_id([1])
        _tid = T.thread_id([32])
        D = T.alloc_buffer((16, 8), d_dtype, scope="local", layout=D_FRAG)
        C = T.alloc_buffer((16, 8), c_dtype, scope="local", layout=D_FRAG)
        A = T.alloc_buffer((16, 16), a_dtype, scope="local", layout=A_FRAG)
        B = T.alloc_buffer((16, 8), b_dtype, scope="local", layout=B_FRAG)
        Tx.warp.gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0)

    return gemm_min


def _build_tiled_numeric(Mt, Nt, Kt, kinst, beta, dtype):
    """End-to-end ``T.gemm`` over an Mt x Nt x Kt tiling, with the A/B inputs
    loaded and the D output stored register-by-register.

    Fragments are indexed through per-register multi-dim ``.local()`` views.
    Their axes follow physical register order (stride-descending):
    A = [Mt, Kt, kHi, rM(2), kp], B = [Kt, Nt, kHi, kp], and
    D/C = [Mt, Nt, rM(2), rN(2)]. The lane owns g = lane>>2 and
    t = lane&3; within a tile M = mt*16 + rM*8 + g,
    N = nt*8 + t*2 + rN, K = kt*kinst + kHi*8 + t*2 + kp.
    """
    Dl, Al, Bl = _frag(Mt, Nt, Kt, kinst)
    M, N, K = 16 * Mt, 8 * Nt, kinst * Kt
    KP = 2
    kHi_n = kinst // (4 * KP)

    @T.prim_func
    def gemm(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, D_ptr: T.handle):
        A_g = T.match_buffer(A_ptr, (M, K), dtype)
        B_g = T.match_buffer(B_ptr, (K, N), dtype)
        C_g = T.match_buffer(C_ptr, (M, N), "float32")
        D_g = T.match_buffer(D_ptr, (M, N), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        A_f = T.alloc_buffer((M, K), dtype, scope="local", layout=Al)
        B_f = T.alloc_buffer((K, N), dtype, scope="local", layout=Bl)
        C_f = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
        D_f = T.alloc_buffer((M, N), "float32", scope="local", layout=Dl)
        A_reg = A_f.local(Mt, Kt, kHi_n, 2, KP)
        for mt, kt, kHi, rM, kp in T.grid(Mt, Kt, kHi_n, 2, KP):
            A_reg[mt, kt, kHi, rM, kp] = A_g[
                mt * 16 + lane // 4 + 8 * rM,
                kt * kinst + kHi * 8 + 2 * (lane % 4) + kp,
            ]
        B_reg = B_f.local(Kt, Nt, kHi_n, KP)
        for kt, nt, kHi, kp in T.grid(Kt, Nt, kHi_n, KP):
            B_reg[kt, nt, kHi, kp] = B_g[
                kt * kinst + kHi * 8 + 2 * (lane % 4) + kp,
                nt * 8 + lane // 4,
            ]
        if beta == 1.0:
            C_reg = C_f.local(Mt, Nt, 2, 2)
            for mt, nt, rM, rN in T.grid(Mt, Nt, 2, 2):
                C_reg[mt, nt, rM, rN] = C_g[
                    mt * 16 + lane // 4 + 8 * rM, nt * 8 + 2 * (lane % 4) + rN
                ]
        Tx.warp.gemm(D_f, A_f, B_f, C_f, transpose_A=False, transpose_B=False, alpha=1.0, beta=beta)
        D_reg = D_f.local(Mt, Nt, 2, 2)
        for mt, nt, rM, rN in T.grid(Mt, Nt, 2, 2):
            D_g[mt * 16 + lane // 4 + 8 * rM, nt * 8 + 2 * (lane % 4) + rN] = D_reg[mt, nt, rM, rN]

    return gemm, M, N, K


def _build_transpose_numeric(transpose_A, transpose_B, dtype="float16"):
    """End-to-end single-tile ``T.gemm`` for one A/B input orientation.

    The transposed and K-major A fragments share the physical register order
    [kHi, rM, kp]; only their logical buffer axes differ.  B's physical order
    [kHi, kp] is likewise unchanged by orientation.
    """
    Al = A_KM_FRAG if transpose_A else A_FRAG
    Bl = B_NK_FRAG if transpose_B else B_FRAG
    A_shape = (16, 16)
    B_shape = (8, 16) if transpose_B else (16, 8)

    @T.prim_func
    def gemm(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle):
        A_g = T.match_buffer(A_ptr, A_shape, dtype)
        B_g = T.match_buffer(B_ptr, B_shape, dtype)
        D_g = T.match_buffer(D_ptr, (16, 8), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        A_f = T.alloc_buffer(A_shape, dtype, scope="local", layout=Al)
        B_f = T.alloc_buffer(B_shape, dtype, scope="local", layout=Bl)
        D_f = T.alloc_buffer((16, 8), "float32", scope="local", layout=D_FRAG)
        A_reg = A_f.local(2, 2, 2)
        if transpose_A:
            # A_KM_FRAG: buffer is [K, M].
            for kHi, rM, kp in T.grid(2, 2, 2):
                A_reg[kHi, rM, kp] = A_g[2 * (lane % 4) + kp + 8 * kHi, lane // 4 + 8 * rM]
        else:
            # A_FRAG: buffer is [M, K].
            for kHi, rM, kp in T.grid(2, 2, 2):
                A_reg[kHi, rM, kp] = A_g[lane // 4 + 8 * rM, 2 * (lane % 4) + kp + 8 * kHi]
        B_reg = B_f.local(2, 2)
        if transpose_B:
            # B_NK_FRAG buffer is [N, K].
            for kHi, kp in T.grid(2, 2):
                B_reg[kHi, kp] = B_g[lane // 4, 2 * (lane % 4) + kp + 8 * kHi]
        else:
            for kHi, kp in T.grid(2, 2):
                B_reg[kHi, kp] = B_g[2 * (lane % 4) + kp + 8 * kHi, lane // 4]
        Tx.warp.gemm(
            D_f,
            A_f,
            B_f,
            D_f,
            transpose_A=transpose_A,
            transpose_B=transpose_B,
            alpha=1.0,
            beta=0.0,
        )
        D_reg = D_f.local(2, 2)
        for rM, rN in T.grid(2, 2):
            D_g[lane // 4 + 8 * rM, 2 * (lane % 4) + rN] = D_reg[rM, rN]

    return gemm




# ---- corpus cases (txlab) ----
# fmt: on
# Tx.warp.gemm over register fragments: mma.sync m16n8k16 / m16n8k8, f16 and bf16.
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/operator/tile_primitive/cuda/gemm/test_gemm_mma_m16n8k_.py"

import ml_dtypes  # noqa: E402

_NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _tiled_in(Mt, Nt, Kt, kinst, dtype):
    M, N, K = 16 * Mt, 8 * Nt, kinst * Kt

    def inputs(rng):
        A = rng.uniform(-1, 1, (M, K)).astype(np.float32).astype(_NP[dtype])
        B = rng.uniform(-1, 1, (K, N)).astype(np.float32).astype(_NP[dtype])
        C = rng.uniform(-1, 1, (M, N)).astype(np.float32)
        return [A, B, C, np.zeros((M, N), np.float32)]
    return inputs


def _tiled_ref(beta):
    def ref(a):
        A, B, C = (x.astype(np.float64) for x in a[:3])
        return {3: (A @ B + (C if beta == 1.0 else 0.0)).astype(np.float32)}
    return ref


for _Mt, _Nt, _Kt, _ki in [(1, 1, 1, 16), (2, 1, 1, 16), (1, 2, 1, 16), (1, 1, 2, 16), (2, 2, 2, 16),
                           (1, 1, 1, 8), (2, 2, 3, 8)]:
    for _dt, _beta in [("float16", 0.0), ("bfloat16", 1.0)]:
        case(f"gemm_mma_numerical_tiled[{_dt}-{_beta}-{_Mt}-{_Nt}-{_Kt}-{_ki}]",
             f"{UPSTREAM_FILE}::test_cuda_gemm_mma_numerical_tiled[{_Mt}-{_Nt}-{_Kt}-{_ki}-{_dt}-{_beta}]",
             inputs=_tiled_in(_Mt, _Nt, _Kt, _ki, _dt), reference=_tiled_ref(_beta), compare="close:1e-5",
             note="the reference is the exact sum; the tensor core truncates (txlab.emulator.tensorcore): within fp32 ulps")(
            lambda a=(_Mt, _Nt, _Kt, _ki, _beta, _dt): _build_tiled_numeric(*a)[0])


def _tr_in(tA, tB, dtype):
    def inputs(rng):
        A = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
        B = rng.uniform(-1, 1, (16, 8)).astype(np.float32)
        return [np.ascontiguousarray((A.T if tA else A).astype(_NP[dtype])), np.ascontiguousarray((B.T if tB else B).astype(_NP[dtype])),
                np.zeros((16, 8), np.float32)]
    return inputs


def _tr_ref(tA, tB):
    def ref(a):
        A = a[0].astype(np.float64)
        B = a[1].astype(np.float64)
        return {2: ((A.T if tA else A) @ (B.T if tB else B)).astype(np.float32)}
    return ref


for _tA, _tB, _dt in [(False, False, "float16"), (True, False, "float16"), (False, True, "bfloat16"),
                      (True, True, "bfloat16")]:
    case(f"gemm_mma_numerical_transpose[{_tA}-{_tB}-{_dt}]",
         f"{UPSTREAM_FILE}::test_cuda_gemm_mma_numerical_transpose[{_dt}-{_tA}-{_tB}]",
         inputs=_tr_in(_tA, _tB, _dt), reference=_tr_ref(_tA, _tB), compare="close:1e-5")(
        lambda a=(_tA, _tB, _dt): _build_transpose_numeric(*a))
