"""Synchronization and warp participation: votes, shuffles, elect, named/CTA barriers."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

FULL = 0xFFFFFFFF

VOTE = kernel_source(
    "warp_vote", 'X: T.Buffer((128,), "int32"), Out: T.Buffer((12, 128), "uint32")',
    threads=128,
    body='''
    full = T.uint32(0xFFFFFFFF)
    Out[0, tx] = T.cuda.ballot_sync(full, X[tx] > 0)
    Out[1, tx] = T.Cast("uint32", T.cuda.any_sync(full, X[tx] > 100))
    Out[2, tx] = T.Cast("uint32", T.cuda.elect_sync())
    Out[3, tx] = T.cuda.__activemask()
    Out[4, tx] = T.Cast("uint32", T.cuda.__shfl_sync(full, X[tx], 3, 32))
    Out[5, tx] = T.Cast("uint32", T.cuda.__shfl_up_sync(full, X[tx], 1, 32))
    Out[6, tx] = T.Cast("uint32", T.cuda.__shfl_down_sync(full, X[tx], 1, 32))
    Out[7, tx] = T.Cast("uint32", T.cuda.__shfl_xor_sync(full, X[tx], 1, 32))
    Out[8, tx] = T.Cast("uint32", T.cuda.thread_rank())
    T.cuda.warp_sync()
    T.cuda.warpgroup_sync(1)
    Out[9, tx] = T.Cast("uint32", T.cuda.syncthreads_and(X[tx] > -1000))
    Out[10, tx] = T.Cast("uint32", T.cuda.syncthreads_or(X[tx] == 7))
    T.cuda.cta_sync()
    Out[11, tx] = T.cuda.ffs_u32(T.Cast("uint32", X[tx]))
''',
)


def _vote_inputs():
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 50, 128).astype(np.int32)
    x[5] = 7
    x[70] = 101  # only warp 2 sees a value > 100
    return [x, np.zeros((12, 128), np.uint32)]


def _vote_expected(X, Out):
    out = np.zeros((12, 128), np.uint32)
    lane = np.arange(128) % 32
    for w in range(4):
        s = slice(32 * w, 32 * w + 32)
        x = X[s]
        out[0, s] = int(sum(1 << i for i in range(32) if x[i] > 0))
        out[1, s] = int((x > 100).any())
        out[2, s] = (lane[s] == 0).astype(np.uint32)  # elect.sync picks the lowest active lane
        out[3, s] = FULL
        out[4, s] = int(x[3]) & FULL
        up = np.concatenate([x[:1], x[:-1]])
        down = np.concatenate([x[1:], x[-1:]])
        xor = x.reshape(16, 2)[:, ::-1].reshape(32)
        out[5, s] = up.astype(np.int64) & FULL
        out[6, s] = down.astype(np.int64) & FULL
        out[7, s] = xor.astype(np.int64) & FULL
    out[8] = np.arange(128)
    out[9] = 1
    out[10] = int((X == 7).any())
    xs = X.astype(np.int64) & FULL
    out[11] = [0 if v == 0 else (int(v) & -int(v)).bit_length() for v in xs]
    return out


EXAMPLES = [
    Example(
        id="warp_vote", source=VOTE, arch="sm_90",
        uses=("Tx.cuda.ballot_sync", "Tx.cuda.any_sync", "Tx.cuda.elect_sync", "Tx.cuda.__activemask",
              "Tx.cuda.__shfl_sync", "Tx.cuda.__shfl_up_sync", "Tx.cuda.__shfl_down_sync",
              "Tx.cuda.__shfl_xor_sync", "Tx.cuda.thread_rank", "Tx.cuda.warp_sync",
              "Tx.cuda.warpgroup_sync", "Tx.cuda.syncthreads_and", "Tx.cuda.syncthreads_or",
              "Tx.cuda.cta_sync", "Tx.cuda.ffs_u32"),
        inputs=_vote_inputs, expected=_vote_expected,
        emits={"Tx.cuda.__shfl_sync": r"__shfl_sync\(full_ptr"},  # not TVM's own warp-id broadcast
        note="row j of Out holds helper j's result per thread; checked bit-exactly",
    ),
]
