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
#   tests/python/tirx/operator/tile_primitive/cuda/reduction/test_reduction.py
# Lines 17-26, 281-331 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
#   lines 281-331: upstream `test_reduction_local_thread_wise` as the builder `_reduction_thread_wise_kernel` (its run part cut; it returns `test_func`)
# fmt: off
# ---- upstream ----
import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import R, S, TileLayout, laneid, wg_local_layout


def _reduction_thread_wise_kernel(src_shape, dst_shape, axes, op_type, accum):
    """Test thread-wise local reduction with various shapes and axes."""
    dtype = "float32"
    src_total = 1
    for s in src_shape:
        src_total *= s
    dst_total = 1
    for s in dst_shape:
        dst_total *= s

    def decompose_flat(flat_idx, shape):
        indices = []
        rem = flat_idx
        for s in reversed(list(shape)):
            indices.append(rem % s)
            rem = rem // s
        indices.reverse()
        return indices

    # fmt: off
    @T.prim_func
    def test_func(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, list(src_shape), dtype, layout=TileLayout(S[src_shape]))
        B = T.match_buffer(B_ptr, list(dst_shape), dtype, layout=TileLayout(S[dst_shape]))

        T.device_entry()
        _bx = T.cta_id([1])
        _tid = T.thread_id([1])
        A_local = T.alloc_buffer(list(src_shape), dtype, scope="local")
        B_local = T.alloc_buffer(list(dst_shape), dtype, scope="local")

        for i in T.serial(src_total):
            idx = T.meta_var(decompose_flat(i, src_shape))
            A_local[tuple(idx)] = A[tuple(idx)]

        if accum:
            for i in T.serial(dst_total):
                idx = T.meta_var(decompose_flat(i, dst_shape))
                B_local[tuple(idx)] = B[tuple(idx)]

        if op_type == "sum":
            Tx.sum(B_local, A_local, axes=axes, accum=accum)
        elif op_type == "max":
            Tx.max(B_local, A_local, axes=axes, accum=accum)
        elif op_type == "min":
            Tx.min(B_local, A_local, axes=axes, accum=accum)

        for i in T.serial(dst_total):
            idx = T.meta_var(decompose_flat(i, dst_shape))
            B[tuple(idx)] = B_local[tuple(idx)]
        # fmt: on
    return test_func




# ---- corpus cases (txlab) ----
# fmt: on
# Tx.sum / Tx.max / Tx.min over registers (thread-wise).
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/operator/tile_primitive/cuda/reduction/test_reduction.py"

def _red_in(src_shape, dst_shape, dtype, accum):
    def inputs(rng):
        A = rng.random(src_shape).astype(dtype)
        B = (rng.random(dst_shape).astype(dtype) * np.asarray(0.5, dtype)).astype(dtype) if accum else \
            np.zeros(dst_shape, dtype)
        return [A, B]
    return inputs


def _red_ref(axes, op, accum, dtype):
    def ref(a):
        A = a[0].astype(np.float64)
        r = {"sum": A.sum, "max": A.max, "min": A.min}[op](axis=tuple(axes))
        if accum:
            B = a[1].astype(np.float64)
            r = {"sum": r + B, "max": np.maximum(r, B), "min": np.minimum(r, B)}[op]
        return {1: np.asarray(r, dtype).reshape(a[1].shape)}
    return ref


def _mode(op, dtype):
    if op != "sum":
        return "exact"
    return "close:1e-5" if dtype == "float32" else "close:2e-3"


# test_reduction_shared / _subscope are not here: the installed TVM 0.27 registers no "shared"
# reduction variant (its dispatch table lists only the local ones), so they do not compile.
for _src, _dst, _axes, _op, _acc in [((7,), (1,), (0,), "sum", False), ((4, 8), (8,), (0,), "max", True),
                                     ((3, 4, 5), (4,), (0, 2), "sum", True), ((2, 3, 4), (2, 3), (-1,), "min", False),
                                     ((32,), (1,), (0,), "max", False), ((4, 8), (4,), (1,), "sum", False),
                                     ((2, 3, 4), (3, 4), (0,), "min", True)]:
    case(f"reduction_local_thread_wise[{'x'.join(map(str, _src))}-{_op}-{_acc}]",
         f"{UPSTREAM_FILE}::test_reduction_local_thread_wise[{_acc}-{_op}-{_src}-{_dst}-{_axes}]",
         inputs=_red_in(_src, _dst, "float32", _acc), reference=_red_ref(_axes, _op, _acc, "float32"),
         compare=_mode(_op, "float32"))(lambda a=(_src, _dst, _axes, _op, _acc): _reduction_thread_wise_kernel(*a))
