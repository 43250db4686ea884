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
#   tests/python/tirx/operator/tile_primitive/cuda/copy/test_ld_stmatrix.py
# Lines 17-323, 392-427 of that file are kept verbatim below the
# marker (its builders); the cases after the second marker are ours: each names the upstream
# test (and parametrisation) its kernel comes from, with inputs and a numpy reference.
# fmt: off
# ---- upstream ----
# pylint: disable=missing-function-docstring
"""Round-trip tests for the ``ldstmatrix`` copy dispatch.

Pipeline:
  ld direction: A_gmem → A_smem (per-thread init) → R_local (T.copy dispatch
                under test) → B_gmem (per-thread write).
  st direction: A_gmem → R_local (per-thread init) → A_smem (T.copy dispatch
                under test) → B_gmem (per-thread write).

Both directions must round-trip ``A == B``. Layout strides are constructed
so that:
  - trans=False S layout matches step-9's row-major spec (8→p, 4→2, num→q, 2→1).
  - trans=True  S layout matches step-9's col-major spec (8→1, 4→2p, num→q, 2→p).

Uniform shape ``(*scope_outer, 8, 4, num, 2)`` is used for every num (including
num=1, which gets an extent-1 placeholder for the num atom).
"""

import numpy as np

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid, tid_in_wg, tx


def _compile_src(kernel):
    target = tvm.target.Target("cuda")
    mod = tvm.IRModule({"main": kernel})
    with target:
        compiled = tvm.compile(mod, target=target, tir_pipeline="tirx")
    return compiled, compiled.mod.imports[0].inspect_source()


# ---------------------------------------------------------------------------
# Layout builders.
# ---------------------------------------------------------------------------
def _r_layout_warp(num):
    return TileLayout(S[(8, 4, num, 2) : (4 @ laneid, 1 @ laneid, 2, 1)])


def _r_layout_warpgroup(num):
    return TileLayout(S[(4, 8, 4, num, 2) : (32 @ tid_in_wg, 4 @ tid_in_wg, 1 @ tid_in_wg, 2, 1)])


def _r_layout_cta(num):
    return TileLayout(S[(4, 8, 4, num, 2) : (32 @ tx, 4 @ tx, 1 @ tx, 2, 1)])


def _s_layout_warp(num, trans):
    if not trans:
        return TileLayout(S[(8, 4, num, 2) : (num * 8, 2, 8, 1)])
    return TileLayout(S[(8, 4, num, 2) : (1, 2 * num * 8, 8, num * 8)])


def _s_layout_warpgroup_or_cta(num, trans):
    if not trans:
        return TileLayout(S[(4, 8, 4, num, 2) : (64 * num, num * 8, 2, 8, 1)])
    return TileLayout(S[(4, 8, 4, num, 2) : (64 * num, 1, 16 * num, 8, 8 * num)])


# 128b swizzle for fp16 (p=3 ⇒ 8 fp16 chunk; sw=at=3 ⇒ 8-row swizzle period).
_SWIZZLE_128B = ComposeLayout(3, 3, 3, TileLayout(S[(512,)]))


def _maybe_wrap_swizzle(tile_layout, enable: bool):
    if not enable:
        return tile_layout
    return ComposeLayout(
        _SWIZZLE_128B.per_element,
        _SWIZZLE_128B.swizzle_len,
        _SWIZZLE_128B.atom_len,
        tile_layout,
        _SWIZZLE_128B.swizzle_inner,
    )


# ---------------------------------------------------------------------------
# Warp scope kernel builder.
# ---------------------------------------------------------------------------
def _build_warp_kernel(num, direction, trans, swizzle=False):
    r_layout = _r_layout_warp(num)
    s_layout = _maybe_wrap_swizzle(_s_layout_warp(num, trans), swizzle)
    s_shape = (8, 4, num, 2)
    full = (slice(0, 8), slice(0, 4), slice(0, num), slice(0, 2))
    M, N = 8, num * 8

    def _coord(row, cp, t, w):
        # Map per-thread layout coord (row, cp, t, w) to gmem (row, col).
        if not trans:
            return row, t * 8 + cp * 2 + w
        return cp * 2 + w, row + t * 8

    # fmt: off
    if direction == "ld":
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float16")
            B = T.match_buffer(B_ptr, (M, N), "float16")
            T.device_entry()
            T.cta_id([1])
            T.lane_id([32])
            tid = T.thread_id([32])
            A_smem = T.alloc_buffer(s_shape, "float16", scope="shared", layout=s_layout)
            row = tid // 4
            cp = tid % 4
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(row, cp, t, w)
                    A_smem[row, cp, t, w] = A[gr, gc]
            T.cuda.cta_sync()
            R_local = T.alloc_buffer(s_shape, "float16", scope="local", layout=r_layout)
            Tx.warp.copy(R_local[full], A_smem[full])
            r_view = R_local.local()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(row, cp, t, w)
                    B[gr, gc] = r_view[t * 2 + w]
    else:  # direction == "st"
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float16")
            B = T.match_buffer(B_ptr, (M, N), "float16")
            T.device_entry()
            T.cta_id([1])
            T.lane_id([32])
            tid = T.thread_id([32])
            A_smem = T.alloc_buffer(s_shape, "float16", scope="shared", layout=s_layout)
            row = tid // 4
            cp = tid % 4
            R_local = T.alloc_buffer(s_shape, "float16", scope="local", layout=r_layout)
            r_view = R_local.local()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(row, cp, t, w)
                    r_view[t * 2 + w] = A[gr, gc]
            Tx.warp.copy(A_smem[full], R_local[full])
            T.cuda.cta_sync()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(row, cp, t, w)
                    B[gr, gc] = A_smem[row, cp, t, w]
    # fmt: on
    return kernel, (M, N)


