"""Ops the tile primitives lower to, on the emulator: divergent break/continue, cp.async's
commit/wait ordering, red/atom through T.ptx, ld/st type extension; each shown to the race checker."""

import numpy as np
from test_emulator import kernel, line_of

from txlab.emulator import emulate

DIVERGENT = """
@T.prim_func
def div(A_ptr: T.handle):
    A = T.match_buffer(A_ptr, (32, 8), "int32")
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    for i in T.serial(8):
        if i == tx % 4:
            continue
        if i > tx // 4:
            break
        A[tx, i] = i + 1
"""


def test_divergent_break_and_continue_leave_only_their_lanes():
    a = np.zeros((32, 8), np.int32)
    res = emulate(kernel(DIVERGENT, "div"), a)
    assert res.ok, res.findings
    want = np.zeros((32, 8), np.int32)
    for t in range(32):
        for i in range(8):
            if i == t % 4:
                continue
            if i > t // 4:
                break
            want[t, i] = i + 1
    np.testing.assert_array_equal(a, want)


CPASYNC = """
@T.prim_func
def cpa(A: T.Buffer((8,), "float16"), B: T.Buffer((16,), "float16")):
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([32])
    S = T.alloc_shared([8], "float16")
    if tid == 0:
        for i in T.serial(8):
            S[i] = T.float16(5.0)
        T.ptx["cp.async.cg.shared.global"](S.ptr_to([0]), A.ptr_to([0]), 16)
        T.ptx.cp.async_.commit_group()
        for i in T.serial(8):
            B[i] = S[i]
        T.ptx.cp.async_.wait_group(0)
        for i in T.serial(8):
            B[8 + i] = S[i]
"""


def test_cp_async_lands_at_its_wait_not_before():
    a = np.arange(8, dtype=np.float16)
    b = np.zeros(16, np.float16)
    res = emulate(kernel(CPASYNC, "cpa"), a, b)
    # reading the destination before the wait is unordered with the copy (PTX: only wait_group /
    # wait_all order them): a race at the read and the copy, the emulator's value the old bytes
    (race,) = res.findings
    assert race.kind == "shared_race", res.summary()
    assert (race.line, race.other_line) == (line_of(CPASYNC, "B[i] = S[i]"), line_of(CPASYNC, "cp.async.cg"))
    np.testing.assert_array_equal(b[:8], np.full(8, 5, np.float16))  # read before the wait: old bytes
    np.testing.assert_array_equal(b[8:], a)


RED = """
@T.prim_func
def red(A: T.Buffer((4,), "uint32"), X: T.Buffer((128,), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([128])
    S = T.alloc_shared([4], "uint32")
    if tid < 4:
        S[tid] = T.uint32(0)
    SYNC
    T.ptx.red.shared.add.u32(S.ptr_to([tid % 4]), X[tid])
    T.cuda.cta_sync()
    if tid < 4:
        A[tid] = S[tid]
"""


def test_ptx_red_is_an_atomic_for_the_race_checker():
    x = np.arange(128, dtype=np.uint32)
    want = x.reshape(32, 4).sum(axis=0).astype(np.uint32)
    a = np.zeros(4, np.uint32)
    res = emulate(kernel(RED.replace("SYNC", "T.cuda.cta_sync()"), "red"), a, x)
    assert res.ok, res.findings
    np.testing.assert_array_equal(a, want)
    src = RED.replace("SYNC", "pass")
    res = emulate(kernel(src, "red"), np.zeros(4, np.uint32), x)
    races = res.by_kind("shared_race")
    assert (
        races
        and races[0].line == line_of(src, "T.ptx.red")
        and races[0].other_line == line_of(src, "S[tid] = T.uint32(0)")
    )


LDEXT = """
@T.prim_func
def ldext(A: T.Buffer((4,), "int8"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([4])
    T.ptx.ld.global_.s8(B[tid], A.ptr_to([tid]))
    T.ptx.ld.global_.u8(C[tid], A.ptr_to([tid]))
"""


def test_ptx_ld_of_a_byte_sign_or_zero_extends_into_a_wider_register():
    a = np.array([-1, 5, -128, 127], np.int8)
    b = np.zeros(4, np.int32)
    c = np.zeros(4, np.uint32)
    res = emulate(kernel(LDEXT, "ldext"), a, b, c)
    assert res.ok, res.findings
    np.testing.assert_array_equal(b, a.astype(np.int32))
    np.testing.assert_array_equal(c, a.view(np.uint8).astype(np.uint32))
