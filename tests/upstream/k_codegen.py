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
#   tests/python/tirx/codegen/test_codegen_cuda.py, test_cuda_warp_reduce.py, test_cuda_cta_reduce.py,
#   test_ptx_ld_st_ops.py and tests/python/tirx/test_control_flow.py.
# Each kernel is the upstream one (parameters bound as upstream's pytest parametrisation does);
# inputs and numpy references are upstream's where it ran the kernel, ours where it only checked
# the generated CUDA.
"""Codegen-level kernels: atomics, shuffles, cp.async, ldmatrix, ld/st widths and orders, warp and
CTA reductions, break/continue."""
import numpy as np

from tvm.script import tirx as T

from .corpus import case

CG = "tests/python/tirx/codegen/test_codegen_cuda.py"


def _zeros(*specs):
    return lambda rng: [np.zeros(s, d) for s, d in specs]


# ---- test_codegen_cuda.py -------------------------------------------------------------------------
@case("atomic_add", f"{CG}::test_cuda_atomic_add", inputs=_zeros((1, "int32"), (1, "float32")),
      reference=lambda a: {0: np.ones(1, np.int32), 1: np.ones(1, np.float32)})
def atomic_add():
    @T.prim_func
    def main(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "float32")):
        T.device_entry()
        cta_id = T.cta_id([1])
        tx = T.thread_id([32])
        if tx == 0:
            T.cuda.atomic_add(A.data, T.int32(1))
            T.cuda.atomic_add(B.data, T.float32(1.0))
    return main


def _cas_in(rng):
    a = np.zeros((16, 16), np.int32)
    a[0, 0] = 1
    return [a]


def _cas_ref(a):
    want = a[0].copy()
    want[0, 0] = 2
    return {0: want}


@case("atomic_cas", f"{CG}::test_cuda_atomic_cas", inputs=_cas_in, reference=_cas_ref)
def atomic_cas():
    @T.prim_func
    def main(A: T.Buffer((16, 16), "int32")):
        T.device_entry()
        cta_id = T.cta_id([1])
        tx = T.thread_id([32])
        if tx == 0:
            T.cuda.atomic_cas(A.data, T.int32(1), T.int32(2))
    return main


@case("func_call_add_one", f"{CG}::test_cuda_func_call",
      inputs=lambda rng: [rng.integers(0, 10, (16, 16)).astype(np.int32), np.zeros((16, 16), np.int32)],
      reference=lambda a: {1: a[0] + 1},
      note="a user's own CUDA device function: refused by name")
def func_call_add_one():
    add_one = """
__device__ int32_t add_one(int32_t a) {
    return a + 1;
}
"""

    @T.prim_func
    def main(a: T.Buffer((16, 16), "int32"), b: T.Buffer((16, 16), "int32")):
        T.device_entry()
        cta_id = T.cta_id([1])
        tx = T.thread_id([32])
        if tx == 0:
            for i, j in T.grid(16, 16):
                b[i, j] = T.cuda.func_call(
                    "add_one", a[i, j], source_code=add_one, return_type="int32"
                )
    return main


@case("warp_shuffle_xor_sync", f"{CG}::test_warp_shuffle_xor_sync", inputs=_zeros((32, "float32")),
      reference=lambda a: {0: np.full(32, 496, np.float32)})
def warp_shuffle_xor_sync():
    # fmt: off
    @T.prim_func
    def func(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, (32,), dtype="float32", align=16)

        T.device_entry()
        cta_id = T.cta_id([1])
        warp_id = T.warp_id([1])
        lane_id = T.lane_id([32])

        A_local = T.alloc_buffer([1], "float32", scope="local")
        i = T.alloc_buffer([1], "int32", scope="local")

        A_local[0] = T.float32(31 - lane_id)
        i[0] = 16
        while i[0] >= 1:
            A_local[0] += T.tvm_warp_shuffle_xor(0xFFFFFFFF, A_local[0], i[0], 32, 32)
            i[0] = i[0] // 2

        A[lane_id] = A_local[0]
        # fmt: on
    return func