# ---------------------------------------------------------------------------
# Warpgroup scope kernel builder. 4 warps stacked vertically.
# ---------------------------------------------------------------------------
def _build_warpgroup_kernel(num, direction, trans, swizzle=False):
    r_layout = _r_layout_warpgroup(num)
    s_layout = _maybe_wrap_swizzle(_s_layout_warpgroup_or_cta(num, trans), swizzle)
    s_shape = (4, 8, 4, num, 2)
    full = (slice(0, 4), slice(0, 8), slice(0, 4), slice(0, num), slice(0, 2))
    M, N = 32, num * 8

    def _coord(wid, row, cp, t, w):
        if not trans:
            return wid * 8 + row, t * 8 + cp * 2 + w
        return wid * 8 + cp * 2 + w, row + t * 8

    # fmt: off
    if direction == "ld":
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float16")
            B = T.match_buffer(B_ptr, (M, N), "float16")
            T.device_entry()
            T.cta_id([1])
            T.warpgroup_id([1])
            T.warp_id_in_wg([4])
            T.lane_id([32])
            T.thread_id_in_wg([128])
            tid = T.thread_id([128])
            A_smem = T.alloc_buffer(s_shape, "float16", scope="shared", layout=s_layout)
            wid = tid // 32
            lid = tid % 32
            row = lid // 4
            cp = lid % 4
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    A_smem[wid, row, cp, t, w] = A[gr, gc]
            T.cuda.cta_sync()
            R_local = T.alloc_buffer(s_shape, "float16", scope="local", layout=r_layout)
            Tx.wg.copy(R_local[full], A_smem[full])
            r_view = R_local.local()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    B[gr, gc] = r_view[t * 2 + w]
    else:
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float16")
            B = T.match_buffer(B_ptr, (M, N), "float16")
            T.device_entry()
            T.cta_id([1])
            T.warpgroup_id([1])
            T.warp_id_in_wg([4])
            T.lane_id([32])
            T.thread_id_in_wg([128])
            tid = T.thread_id([128])
            A_smem = T.alloc_buffer(s_shape, "float16", scope="shared", layout=s_layout)
            wid = tid // 32
            lid = tid % 32
            row = lid // 4
            cp = lid % 4
            R_local = T.alloc_buffer(s_shape, "float16", scope="local", layout=r_layout)
            r_view = R_local.local()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    r_view[t * 2 + w] = A[gr, gc]
            Tx.wg.copy(A_smem[full], R_local[full])
            T.cuda.cta_sync()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    B[gr, gc] = A_smem[wid, row, cp, t, w]
    # fmt: on
    return kernel, (M, N)


# ---------------------------------------------------------------------------
# CTA scope kernel builder. Same geometry as warpgroup, but R uses ``tx``.
# ---------------------------------------------------------------------------
def _build_cta_kernel(num, direction, trans, swizzle=False):
    r_layout = _r_layout_cta(num)
    s_layout = _maybe_wrap_swizzle(_s_layout_warpgroup_or_cta(num, trans), swizzle)
    s_shape = (4, 8, 4, num, 2)
    full = (slice(0, 4), slice(0, 8), slice(0, 4), slice(0, num), slice(0, 2))
    M, N = 32, num * 8

    def _coord(wid, row, cp, t, w):
        if not trans:
            return wid * 8 + row, t * 8 + cp * 2 + w
        return wid * 8 + cp * 2 + w, row + t * 8

    # fmt: off
    if direction == "ld":
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float16")
            B = T.match_buffer(B_ptr, (M, N), "float16")
            T.device_entry()
            T.cta_id([1])
            T.warp_id([4])
            T.lane_id([32])
            tid = T.thread_id([128])
            A_smem = T.alloc_buffer(s_shape, "float16", scope="shared", layout=s_layout)
            wid = tid // 32
            lid = tid % 32
            row = lid // 4
            cp = lid % 4
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    A_smem[wid, row, cp, t, w] = A[gr, gc]
            T.cuda.cta_sync()
            R_local = T.alloc_buffer(s_shape, "float16", scope="local", layout=r_layout)
            Tx.cta.copy(R_local[full], A_smem[full])
            r_view = R_local.local()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    B[gr, gc] = r_view[t * 2 + w]
    else:
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float16")
            B = T.match_buffer(B_ptr, (M, N), "float16")
            T.device_entry()
            T.cta_id([1])
            T.warp_id([4])
            T.lane_id([32])
            tid = T.thread_id([128])
            A_smem = T.alloc_buffer(s_shape, "float16", scope="shared", layout=s_layout)
            wid = tid // 32
            lid = tid % 32
            row = lid // 4
            cp = lid % 4
            R_local = T.alloc_buffer(s_shape, "float16", scope="local", layout=r_layout)
            r_view = R_local.local()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    r_view[t * 2 + w] = A[gr, gc]
            Tx.cta.copy(A_smem[full], R_local[full])
            T.cuda.cta_sync()
            for t in range(num):
                for w in range(2):
                    gr, gc = _coord(wid, row, cp, t, w)
                    B[gr, gc] = A_smem[wid, row, cp, t, w]
    # fmt: on
    return kernel, (M, N)


