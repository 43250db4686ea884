"""The race checkers keep their per-byte state per 4-byte word while every access so far covered whole aligned
words (txlab/emulator/races.py, ``_Reporter``), and per byte from the first access that did not. Reports must be
the byte checker's either way: the same lines, threads, byte addresses and counts of bytes. Each kernel here runs
twice: as written (word entries until a 1- or 2-byte store switches to bytes mid-run), and with a byte store at the
start (byte entries all along); both must give the findings read off the kernel."""

from __future__ import annotations

import numpy as np

from txlab.emulator import emulate

from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)

# PROLOGUE (one line): nothing, or a byte store that puts the checker in byte entries from the start
WORD_START = "T.evaluate(0)"
BYTE_START = "u[tx] = T.uint8(0)"

# two CTAs in one lockstep batch, two warps each: each thread reads the float32 slot the other warp's thread wrote
# (only in CTA 1, at word entries), then after a barrier a byte store into byte 1 of each slot races with the other
# warp's float32 reads of it (in both CTAs, at byte entries)
LOCKSTEP = """
@T.prim_func
def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    s = T.alloc_shared((64,), "float32")
    u = T.decl_buffer((256,), "uint8", data=s.data, scope="shared")
    PROLOGUE
    T.cuda.cta_sync()
    s[tx] = A[bx * 64 + tx]
    if bx == 1:
        B[bx * 64 + tx] = s[(tx + 32) % 64]
    T.cuda.cta_sync()
    u[tx * 4 + 1] = T.uint8(7)
    C[bx * 64 + tx] = s[(tx + 32) % 64]
"""


def _races(src, *, arch=None):
    a = np.arange(128, dtype=np.float32)
    res = emulate(kernel(src, "k"), a, np.zeros_like(a), np.zeros_like(a), arch=arch)
    assert {f.kind for f in res.findings} <= {"shared_race", "note"}, res.summary()
    return res, sorted(
        (f.line, f.other_line, f.cta, tuple(f.threads), tuple(f.index), f.count) for f in res.by_kind("shared_race")
    )


def test_a_float32_race_before_a_byte_store_and_a_byte_race_after_it_report_bytes():
    for start in (WORD_START, BYTE_START):
        src = LOCKSTEP.replace("PROLOGUE", start)
        res, races = _races(src)
        assert res.stats["mode"] == "per-CTA lockstep" and res.stats["ctas_per_batch"] == 2, res.stats
        store, read = line_of(src, "s[tx] = A[bx * 64 + tx]"), line_of(src, "B[bx * 64 + tx] = s[")
        byte, read2 = line_of(src, "u[tx * 4 + 1]"), line_of(src, "C[bx * 64 + tx] = s[")
        assert races == [
            # CTA 1's thread 0 reads s[32] (shared byte 128) that thread 32 wrote: 64 lanes of 4 bytes race
            (read, store, (1, 0, 0), (32, 0), (128,), 64 * 4),
            # thread 0 reads s[32], whose byte 1 (129) thread 32 wrote: 64 lanes of 1 byte in each of 2 CTAs
            (read2, byte, (0, 0, 0), (32, 0), (129,), 2 * 64),
        ], (start, races)


# a float16 view of the float32 slots: a lane's half of a word is less than a word (the checker goes to bytes there);
# thread tx's float32 read of slot (tx + 16) % 64 meets the halves that two threads of the other warp stored into it
# (h covers slots 0..31: threads 32..63 stored slots 16..31, read by lanes 0-15; threads 0..31 slots 0..15, read by
# lanes 48-63)
HALVES = """
@T.prim_func
def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    s = T.alloc_shared((64,), "float32")
    u = T.decl_buffer((256,), "uint8", data=s.data, scope="shared")
    h = T.decl_buffer((128,), "float16", data=s.data, scope="shared")
    PROLOGUE
    T.cuda.cta_sync()
    s[tx] = A[bx * 64 + tx]
    T.cuda.cta_sync()
    h[tx] = T.float16(1)
    B[bx * 64 + tx] = s[(tx + 16) % 64]
"""


def test_float16_halves_stored_by_two_threads_race_with_float32_reads_byte_by_byte():
    for start in (WORD_START, BYTE_START):
        src = HALVES.replace("PROLOGUE", start)
        _res, races = _races(src)
        half, read = line_of(src, "h[tx] = T.float16(1)"), line_of(src, "B[bx * 64 + tx] = s[")
        # thread 0 reads s[16] (bytes 64..67), whose first half thread 32 stored (h[32]): 32 lanes of 4 bytes in each
        # of 2 CTAs
        assert races == [(read, half, (0, 0, 0), (32, 0), (64,), 2 * 32 * 4)], (start, races)


