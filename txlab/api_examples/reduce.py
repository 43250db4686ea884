"""Warp and CTA reductions, and the sm_80 redux.sync integer reductions."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

WARP = kernel_source(
    "warp_reductions",
    ('X: T.Buffer((128,), "float32"), U: T.Buffer((128,), "uint32"),',
     'Out: T.Buffer((6, 128), "float32")'),
    threads=128,
    body='''
    Out[0, tx] = T.cuda.warp_sum(X[tx])
    Out[1, tx] = T.cuda.warp_max(X[tx])
    Out[2, tx] = T.cuda.warp_min(X[tx])
    Out[3, tx] = T.cuda.warp_reduce(X[tx], "sum", 8)
    Out[4, tx] = T.Cast("float32", T.cuda.reduce_add_sync_u32(T.uint32(0xFFFFFFFF), U[tx]))
    Out[5, tx] = T.Cast("float32", T.cuda.reduce_min_sync_u32(T.uint32(0xFFFFFFFF), U[tx]))
''',
)

CTA = kernel_source(
    "cta_reductions", 'X: T.Buffer((256,), "float32"), Out: T.Buffer((4, 256), "float32")',
    threads=256,
    body='''
    scratch = T.alloc_buffer((8,), "float32", scope="shared")
    Out[0, tx] = T.cuda.cta_sum(X[tx], 8, scratch.data)
    T.cuda.cta_sync()  # every thread reads scratch[0] last; the next reduction's first stores overwrite it
    Out[1, tx] = T.cuda.cta_max(X[tx], 8, scratch.data)
    T.cuda.cta_sync()
    Out[2, tx] = T.cuda.cta_min(X[tx], 8, scratch.data)
    T.cuda.cta_sync()
    Out[3, tx] = T.cuda.cta_reduce(X[tx], "max", 8, scratch.data)
''',
)


def _warp_inputs():
    rng = np.random.default_rng(2)
    return [rng.integers(-100, 100, 128).astype(np.float32),
            rng.integers(0, 1000, 128).astype(np.uint32), np.zeros((6, 128), np.float32)]


def _warp_expected(X, U, Out):
    out = np.zeros((6, 128), np.float32)
    w = X.reshape(4, 32)
    u = U.reshape(4, 32).astype(np.float64)
    out[0] = np.repeat(w.sum(1), 32)
    out[1] = np.repeat(w.max(1), 32)
    out[2] = np.repeat(w.min(1), 32)
    out[3] = np.repeat(X.reshape(16, 8).sum(1), 8)  # width 8: groups of 8 lanes
    out[4] = np.repeat(u.sum(1), 32)
    out[5] = np.repeat(u.min(1), 32)
    return out


def _cta_inputs():
    rng = np.random.default_rng(3)
    return [rng.integers(-1000, 1000, 256).astype(np.float32), np.zeros((4, 256), np.float32)]


def _cta_expected(X, Out):
    return np.stack([np.full(256, X.sum()), np.full(256, X.max()), np.full(256, X.min()),
                     np.full(256, X.max())]).astype(np.float32)


EXAMPLES = [
    Example(
        id="warp_reductions", source=WARP, arch="sm_80",
        uses=("Tx.cuda.warp_sum", "Tx.cuda.warp_max", "Tx.cuda.warp_min", "Tx.cuda.warp_reduce",
              "Tx.cuda.reduce_add_sync_u32", "Tx.cuda.reduce_min_sync_u32"),
        inputs=_warp_inputs, expected=_warp_expected, outputs=("Out",),
        emits={"Tx.cuda.warp_sum": r"warp_reduce_sum_32\b", "Tx.cuda.warp_reduce": r"warp_reduce_sum_8\b"},
        note="integer-valued floats so the shuffle-tree sum is exact",
    ),
    Example(
        id="cta_reductions", source=CTA, arch="sm_80",
        uses=("Tx.cuda.cta_sum", "Tx.cuda.cta_max", "Tx.cuda.cta_min", "Tx.cuda.cta_reduce"),
        inputs=_cta_inputs, expected=_cta_expected,
        # cta_max and cta_reduce(..., "max") lower to the same helper: told apart by the Out row
        emits={"Tx.cuda.cta_max": r"\+ 256\)\] = tvm_builtin_cuda_cta_reduce_max_8|T tvm_builtin_cuda_cta_reduce_max_8",
               "Tx.cuda.cta_reduce": r"\+ 768\)\] = tvm_builtin_cuda_cta_reduce_max_8|T tvm_builtin_cuda_cta_reduce_max_8"},
    ),
]
