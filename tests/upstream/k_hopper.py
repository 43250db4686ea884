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
#   tests/python/tirx/codegen/test_codegen_hopper.py
# Lines 17-35, 154-178, 422-471, 605-664, 713-762, 794-858, 891-923, 946-1087 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
#   lines 154-178: upstream `test_ptx_stmatrix` as the builder `_ptx_stmatrix_kernel` (its run part cut; it returns `main`)
#   lines 422-471: upstream `test_cp_async_bulk_tensor_global_to_shared_unicast` as the builder `_unicast_get_ir` (its run part cut; it returns `get_ir`)
#   lines 605-664: upstream `test_cp_async_bulk_tensor_global_to_shared_swizzle` as the builder `_swizzle_get_ir` (its run part cut; it returns `get_ir`)
#   lines 713-762: upstream `test_cp_async_bulk_tensor_global_to_shared_multicast1` as the builder `_multicast1_get_ir` (its run part cut; it returns `get_ir`)
#   lines 794-858: upstream `test_cp_async_bulk_tensor_global_to_shared_multicast2` as the builder `_multicast2_get_ir` (its run part cut; it returns `get_ir`)
#   lines 891-923: upstream `test_cp_async_bulk_tensor_shared_to_global` as the builder `_s2g_get_ir` (its run part cut; it returns `get_ir`)
#   lines 946-1087: upstream `test_wgmma_ss_nt` as the builder `_wgmma_ss_nt_kernel` (its run part cut; it returns `func`)
# fmt: off
# ---- upstream ----
# pylint: disable=missing-function-docstring
import math

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.tirx import BufferAccessKind


def _get_source(func: tvm.tirx.PrimFunc) -> tuple[str, tvm.IRModule]:
    target = tvm.target.Target("cuda")
    mod = tvm.IRModule({"main": func})
    mod = tvm.compile(mod, target=target, tir_pipeline="tirx")
    src = mod.mod.imports[0].inspect_source()
    return src, mod


