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
#   tests/python/tirx/operator/tile_primitive/cuda/gemm_async/test_gemm_async.py
# The listed lines of that file are kept below the marker, verbatim except that a TMEM buffer's
# `allocated_addr=tmem_addr[0]` reads `allocated_addr=0`: the installed apache-tvm 0.27 takes the
# buffer's column offset there and finds the allocation itself (the address form does not lower on
# it). The cases after the second marker are ours: each names the upstream test (and
# parametrisation) its kernel comes from, with inputs and a numpy reference.
#   lines 17-17: verbatim
#   lines 18-53: verbatim (imports)
#   lines 60-64: verbatim (`_mapa`)
#   lines 67-71: verbatim (`next_power_of_2`)
#   lines 125-142: verbatim (`cta_split_dim`, `get_shape_per_cta`, `get_global_region`)
#   lines 208-297: upstream `test_gemm_tcgen05_cta_group_1` as the builder `_gemm_tcgen05_cta_group_1_kernel` (its decorators and compile-and-run part cut; it returns `gemm_async`)
#   lines 461-567: upstream `test_gemm_tcgen05_cta_group_2` as the builder `_gemm_tcgen05_cta_group_2_kernel` (its decorators and compile-and-run part cut; it returns `gemm_async`)
# fmt: off
# ---- upstream ----
# pylint: disable=missing-function-docstring


import copy
import functools
import operator
import re

import numpy as np
import pytest

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

import tvm
import tvm.testing
from tvm.ir.type import PointerType, PrimType
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.testing import env
from tvm.tirx.cuda.tile_primitive.gemm_async import sf_tmem_layout
from tvm.tirx.cuda.tile_primitive.tma_utils import (
    SwizzleMode,
    mma_atom_layout,
    mma_atom_shape,
    mma_shared_layout,
)
from tvm.tirx.layout import (
    R,
    S,
    TCol,
    TileLayout,
    TLane,
    tcgen05_atom_layout,
    tmem_datapath_layout,
)
from tvm.tirx.layout import tid_in_wg as axis_tid_in_wg


def _mapa(ptr, rank):
    """`mapa.u64` into a declared register, returned as a value."""
    mapped = T.alloc_local([1], "uint64")
    T.evaluate(T.ptx.mapa.u64(mapped[0], ptr, T.uint32(rank)))
    return mapped[0]


def next_power_of_2(x):
    """Return the smallest power of 2 greater than or equal to x."""
    if x <= 1:
        return 1
    return 1 << (x - 1).bit_length()


def cta_split_dim(trans):
    """Return the axis index that is split across CTAs in a cta_group=2 setup."""
    return -1 if trans else -2


def get_shape_per_cta(shape, trans):
    """Halve the split dimension for per-CTA shapes (cta_group=2)."""
    shape_per_cta = copy.deepcopy(list(shape))
    shape_per_cta[cta_split_dim(trans)] //= 2
    return shape_per_cta


def get_global_region(shape, trans, cbx):
    """Return the global memory region for CTA *cbx* (cta_group=2)."""
    r = list(slice(0, shape[i]) for i in range(len(shape)))
    d = cta_split_dim(trans)
    r[d] = slice(cbx * shape[d], (cbx + 1) * shape[d])
    return r


