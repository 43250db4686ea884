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
#   tests/python/tirx/operator/tile_primitive/cuda/copy/test_gmem_smem.py
# Lines 17-106 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
# fmt: off
# ---- upstream ----
# pylint: disable=missing-function-docstring
"""Round-trip tests for the ``vec_auto`` global ↔ shared path.

Pipeline: A_gmem --G2S--> A_smem --S2G--> B_gmem. If either direction is
wrong the round trip leaves B mismatched against A.
"""

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import ComposeLayout, S, TileLayout


def _build_kernel(scope, n_threads, shape, dtype):
    s_layout = TileLayout(S[shape])
    full_slices = tuple(slice(0, d) for d in shape)

    if scope == "warpgroup":

        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, shape, dtype)
            B = T.match_buffer(B_ptr, shape, dtype)
            T.device_entry()
            T.cta_id([1])
            T.warpgroup_id([n_threads // 128])
            T.warp_id_in_wg([4])
            T.lane_id([32])
            T.thread_id_in_wg([128])
            T.thread_id([n_threads])
            A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
            Tx.wg.copy(A_smem[full_slices], A[full_slices])
            T.cuda.cta_sync()
            Tx.wg.copy(B[full_slices], A_smem[full_slices])

    elif scope == "warp":

        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, shape, dtype)
            B = T.match_buffer(B_ptr, shape, dtype)
            T.device_entry()
            T.cta_id([1])
            T.lane_id([32])
            T.thread_id([n_threads])
            A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
            Tx.warp.copy(A_smem[full_slices], A[full_slices])
            T.cuda.cta_sync()
            Tx.warp.copy(B[full_slices], A_smem[full_slices])

    elif scope == "cta":

        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, shape, dtype)
            B = T.match_buffer(B_ptr, shape, dtype)
            T.device_entry()
            T.cta_id([1])
            T.warp_id([n_threads // 32])
            T.lane_id([32])
            T.thread_id([n_threads])
            A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
            Tx.cta.copy(A_smem[full_slices], A[full_slices])
            T.cuda.cta_sync()
            Tx.cta.copy(B[full_slices], A_smem[full_slices])
    else:
        raise ValueError(f"unsupported scope {scope!r}")

    return kernel


# (scope, n_threads, shape) — shape chosen so total / T / vec_len > 1 with at
# least one outer round, and total is divisible by T*vec_len.
TASKS = [
    ("warp", 32, (32, 32)),  # 1024 total, T=32, vec 8 → outer 4
    ("warp", 32, (32, 64)),  # 2048 total, outer 8
    ("warpgroup", 128, (128, 32)),  # 4096, outer 4
    ("warpgroup", 128, (128, 64)),  # 8192, outer 8
    ("warpgroup", 128, (256, 16)),  # 4096, outer 4
    ("cta", 256, (256, 32)),  # 8192, T=256, vec 8 → outer 4
    ("cta", 256, (512, 16)),  # 8192, outer 4
]




# ---- corpus cases (txlab) ----
# fmt: on
# Tx.copy / Tx.copy_async between global and shared memory (vectorised ld/st, cp.async).
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/operator/tile_primitive/cuda/copy/test_gmem_smem.py"

import ml_dtypes  # noqa: E402

_NPD = {"float16": np.float16, "float32": np.float32, "uint8": np.uint8, "int8": np.int8,
        "bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


def _rand(rng, shape, dtype):
    if dtype in ("uint8", "int8"):
        return rng.integers(0 if dtype == "uint8" else -128, 128, shape).astype(_NPD[dtype])
    return rng.uniform(-4, 4, shape).astype(np.float32).astype(_NPD[dtype])


for _scope, _nt, _shape in TASKS:
    for _dt in ("float16", "uint8") if _scope == "warp" else ("float32",) if _scope == "cta" else ("float16",):
        case(f"gmem_smem_roundtrip[{_scope}-{_nt}-{'x'.join(map(str, _shape))}-{_dt}]",
             f"{UPSTREAM_FILE}::test_gmem_smem_roundtrip[{_dt}-{_scope}-{_nt}-{'x'.join(map(str, _shape))}]",
             inputs=lambda rng, s=_shape, d=_dt: [_rand(rng, s, d), np.zeros(s, _NPD[d])],
             reference=lambda a: {1: a[0]})(lambda a=(_scope, _nt, _shape, _dt): _build_kernel(*a))


# test_copy_g2s_s2g: the upstream test's kernel, its task table, as a builder
G2S_TASKS = [
    ((128, 32), (128, 32), ((0, 128), (0, 32)), 32,
     TileLayout(S[128, 32]), TileLayout(S[128, 32]), TileLayout(S[128, 32])),
    ((64, 64), (32, 32), ((32, 64), (32, 64)), 32,
     TileLayout(S[64, 64]), TileLayout(S[64, 64]), TileLayout(S[32, 32])),
    ((4, 32, 32), (32, 32), ((0, 1), (0, 32), (0, 32)), 32,
     TileLayout(S[4, 32, 32]), TileLayout(S[4, 32, 32]), TileLayout(S[32, 32])),
    ((16, 16), (8, 8), ((0, 8), (0, 8)), 32,
     TileLayout(S[16, 16]), TileLayout(S[16, 16]), TileLayout(S[8, 8])),
    ((96, 512), (32, 256), ((16, 48), (256, 512)), 32,
     TileLayout(S[96, 512]), TileLayout(S[96, 512]),
     ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((16, 128), (8, 64)).tile_to((32, 256), (16, 128))),
]


def _g2s_s2g_kernel(task, dtype, scope):
    g_shape, s_shape, g_region, thread_cnt, layoutA, layoutB, layoutS = task

    r_smem = tuple(slice(None) for _ in range(len(s_shape)))
    r_gmem = tuple(slice(g_region[i][0], g_region[i][1]) for i in range(len(g_shape)))

    if scope == "thread":
        thread_cnt = 1

    @T.prim_func
    def copy_sync(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype, layout=layoutA)
        B = T.match_buffer(B_ptr, g_shape, dtype, layout=layoutB)

        T.device_entry()
        T.cta_id([2])
        T.thread_id([thread_cnt])

        A_smem = T.alloc_buffer(s_shape, dtype, scope="shared", layout=layoutS)
        # `scope` is parametrized at runtime; select the scope namespace
        # dynamically (T.cta / T.thread) instead of a literal prefix.
        getattr(Tx, scope).copy(A_smem[r_smem], A[r_gmem])
        T.cuda.cta_sync()
        getattr(Tx, scope).copy(B[r_gmem], A_smem[r_smem])
    return copy_sync


def _region_ref(task, out):
    g_region = task[2]
    r = tuple(slice(a, b) for a, b in g_region)

    def ref(a):
        want = a[out].copy()
        want[r] = a[0][r]
        return {out: want}
    return ref


for _ti, _dt, _scope in [(0, "float16", "cta"), (1, "bfloat16", "cta"), (2, "int8", "cta"), (3, "float32", "thread"),
                         (4, "float16", "cta"), (4, "float8_e4m3fn", "cta"), (1, "float8_e5m2", "thread")]:
    _t = G2S_TASKS[_ti]
    case(f"copy_g2s_s2g[task{_ti}-{_dt}-{_scope}]", f"{UPSTREAM_FILE}::test_copy_g2s_s2g[{_scope}-{_dt}-task{_ti}]",
         inputs=lambda rng, t=_t, d=_dt: [_rand(rng, t[0], d), np.zeros(t[0], _NPD[d])],
         reference=_region_ref(_t, 1),
         note="two CTAs write the same region of B with the same values (as upstream)")(
        lambda a=(_t, _dt, _scope): _g2s_s2g_kernel(*a))


# tests/python/tirx/operator/tile_primitive/cuda/copy_async/test_ldgsts.py::test_copy_g2s_s2g_cta_vec_load
LDGSTS_FILE = "tests/python/tirx/operator/tile_primitive/cuda/copy_async/test_ldgsts.py"
LDGSTS_TASKS = [
    ((128, 32), (128, 32), (0, 0), (128, 32), 32,
     TileLayout(S[128, 32]), TileLayout(S[128, 32]), TileLayout(S[128, 32])),
    ((64, 64), (32, 32), (32, 0), (32, 32), 32,
     TileLayout(S[64, 64]), TileLayout(S[64, 64]), TileLayout(S[32, 32])),
    ((4, 32, 32), (32, 32), (0, 0, 0), (1, 32, 32), 32,
     TileLayout(S[4, 32, 32]), TileLayout(S[4, 32, 32]), TileLayout(S[32, 32])),
]


def _ldgsts_kernel(task, dtype):
    g_shape, s_shape, g_st, g_extent, thread_cnt, layoutA, layoutB, layoutS = task

    r_smem = list(slice(None) for i in range(len(s_shape)))
    r_gmem = list(slice(g_st[i], g_st[i] + g_extent[i]) for i in range(len(g_shape)))

    # fmt: off
    @T.prim_func
    def copy_async(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype, layout=layoutA)
        B = T.match_buffer(B_ptr, g_shape, dtype, layout=layoutB)

        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([thread_cnt])
        A_smem = T.alloc_buffer(s_shape, dtype, scope="shared", layout=layoutS)

        Tx.cta.copy_async(A_smem[tuple(r_smem)], A[tuple(r_gmem)], dispatch="ldgsts")
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[tuple(r_gmem)], A_smem[tuple(r_smem)])
        # fmt: on
    return copy_async


def _ldgsts_ref(task):
    r = tuple(slice(s, s + e) for s, e in zip(task[2], task[3]))

    def ref(a):
        want = a[1].copy()
        want[r] = a[0][r]
        return {1: want}
    return ref


for _ti, _dt in [(0, "float16"), (1, "int8"), (2, "bfloat16"), (0, "float32")]:
    _t = LDGSTS_TASKS[_ti]
    case(f"ldgsts_cta_vec_load[task{_ti}-{_dt}]", f"{LDGSTS_FILE}::test_copy_g2s_s2g_cta_vec_load[{_dt}-task{_ti}]",
         inputs=lambda rng, t=_t, d=_dt: [_rand(rng, t[0], d), np.zeros(t[0], _NPD[d])],
         reference=_ldgsts_ref(_t))(lambda a=(_t, _dt): _ldgsts_kernel(*a))