def _ptx_stmatrix_kernel(trans, num):
    # fmt: off
    @T.prim_func
    def main(A: T.Buffer((16, 16), "float16")):
        T.device_entry()
        cta_id = T.cta_id([1])
        tx = T.thread_id([32])
        A_shared = T.alloc_shared([16, 16], "float16")
        if tx == 0:
            for i, j in T.grid(16, 16):
                A_shared[i, j] = T.float16(0.0)
        T.cuda.cta_sync()
        A_local = T.alloc_local([8], "float16")
        for i in range(8):
            A_local[i] = (i // 2) * 64 + tx * 2 + i % 2
        A_words = A_local.view("uint32")
        T.ptx[f"stmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"](
            A_shared.ptr_to([tx % 16, tx // 16 * 8]),
            *[A_words[i] for i in range(num)],
        )
        T.cuda.cta_sync()
        if tx == 0:
            for i, j in T.grid(16, 16):
                A[i, j] = A_shared[i, j]
        # fmt: on
    return main


def _unicast_get_ir(dtype, inputs):
    import ml_dtypes

    def get_ir(shape, tma_args):
        t_dtype = tvm.DataType(dtype)
        total_bytes = math.prod(shape) * t_dtype.bits // 8
        coord = [0 for _ in shape]
        tma_args_copy = tma_args.copy()
        for i in range(len(shape) - 1):
            tma_args_copy[len(shape) + i] *= t_dtype.bits // 8

        # fmt: off
        @T.prim_func
        def main(A_ptr: T.handle, B_ptr: T.handle):
            A = T.match_buffer(A_ptr, shape, dtype=dtype, align=16)
            B = T.match_buffer(B_ptr, shape, dtype=dtype, align=16)

            A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, dtype, len(shape), A.data, *tma_args_copy)  # noqa: E501
            B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, dtype, len(shape), B.data, *tma_args_copy)  # noqa: E501

            T.device_entry()
            for blockIdx in T.thread_binding(1, thread="blockIdx.x"):
                for threadIdx in T.thread_binding(128, thread="threadIdx.x"):
                    bar = T.shared_scalar("uint64")
                    phase: T.int32
                    A_smem = T.alloc_buffer(shape, dtype, scope="shared", align=128)

                    phase = 0
                    if threadIdx == 0:
                        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes"](A_smem.data, T.address_of(A_map), *coord, T.address_of(bar))  # noqa: E501
                        T.ptx.mbarrier.arrive.expect_tx.shared.b64(
                            T.address_of(bar), T.uint32(total_bytes)
                        )
                    T.cuda.mbarrier_wait(T.address_of(bar), phase)
                    phase = phase ^ 1

                    T.cuda.cta_sync()
                    T.ptx.fence.proxy.async_.shared__cta()

                    if threadIdx == 0:
                        T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.global.shared::cta.tile.bulk_group"](T.address_of(B_map), *coord, A_smem.access_ptr("r", offset=0))  # noqa: E501
                        T.ptx.cp.async_.bulk.commit_group()
                        T.ptx.cp.async_.bulk.wait_group(0)
            # fmt: on

        return main
    return get_ir


def _swizzle_get_ir(swizzle, dtype):
    def get_ir(swizzle, dtype):
        dtype = tvm.DataType(dtype)
        elem_bytes = dtype.bits // 8

        shape = [16, 64]
        tma_args = [16, 64, 16, 16, 64, 1, 1, 0, 0, 0, 0]  # 8x16B, atom for WGMMA
        shape[0] = shape[0] * (1 << swizzle) // elem_bytes
        tma_args[0] = tma_args[0] * (1 << swizzle) // elem_bytes
        tma_args[2] = tma_args[2] * (1 << swizzle)
        tma_args[3] = tma_args[3] * (1 << swizzle) // elem_bytes

        load_args = tma_args.copy()
        load_args[-3] = swizzle
        store_args = tma_args.copy()

        shape = tuple(shape)
        total_elems = math.prod(shape)
        total_bytes = total_elems * elem_bytes
        coord = [0 for _ in shape]

        # fmt: off
        @T.prim_func
        def main(A_ptr: T.handle, B_ptr: T.handle):
            A = T.match_buffer(A_ptr, total_elems, dtype=dtype, align=16)
            B = T.match_buffer(B_ptr, total_elems, dtype=dtype, align=16)

            A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, str(dtype), len(shape), A.data, *load_args)  # noqa: E501
            B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, str(dtype), len(shape), B.data, *store_args)  # noqa: E501

            T.device_entry()
            for blockIdx in T.thread_binding(1, thread="blockIdx.x"):
                for threadIdx in T.thread_binding(128, thread="threadIdx.x"):
                    A_smem = T.alloc_buffer((total_elems,), dtype, scope="shared", align=128)
                    bar = T.shared_scalar("uint64")
                    phase: T.int32

                    phase = 0
                    if threadIdx == 0:
                        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes"](A_smem.data, T.address_of(A_map), *coord, T.address_of(bar))  # noqa: E501
                        T.ptx.mbarrier.arrive.expect_tx.shared.b64(
                            T.address_of(bar), T.uint32(total_bytes)
                        )
                        T.cuda.mbarrier_wait(T.address_of(bar), phase)
                    phase = phase ^ 1

                    T.cuda.cta_sync()
                    T.ptx.fence.proxy.async_.shared__cta()

                    if threadIdx == 0:
                        T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.global.shared::cta.tile.bulk_group"](T.address_of(B_map), *coord, A_smem.access_ptr("r", offset=0))  # noqa: E501
                        T.ptx.cp.async_.bulk.commit_group()
                        T.ptx.cp.async_.bulk.wait_group(0)
            # fmt: on

        return main, shape
    return get_ir