def _gemm_tcgen05_cta_group_1_kernel(task):
    (
        (C_shape, C_dtype, C_region),
        (A_shape, A_dtype, A_region, A_swizzle_mode),
        (B_shape, B_dtype, B_region, B_swizzle_mode),
        transA,
        transB,
    ) = task
    width = C_region[1][1] - C_region[1][0]
    assert C_shape[0] == 128
    assert C_region[0] == (0, 128)
    assert len(C_shape) == 2
    A_elem_bytes = tvm.runtime.DataType(A_dtype).bits // 8
    B_elem_bytes = tvm.runtime.DataType(B_dtype).bits // 8
    C_elem_bytes = tvm.runtime.DataType(C_dtype).bits // 8
    C_elem_32b = 4 // C_elem_bytes
    cols_alloc = max(32, next_power_of_2(C_shape[1] // C_elem_32b))
    A_layout = mma_shared_layout(A_dtype, A_swizzle_mode, A_shape)
    B_layout = mma_shared_layout(B_dtype, B_swizzle_mode, B_shape)

    r_gmem_A = list(slice(0, A_shape[i]) for i in range(len(A_shape)))
    r_gmem_B = list(slice(0, B_shape[i]) for i in range(len(B_shape)))
    total_bytes = (
        functools.reduce(operator.mul, A_shape, 1) * A_elem_bytes
        + functools.reduce(operator.mul, B_shape, 1) * B_elem_bytes
    )

    r_tmem_C = list(slice(C_region[i][0], C_region[i][1]) for i in range(len(C_shape)))
    r_smem_A = list(slice(A_region[i][0], A_region[i][1]) for i in range(len(A_shape)))
    r_smem_B = list(slice(B_region[i][0], B_region[i][1]) for i in range(len(B_shape)))

    # fmt: off
    @T.prim_func
    def gemm_async(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, A_shape, A_dtype)
        B = T.match_buffer(B_ptr, B_shape, B_dtype)
        C = T.match_buffer(C_ptr, C_shape, C_dtype)

        T.device_entry()
        warp_id = T.warp_id([(1) * 4])
        cta_id = T.cta_id([1])
        wg_id = T.warpgroup_id([1])
        tid_in_wg = T.thread_id_in_wg([128])

        A_smem = T.alloc_buffer(A_shape, A_dtype, scope="shared", layout=A_layout)
        B_smem = T.alloc_buffer(B_shape, B_dtype, scope="shared", layout=B_layout)
        tmem_addr = T.alloc_shared([1], "uint32")
        tma_mbar = T.alloc_shared([1], "uint64")
        mma_mbar = T.alloc_shared([1], "uint64")

        if tid_in_wg == 0:
            T.ptx.mbarrier.init.shared.b64(tma_mbar.ptr_to([0]), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(mma_mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()

        if warp_id == 0:
            T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(
                T.address_of(tmem_addr), T.uint32(cols_alloc)
            )
        T.cuda.cta_sync()
        tmem = T.decl_buffer((128, C_shape[1]), C_dtype, scope="tmem", allocated_addr=0, layout=TileLayout(S[(128, C_shape[1]) : (1 @ TLane, 1 @ TCol)]))  # noqa: E501

        if tid_in_wg == 0:
            tma_args = T.meta_var({"dispatch": "tma_auto", "mbar": tma_mbar.ptr_to([0])})
            Tx.copy_async(A_smem[tuple(r_gmem_A)], A[tuple(r_gmem_A)], **tma_args)
            Tx.copy_async(B_smem[tuple(r_gmem_B)], B[tuple(r_gmem_B)], **tma_args)
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(tma_mbar.ptr_to([0]), T.uint32(total_bytes))
        T.cuda.mbarrier_wait(tma_mbar.ptr_to([0]), 0)
        T.cuda.cta_sync()

        if tid_in_wg == 0:
            Tx.gemm_async(tmem[tuple(r_tmem_C)], A_smem[tuple(r_smem_A)], B_smem[tuple(r_smem_B)], dispatch="tcgen05", mma_m=128, mma_n=64)  # noqa: E501
            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(mma_mbar.ptr_to([0]))
        T.cuda.mbarrier_wait(mma_mbar.ptr_to([0]), 0)
        T.cuda.cta_sync()

        T.ptx.tcgen05.fence__after_thread_sync()
        C_reg = T.alloc_local(width, dtype=C_dtype)
        C_view = C_reg.view(128, width, layout=TileLayout(S[(128, width) : (1@axis_tid_in_wg, 1)]))
        if wg_id == 0:
            Tx.wg.copy_async(C_view[:, :], tmem[tuple(r_tmem_C)])
            T.ptx.tcgen05.wait__ld.sync.aligned()
        T.cuda.cta_sync()
        Tx.copy(C[tid_in_wg, C_region[1][0]:C_region[1][1]], C_reg[:])

        if warp_id == 0:
            T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
            T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(tmem_addr[0], T.uint32(cols_alloc))
        # fmt: on
    return gemm_async


def _gemm_tcgen05_cta_group_2_kernel(task):
    (
        (C_shape, C_dtype, C_region),
        (A_shape, A_dtype, A_region, A_swizzle_mode),
        (B_shape, B_dtype, B_region, B_swizzle_mode),
        transA,
        transB,
    ) = task
    width = C_region[1][1] - C_region[1][0]
    assert C_shape[0] == 256
    assert C_region[0] == (0, 128)
    assert len(C_shape) == 2
    A_elem_bytes = tvm.runtime.DataType(A_dtype).bits // 8
    B_elem_bytes = tvm.runtime.DataType(B_dtype).bits // 8
    C_elem_bytes = tvm.runtime.DataType(C_dtype).bits // 8
    C_elem_32b = 4 // C_elem_bytes
    cols_alloc = max(32, next_power_of_2(C_shape[1] // C_elem_32b))

    A_shape_per_cta = get_shape_per_cta(A_shape, transA)
    B_shape_per_cta = get_shape_per_cta(B_shape, transB)
    A_layout = mma_shared_layout(A_dtype, A_swizzle_mode, A_shape_per_cta)
    B_layout = mma_shared_layout(B_dtype, B_swizzle_mode, B_shape_per_cta)

    r_smem_A_in = list(slice(0, A_shape_per_cta[i]) for i in range(len(A_shape_per_cta)))
    r_smem_B_in = list(slice(0, B_shape_per_cta[i]) for i in range(len(B_shape_per_cta)))
    total_bytes = (
        functools.reduce(operator.mul, A_shape, 1) * A_elem_bytes
        + functools.reduce(operator.mul, B_shape, 1) * B_elem_bytes
    )

    r_tmem_C = list(slice(C_region[i][0], C_region[i][1]) for i in range(len(C_shape)))
    r_smem_A = list(slice(A_region[i][0], A_region[i][1]) for i in range(len(A_shape)))
    r_smem_B = list(slice(B_region[i][0], B_region[i][1]) for i in range(len(B_shape)))

    # fmt: off
    @T.prim_func
    def gemm_async(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, A_shape, A_dtype)
        B = T.match_buffer(B_ptr, B_shape, B_dtype)
        C = T.match_buffer(C_ptr, C_shape, C_dtype)

        T.device_entry()
        warp_id = T.warp_id([(1) * 4])
        cbx, cby = T.cta_id_in_cluster([2, 1])
        cta_id = T.cta_id([2])
        wg_id = T.warpgroup_id([1])
        tid_in_wg = T.thread_id_in_wg([128])

        A_smem = T.alloc_buffer(A_shape_per_cta, A_dtype, scope="shared", layout=A_layout)
        B_smem = T.alloc_buffer(B_shape_per_cta, B_dtype, scope="shared", layout=B_layout)
        tmem_addr = T.alloc_shared([1], "uint32")
        tma_mbar = T.alloc_shared([1], "uint64")
        mma_mbar = T.alloc_shared([1], "uint64")

        ptr: T.let[T.Var(name="ptr", ty=PointerType(PrimType("uint64"), "shared"))] = T.reinterpret(PointerType(PrimType("uint64"), "shared"), _mapa(tma_mbar.ptr_to([0]), 0))  # noqa: E501
        tma_mbar_cta_0 = T.decl_buffer([1], "uint64", data=ptr, scope="shared")

        if tid_in_wg == 0:
            T.ptx.mbarrier.init.shared.b64(tma_mbar.ptr_to([0]), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(mma_mbar.ptr_to([0]), T.uint32(1))

        if warp_id == 0:
            T.ptx.tcgen05.alloc.cta_group__2.sync.aligned.shared__cta.b32(
                T.address_of(tmem_addr), T.uint32(cols_alloc)
            )
        tmem = T.decl_buffer((128, C_shape[1]), C_dtype, scope="tmem", allocated_addr=0, layout=TileLayout(S[(128, C_shape[1]) : (1 @ TLane, 1 @ TCol)]))  # noqa: E501
        T.ptx.fence.mbarrier_init.release.cluster()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        T.cuda.cluster_sync()

        tma_args = T.meta_var({"dispatch": "tma_auto", "mbar": tma_mbar_cta_0.ptr_to([0]), "cta_group": 2})  # noqa: E501
        if tid_in_wg == 0:
            Tx.copy_async(A_smem[tuple(r_smem_A_in)], A[tuple(get_global_region(A_shape_per_cta, transA, cbx))], **tma_args)  # noqa: E501
            Tx.copy_async(B_smem[tuple(r_smem_B_in)], B[tuple(get_global_region(B_shape_per_cta, transB, cbx))], **tma_args)  # noqa: E501
            if cbx == 0:
                T.ptx.mbarrier.arrive.expect_tx.shared.b64(
                    tma_mbar.ptr_to([0]), T.uint32(total_bytes)
                )

        if cbx == 0:
            T.cuda.mbarrier_wait(tma_mbar.ptr_to([0]), 0)
            T.ptx.tcgen05.fence__after_thread_sync()
            T.cuda.cta_sync()
            if tid_in_wg == 0:
                Tx.gemm_async(tmem[tuple(r_tmem_C)], A_smem[tuple(r_smem_A)], B_smem[tuple(r_smem_B)], dispatch="tcgen05", cta_group=2, mma_m=256, mma_n=128)  # noqa: E501
                T.ptx[
                    "tcgen05.commit.cta_group::2.mbarrier::arrive::one"
                    ".shared::cluster.multicast::cluster.b64"
                ](mma_mbar.ptr_to([0]), T.uint16(3)) # signal cta 1's mbarrier
        T.cuda.mbarrier_wait(mma_mbar.ptr_to([0]), 0) # both cta 0 and cta 1 have done mma
        T.ptx.tcgen05.fence__after_thread_sync()
        T.cuda.cta_sync()

        C_reg = T.alloc_local(width , dtype=C_dtype)
        C_view = C_reg.view(128, width, layout=TileLayout(S[(128, width) : (1@axis_tid_in_wg, 1)]))
        if wg_id == 0:
            Tx.wg.copy_async(C_view[:, :], tmem[C_region[0][0]:C_region[0][1], C_region[1][0]:C_region[1][0] + width])  # noqa: E501
            T.ptx.tcgen05.wait__ld.sync.aligned()
        T.cuda.cta_sync()
        Tx.copy(C[cbx * 128 +tid_in_wg, C_region[1][0]:C_region[1][0] + width], C_reg[:])
        T.cuda.cta_sync()

        if warp_id == 0:
            T.ptx.tcgen05.relinquish_alloc_permit.cta_group__2.sync.aligned()
            T.ptx.tcgen05.dealloc.cta_group__2.sync.aligned.b32(tmem_addr[0], T.uint32(cols_alloc))
        # fmt: on
    return gemm_async

# ---- corpus cases (txlab) ----
# fmt: on
# Blackwell Tx.gemm_async (dispatch="tcgen05"): TMA loads of 3-stage operand buffers, one f16 MMA tile
# into a TMEM column window, read back through Tx.wg.copy_async; cta_group 1, and 2 over a CTA pair.
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/operator/tile_primitive/cuda/gemm_async/test_gemm_async.py"

# upstream's parametrisations (C, A, B, transA, transB)
_TASK_1 = (((128, 512), "float32", [(0, 128), (256, 384)]), ((3, 128, 64), "float16", [(1, 2), (0, 128), (0, 64)], 3),
           ((3, 128, 64), "float16", [(2, 3), (0, 128), (0, 64)], 3), False, False)
_TASK_2 = (((256, 512), "float32", [(0, 128), (128, 256)]), ((3, 256, 64), "float16", [(1, 2), (0, 128), (0, 64)], 3),
           ((3, 128, 64), "float16", [(2, 3), (0, 64), (0, 64)], 3), False, False)


def _gemm_in(task):
    (c_shape, _, _), (a_shape, a_dt, _, _), (b_shape, b_dt, _, _), _, _ = task
    return lambda rng: [rng.standard_normal(a_shape).astype(a_dt), rng.standard_normal(b_shape).astype(b_dt),
                        np.zeros(c_shape, np.float32)]


def _gemm_ref(cols, stage_a, stage_b):
    def ref(a):
        c = np.zeros_like(a[2])
        c[:, cols[0]:cols[1]] = a[0][stage_a].astype(np.float64) @ a[1][stage_b].astype(np.float64).T
        return {2: c}
    return ref


case("gemm_tcgen05_cta_group_1[task0]", f"{UPSTREAM_FILE}::test_gemm_tcgen05_cta_group_1[task0]",
     inputs=_gemm_in(_TASK_1), reference=_gemm_ref((256, 384), 1, 2), compare="close:1e-5", arch="sm_100a",
     note="A stage 1 (128 x 64) times B stage 2 into TMEM columns 256..383; tcgen05.mma accumulation order is not "
          "specified: within fp32 ulps of exact")(lambda: _gemm_tcgen05_cta_group_1_kernel(_TASK_1))
case("gemm_tcgen05_cta_group_2[task0]", f"{UPSTREAM_FILE}::test_gemm_tcgen05_cta_group_2[task0]",
     inputs=_gemm_in(_TASK_2), reference=_gemm_ref((128, 256), 1, 2), compare="close:1e-5", arch="sm_100a",
     note="cta_group::2, M=256 N=128: each CTA loads half of A and of B (TMA counted on the leader's mbarrier), "
          "the even CTA issues and multicasts the commit; each CTA reads its 128 rows")(
    lambda: _gemm_tcgen05_cta_group_2_kernel(_TASK_2))
