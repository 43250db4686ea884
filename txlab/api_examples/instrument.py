"""Instrumentation and fragment helpers: the TIRx timer ring (timer_*) and the 16x16 MMA
accumulator fill/store helpers (mma_fill / mma_store and their ``_legacy`` twins).

The IKET annotations (``Tx.cuda.iket.*``) live in :mod:`txlab.api_examples.iket`: they need
``transforms.LowerIket`` and NVIDIA's run-iket runtime.
"""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

TIMER = kernel_source(
    "timer_ring",
    ('Prof: T.Buffer((21,), "uint64"), X: T.Buffer((128,), "float32"),',
     'Y: T.Buffer((128,), "float32")'),
    ctas=2, threads=64,
    comment=('2 CTAs x 2 warps = 4 timer groups. Word 0 is the header (groups << 32 | CTAs); group g writes',
             'words 1 + g, 1 + g + 4, ... : (globaltimer_lo << 32) | (g << 12) | (event << 2) | kind,',
             'kind 0 = start, 1 = end, 3 = finalize. Lane 0 of each warp is the writer.'),
    preamble='''
import enum


class Event(enum.IntEnum):  # timer event ids (the timer helpers read .value)
    SCALE = 1
    BIAS = 2

''',
    body='''
    warp = T.meta_var(tx // 32)
    tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
    offset = T.alloc_buffer([1], "uint32", scope="local", align=8)
    i = cta * 64 + tx
    T.cuda.timer_init(Prof.data, tag.data, offset.data, 2, warp)
    T.cuda.timer_start(Event.SCALE, Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
    Y[i] = X[i] * T.float32(2)
    T.cuda.timer_end(Event.SCALE, Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
    T.cuda.timer_start(Event.BIAS, Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
    Y[i] = Y[i] + T.float32(1)
    T.cuda.timer_end(Event.BIAS, Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
    T.cuda.timer_finalize(Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
''',
)


def _timer_expected(Prof, X, Y):
    low = np.zeros(21, np.uint64)
    low[0] = (2 << 32) | 2
    for g in range(4):
        for k, bits in enumerate([(1 << 2) | 0, (1 << 2) | 1, (2 << 2) | 0, (2 << 2) | 1, 3]):
            low[1 + g + 4 * k] = (g << 12) | bits
    return {"Y": X * 2 + 1, "Prof": low}


def _timer_compare_low(Prof, X, Y):
    """The timestamps (high words) are real clock values: compare only the low words exactly and
    require each group's timestamps to be non-decreasing (mod 2^32)."""
    hi = (Prof[1:] >> np.uint64(32)).astype(np.int64).reshape(5, 4)
    steps = (np.diff(hi, axis=0) % (1 << 32))
    if (steps > 10**9).any():
        return f"timestamps go backwards or jump by > 1 s: {hi.T.tolist()}"
    Prof[1:] &= np.uint64(0xFFFFFFFF)  # the exact check below is on the low words
    return None


MMA = kernel_source(
    "mma_fragment_store",
    ('X: T.Buffer((32, 8), "float32"), Out: T.Buffer((16, 16), "float32"),',
     'Out2: T.Buffer((16, 16), "float32")'),
    threads=32,
    comment=('One warp holds a 16x16 f32 accumulator as 32 threads x 8 registers (the ldmatrix/mma.sync',
             'm16n8k16 layout). mma_fill zeroes the fragment, we add X, mma_store scatters it to a tile.'),
    preamble='''
# mma_store's codegen inverts the fragment layout "tirx.index_map.shared_16x16_to_ldmatrix_32x8_layout",
# which TVM 0.27 registers only in tvm.s_tir.tensor_intrin.cuda (a ~100 s import): register the map here.
import tvm_ffi

_LAYOUT = "tirx.index_map.shared_16x16_to_ldmatrix_32x8_layout"
if tvm.get_global_func(_LAYOUT, allow_missing=True) is None:
    @tvm_ffi.register_global_func(_LAYOUT)
    def _fragment_of(ind):  # element (i, j) of a 16x16 tile -> (lane, register)
        i, j = ind[0], ind[1]
        return tvm.runtime.convert([4 * (i % 8) + (j % 8) // 2, 4 * (j // 8) + (i // 8) * 2 + (j % 2)])

''',
    body='''
    frag = T.alloc_buffer((8,), "float32", scope="local")
    frag2 = T.alloc_buffer((8,), "float32", scope="local")
    T.cuda.mma_fill("float32", 8, frag.data, 0)
    T.cuda.mma_fill_legacy("float32", 8, frag2.data, 0)
    for k in T.unroll(8):
        frag[k] = frag[k] + X[tx, k]
        frag2[k] = frag2[k] - X[tx, k]
    T.cuda.mma_store("float32", 16, 16, T.address_of(Out[0, 0]), frag.data, 0, 16)
    T.cuda.mma_store_legacy("float32", 16, 16, T.address_of(Out2[0, 0]), frag2.data, 0, 16)
''',
)


def _ldmatrix_32x8(i, j):
    """(thread, register) holding element (i, j) of a 16x16 tile."""
    return 4 * (i % 8) + (j % 8) // 2, 4 * (j // 8) + (i // 8) * 2 + (j % 2)


def _mma_expected(X, Out, Out2):
    tile = np.zeros((16, 16), np.float32)
    for i in range(16):
        for j in range(16):
            t, r = _ldmatrix_32x8(i, j)
            tile[i, j] = X[t, r]
    return {"Out": tile, "Out2": -tile}


EXAMPLES = [
    Example(
        id="timer_ring", source=TIMER, arch="sm_80",
        uses=("Tx.cuda.timer_init", "Tx.cuda.timer_start", "Tx.cuda.timer_end", "Tx.cuda.timer_finalize"),
        inputs=lambda: [np.zeros(21, np.uint64), np.arange(128, dtype=np.float32), np.zeros(128, np.float32)],
        expected=_timer_expected, outputs=("Y", "Prof"), invariant=_timer_compare_low,
        emits={"Tx.cuda.timer_init": r"tvm_builtin_timer_init_cuda", "Tx.cuda.timer_start": r"timer_start_cuda",
               "Tx.cuda.timer_end": r"timer_end_cuda", "Tx.cuda.timer_finalize": r"timer_finalize_cuda"},
        note="header, tags and event bits checked exactly; timestamps non-decreasing per group",
    ),
    Example(
        id="mma_fragment_store", source=MMA, arch="sm_80",
        uses=("Tx.cuda.mma_fill", "Tx.cuda.mma_fill_legacy", "Tx.cuda.mma_store", "Tx.cuda.mma_store_legacy"),
        inputs=lambda: [np.arange(256, dtype=np.float32).reshape(32, 8), np.full((16, 16), 7, np.float32),
                        np.full((16, 16), 7, np.float32)],
        expected=_mma_expected, outputs=("Out", "Out2"),
        emits={"Tx.cuda.mma_fill": r"\bfrag_ptr\[0 \+ i\] = 0\.0", "Tx.cuda.mma_fill_legacy": r"frag2_ptr\[0 \+ i\] = 0\.0",
               "Tx.cuda.mma_store": r"\(&\(Out_ptr\[0\]\)\)\[", "Tx.cuda.mma_store_legacy": r"\(&\(Out2_ptr\[0\]\)\)\["},
        note="element (i, j) of the tile comes from thread 4(i%8)+(j%8)//2, register 4(j//8)+2(i//8)+j%2",
    ),
]