def _multicast1_get_ir(inputs):
    # 1 CTA does the copy, and then multicast to all CTAs in the cluster
    def get_ir(shape, tma_args):
        total_bytes = 4 * math.prod(shape)
        coord = [0 for _ in shape]

        # fmt: off
        @T.prim_func
        def main(A_ptr: T.handle, B_ptr: T.handle):
            A = T.match_buffer(A_ptr, shape, dtype="float32", align=16)
            B = T.match_buffer(B_ptr, shape, dtype="float32", align=16)

            A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float32", len(shape), A.data, *tma_args)  # noqa: E501
            B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float32", len(shape), B.data, *tma_args)  # noqa: E501

            T.device_entry()
            for clusterCtaIdx in T.thread_binding(4, thread="clusterCtaIdx.x"):
                for bx in T.thread_binding(4, thread="blockIdx.x"):
                    for tx in T.thread_binding(128, thread="threadIdx.x"):
                        bar = T.shared_scalar("uint64")
                        phase: T.int32
                        A_smem = T.alloc_buffer(shape[::-1], "float32", scope="shared", align=128)

                        phase = 0
                        if tx == 0:
                                    # leader thread in each CTA
                            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
                            T.ptx.fence.proxy.async_.shared__cta()
                            T.ptx.mbarrier.arrive.expect_tx.shared.b64(
                                T.address_of(bar), T.uint32(total_bytes)
                            )
                            if clusterCtaIdx == 0:
                                        # only the first CTA in the cluster does the copy, and then multicast  # noqa: E501
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"](A_smem.data, T.address_of(A_map), *coord, T.address_of(bar), int("1111", 2))  # noqa: E501
                                # wait for the copy to finish
                        T.cuda.mbarrier_wait(T.address_of(bar), phase)
                        phase = phase ^ 1
                        T.cuda.cta_sync()
                        T.ptx.fence.proxy.async_.shared__cta()

                        if bx == 2:
                            if tx == 0:
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.global.shared::cta.tile.bulk_group"](T.address_of(B_map), *coord, A_smem.access_ptr("r", offset=0))  # noqa: E501
                                T.ptx.cp.async_.bulk.commit_group()
                                T.ptx.cp.async_.bulk.wait_group(0)
            # fmt: on

        return main
    return get_ir


def _multicast2_get_ir(inputs):
    # 4 CTAs in the cluster do the copy of separate chunks, and then multicast to all CTAs in the cluster  # noqa: E501
    def get_ir(shape, tma_args):
        assert shape[0] % 4 == 0
        total_bytes = 4 * math.prod(shape)
        coord0 = [0 for _ in shape]
        coord1 = [0 for _ in shape[:-1]] + [shape[-1] // 4]
        coord2 = [0 for _ in shape[:-1]] + [shape[-1] // 2]
        coord3 = [0 for _ in shape[:-1]] + [3 * shape[-1] // 4]

        tma_store_args = tma_args.copy()
        tma_store_args[3 * len(shape) - 2] = shape[-1]

        # fmt: off
        @T.prim_func
        def main(A_ptr: T.handle, B_ptr: T.handle):
            A = T.match_buffer(A_ptr, shape, dtype="float32", align=16)
            B = T.match_buffer(B_ptr, shape, dtype="float32", align=16)

            A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float32", len(shape), A.data, *tma_args)  # noqa: E501
            B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float32", len(shape), B.data, *tma_store_args)  # noqa: E501

            T.device_entry()
            for clusterCtaIdx in T.thread_binding(4, thread="clusterCtaIdx.x"):
                for bx in T.thread_binding(4, thread="blockIdx.x"):
                    for tx in T.thread_binding(128, thread="threadIdx.x"):
                        bar = T.shared_scalar("uint64")
                        phase: T.int32
                        A_smem = T.alloc_buffer(shape[::-1], "float32", scope="shared", align=128)

                        phase = 0
                        if tx == 0:
                                    # leader thread in each CTA
                            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
                            T.ptx.fence.proxy.async_.shared__cta()
                            T.ptx.mbarrier.arrive.expect_tx.shared.b64(
                                T.address_of(bar), T.uint32(total_bytes)
                            )
                            if clusterCtaIdx == 0:
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"](A_smem.access_ptr(BufferAccessKind.WRITE, offset=A_smem.elem_offset_of(coord0[::-1])),  # noqa: E501
                                                               T.address_of(A_map), *coord0, T.address_of(bar), int("1111", 2))  # noqa: E501
                            if clusterCtaIdx == 1:
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"](A_smem.access_ptr(BufferAccessKind.WRITE, offset=A_smem.elem_offset_of(coord1[::-1])),  # noqa: E501
                                                               T.address_of(A_map), *coord1, T.address_of(bar), int("1111", 2))  # noqa: E501
                            if clusterCtaIdx == 2:
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"](A_smem.access_ptr(BufferAccessKind.WRITE, offset=A_smem.elem_offset_of(coord2[::-1])),  # noqa: E501
                                                               T.address_of(A_map), *coord2, T.address_of(bar), int("1111", 2))  # noqa: E501
                            if clusterCtaIdx == 3:
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"](A_smem.access_ptr(BufferAccessKind.WRITE, offset=A_smem.elem_offset_of(coord3[::-1])),  # noqa: E501
                                                               T.address_of(A_map), *coord3, T.address_of(bar), int("1111", 2))  # noqa: E501
                                # wait for the copy to finish
                        T.cuda.mbarrier_wait(T.address_of(bar), phase)
                        phase = phase ^ 1
                        T.cuda.cta_sync()

                        if bx == 1:
                            if tx == 0:
                                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.global.shared::cta.tile.bulk_group"](T.address_of(B_map), *coord0, A_smem.access_ptr("r", offset=0))  # noqa: E501
                                T.ptx.cp.async_.bulk.commit_group()
                                T.ptx.cp.async_.bulk.wait_group(0)
            # fmt: on

        return main
    return get_ir


