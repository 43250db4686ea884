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
# Lines 17-26, 281-331, 719-748 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
#   lines 281-331: upstream `test_reduction_local_thread_wise` as the builder `_reduction_thread_wise_kernel` (its run part cut; it returns `test_func`)
#   lines 719-748: upstream `test_reduction_local_optimized_packed_add_sum` as the builder `_reduction_packed_add_sum_kernel` (its decorators and compile-and-run part cut; it returns `test_func`)
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


def _reduction_packed_add_sum_kernel(reduction_len, accum):
    """Test thread-level sum reduction using packed add with add.f32x2 PTX instruction."""
    dtype = "float32"

    # fmt: off
    @T.prim_func
    def test_func(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, [reduction_len], dtype, layout=TileLayout(S[reduction_len]))
        B = T.match_buffer(B_ptr, [1], dtype, layout=TileLayout(S[1]))

        T.device_entry()
        _bx = T.cta_id([1])
        _tid = T.thread_id([1])
        A_local = T.alloc_buffer([reduction_len], dtype, scope="local")
        B_local = T.alloc_buffer([1], dtype, scope="local")

                # Load from global to local
        for i in T.serial(reduction_len):
            A_local[i] = A[i]

                # Initialize B_local for accum test
        if accum:
            B_local[0] = B[0]

                # Thread-level sum reduction
        Tx.sum(B_local, A_local, accum=accum)

                # Store result to global
        B[0] = B_local[0]
        # fmt: on
    return test_func




# ---- corpus cases (txlab) ----
# fmt: on
# Tx.sum / Tx.max / Tx.min over registers (thread-wise).
from .corpus import case, f32_arith  # noqa: E402

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


# Tx.sum of a 1-D float32 register buffer of 8 or more into one value, on sm_100a: TVM's packed_add_sum
# variant (tile_primitive/reduction/sm100_packed.py), eight running sums advanced in pairs by
# add.rn.ftz.f32x2 (packed and unpacked by mov.b64), the remainder and the last step plain float32
# adds (add.f32: rn). The reference takes the same steps, each rounded once by its own instruction's
# mode (corpus.f32_arith: exact rationals), and is compared bit for bit; upstream allows atol 1e-4
# against a float64-order sum (its comment names add.rz.ftz.f32x2; the installed TVM emits add.rn).
def _packed_sum_model(src, dst0, accum):
    def packed(x, y):  # add.rn.ftz.f32x2
        return f32_arith("add", x, y, mode="rn", ftz=True)

    def plain(x, y):  # a float32 `+` in the CUDA: add.f32 (rn); the inputs below have no subnormals there
        return f32_arith("add", x, y, mode="rn")

    n = len(src)
    ls = [np.float32(v) for v in src[:8]]
    if accum:
        ls[0] = plain(src[0], dst0)
    for outer in range(n // 8 - 1):
        for k in range(8):
            ls[k] = packed(ls[k], src[8 * (outer + 1) + k])
    for i in range(n % 8):
        ls[0] = plain(ls[0], src[n // 8 * 8 + i])
    ls[0], ls[1] = packed(ls[0], ls[2]), packed(ls[1], ls[3])
    ls[4], ls[5] = packed(ls[4], ls[6]), packed(ls[5], ls[7])
    ls[0], ls[1] = packed(ls[0], ls[4]), packed(ls[1], ls[5])
    return plain(ls[0], ls[1])


def _packed_sum_ref(accum):
    def ref(a):
        total = _packed_sum_model(a[0].ravel(), a[1].ravel()[0], accum)
        return {1: np.full(a[1].shape, total, np.float32)}
    return ref


def _packed_in(n, accum):
    # upstream's inputs: np.random.seed(0); rand(n); B = [0.5] with accum, else [0]
    return lambda rng: [np.random.RandomState(0).rand(n).astype(np.float32),
                        np.array([0.5 if accum else 0.0], np.float32)]


PACKED_TEST = UPSTREAM_FILE + "::test_reduction_local_optimized_packed_add_sum"
_ADD_RN = r"add\.rn\.ftz\.f32x2"  # the packed instruction the model rounds like (tests/test_upstream_corpus.py)
for _acc in (False, True):
    for _n in (8, 16, 64, 128, 256, 9, 17, 63, 65, 100):
        case(f"reduction_local_optimized_packed_add_sum[{_acc}-{_n}]", f"{PACKED_TEST}[{_acc}-{_n}]",
             inputs=_packed_in(_n, _acc), reference=_packed_sum_ref(_acc), arch="sm_100a", source_has=_ADD_RN)(
            lambda a=(_n, _acc): _reduction_packed_add_sum_kernel(*a))

# The same kernel (16 values: one chunk of packed adds, then the packed tree) on inputs upstream's do
# not cover. [ties]: halfway cases of the packed adds, to even ((1 + 2^-23) + 2^-24 -> 1 + 2^-22,
# where rz keeps 1 + 2^-23). [ftz]: values of a few 2^-126 (the smallest normal), so that nothing
# absorbs a subnormal: subnormal operands read as zeros, 1.5 * 2^-126 - 1.25 * 2^-126 is flushed to
# +0, and the total (14.25 * 2^-126; without .ftz another value) is normal for the last, plain, add.
_T = 2.0**-126
_EDGES = {
    "ties": [1.0, 1 + 2.0**-23, 2.0, 1.5, 1.25, 3.0, 1.0, 2.0**-30,
             2.0**-24, 2.0**-24, 2.0**-22, 2.0**-23, 2.0**-22, 2.0**-22, 2.0**-24 + 2.0**-47, 3 * 2.0**-54],
    "ftz": [1.5 * _T, 2 * _T, 3 * _T, 4 * _T, _T, 2 * _T, 1.25 * _T, _T,
            -1.25 * _T, 0.3 * _T, 0.7 * _T, -0.2 * _T, 0.5 * _T, 2.0**-149, 0.1 * _T, 0.9 * _T],
}
for _tag, _vals in _EDGES.items():
    case(f"reduction_local_optimized_packed_add_sum[False-16][{_tag}]", f"{PACKED_TEST}[False-16]",
         inputs=lambda rng, v=_vals: [np.array(v, np.float32), np.zeros(1, np.float32)],
         reference=_packed_sum_ref(False), arch="sm_100a", source_has=_ADD_RN)(
        lambda: _reduction_packed_add_sum_kernel(16, False))

# test_reduction_local_thread_wise runs on any GPU: on sm_100a its 1-D sums of 16 and 32 take the
# same packed_add_sum path (the thread-wise cases above run at sm_90a, where a sum is plain adds).
for _src, _acc in [((16,), False), ((32,), True)]:
    case(f"reduction_local_thread_wise[{_src[0]}-sum-{_acc}][sm_100a]",
         f"{UPSTREAM_FILE}::test_reduction_local_thread_wise[{_acc}-sum-{_src}-(1,)-(0,)]",
         inputs=_red_in(_src, (1,), "float32", _acc), reference=_packed_sum_ref(_acc), arch="sm_100a",
         source_has=_ADD_RN)(
        lambda a=(_src, (1,), (0,), "sum", _acc): _reduction_thread_wise_kernel(*a))
