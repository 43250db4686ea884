"""NVSHMEM from TIRx: one-sided puts/gets (thread, warp and block scope), signals, ordering.

These kernels need several GPUs in one NVSHMEM job (``nvshmrun``/``nvshmemx_init_attr``), so an H200
on its own cannot run them. They compile to a cubin here when the NVSHMEM headers and
``libnvshmem_device.a`` are found (``NVSHMEM_HOME``, or the ``nvidia-nvshmem-cu13`` wheel): the CUDA
is compiled with ``-rdc=true`` and linked against the NVSHMEM device library with ``nvlink``.
All buffers are symmetric (allocated with ``nvshmem_malloc`` on every PE).
"""
from __future__ import annotations

from txlab.api_examples.example import Example, kernel_source

MULTI_GPU = "needs 2+ GPUs in one NVSHMEM job (nvshmrun / nvshmemx_init_attr); one H200 cannot run it"

EXCHANGE = kernel_source(
    "nvshmem_exchange",
    ('Src: T.Buffer((3, 1024), "float32"), Dst: T.Buffer((3, 1024), "float32"),',
     'Back: T.Buffer((3, 1024), "float32"), Sig: T.Buffer((4,), "uint64"),',
     'Out: T.Buffer((3,), "int64")'),
    threads=256,
    comment=('Phase 1: every PE puts its rows to the next PE in the ring and, after a global barrier, reads',
             'them back from the previous one: row 0 is one 16-byte piece per thread, row 1 one 512-byte',
             'slice per warp, row 2 the whole 4 KiB row from the block. nelems is in bytes.'),
    body='''
    warp = T.meta_var(tx // 32)
    me = T.nvshmem.my_pe()
    npes = T.nvshmem.n_pes()
    right = (me + 1) % npes
    left = (me + npes - 1) % npes
    T.nvshmem.putmem_nbi(T.address_of(Dst[0, tx * 4]), T.address_of(Src[0, tx * 4]), 16, right)
    T.nvshmem.putmem_nbi.warp(T.address_of(Dst[1, warp * 128]), T.address_of(Src[1, warp * 128]),
                              512, right)
    T.nvshmem.putmem_nbi.block(T.address_of(Dst[2, 0]), T.address_of(Src[2, 0]), 4096, right)
    T.nvshmem.quiet()          # my puts are complete at their target
    T.nvshmem.barrier_all()    # ... and everybody's puts are complete at me
    T.nvshmem.getmem_nbi(T.address_of(Back[0, tx * 4]), T.address_of(Dst[0, tx * 4]), 16, left)
    T.nvshmem.getmem_nbi.warp(T.address_of(Back[1, warp * 128]), T.address_of(Dst[1, warp * 128]),
                              512, left)
    T.nvshmem.getmem_nbi.block(T.address_of(Back[2, 0]), T.address_of(Dst[2, 0]), 4096, left)
    T.nvshmem.quiet()
    T.nvshmem.barrier_all()    # nobody overwrites Dst below while a neighbour still reads it
    # Phase 2: no global barrier: data and flag travel together (putmem_signal_nbi), or data,
    # fence, then a separate signal_op; the receiver waits on its own flags.
    T.nvshmem.putmem_signal_nbi(T.address_of(Dst[0, tx * 4]), T.address_of(Src[0, tx * 4]), 16,
                                T.address_of(Sig[0]), T.uint64(1), "add", right)
    T.nvshmem.putmem_signal_nbi.warp(T.address_of(Dst[1, warp * 128]), T.address_of(Src[1, warp * 128]),
                                     512, T.address_of(Sig[1]), T.uint64(1), "add", right)
    T.nvshmem.putmem_signal_nbi.block(T.address_of(Dst[2, 0]), T.address_of(Src[2, 0]), 4096,
                                      T.address_of(Sig[2]), T.uint64(1), "set", right)
    if tx == 0:
        T.nvshmem.fence()      # orders the puts above before the signal below (same target PE)
        T.nvshmem.signal_op(T.address_of(Sig[3]), T.uint64(7), "set", right)
        T.nvshmem.wait_until(T.address_of(Sig[0]), "eq", T.uint64(256))
        T.nvshmem.wait_until(T.address_of(Sig[1]), "eq", T.uint64(8))
        T.nvshmem.wait_until(T.address_of(Sig[2]), "eq", T.uint64(1))
        T.nvshmem.wait_until(T.address_of(Sig[3]), "eq", T.uint64(7))
        Out[0] = T.Cast("int64", me)
        Out[1] = T.Cast("int64", npes)
        Out[2] = T.Cast("int64", Sig[0] + Sig[1] + Sig[2] + Sig[3])  # 256 + 8 + 1 + 7 = 272
''',
)

EXAMPLES = [
    Example(
        id="nvshmem_exchange", source=EXCHANGE, arch="sm_90a", needs=("nvshmem",), not_on_h200=MULTI_GPU,
        uses=("Tx.nvshmem.my_pe", "Tx.nvshmem.n_pes", "Tx.nvshmem.putmem_nbi", "Tx.nvshmem.putmem_nbi.warp",
              "Tx.nvshmem.putmem_nbi.block", "Tx.nvshmem.getmem_nbi", "Tx.nvshmem.getmem_nbi.warp",
              "Tx.nvshmem.getmem_nbi.block", "Tx.nvshmem.quiet", "Tx.nvshmem.barrier_all",
              "Tx.nvshmem.putmem_signal_nbi", "Tx.nvshmem.putmem_signal_nbi.warp",
              "Tx.nvshmem.putmem_signal_nbi.block", "Tx.nvshmem.signal_op", "Tx.nvshmem.fence",
              "Tx.nvshmem.wait_until"),
        note="on 2+ PEs: Back == Src, Dst == the left neighbour's Src, Out == [pe, n_pes, 272]",
    ),
]