def _cp_async_kernel(cp_size, cache_hint, prefetch_size, predicate, fill_mode):
    N = cp_size // 2

    cop = "cg" if cp_size == 16 else "ca"
    cache_tok = ".L2::cache_hint" if cache_hint else ""
    pref_tok = "" if prefetch_size == -1 else f".L2::{prefetch_size}B"
    chain = f"cp.async.{cop}.shared.global{cache_tok}{pref_tok}"
    cache_args = (T.uint64(0x14F0000000000000),) if cache_hint else ()
    has_pred = not (isinstance(predicate, int) and predicate == -1)
    src_size = None
    if fill_mode == "zero":
        from tvm.tirx.op import if_then_else

        src_size = T.cast(if_then_else(predicate != 0, cp_size, 0), "uint32")

    # fmt: off
    @T.prim_func
    def main(A: T.Buffer((N), "float16")):
        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([32])
        A_shared = T.alloc_shared([N], "float16")
        for i in T.vectorized(N):
            A_shared[i] = 5.0
        T.ptx.fence.proxy.async_.shared__cta()
        if fill_mode == "zero":
            T.ptx[chain](A_shared.ptr_to([0]), A.ptr_to([0]), cp_size, src_size, *cache_args)
        elif has_pred:
            T.ptx[chain](A_shared.ptr_to([0]), A.ptr_to([0]), cp_size, *cache_args, pred=predicate)
        else:
            T.ptx[chain](A_shared.ptr_to([0]), A.ptr_to([0]), cp_size, *cache_args)
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        for i in T.serial(N):
            A[i] = A_shared[i] + 1.0
        # fmt: on
    return main


def _cp_async_ref(cp_size, predicate, fill_mode):
    N = cp_size // 2
    want = np.ones(N, np.float16) * 2
    if int(predicate) == 0:
        want = np.ones(N, np.float16) * (1 if fill_mode == "zero" else 6)
    return lambda a: {0: want}


for _size, _hint, _pref, _pred, _fill in [(4, "", -1, -1, ""), (8, "", 64, -1, ""), (16, "", 128, -1, ""),
                                          (16, "evict_last", 256, -1, ""), (8, "", -1, 1, ""), (16, "", -1, 0, ""),
                                          (16, "", -1, 1, "zero"), (8, "", -1, 0, "zero")]:
    _p = _pred if _pred == -1 else T.int32(_pred)
    case(f"cp_async[{_size}-{_hint or 'nohint'}-{_pref}-{_pred}-{_fill or 'nofill'}]",
         f"{CG}::test_ptx_cp_async[{_fill}-{_p}-{_pref}-{_hint}-{_size}]",
         inputs=lambda rng, n=_size // 2: [np.ones(n, np.float16)],
         reference=_cp_async_ref(_size, _pred, _fill))(
        lambda a=(_size, _hint, _pref, _p, _fill): _cp_async_kernel(*a))