_BUILDERS = {
    "warp": _build_warp_kernel,
    "warpgroup": _build_warpgroup_kernel,
    "cta": _build_cta_kernel,
}


def _build_multi_iter_kernel(outer_ext: int):
    """Warp + R=(outer_ext, 8, 2, 4, 4, 2):(16, 4@laneid, 8, 2, 1@laneid, 1)
    + 333 swizzle on S. Mem strides 16/8/2/1 on extents outer_ext/2/4/2 are
    bijective for outer_ext ∈ {4, 5}: max = (outer_ext-1)*16 + 8 + 6 + 1
    = outer_ext*16 - 1, matching extent product = 16*outer_ext."""
    shape = (outer_ext, 8, 2, 4, 4, 2)
    r_layout = TileLayout(S[shape : (16, 4 @ laneid, 8, 2, 1 @ laneid, 1)])
    s_layout = ComposeLayout(3, 3, 3, TileLayout(S[(512,)]))
    full = tuple(slice(0, e) for e in shape)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float16")
        B = T.match_buffer(B_ptr, shape, "float16")
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=s_layout)
        for a in range(outer_ext):
            for c in range(2):
                for d in range(4):
                    for e in range(2):
                        A_smem[a, tid // 4, c, d, tid % 4, e] = A[a, tid // 4, c, d, tid % 4, e]
        T.cuda.cta_sync()
        R_local = T.alloc_buffer(shape, "float16", scope="local", layout=r_layout)
        Tx.warp.copy(R_local[full], A_smem[full])
        r_view = R_local.local()
        for a in range(outer_ext):
            for c in range(2):
                for d in range(4):
                    for e in range(2):
                        B[a, tid // 4, c, d, tid % 4, e] = r_view[a * 16 + c * 8 + d * 2 + e]

    return kernel, shape




# ---- corpus cases (txlab) ----
# fmt: on
# """Tx.copy between registers and shared memory through ldmatrix / stmatrix."""
from .corpus import case  # noqa: E402

UPSTREAM_FILE = "tests/python/tirx/operator/tile_primitive/cuda/copy/test_ld_stmatrix.py"


def _roundtrip_in(M, N):
    return lambda rng: [np.arange(M * N, dtype="float16").reshape(M, N), np.zeros((M, N), np.float16)]


def _ldst(scope, num, direction, trans, swizzle=False):
    kernel, (M, N) = _BUILDERS[scope](num, direction, trans, swizzle=swizzle)
    return kernel, M, N


_SEL = [("warp", n, d, t, False) for n in (1, 2, 4) for d in ("ld", "st") for t in (False, True)] + \
    [("warpgroup", 4, d, t, False) for d in ("ld", "st") for t in (False, True)] + \
    [("cta", 2, "ld", False, False), ("cta", 4, "st", True, False),
     ("warp", 4, "ld", False, True), ("warp", 4, "st", True, True), ("warpgroup", 2, "ld", True, True)]
for _scope, _num, _dir, _trans, _swz in _SEL:
    _M, _N = (8 if _scope == "warp" else 32), _num * 8       # the builders' (M, N)
    _test = "test_ldstmatrix_swizzle" if _swz else "test_ldstmatrix"
    case(f"{_test[5:]}[{_scope}-x{_num}-{_dir}-{'trans' if _trans else 'notrans'}]",
         f"{UPSTREAM_FILE}::{_test}[{_num}-{_dir}-{_trans}-{_scope}]",
         inputs=_roundtrip_in(_M, _N), reference=lambda a: {1: a[0]})(
        lambda a=(_scope, _num, _dir, _trans, _swz): _ldst(*a)[0])


def _multi_in(rng):
    shape = (4, 8, 2, 4, 4, 2)
    n = int(np.prod(shape))
    return [np.arange(n, dtype="float16").reshape(shape), np.zeros(shape, np.float16)]


case("ldstmatrix_swizzle_multi_iter_pow2", f"{UPSTREAM_FILE}::test_ldstmatrix_swizzle_multi_iter_pow2",
     inputs=_multi_in, reference=lambda a: {1: a[0]})(lambda: _build_multi_iter_kernel(4)[0])
