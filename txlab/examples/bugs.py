"""Kernels with one planted bug each, and their fixed twins (notebook 10, scripts/sanitize_h200.py).

=====================  =====================  ==========================================================
bug                    found by               what is wrong
=====================  =====================  ==========================================================
``oob_write``          memcheck               the guard is ``i <= n``: thread ``n`` writes one past ``B``
``shared_race``        racecheck              a thread reads another thread's shared element with no
                                              barrier between the write and the read
``divergent_barrier``  synccheck              ``cta_sync`` inside ``if lane < 16``: half of every warp
``uninit_read``        initcheck              accumulates into the output ``B``, which nothing
                                              initialised (sanitized with ``uninitialized=("B",)``)
``over_arrival``       pipelines.from_kernel  every consumer thread (128) arrives on an empty barrier
                                              initialised for 4 (one per warp)
``tx_mismatch``        pipelines.from_kernel  ``expect_tx`` announces half the bytes the TMA box moves
``bank_conflict``      PoolLayout.bank_        the transpose reads its 32 x 32 tile column-wise
                       conflicts
=====================  =====================  ==========================================================

``kernel(name, fixed=False)`` returns the ``@T.prim_func``: a bug and its twin are one kernel
whose bug is a Python-level choice, so they differ only there (the four sanitizer bugs also share
one elementwise kernel, ``_elementwise``, their own part a ``T.macro``). ``bug_line(name)`` is the
line (in this file) the tool must point at: the line marked ``# BUG(name)``. ``inputs(name)`` gives arguments.
The two pipeline bugs hang on a GPU (the phase never completes): never launch them; the pipeline
checker finds them without a GPU.
"""

from __future__ import annotations

import inspect
import re

N = 1000
THREADS = 256
SANITIZER_BUGS = ("oob_write", "shared_race", "divergent_barrier", "uninit_read")
PIPELINE_BUGS = ("over_arrival", "tx_mismatch")
BUGS = SANITIZER_BUGS + PIPELINE_BUGS + ("bank_conflict",)
#: which tool finds each bug, and the finding's kind
EXPECTED = {
    "oob_write": ("memcheck", "out_of_bounds_write"),
    "shared_race": ("racecheck", "shared_race"),
    "divergent_barrier": ("synccheck", "divergent_barrier"),
    "uninit_read": ("initcheck", "uninitialized_read"),
    "over_arrival": ("pipelines", "over_arrival"),
    "tx_mismatch": ("pipelines", "tx_mismatch"),
    "bank_conflict": ("banks", "32-way"),
}


