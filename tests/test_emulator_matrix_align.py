"""ldmatrix / stmatrix row addresses: every row is one 16-byte access, so a row that does not start on a 16-byte
boundary of its shared buffer is a ``misaligned`` finding at the user's line (a GPU stops with a misaligned
address); aligned rows in a padded buffer are not."""

import numpy as np
from test_emulator import kernel, line_of

from txlab.emulator import emulate

LD = """
@T.prim_func
def ld(A: T.Buffer((16, 24), "float16"), B: T.Buffer((32, 2), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    S = T.alloc_shared([16, 24], "float16")
    if tx == 0:
        for i, j in T.grid(16, 24):
            S[i, j] = A[i, j]
    T.cuda.cta_sync()
    R = T.alloc_local([2], "uint32")
    T.ptx["ldmatrix.sync.aligned.m8n8.x2.shared.b16"](R[0], R[1], S.ptr_to([tx % 16, COL]))
    B[tx, 0] = R[0]
    B[tx, 1] = R[1]
"""

ST = """
@T.prim_func
def st(B: T.Buffer((16, 24), "float16")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    S = T.alloc_shared([16, 24], "float16")
    for i, j in T.grid(16, 24):
        if tx == 0:
            S[i, j] = T.float16(0)
    T.cuda.cta_sync()
    R = T.alloc_local([2], "uint32")
    R[0] = T.uint32(tx)
    R[1] = T.uint32(tx + 32)
    T.ptx["stmatrix.sync.aligned.m8n8.x2.shared.b16"](S.ptr_to([tx % 16, COL]), R[0], R[1])
    T.cuda.cta_sync()
    if tx == 0:
        for i, j in T.grid(16, 24):
            B[i, j] = S[i, j]
"""


def _run(src, name, col, *args):
    src = src.replace("COL", str(col)).replace(f"def {name}(", f"def {name}{col}(")
    return emulate(kernel(src, f"{name}{col}"), *args), src


def test_ldmatrix_rows_off_16_bytes_are_misaligned():
    a = np.arange(16 * 24, dtype=np.float16).reshape(16, 24)
    res, src = _run(LD, "ld", 4, a, np.zeros((32, 2), np.uint32))  # rows 48 bytes apart, 8 bytes in
    bad = [f for f in res.findings if f.kind == "misaligned"]
    assert bad and bad[0].line == line_of(src, "ldmatrix"), res.summary()
    assert "16-byte boundary" in bad[0].message and "8 bytes past" in bad[0].message
    ok, _ = _run(LD, "ld", 8, a, np.zeros((32, 2), np.uint32))  # 48-byte rows, 16 bytes in: aligned
    assert ok.ok, ok.summary()


def test_stmatrix_rows_off_16_bytes_are_misaligned():
    res, src = _run(ST, "st", 2, np.zeros((16, 24), np.float16))
    bad = [f for f in res.findings if f.kind == "misaligned"]
    assert bad and bad[0].line == line_of(src, "stmatrix"), res.summary()
    ok, _ = _run(ST, "st", 0, np.zeros((16, 24), np.float16))
    assert ok.ok, ok.summary()


MOV = """
@T.prim_func
def mov(A: T.Buffer((32,), "uint32"), B: T.Buffer((32,), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    R = T.alloc_local([2], "uint32")
    R[0] = A[tx % 32] + T.uint32(tx // 32)
    T.ptx["movmatrix.sync.aligned.m8n8.trans.b16"](R[1], R[0])
    if tx < 32:
        B[tx] = R[1]
"""


def test_movmatrix_transposes_the_warps_8x8_fragment():
    """``movmatrix.m8n8.trans.b16``: lane l's pair (row l // 4, columns 2 (l % 4), + 1) of an 8 x 8 b16 matrix becomes
    the same place of the transpose, in registers (here warp 0 of two, whose values differ)."""
    rng = np.random.default_rng(7)
    m = rng.integers(0, 2**16, (8, 8)).astype(np.uint32)
    lane = np.arange(32)
    r, c = lane // 4, 2 * (lane % 4)
    a = m[r, c] | (m[r, c + 1] << 16)
    b = np.zeros(32, np.uint32)
    res = emulate(kernel(MOV, "mov"), a.astype(np.uint32), b)
    assert res.ok, res.summary()
    t = m.T
    assert (b == (t[r, c] | (t[r, c + 1] << 16))).all()


def test_movmatrix_in_half_a_warp_is_a_divergent_barrier():
    """movmatrix is .sync.aligned: reached by lanes 0-15 only, the other lanes' registers are no value of the
    program's, so it is a divergent_barrier finding at its line (it once transposed whatever they held)."""
    src = MOV.replace("    T.ptx[", "    if tx < 16:\n        T.ptx[").replace("def mov(", "def mov_half(")
    res = emulate(kernel(src, "mov_half"), np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32))
    bad = [f for f in res.findings if f.kind == "divergent_barrier"]
    assert bad and bad[0].line == line_of(src, "movmatrix"), res.summary()
    assert "lanes 0-15" in bad[0].message and ".sync.aligned" in bad[0].message, bad[0].message
