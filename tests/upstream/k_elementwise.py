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
#   tests/python/tirx/operator/tile_primitive/cuda/elementwise/test_binary.py
# Lines 17-27, 76-183 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
#   lines 76-183: upstream `test_binary_op_shared` as the builder `_binary_op_shared` (its run part cut; it returns `get_ref`)
# fmt: off
# ---- upstream ----
import re

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout, tcgen05_atom_layout, wg_local_layout


def _binary_op_shared(input, op_type, operands_type, dtype):  # noqa: A002 - upstream's own signature, kept verbatim
    # skip test
    if op_type in ["sub", "fdiv"] and operands_type == "const_region":
        return

    g_shape, st_a, st_b, st_res, ext_a, ext_b, ext_res, thread_cnt, device_id = input
    g_layout = s_layout = TileLayout(S[g_shape])

    copy_slice = list(slice(None) for i in range(len(g_shape)))
    map_slice_a = list(slice(st_a[i], st_a[i] + ext_a[i]) for i in range(len(g_shape)))
    map_slice_b = list(slice(st_b[i], st_b[i] + ext_b[i]) for i in range(len(g_shape)))
    map_slice_res = list(slice(st_res[i], st_res[i] + ext_res[i]) for i in range(len(g_shape)))

    const = T.float16(3.0) if dtype == "float16" else T.float32(3.0)

    # fmt: off
    @T.prim_func
    def binary_op_region_region(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype, layout=g_layout)
        B = T.match_buffer(B_ptr, g_shape, dtype, layout=g_layout)

        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([thread_cnt])
        A_smem = T.alloc_buffer(g_shape, dtype, scope="shared", layout=s_layout)
        B_smem = T.alloc_buffer(g_shape, dtype, scope="shared", layout=s_layout)

        Tx.cta.copy(A_smem[tuple(copy_slice)], A[tuple(copy_slice)])
        Tx.cta.copy(B_smem[tuple(copy_slice)], B[tuple(copy_slice)])
        T.cuda.cta_sync()
        if op_type == "add":
            Tx.cta.add(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], B_smem[tuple(map_slice_b)])  # noqa: E501
        elif op_type == "sub":
            Tx.cta.sub(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], B_smem[tuple(map_slice_b)])  # noqa: E501
        elif op_type == "mul":
            Tx.cta.mul(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], B_smem[tuple(map_slice_b)])  # noqa: E501
        elif op_type == "fdiv":
            Tx.cta.fdiv(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], B_smem[tuple(map_slice_b)])  # noqa: E501
        T.cuda.cta_sync()
        Tx.cta.copy(A[tuple(copy_slice)], A_smem[tuple(copy_slice)])

    @T.prim_func
    def binary_op_const_region_or_region_const(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype, layout=g_layout)
        _B = T.match_buffer(B_ptr, g_shape, dtype, layout=g_layout)

        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([thread_cnt])
        A_smem = T.alloc_buffer(g_shape, dtype, scope="shared", layout=s_layout)

        Tx.cta.copy(A_smem[tuple(copy_slice)], A[tuple(copy_slice)])
        T.cuda.cta_sync()
        if op_type == "add":
            if operands_type == "const_region":
                Tx.cta.add(A_smem[tuple(map_slice_res)], const, A_smem[tuple(map_slice_a)])
            elif operands_type == "region_const":
                Tx.cta.add(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], const)
        elif op_type == "sub":
            if operands_type == "const_region":
                Tx.cta.sub(A_smem[tuple(map_slice_res)], const, A_smem[tuple(map_slice_a)])
            elif operands_type == "region_const":
                Tx.cta.sub(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], const)
        elif op_type == "mul":
            if operands_type == "const_region":
                Tx.cta.mul(A_smem[tuple(map_slice_res)], const, A_smem[tuple(map_slice_a)])
            elif operands_type == "region_const":
                Tx.cta.mul(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], const)
        elif op_type == "fdiv":
            if operands_type == "const_region":
                Tx.cta.fdiv(A_smem[tuple(map_slice_res)], const, A_smem[tuple(map_slice_a)])
            elif operands_type == "region_const":
                Tx.cta.fdiv(A_smem[tuple(map_slice_res)], A_smem[tuple(map_slice_a)], const)
        T.cuda.cta_sync()
        Tx.cta.copy(A[tuple(copy_slice)], A_smem[tuple(copy_slice)])
        # fmt: on

    def get_prim_func(operands_type):
        if operands_type == "region_region":
            return binary_op_region_region
        elif operands_type in ["const_region", "region_const"]:
            return binary_op_const_region_or_region_const
        raise ValueError(f"operands_type={operands_type} is not supported")

    def get_ref(A_np, B_np):
        A_ref = A_np.copy()
        if op_type == "add":
            if operands_type == "region_region":
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] + B_np[tuple(map_slice_b)]
            elif operands_type in ["const_region", "region_const"]:
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] + 3.0
        elif op_type == "sub":
            if operands_type == "region_region":
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] - B_np[tuple(map_slice_b)]
            elif operands_type in ["const_region", "region_const"]:
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] - 3.0
        elif op_type == "mul":
            if operands_type == "region_region":
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] * B_np[tuple(map_slice_b)]
            elif operands_type in ["const_region", "region_const"]:
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] * 3.0
        elif op_type == "fdiv":
            if operands_type == "region_region":
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] / B_np[tuple(map_slice_b)]
            elif operands_type in ["const_region", "region_const"]:
                A_ref[tuple(map_slice_res)] = A_np[tuple(map_slice_a)] / 3.0

        return A_ref
    return get_prim_func(operands_type), get_ref




# ---- corpus cases (txlab) ----
# fmt: on
# Tx.cta.add / sub / mul over shared memory (float16; regions, broadcast, constants).
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/operator/tile_primitive/cuda/elementwise/test_binary.py"

_INPUTS = [
    ((32, 32), (0, 0), (0, 0), (0, 0), (32, 32), (32, 32), (32, 32), 64, 0),
    ((32, 8, 12), (10, 0, 3), (14, 1, 4), (20, 0, 2), (5, 6, 7), (5, 6, 7), (5, 6, 7), 64, 0),
    ((32, 8, 12), (10, 0, 3), (14, 1, 4), (20, 0, 2), (5, 6, 7), (1, 6, 1), (5, 6, 7), 64, 0),
]


def _bin_in(shape):
    return lambda rng: [rng.random(shape).astype("float16"), rng.random(shape).astype("float16")]


def _bin_ref(inp, op, operands):
    def ref(a):
        _, get_ref = _binary_op_shared(inp, op, operands, "float16")
        return {0: get_ref(a[0], a[1])}
    return ref


for _ii, _op, _opnd in [(0, "add", "region_region"), (0, "mul", "region_const"), (1, "sub", "region_region"),
                        (2, "add", "region_region"), (2, "mul", "region_region"), (0, "add", "const_region"),
                        (1, "sub", "region_const")]:
    _inp = _INPUTS[_ii]
    case(f"binary_op_shared[input{_ii}-{_op}-{_opnd}]",
         f"{UPSTREAM_FILE}::test_binary_op_shared[float16-{_opnd}-{_op}-input{_ii}]",
         inputs=_bin_in(_inp[0]), reference=_bin_ref(_inp, _op, _opnd))(
        lambda a=(_inp, _op, _opnd): _binary_op_shared(*a, "float16")[0])
