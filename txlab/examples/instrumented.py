"""CudaProfiler-instrumented example kernels (TIRx) for in-kernel timelines: ``load_compute_store``
and ``warp_specialized``. ``python -m txlab.examples.traces record-examples`` records them on a GPU.
"""
from __future__ import annotations

from enum import Enum

import numpy as np


def _profiled(name: str, body, *, num_blocks: int, threads: int, n_out: int, n_in: int, slots: int):
    """The frame both example kernels share: arguments (out f32[n_out], inp f32[n_in], prof
    u64[slots]) and ``num_blocks`` CTAs of ``threads``; ``body(out, inp, prof, bid, tid)``, a
    ``T.macro``, is the kernel's own work (the timer ring included). The kernel is named ``name``."""
    from tvm.script import tirx as T

    @T.prim_func
    def profiled(out_ptr: T.handle, inp_ptr: T.handle, prof_ptr: T.handle):
        out = T.match_buffer(out_ptr, (n_out,), "float32")
        inp = T.match_buffer(inp_ptr, (n_in,), "float32")
        prof = T.match_buffer(prof_ptr, (slots,), "uint64")
        T.device_entry()
        bid = T.cta_id([num_blocks])
        tid = T.thread_id([threads])
        body(out, inp, prof, bid, tid)

    return profiled.with_attr("global_symbol", name)


def example_kernel(kind: str = "load_compute_store", *, num_blocks: int = 8, iters: int = 4000,
                   tiles: int = 6, slots: int = 4096):
    """A CudaProfiler-instrumented example kernel (TIRx PrimFunc) and its event names.

    ``load_compute_store``: 128 threads per block, one group; ``load`` / ``compute`` (an
    ``iters``-long FMA chain) / ``store``. Params: (out f32[N], inp f32[N], prof u64[slots]).

    ``warp_specialized``: 384 threads = 3 warpgroups, one profiler group per warpgroup. Warpgroup 0
    produces tiles into a 2-stage shared buffer, warpgroups 1 and 2 consume them (2 has twice the
    work), a CTA barrier per stage hands tiles over, so loading tile k+1 overlaps computing tile k.
    Params: (out f32[num_blocks*256], inp f32[num_blocks*tiles*128], prof u64[slots]).
    """
    from tvm.script import tirx as T

    if kind == "load_compute_store":
        BLOCK = 128
        N = num_blocks * BLOCK
        STRIDE = num_blocks

        class Ev(Enum):
            load = 0
            compute = 1
            store = 2

        @T.macro
        def load_compute_store(out, inp, prof, bid, tid):
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            T.cuda.timer_init(prof.data, tag.data, off.data, 1, 0)
            T.cuda.timer_start(Ev.load, prof.data, tag.data, off.data, STRIDE, tid == 0)
            x: T.f32 = inp[bid * BLOCK + tid]
            T.cuda.timer_end(Ev.load, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_start(Ev.compute, prof.data, tag.data, off.data, STRIDE, tid == 0)
            acc: T.f32 = T.float32(0)
            for _ in range(iters):
                acc = acc * T.float32(1.0001) + x
            T.cuda.timer_end(Ev.compute, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_start(Ev.store, prof.data, tag.data, off.data, STRIDE, tid == 0)
            out[bid * BLOCK + tid] = acc
            T.cuda.timer_end(Ev.store, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, tid == 0)

        kernel = _profiled("load_compute_store", load_compute_store, num_blocks=num_blocks, threads=BLOCK,
                           n_out=N, n_in=N, slots=slots)
        return kernel, Ev

    if kind == "warp_specialized":
        WG = 128
        GROUPS = 3
        STRIDE = num_blocks * GROUPS

        class Ev(Enum):
            load_tile = 0
            wait = 1
            compute = 2
            store = 3

        @T.macro
        def warp_specialized(out, inp, prof, bid, tid):
            smem = T.alloc_buffer((2, WG), "float32", scope="shared", align=16)
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            wg = tid // WG
            lane = tid % WG
            leader = lane == 0
            T.cuda.timer_init(prof.data, tag.data, off.data, GROUPS, wg)
            acc: T.f32 = T.float32(0)
            for k in range(tiles + 1):
                if wg == 0:
                    if k < tiles:
                        T.cuda.timer_start(Ev.load_tile, prof.data, tag.data, off.data, STRIDE, leader)
                        smem[k % 2, lane] = inp[(bid * tiles + k) * WG + lane]
                        T.cuda.timer_end(Ev.load_tile, prof.data, tag.data, off.data, STRIDE, leader)
                else:
                    if k > 0:
                        T.cuda.timer_start(Ev.compute, prof.data, tag.data, off.data, STRIDE, leader)
                        x: T.f32 = smem[(k - 1) % 2, lane]
                        for _ in range(iters * wg // 4):
                            acc = acc * T.float32(1.0001) + x
                        T.cuda.timer_end(Ev.compute, prof.data, tag.data, off.data, STRIDE, leader)
                T.cuda.timer_start(Ev.wait, prof.data, tag.data, off.data, STRIDE, leader)
                T.cuda.cta_sync()
                T.cuda.timer_end(Ev.wait, prof.data, tag.data, off.data, STRIDE, leader)
            if wg > 0:
                T.cuda.timer_start(Ev.store, prof.data, tag.data, off.data, STRIDE, leader)
                out[bid * 2 * WG + (wg - 1) * WG + lane] = acc
                T.cuda.timer_end(Ev.store, prof.data, tag.data, off.data, STRIDE, leader)
            T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, leader)

        kernel = _profiled("warp_specialized", warp_specialized, num_blocks=num_blocks, threads=GROUPS * WG,
                           n_out=num_blocks * 2 * WG, n_in=num_blocks * tiles * WG, slots=slots)
        return kernel, Ev
    raise ValueError(f"unknown example kernel {kind!r}: use 'load_compute_store' or 'warp_specialized'")


def example_inputs(kind: str = "load_compute_store", *, num_blocks: int = 8, tiles: int = 6):
    """Host arrays (out, inp) matching :func:`example_kernel`."""
    if kind == "load_compute_store":
        n = num_blocks * 128
        return np.zeros(n, np.float32), np.ones(n, np.float32)
    return np.zeros(num_blocks * 256, np.float32), np.ones(num_blocks * tiles * 128, np.float32)