def _elementwise(name: str, fixed: bool, n: int, body):
    """The four sanitizer bugs' kernel: ``B`` from ``A`` (``n`` float32 each), one thread per element
    in CTAs of ``THREADS``; ``body(A, B, bx, tx)``, a ``T.macro``, is the bug's own part (with
    ``fixed``, its twin's). The kernel is named ``name`` (``name_fixed`` for the twin)."""
    from tvm.script import tirx as T

    @T.prim_func
    def elementwise(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([(n + THREADS - 1) // THREADS])
        tx = T.thread_id([THREADS])
        body(A, B, bx, tx)

    return elementwise.with_attr("global_symbol", f"{name}_fixed" if fixed else name)


def _oob_write(fixed: bool):
    from tvm.script import tirx as T

    n = N

    @T.macro
    def body(A, B, bx, tx):
        i = bx * THREADS + tx
        if (i < n) if fixed else (i <= n):  # the bug is off by one: i == n is past the end
            B[i] = A[i % n] * T.float32(2.0)  # BUG(oob_write)

    return _elementwise("oob_write", fixed, n, body)


def _barrier(name: str, fixed: bool):
    """``shared_race`` and ``divergent_barrier``: each thread writes its element of ``A`` to shared
    memory, and every thread must pass a ``cta_sync`` between those writes and the reads. The race
    has no barrier and reads another thread's element; the divergent barrier is reached by half of
    every warp (each thread reads its own element: no race). Fixed: one barrier for all threads."""
    from tvm.script import tirx as T

    race = name == "shared_race"

    @T.macro
    def body(A, B, bx, tx):
        sm = T.alloc_shared((THREADS,), "float32")
        sm[tx] = A[bx * THREADS + tx]  # the write
        if fixed:
            T.cuda.cta_sync()
        elif not race:  # divergent_barrier: only half of every warp reaches the barrier
            if tx % 32 < 16:
                T.cuda.cta_sync()  # BUG(divergent_barrier)
        if race:  # shared_race: no barrier at all, and the read is another thread's element
            B[bx * THREADS + tx] = sm[THREADS - 1 - tx]  # BUG(shared_race)
        else:
            B[bx * THREADS + tx] = sm[tx] + T.float32(1.0)

    return _elementwise(name, fixed, 4096, body)


def _uninit_read(fixed: bool):
    from tvm.script import tirx as T

    @T.macro
    def body(A, B, bx, tx):
        i = bx * THREADS + tx
        if fixed:
            B[i] = A[i] * T.float32(2.0)
        else:  # accumulates into B, which nothing initialised
            B[i] = B[i] + A[i] * T.float32(2.0)  # BUG(uninit_read)

    return _elementwise("uninit_read", fixed, 4096, body)


# ---- pipelines: a persistent warp-specialized TMA pipeline ------------------------------------------
STAGES = 4
TILE_ROWS = 32
COLS = 128  # one warpgroup of consumers: 4 warps x 32 columns
TILES = 64
CTAS = 4


def _pipeline(variant: str):
    """Persistent: CTA c handles tiles c, c + CTAS, ...; warp 0 lane 0 produces with TMA into a
    STAGES-deep ring, warps 1-4 (one warpgroup) consume; the empty barrier counts one arrival per
    consumer warp (init 4)."""
    from tvm.backend.cuda.lang import Pipeline, PipelineState, SMEMPool
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    TILE_BYTES = TILE_ROWS * COLS * 4
    CONSUMER_WARPS = COLS // 32
    # the two bugs, each a line of its own; "fixed" has neither
    tx_bytes = TILE_BYTES // 2 if variant == "tx_mismatch" else TILE_BYTES
    every_thread_arrives = variant == "over_arrival"

    @T.prim_func
    def pipeline_fixed(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (TILES * TILE_ROWS, COLS), "float32")
        Out = T.match_buffer(Out_ptr, (CTAS, COLS), "float32")
        T.device_entry()
        cta = T.cta_id([CTAS])
        tid = T.thread_id([32 + COLS])
        pool = SMEMPool()
        A_smem = pool.alloc((STAGES, TILE_ROWS, COLS), "float32", align=128)
        pipe = Pipeline(pool, STAGES, full="tma", empty="mbar", init_empty=CONSUMER_WARPS)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            ps = PipelineState(STAGES, 1)
            for k in T.serial(TILES // CTAS):
                pipe.empty.wait(ps.stage, ps.phase)
                Tx.copy_async(
                    A_smem[ps.stage, :, :],
                    A[(k * CTAS + cta) * TILE_ROWS : (k * CTAS + cta + 1) * TILE_ROWS, :],
                    dispatch="tma_auto",
                    mbar=pipe.full.ptr_to([ps.stage]),
                )
                pipe.full.arrive(ps.stage, tx_bytes)  # BUG(tx_mismatch)
                ps.advance()
        elif tid >= 32:
            cs = PipelineState(STAGES, 0)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(TILES // CTAS):
                pipe.full.wait(cs.stage, cs.phase)
                for r in T.serial(TILE_ROWS):
                    acc[0] = acc[0] + A_smem[cs.stage, r, tid - 32]
                T.cuda.warp_sync()
                if every_thread_arrives:
                    pipe.empty.arrive(cs.stage)  # BUG(over_arrival)
                elif tid % 32 == 0:
                    pipe.empty.arrive(cs.stage)
                cs.advance()
            Out[cta, tid - 32] = acc[0]

    return pipeline_fixed if variant == "fixed" else pipeline_fixed.with_attr("global_symbol", variant)


def kernel(name: str, fixed: bool = False):
    """The planted-bug kernel ``name`` (see :data:`BUGS`), or its fixed twin."""
    if name in SANITIZER_BUGS:
        if name in ("shared_race", "divergent_barrier"):
            return _barrier(name, fixed)
        return {"oob_write": _oob_write, "uninit_read": _uninit_read}[name](fixed)
    if name in PIPELINE_BUGS:
        return _pipeline("fixed" if fixed else name)
    if name == "bank_conflict":
        from txlab.examples.transpose import transpose_kernel

        return transpose_kernel(1024, "padded" if fixed else "naive")
    raise ValueError(f"unknown bug {name!r}; choose one of {', '.join(BUGS)}")


def bug_line(name: str) -> int:
    """The line of this file (or of the transpose example) where the bug ``name`` is."""
    if name == "bank_conflict":
        import txlab.examples.transpose as transpose

        src, first = inspect.getsourcelines(transpose)
        hits = [max(first, 1) + i for i, l in enumerate(src) if "= tile[lane, col(lane, warp + j * ROWS)]" in l]
        return hits[0]
    src, first = inspect.getsourcelines(inspect.getmodule(bug_line))
    for i, line in enumerate(src):
        if re.search(rf"#\s*BUG\({re.escape(name)}\)", line):
            return max(first, 1) + i
    raise ValueError(f"no line is marked BUG({name})")


#: extra txlab.sanitize() options per bug: B is an output the kernel must write before reading it
SANITIZE_OPTIONS = {"uninit_read": {"uninitialized": ("B",)}}


def sanitize_options(name: str) -> dict:
    """Keyword arguments for ``txlab.sanitize`` when sanitizing ``name`` or its twin."""
    return dict(SANITIZE_OPTIONS.get(name, {}))


def inputs(name: str):
    """numpy arguments for kernel ``name`` (inputs random, outputs zero)."""
    import numpy as np

    rng = np.random.default_rng(0)
    if name == "oob_write":
        return [rng.standard_normal(N).astype("float32"), np.zeros(N, "float32")]
    if name in PIPELINE_BUGS:
        return [rng.standard_normal((TILES * TILE_ROWS, COLS)).astype("float32"), np.zeros((CTAS, COLS), "float32")]
    if name == "bank_conflict":
        return [rng.standard_normal((1024, 1024)).astype("float32"), np.zeros((1024, 1024), "float32")]
    return [rng.standard_normal(4096).astype("float32"), np.zeros(4096, "float32")]