def _ldmatrix_kernel(trans, num):
    # fmt: off
    @T.prim_func
    def main(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16")):
        T.device_entry()
        cta_id = T.cta_id([1])
        tx = T.thread_id([32])
        A_shared = T.alloc_shared([16, 16], "float16")
        if tx == 0:
            for i, j in T.grid(16, 16):
                A_shared[i, j] = A[i, j]
        T.cuda.cta_sync()
        A_local = T.alloc_local([8], "float16")
        A_local[0] = -1.0
        A_words = A_local.view("uint32")
        if num == 1:
            T.ptx[f"ldmatrix.sync.aligned.m8n8.x1{'.trans' if trans else ''}.shared.b16"](
                A_words[0],
                A_shared.ptr_to([tx % 16, tx // 16 * 8]),
            )
        elif num == 2:
            T.ptx[f"ldmatrix.sync.aligned.m8n8.x2{'.trans' if trans else ''}.shared.b16"](
                A_words[0],
                A_words[1],
                A_shared.ptr_to([tx % 16, tx // 16 * 8]),
            )
        else:
            T.ptx[f"ldmatrix.sync.aligned.m8n8.x4{'.trans' if trans else ''}.shared.b16"](
                A_words[0],
                A_words[1],
                A_words[2],
                A_words[3],
                A_shared.ptr_to([tx % 16, tx // 16 * 8]),
            )
        for i in range(8):
            row: T.let = (i // 2) % 2 * 8
            col: T.let = (i // 4) * 8
            B[row + tx // 4, col + tx % 4 * 2 + i % 2] = A_local[i]
        # fmt: on
    return main


def _ldmatrix_ref(trans, num):
    def ref(a):
        A_np = a[0]
        B_ref = np.zeros((16, 16), dtype="float16")
        t = (lambda m: m.T) if trans else (lambda m: m)
        B_ref[0:8, 0:8] = t(A_np[0:8, 0:8])
        if num >= 2:
            B_ref[8:16, 0:8] = t(A_np[8:16, 0:8])
        if num == 4:
            B_ref[0:8, 8:16] = t(A_np[0:8, 8:16])
            B_ref[8:16, 8:16] = t(A_np[8:16, 8:16])
        if num == 1:       # A_local[2..7] keep their (uninitialised, zero) values, A_local[1] too
            pass
        return {1: B_ref}
    return ref


def _ldmatrix_in(rng):
    return [np.arange(16 * 16, dtype="float16").reshape((16, 16)), np.zeros((16, 16), np.float16)]


for _trans in (False, True):
    for _num in (1, 2, 4):
        case(f"ldmatrix[{'trans' if _trans else 'notrans'}-x{_num}]", f"{CG}::test_ptx_ldmatrix[{_num}-{_trans}]",
             inputs=_ldmatrix_in, reference=_ldmatrix_ref(_trans, _num),
             note="registers the .x1/.x2 forms do not write are stored as they are (zero here)",
             gpu_differs="" if _num == 4 else "B's other quadrants are uninitialised registers (arbitrary on a GPU)")(
            lambda a=(_trans, _num): _ldmatrix_kernel(*a))


@case("uint32_loop_var", f"{CG}::test_uint32_loop_var_runs_correctly",
      inputs=lambda rng: [np.arange(128, dtype="int32"), np.zeros(128, np.int32)],
      reference=lambda a: {1: a[0] * 4 + 6})
def uint32_loop_var():
    @T.prim_func
    def main(A: T.Buffer((128,), "int32"), B: T.Buffer((128,), "int32")):
        T.device_entry()
        _ = T.cta_id([1])
        tx = T.thread_id([128], dtype="uint32")
        acc = T.alloc_buffer((1,), "int32", scope="local")
        acc[0] = 0
        for k in T.serial(4, dtype="uint32"):
            acc[0] = acc[0] + A[tx] + T.int32(k)
        B[tx] = acc[0]
    return main


@case("ld_acquire_volatile", f"{CG}::test_ptx_ld_acquire_and_volatile_codegen",
      inputs=lambda rng: [np.array([0x123456789], np.uint64), np.array([-7], np.int32), np.array([9], np.uint32)],
      reference=lambda a: {0: a[0], 1: a[1], 2: a[2]})
def ld_acquire_volatile():
    @T.prim_func
    def main(A: T.Buffer((1,), "uint64"), B: T.Buffer((1,), "int32"), C: T.Buffer((1,), "uint32")):
        T.device_entry()
        tx = T.thread_id([32])
        if tx == 0:
            T.ptx.ld.acquire.gpu.global_.u64(A[0], A.data)
            T.ptx.ld.acquire.sys.global_.s32(B[0], B.data)
            T.ptx.ld.acquire.gpu.global_.b32(C[0], C.data)
            T.ptx.ld.acquire.gpu.global_.b32(B[0], B.data)
            T.ptx.ld.volatile.global_.u64(A[0], A.data)
    return main


@case("ldg_vector_scatter", f"{CG}::test_cuda_ldg_vector_scatter_codegen",
      inputs=lambda rng: [rng.integers(-100, 100, 4).astype(np.int32), np.zeros(4, np.int32)],
      reference=lambda a: {1: a[0]})
def ldg_vector_scatter():
    @T.prim_func
    def main(src: T.Buffer((4,), "int32"), out: T.Buffer((4,), "int32")):
        T.device_entry()
        tx = T.thread_id([32])
        tmp0 = T.alloc_local((1,), "int32")
        tmp1 = T.alloc_local((1,), "int32")
        tmp2 = T.alloc_local((1,), "int32")
        tmp3 = T.alloc_local((1,), "int32")
        if tx == 0:
            T.cuda.ldg(
                src.data,
                "int32",
                dst=(
                    tmp0.ptr_to([0]),
                    tmp1.ptr_to([0]),
                    tmp2.ptr_to([0]),
                    tmp3.ptr_to([0]),
                ),
                vec="v4",
            )
            out[0] = tmp0[0]
            out[1] = tmp1[0]
            out[2] = tmp2[0]
            out[3] = tmp3[0]
    return main


# ---- test_ptx_ld_st_ops.py -------------------------------------------------------------------------
LDST = "tests/python/tirx/codegen/test_ptx_ld_st_ops.py"
_SHARED_COPY_CASES = {
    16: {"nelems": 4, "smem_dtype": "uint32", "tmp_dtype": "uint32", "fill_offset": 1},
    8: {"nelems": 2, "smem_dtype": "uint32", "tmp_dtype": "uint32", "fill_offset": 10},
    4: {"nelems": 1, "smem_dtype": "uint32", "tmp_dtype": "uint32", "fill_value": 42},
    2: {"nelems": 1, "smem_dtype": "float16", "tmp_dtype": "uint16", "fill_fp16": 7.0},
    1: {"nelems": 1, "smem_dtype": "uint8", "tmp_dtype": "uint32", "fill_u8": 255},
}


def _expected_values(num_bytes: int) -> np.ndarray:
    spec = _SHARED_COPY_CASES[num_bytes]
    if "fill_offset" in spec:
        off, nelems = spec["fill_offset"], spec["nelems"]
        return np.array([off + i for i in range(nelems)], dtype=np.uint32)
    if "fill_fp16" in spec:
        return np.array([spec["fill_fp16"]], dtype=np.float16)
    if "fill_u8" in spec:
        return np.array([spec["fill_u8"]], dtype=np.uint8)
    return np.array([spec["fill_value"]], dtype=np.uint32)


def _shared_scratch_copy_kernel(num_bytes: int):
    from tvm.tirx.cuda.tile_primitive.copy._common import copy_ptx_form

    spec = _SHARED_COPY_CASES[num_bytes]
    smem_dtype = spec["smem_dtype"]
    nelems = spec["nelems"]
    fill_offset = spec.get("fill_offset")
    fill_value = spec.get("fill_value")
    fill_fp16 = spec.get("fill_fp16")
    fill_u8 = spec.get("fill_u8")
    tail, lanes, reg_dtype = copy_ptx_form(num_bytes)
    ld_chain, st_chain = f"ld.shared.{tail}", f"st.shared.{tail}"

    @T.prim_func
    def func(out_ptr: T.handle):
        out = T.match_buffer(out_ptr, (nelems,), smem_dtype)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        lane = T.lane_id([32])
        src_buf = T.alloc_buffer((nelems,), smem_dtype, scope="shared")
        dst_buf = T.alloc_buffer((nelems,), smem_dtype, scope="shared")
        tmp = T.alloc_local((lanes,), reg_dtype)
        if fill_offset is not None:
            if lane < nelems:
                src_buf[lane] = T.uint32(lane + fill_offset)
        elif fill_fp16 is not None:
            if lane == 0:
                src_buf[0] = T.float16(fill_fp16)
        elif fill_u8 is not None:
            if lane == 0:
                src_buf[0] = T.uint8(fill_u8)
        elif lane == 0:
            src_buf[0] = T.uint32(fill_value)
        T.cuda.cta_sync()
        if lane == 0:
            T.ptx[ld_chain](*[tmp[i] for i in range(lanes)], src_buf.ptr_to([0]))
            T.ptx[st_chain](dst_buf.ptr_to([0]), *[tmp[i] for i in range(lanes)])
        T.cuda.cta_sync()
        if lane < nelems:
            out[lane] = dst_buf[lane]

    return func


for _nb, _tag in ((16, "128b"), (8, "64b"), (4, "32b"), (2, "16b"), (1, "8b")):
    case(f"ld_st_shared_copy[{_tag}]", f"{LDST}::test_ptx_ld_st_shared_copy_gpu[{_tag}]",
         inputs=lambda rng, nb=_nb: [np.zeros_like(_expected_values(nb))],
         reference=lambda a, nb=_nb: {0: _expected_values(nb)})(lambda nb=_nb: _shared_scratch_copy_kernel(nb))


@case("ld_st_immediate_offset", f"{LDST}::test_ptx_ld_st_immediate_offset_codegen",
      inputs=lambda rng: [np.arange(1, 5, dtype=np.uint64) * np.uint64(0x100000001), np.zeros(4, np.uint64)],
      reference=lambda a: {1: np.concatenate([np.zeros(2, np.uint64), a[0][2:]])})
def ld_st_immediate_offset():
    @T.prim_func
    def main(src: T.Buffer((4,), "uint64"), out: T.Buffer((4,), "uint64")):
        T.device_entry()
        tx = T.thread_id([32])
        values = T.alloc_local((2,), "uint64")
        if tx == 0:
            T.ptx.ld.global_.v2.b64(values[0], values[1], T.ptx.addr(src.data, 16))
            T.ptx.st.global_.v2.b64(T.ptx.addr(out.data, 16), values[0], values[1])
    return main


@case("ld_st_codegen_shared_v4", f"{LDST}::test_ptx_ld_st_codegen_emits_shared_asm",
      inputs=_zeros((4, "uint32")), reference=lambda a: {0: np.zeros(4, np.uint32)},
      note="stores its uninitialised registers (zero in the emulator; arbitrary on a GPU)",
      gpu_differs="it stores uninitialised registers")
def ld_st_codegen_shared_v4():
    from tvm.script.tirx import tile as Tx

    # fmt: off
    @T.prim_func
    def copy_kernel(d_ptr: T.handle) -> None:
        D = T.match_buffer(d_ptr, (4,), "uint32")
        T.device_entry()
        T.warp_id([4])
        T.cta_id([1])
        T.warpgroup_id([1])
        tid_in_wg = T.thread_id_in_wg([128])
        smem = T.alloc_buffer((4,), "uint32", scope="shared")
        reg = T.alloc_local((4,), "uint32")
        if tid_in_wg == 0:
            T.ptx.st.shared.v4.u32(smem.ptr_to([0]), reg[0], reg[1], reg[2], reg[3])
        T.cuda.cta_sync()
        if tid_in_wg == 0:
            T.ptx.ld.shared.v4.u32(reg[0], reg[1], reg[2], reg[3], smem.ptr_to([0]))
        Tx.copy(D[0:4], reg[:])
    # fmt: on
    return copy_kernel


@case("ld_vector_scatter_dst", f"{LDST}::test_ptx_ld_vector_scatter_dst_codegen",
      inputs=lambda rng: [rng.integers(-1000, 1000, 4).astype(np.int32), np.zeros(4, np.int32)],
      reference=lambda a: {1: a[0]})
def ld_vector_scatter_dst():
    @T.prim_func
    def copy_kernel(src_ptr: T.handle, out_ptr: T.handle) -> None:
        src = T.match_buffer(src_ptr, (4,), "int32")
        out = T.match_buffer(out_ptr, (4,), "int32")
        T.device_entry()
        tx = T.thread_id([32])
        tmp0 = T.alloc_local((1,), "int32")
        tmp1 = T.alloc_local((1,), "int32")
        tmp2 = T.alloc_local((1,), "int32")
        tmp3 = T.alloc_local((1,), "int32")
        if tx == 0:
            T.ptx["ld.global.nc.v4.s32"](tmp0[0], tmp1[0], tmp2[0], tmp3[0], src.data)
            out[0] = tmp0[0]
            out[1] = tmp1[0]
            out[2] = tmp2[0]
            out[3] = tmp3[0]
    return copy_kernel


# ---- test_cuda_warp_reduce.py ----------------------------------------------------------------------
WR = "tests/python/tirx/codegen/test_cuda_warp_reduce.py"


def _warp_reduce_kernel(op, width, base):
    fn = {"sum": T.cuda.warp_sum, "max": T.cuda.warp_max, "min": T.cuda.warp_min}[op]
    del fn

    if op == "sum":
        @T.prim_func
        def func(out_ptr: T.handle):
            out = T.match_buffer(out_ptr, (32,), "float32")
            T.device_entry()
            cta_id = T.cta_id([1])
            warp_id = T.warp_id([1])
            lane = T.lane_id([32])
            val: T.f32 = T.float32(lane + base)
            val = T.cuda.warp_sum(val, width=width)
            out[lane] = val
    elif op == "max":
        @T.prim_func
        def func(out_ptr: T.handle):
            out = T.match_buffer(out_ptr, (32,), "float32")
            T.device_entry()
            cta_id = T.cta_id([1])
            warp_id = T.warp_id([1])
            lane = T.lane_id([32])
            val: T.f32 = T.float32(lane + base)
            val = T.cuda.warp_max(val, width=width)
            out[lane] = val
    else:
        @T.prim_func
        def func(out_ptr: T.handle):
            out = T.match_buffer(out_ptr, (32,), "float32")
            T.device_entry()
            cta_id = T.cta_id([1])
            warp_id = T.warp_id([1])
            lane = T.lane_id([32])
            val: T.f32 = T.float32(lane + base)
            val = T.cuda.warp_min(val, width=width)
            out[lane] = val
    return func


def _warp_reduce_ref(op, width, base):
    v = (np.arange(32) + base).astype(np.float32).reshape(-1, width)
    r = {"sum": v.sum(axis=1), "max": v.max(axis=1), "min": v.min(axis=1)}[op]
    return lambda a: {0: np.repeat(r, width).astype(np.float32)}


for _name, _op, _w, _b in [("test_warp_sum_full", "sum", 32, 1), ("test_warp_sum_partial_8", "sum", 8, 1),
                           ("test_warp_max_partial_4", "max", 4, 1), ("test_warp_min_full", "min", 32, 1),
                           ("test_warp_sum_partial_2", "sum", 2, 0), ("test_warp_sum_all_widths[16]", "sum", 16, 1)]:
    case(_name.replace("test_", ""), f"{WR}::{_name}", inputs=_zeros((32, "float32")),
         reference=_warp_reduce_ref(_op, _w, _b))(lambda a=(_op, _w, _b): _warp_reduce_kernel(*a))


# ---- test_cuda_cta_reduce.py -----------------------------------------------------------------------
CR = "tests/python/tirx/codegen/test_cuda_cta_reduce.py"


def _cta_reduce_kernel(op, NUM_WARPS):
    N = NUM_WARPS * 32
    if op == "sum":
        @T.prim_func
        def func(out_ptr: T.handle):
            out = T.match_buffer(out_ptr, (N,), "float32")
            T.device_entry()
            cta_id = T.cta_id([1])
            warp_id = T.warp_id([NUM_WARPS])
            lane_id = T.lane_id([32])
            tid = T.thread_id([N])
            scratch = T.alloc_buffer((NUM_WARPS,), "float32", scope="shared")
            val: T.f32 = T.float32(tid + 1)
            val = T.cuda.cta_sum(val, NUM_WARPS, scratch.ptr_to([0]))
            out[tid] = val
    elif op == "max":
        @T.prim_func
        def func(out_ptr: T.handle):
            out = T.match_buffer(out_ptr, (N,), "float32")
            T.device_entry()
            cta_id = T.cta_id([1])
            warp_id = T.warp_id([NUM_WARPS])
            lane_id = T.lane_id([32])
            tid = T.thread_id([N])
            scratch = T.alloc_buffer((NUM_WARPS,), "float32", scope="shared")
            val: T.f32 = T.float32(tid + 1)
            val = T.cuda.cta_max(val, NUM_WARPS, scratch.ptr_to([0]))
            out[tid] = val
    else:
        @T.prim_func
        def func(out_ptr: T.handle):
            out = T.match_buffer(out_ptr, (N,), "float32")
            T.device_entry()
            cta_id = T.cta_id([1])
            warp_id = T.warp_id([NUM_WARPS])
            lane_id = T.lane_id([32])
            tid = T.thread_id([N])
            scratch = T.alloc_buffer((NUM_WARPS,), "float32", scope="shared")
            val: T.f32 = T.float32(tid + 1)
            val = T.cuda.cta_min(val, NUM_WARPS, scratch.ptr_to([0]))
            out[tid] = val
    return func


def _cta_reduce_ref(op, nw):
    n = nw * 32
    r = {"sum": n * (n + 1) / 2, "max": n, "min": 1}[op]
    return lambda a: {0: np.full(n, r, np.float32)}


for _name, _op, _nw in [("test_cta_sum_4_warps", "sum", 4), ("test_cta_sum_8_warps", "sum", 8),
                        ("test_cta_max_4_warps", "max", 4), ("test_cta_min_4_warps", "min", 4),
                        ("test_cta_sum_1_warp", "sum", 1), ("test_cta_sum_all_warp_counts[16]", "sum", 16)]:
    case(_name.replace("test_", ""), f"{CR}::{_name}", inputs=lambda rng, n=_nw * 32: [np.zeros(n, np.float32)],
         reference=_cta_reduce_ref(_op, _nw))(lambda a=(_op, _nw): _cta_reduce_kernel(*a))


# ---- test_control_flow.py --------------------------------------------------------------------------
CF = "tests/python/tirx/test_control_flow.py"


@case("break_continue1", f"{CF}::test_break_continue1", inputs=_zeros((10, "int32")),
      reference=lambda a: {0: np.array([0, 1, 0, 3, 4, 5, 6, 0, 0, 0], np.int32)})
def break_continue1():
    # fmt: off
    @T.prim_func
    def func(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, (10,), "int32")

        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([32])
        for i in T.serial(10):
            if i == 2:
                continue
            if i == 7:
                break
            A[i] = i
        # fmt: on
    return func


@case("break_continue2", f"{CF}::test_break_continue2", inputs=_zeros((9, "int32")),
      reference=lambda a: {0: np.array([0, 10, 11, 20, 21, 0, 0, 0, 0], np.int32)})
def break_continue2():
    # fmt: off
    @T.prim_func
    def func(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, (9,), "int32")

        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([32])
        idx = T.alloc_buffer((1,), "int32", scope="local")
        idx[0] = 0
        for i in T.serial(3):
            if i == 0:
                idx[0] += 1
                continue
            for j in T.serial(3):
                A[idx[0]] = i * 10 + j
                idx[0] += 1
                if j == 1:
                    break
        # fmt: on
    return func


@case("break_continue3", f"{CF}::test_break_continue3", inputs=_zeros((10, "int32")),
      reference=lambda a: {0: np.array([0, 0, 2, 0, 4, 0, 6, 0, 0, 0], np.int32)})
def break_continue3():
    # fmt: off
    @T.prim_func
    def func(A_ptr: T.handle):
        A = T.match_buffer(A_ptr, (10,), "int32")

        T.device_entry()
        cta_id = T.cta_id([1])
        tid = T.thread_id([32])
        i = T.alloc_buffer((1,), "int32", scope="local")
        i[0] = 0
        while i[0] < 10:
            if (i[0] % 2) == 1:
                i[0] += 1
                continue
            A[i[0]] = i[0]
            i[0] += 1
            if i[0] == 7:
                break
        # fmt: on
    return func