# lanes of one warp (the lane checker): lane tx reads the slot lane tx + 1 stored with no __syncwarp between (at word
# entries); lane 0's byte store into slot 32 then switches to byte entries while the stores are pending, and each lane
# reads its own slot (no race: the stores' records keep their lanes); after a __syncwarp each lane stores byte 3 of
# its slot, which lane tx + 1 reads
LANES = """
@T.prim_func
def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([32])
    s = T.alloc_shared((33,), "float32")
    u = T.decl_buffer((132,), "uint8", data=s.data, scope="shared")
    PROLOGUE
    T.cuda.cta_sync()
    s[tx] = A[bx * 32 + tx]
    B[bx * 32 + tx] = s[(tx + 1) % 32]
    if tx == 0:
        u[128] = T.uint8(1)
    C[bx * 32 + tx] = s[tx]
    T.cuda.warp_sync()
    u[tx * 4 + 3] = T.uint8(1)
    A[bx * 32 + tx] = s[(tx + 31) % 32]
"""


def test_lanes_of_one_warp_race_on_words_then_on_bytes():
    for start in (WORD_START, BYTE_START):
        src = LANES.replace("PROLOGUE", start)
        a = np.arange(64, dtype=np.float32)
        res = emulate(kernel(src, "k"), a, np.zeros_like(a), np.zeros_like(a))
        races = [(f.line, f.other_line, f.cta, f.threads, f.index, f.count) for f in res.by_kind("shared_race")]
        store, read = line_of(src, "s[tx] = A[bx * 32 + tx]"), line_of(src, "B[bx * 32 + tx] = s[")
        byte, read2 = line_of(src, "u[tx * 4 + 3]"), line_of(src, "A[bx * 32 + tx] = s[")
        assert races == [
            # lane 0 reads s[1] (shared bytes 4..7), which lane 1 stored: 32 lanes of 4 bytes in each of 2 CTAs
            (read, store, (0, 0, 0), [1, 0], [4], 2 * 32 * 4),
            # lane 0 reads s[31], whose byte 3 (127) lane 31 stored: 32 lanes of 1 byte in each of 2 CTAs
            (read2, byte, (0, 0, 0), [31, 0], [127], 2 * 32),
        ], (start, races)
        assert all("within warp 0" in f.message for f in res.by_kind("shared_race")), res.summary()


# the same, in per-warp mode (an mbarrier wait: one vector-clock checker per CTA; the warps run one after the other,
# here warp 1 first up to the mbarrier and warp 0 first after it): the float32 race in CTA 1 at word entries, then
# after the mbarrier (which orders what came before every arrive) each thread stores the upper float16 half of its
# own slot, which the other warp reads
WARPS = """
@T.prim_func
def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    s = T.alloc_shared((64,), "float32")
    u = T.decl_buffer((256,), "uint8", data=s.data, scope="shared")
    h = T.decl_buffer((128,), "float16", data=s.data, scope="shared")
    bar = T.shared_scalar("uint64")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(64))
    PROLOGUE
    T.cuda.cta_sync()
    s[tx] = A[bx * 64 + tx]
    if bx == 1:
        B[bx * 64 + tx] = s[(tx + 32) % 64]
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    h[tx * 2 + 1] = T.float16(7)
    C[bx * 64 + tx] = s[(tx + 32) % 64]
"""


def test_the_vector_clock_checker_reports_bytes_before_and_after_a_float16_store():
    for start in (WORD_START, BYTE_START):
        src = WARPS.replace("PROLOGUE", start)
        res, races = _races(src, arch="sm_90a")
        assert res.stats["mode"] == "per-warp", res.stats
        store, read = line_of(src, "s[tx] = A[bx * 64 + tx]"), line_of(src, "B[bx * 64 + tx] = s[")
        half, read2 = line_of(src, "h[tx * 2 + 1]"), line_of(src, "C[bx * 64 + tx] = s[")
        assert races == sorted(
            [
                # CTA 1: warp 1 read s[0..31] before warp 0 stored them (thread 32 read s[0], shared byte 0)...
                (store, read, (1, 0, 0), (32, 0), (0,), 32 * 4),
                # ... and warp 0 reads s[32..63], which warp 1 stored (thread 0 reads s[32], bytes 128..131)
                (read, store, (1, 0, 0), (32, 0), (128,), 32 * 4),
                # warp 0 read s[32..63]; then thread 32 stores s[32]'s upper half (shared bytes 130, 131): 32 lanes of
                # 2 bytes in each CTA
                (half, read2, (0, 0, 0), (0, 32), (130,), 2 * 32 * 2),
                # warp 1 reads s[0..31], whose upper halves warp 0 stored (thread 0: bytes 2, 3)
                (read2, half, (0, 0, 0), (0, 32), (2,), 2 * 32 * 2),
            ]
        ), (start, races)