def _s2g_get_ir(inputs):
    def get_ir(shape, tma_args):
        assert shape[0] % 4 == 0
        elems = math.prod(shape)
        coord = [0 for _ in shape]

        # fmt: off
        @T.prim_func
        def main(A_ptr: T.handle):
            A = T.match_buffer(A_ptr, shape, dtype="float32", align=16)

            A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float32", len(shape), A.data, *tma_args)  # noqa: E501

            T.device_entry()
            cta_id = T.cta_id([1])
            tx = T.thread_id([128])

            A_smem = T.alloc_buffer(elems, "float32", scope="shared", align=128)

            if tx == 0:
                for i in T.serial(0, elems):
                    A_smem[i] = i
            T.ptx.fence.proxy.async_.shared__cta()
            T.cuda.cta_sync()

            if tx == 0:
                T.ptx[f"cp.async.bulk.tensor.{len(shape)}d.global.shared::cta.tile.bulk_group"](T.address_of(A_map), *coord, A_smem.access_ptr("r", offset=0))  # noqa: E501
                T.ptx.cp.async_.bulk.commit_group()
                T.ptx.cp.async_.bulk.wait_group(0)
            # fmt: on

        return main
    return get_ir


def _wgmma_ss_nt_kernel():
    def get_ir(
        shapeA,
        shapeB,
        shapeC,
        A_tma_args,
        B_tma_args,
        in_dtype,
        out_dtype,
        A_encode_args,
        B_encode_args,
    ):
        coordA = [0 for _ in shapeA]
        coordB = [0 for _ in shapeB]
        A_bytes = tvm.DataType(in_dtype).bits // 8 * math.prod(shapeA)
        B_bytes = tvm.DataType(in_dtype).bits // 8 * math.prod(shapeB)

        C_elems = math.prod(shapeC) // 128

        M, K = shapeA if not transA else shapeA[::-1]
        N, _ = shapeB if not transB else shapeB[::-1]

        def get_init_value(dtype):
            if dtype == "float32":
                return T.float32(0.0)
            assert False, f"Unsupported dtype {dtype}"

        def get_accum_list(C, C_elems):
            return [C[i] for i in range(C_elems)]

        ptx_ab = {"float16": "f16", "bfloat16": "bf16"}[in_dtype]
        ptx_d = {"float32": "f32", "float16": "f16"}[out_dtype]
        mma_chain = f"wgmma.mma_async.sync.aligned.m{M}n{N}k{K}.{ptx_d}.{ptx_ab}.{ptx_ab}"

        # fmt: off
        @T.prim_func
        def main(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
            A = T.match_buffer(A_ptr, shapeA, dtype=in_dtype, align=16)
            B = T.match_buffer(B_ptr, shapeB, dtype=in_dtype, align=16)
            C = T.match_buffer(C_ptr, shapeC, dtype=out_dtype, align=16)

            A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, in_dtype, len(shapeA), A.data, *A_tma_args)  # noqa: E501
            B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
            T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, in_dtype, len(shapeB), B.data, *B_tma_args)  # noqa: E501

            T.device_entry()
            cta_id = T.cta_id([1])
            tx = T.thread_id([128]) # A warpgroup is 128 threads

            A_smem = T.alloc_buffer(shapeA, in_dtype, scope="shared", align=1024)
            B_smem = T.alloc_buffer(shapeB, in_dtype, scope="shared", align=1024)
            bar = T.shared_scalar("uint64")
            phase: T.int32

            descA: T.uint64
            descB: T.uint64
            C_local = T.alloc_buffer((C_elems,), out_dtype, scope="local")

                    # init phase and bar
            phase = 0
            if tx == 0:
                T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
            T.ptx.fence.proxy.async_.shared__cta()
            T.cuda.cta_sync()
                    # load A and B to smem
            if tx == 0:
                T.ptx[f"cp.async.bulk.tensor.{len(shapeA)}d.shared::cluster.global.mbarrier::complete_tx::bytes"](A_smem.data, T.address_of(A_map), *coordA, T.address_of(bar))  # noqa: E501
                T.ptx[f"cp.async.bulk.tensor.{len(shapeB)}d.shared::cluster.global.mbarrier::complete_tx::bytes"](B_smem.data, T.address_of(B_map), *coordB, T.address_of(bar))  # noqa: E501
                T.ptx.mbarrier.arrive.expect_tx.shared.b64(
                    T.address_of(bar), T.uint32(A_bytes + B_bytes)
                )
            T.cuda.mbarrier_wait(T.address_of(bar), phase)
            phase = phase ^ 1
            T.cuda.cta_sync()

                    # init C_local
            for i in T.serial(0, C_elems):
                C_local[i] = T.Cast(out_dtype, get_init_value(out_dtype))
                T.cuda.wgmma.noop_barrier(C_local[i])

                    # do wgmma
            T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descA), A_smem.data, *A_encode_args)  # noqa: F821
            T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), B_smem.data, *B_encode_args)  # noqa: F821
            T.ptx.wgmma.fence.sync.aligned()
            T.ptx[mma_chain](*get_accum_list(C_local, C_elems), descA, descB,  # noqa: F821
                              0, 1, 1, int(transA), int(transB))
            T.ptx.wgmma.commit_group.sync.aligned()
            T.ptx.wgmma.wait_group.sync.aligned(0)

            for i in T.serial(0, C_elems):
                T.cuda.wgmma.noop_barrier(C_local[i])

                    # store C_local to C
            for i in T.serial(0, C_elems // 4):
                row = T.meta_var((tx % 32) // 4 + (tx // 32) * 16)
                col = T.meta_var(i * 8 + tx % 4 * 2)
                C[row, col] = C_local[i * 4]
                C[row, col + 1] = C_local[i * 4 + 1]
                C[row + 8, col] = C_local[i * 4 + 2]
                C[row + 8, col + 1] = C_local[i * 4 + 3]
            # fmt: on

        return main

    in_dtype = "float16"
    out_dtype = "float32"
    transA = transB = True
    swizzleA = swizzleB = 3

    t_in_dtype = tvm.DataType(in_dtype)
    elem_bytes = t_in_dtype.bits // 8

    target = tvm.target.Target("cuda")
    M = 64
    N = 64
    K = 256 // t_in_dtype.bits
    shapeA = (M, K) if not transA else (K, M)
    shapeB = (N, K) if not transB else (K, N)
    shapeC = (M, N)

    # A tma args
    A_outer, A_inner = shapeA
    A_tma_args = [A_inner, A_outer, A_inner * elem_bytes, A_inner, A_outer, 1, 1, 0, swizzleA, 0, 0]
    # B tma args
    B_outer, B_inner = shapeB
    B_tma_args = [B_inner, B_outer, B_inner * elem_bytes, B_inner, B_outer, 1, 1, 0, swizzleB, 0, 0]
    # A encode args
    A_encode_args = [1, 64, swizzleA]
    B_encode_args = [1, 64, swizzleB]

    func = get_ir(
        shapeA,
        shapeB,
        shapeC,
        A_tma_args,
        B_tma_args,
        in_dtype,
        out_dtype,
        A_encode_args,
        B_encode_args,
    )
    return func




# ---- corpus cases (txlab) ----
# fmt: on
# Hopper kernels: stmatrix, TMA (unicast, swizzled, multicast, store), wgmma.
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/codegen/test_codegen_hopper.py"

import ml_dtypes  # noqa: E402


def _stmatrix_ref(trans, num):
    def ref(a):
        A_ref = np.zeros((16, 16), dtype="float16")
        A_full = np.zeros((16, 16), dtype="float16")
        A_full[0:8, 0:8] = np.arange(8 * 8, dtype="float16").reshape((8, 8))
        A_full[8:16, 0:8] = np.arange(8 * 8, 16 * 8, dtype="float16").reshape((8, 8))
        A_full[0:8, 8:16] = np.arange(16 * 8, 24 * 8, dtype="float16").reshape((8, 8))
        A_full[8:16, 8:16] = np.arange(24 * 8, 32 * 8, dtype="float16").reshape((8, 8))
        t = (lambda m: m.T) if trans else (lambda m: m)
        A_ref[0:8, 0:8] = t(A_full[0:8, 0:8])
        if num >= 2:
            A_ref[8:16, 0:8] = t(A_full[8:16, 0:8])
        if num == 4:
            A_ref[0:8, 8:16] = t(A_full[0:8, 8:16])
            A_ref[8:16, 8:16] = t(A_full[8:16, 8:16])
        return {0: A_ref}
    return ref


for _trans in (False, True):
    for _num in (1, 2, 4):
        case(f"ptx_stmatrix[{'trans' if _trans else 'notrans'}-x{_num}]",
             f"{UPSTREAM_FILE}::test_ptx_stmatrix[{_num}-{_trans}]",
             inputs=lambda rng: [np.zeros((16, 16), np.float16)], reference=_stmatrix_ref(_trans, _num))(
            lambda a=(_trans, _num): _ptx_stmatrix_kernel(*a))

_NPD = {"float16": np.float16, "float32": np.float32, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
        "float8_e5m2": ml_dtypes.float8_e5m2, "uint8": np.uint8}


def _arange_in(shape, dtype, out_zero=True):
    def inputs(rng):
        n = int(np.prod(shape))
        a = (np.arange(n) % 200 if dtype.startswith("float8") or dtype == "uint8" else np.arange(n))
        a = a.astype(np.float32).astype(_NPD[dtype]).reshape(shape)
        return [a, np.zeros(shape, _NPD[dtype])]
    return inputs


for _dt, _inp in [("float16", ((128,), [128, 128, 1, 0, 0, 0, 0])),
                  ("float32", ((16, 16), [16, 16, 16, 16, 16, 1, 1, 0, 0, 0, 0])),
                  ("float8_e4m3fn", ((16, 64), [64, 16, 64, 64, 16, 1, 1, 0, 0, 0, 0]))]:
    case(f"tma_unicast[{_dt}-{'x'.join(map(str, _inp[0]))}]",
         f"{UPSTREAM_FILE}::test_cp_async_bulk_tensor_global_to_shared_unicast[inputs-{_dt}]",
         inputs=_arange_in(_inp[0], _dt), reference=lambda a: {1: a[0]})(
        lambda a=(_dt, _inp): _unicast_get_ir(a[0], a[1])(*a[1]))


def _swizzle_in(swizzle, dtype):
    def inputs(rng):
        _, shape = _swizzle_get_ir(swizzle, dtype)(swizzle, dtype)
        n = int(np.prod(shape))
        return [np.arange(n).astype(dtype), np.zeros((n,), dtype)]
    return inputs


def _swizzle_ref(swizzle, dtype):
    import tvm

    def ref(a):
        n = a[0].size
        dt = tvm.DataType(dtype)
        layout = T.ComposeLayout(
            int(math.log2(128 // dt.bits)), swizzle, 3,
            T.TileLayout(T.S[(1 << (int(math.log2(128 // dt.bits)) + swizzle + 3),)]))
        # B[layout(i)] == A[i] (the upstream check), so B is A scattered through the swizzle
        want = np.zeros_like(a[0])
        idx = np.array([int(layout.apply(i)["m"]) for i in range(n)])
        want[idx] = a[0]
        return {1: want}
    return ref


for _swz, _dt in [(1, "float16"), (3, "float32"), (2, "uint8")]:
    case(f"tma_swizzle[{_swz}-{_dt}]", f"{UPSTREAM_FILE}::test_cp_async_bulk_tensor_global_to_shared_swizzle[{_dt}-{_swz}]",
         inputs=_swizzle_in(_swz, _dt), reference=_swizzle_ref(_swz, _dt))(
        lambda a=(_swz, _dt): _swizzle_get_ir(*a)(*a)[0])


_MC1 = ((16, 16), [16, 16, 64, 16, 16, 1, 1, 0, 0, 0, 0])
case("tma_multicast1[16x16]", f"{UPSTREAM_FILE}::test_cp_async_bulk_tensor_global_to_shared_multicast1[inputs1]",
     inputs=_arange_in(_MC1[0], "float32"), reference=lambda a: {},
     expect="finding:deadlock",
     note="upstream bug: rank 0 multicasts into its peers' mbarriers with no cluster barrier after their "
          "mbarrier.init, so a peer's init may wipe the bytes already counted (a hang on the GPU); the "
          "emulator reports it at the multicast's line")(lambda: _multicast1_get_ir(_MC1)(*_MC1))
_MC2 = ((16, 16), [16, 16, 64, 16, 4, 1, 1, 0, 0, 0, 0])
case("tma_multicast2[16x16]", f"{UPSTREAM_FILE}::test_cp_async_bulk_tensor_global_to_shared_multicast2[inputs1]",
     inputs=_arange_in(_MC2[0], "float32"), reference=lambda a: {},
     expect="finding:deadlock",
     note="upstream bug: the same missing cluster barrier between the peers' mbarrier.init and the four "
          "CTAs' multicasts")(lambda: _multicast2_get_ir(_MC2)(*_MC2))

for _inp in [((128,), [128, 128, 1, 0, 0, 0, 0]), ((16, 16), [16, 16, 64, 16, 16, 1, 1, 0, 0, 0, 0])]:
    case(f"tma_shared_to_global[{'x'.join(map(str, _inp[0]))}]",
         f"{UPSTREAM_FILE}::test_cp_async_bulk_tensor_shared_to_global[inputs]",
         inputs=lambda rng, s=_inp[0]: [np.zeros(s, np.float32)],
         reference=lambda a: {0: np.arange(a[0].size, dtype=np.float32).reshape(a[0].shape)})(
        lambda a=_inp: _s2g_get_ir(a)(*a))


def _wgmma_in(rng):
    # the upstream test's shapes: transA = transB = True, K = 16 -> A is (K, M), B is (K, N)
    return [rng.standard_normal((16, 64)).astype("float16"), rng.standard_normal((16, 64)).astype("float16"),
            np.zeros((64, 64), np.float32)]


case("wgmma_ss_nt", f"{UPSTREAM_FILE}::test_wgmma_ss_nt", inputs=_wgmma_in,
     reference=lambda a: {2: (a[0].astype(np.float64).T @ a[1].astype(np.float64)).astype(np.float32)},
     compare="close:1e-5", note="the reference is the exact sum; wgmma truncates (txlab.emulator.tensorcore): within fp32 ulps")(
    _wgmma_ss_nt_kernel)
