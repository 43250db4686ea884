"""Barriers and memory ordering: mbarrier waits, fences, atomics, polling waits, sleep, clock."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

ATOMICS = kernel_source(
    "atomics",
    ('Counter: T.Buffer((1,), "int32"), Slot: T.Buffer((1,), "int32"),',
     'Won: T.Buffer((256,), "int32")'),
    ctas=2, threads=128,
    body='''
    gid = cta * 128 + tx
    T.cuda.atomic_add(T.address_of(Counter[0]), 1)
    T.cuda.thread_fence()
    # Slot starts at -1: exactly one thread swaps in its id; the others see the winner's id.
    old = T.cuda.atomic_cas(T.address_of(Slot[0]), -1, gid)
    Won[gid] = T.Select(old == -1, 1, 0)
''',
)

MBAR = kernel_source(
    "mbarrier_handoff", 'Out: T.Buffer((128,), "int64")',
    threads=128,
    body='''
    bar = T.shared_scalar("uint64")
    data = T.alloc_buffer((128,), "int32", scope="shared")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(128))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    t0 = T.cuda.clock64()
    T.cuda.nano_sleep(100)
    data[tx] = tx * 3
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    # all 128 arrivals completed phase 0: every thread's write is visible
    Out[tx] = T.Cast("int64", data[127 - tx]) + T.Select(T.cuda.clock64() >= t0, T.int64(0), T.int64(1000000))
''',
)

CLUSTER_WAIT = '''
@T.prim_func
def mbarrier_cluster(Out: T.Buffer((256,), "int32")):
    T.device_entry()
    cta = T.cta_id([2])
    rank = T.cta_id_in_cluster([2])
    tx = T.thread_id([128])
    bar = T.shared_scalar("uint64")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(128))
    T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cluster_sync()
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar))
    T.cuda.mbarrier_wait_acquire_cluster(T.address_of(bar), 0)
    Out[cta * 128 + tx] = T.Cast("int32", rank) + 1
    T.cuda.cluster_sync()
'''

POLL = kernel_source(
    "flag_poll", 'Flag: T.Buffer((1,), "uint32"), Out: T.Buffer((64,), "uint32")',
    threads=64,
    body='''
    seen = T.local_scalar("uint32")
    if tx == 0:
        Flag[0] = T.uint32(5)
        T.cuda.thread_fence()
    T.cuda.wait_until(seen, T.address_of(Flag[0]), lambda v: v == T.uint32(5))
    Out[tx] = seen
''',
)

EXAMPLES = [
    Example(
        id="atomics", source=ATOMICS, arch="sm_80",
        uses=("Tx.cuda.atomic_add", "Tx.cuda.atomic_cas", "Tx.cuda.thread_fence"),
        inputs=lambda: [np.zeros(1, np.int32), np.full(1, -1, np.int32), np.zeros(256, np.int32)],
        expected=lambda C, S, W: {"Counter": np.array([256], np.int32)},
        invariant=lambda C, S, W: (None if W.sum() == 1 and S[0] == int(np.flatnonzero(W)[0])
                                   else f"atomic_cas: {int(W.sum())} winners, Slot={int(S[0])}"),
        note="256 atomic_adds give 256; exactly one atomic_cas winner, whose id is in Slot",
    ),
    Example(
        id="mbarrier_handoff", source=MBAR, arch="sm_90",
        uses=("Tx.cuda.mbarrier_wait", "Tx.cuda.clock64", "Tx.cuda.nano_sleep", "Tx.cuda.cta_sync"),
        inputs=lambda: [np.zeros(128, np.int64)],
        expected=lambda O: (3 * (127 - np.arange(128))).astype(np.int64),
    ),
    Example(
        id="mbarrier_cluster", source=CLUSTER_WAIT, arch="sm_90",
        uses=("Tx.cuda.mbarrier_wait_acquire_cluster", "Tx.cuda.cluster_sync"),
        inputs=lambda: [np.zeros(256, np.int32)],
        expected=lambda O: np.repeat(np.array([1, 2], np.int32), 128),
    ),
    Example(
        id="flag_poll", source=POLL, arch="sm_80",
        uses=("Tx.cuda.wait_until", "Tx.cuda.thread_fence"),
        inputs=lambda: [np.zeros(1, np.uint32), np.zeros(64, np.uint32)],
        expected=lambda F, O: np.full(64, 5, np.uint32), outputs=("Out",),
    ),
]
