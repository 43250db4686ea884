"""ldmatrix / stmatrix row addresses: every row is one 16-byte access, so a row that does not start on a 16-byte
boundary of its shared buffer is a ``misaligned`` finding at the user's line (a GPU stops with a misaligned
address); aligned rows in a padded buffer are not. And the warp-wide ``.sync.aligned`` matrix instructions
(ldmatrix, stmatrix, movmatrix, mma.sync) reached by part of a warp are ``divergent_barrier`` findings."""

import numpy as np
import pytest
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


def _half_warp(src, name, marker):
    """``src`` with the line holding ``marker`` run by lanes 0-15 only (``if tx < 16:`` around it)."""
    out = []
    for ln in src.splitlines():
        if marker in ln:
            pad = ln[: len(ln) - len(ln.lstrip())]
            out += [f"{pad}if tx < 16:", "    " + ln]
        else:
            out.append(ln)
    return "\n".join(out).replace(f"def {name}(", f"def {name}_half(")


@pytest.mark.parametrize(
    ("src", "name", "what", "args"),
    [
        (
            LD.replace("COL", "8"),
            "ld",
            "ldmatrix",
            lambda: (np.ones((16, 24), np.float16), np.zeros((32, 2), np.uint32)),
        ),
        (ST.replace("COL", "0"), "st", "stmatrix", lambda: (np.zeros((16, 24), np.float16),)),
    ],
)
def test_matrix_load_store_in_half_a_warp_is_a_divergent_barrier(src, name, what, args):
    """ldmatrix and stmatrix are .sync.aligned: run by lanes 0-15 of the warp only, the rows the other lanes would
    address (or the fragments they would hold) are no value of the program's: a divergent_barrier at the line."""
    src = _half_warp(src, name, f'T.ptx["{what}')
    res = emulate(kernel(src, f"{name}_half"), *args())
    bad = [f for f in res.findings if f.kind == "divergent_barrier"]
    assert bad and bad[0].line == line_of(src, what), res.summary()
    assert "lanes 0-15" in bad[0].message and what in bad[0].message, bad[0].message


MMA = """
@T.prim_func
def mm(A: T.Buffer((32, 2), "uint32"), B: T.Buffer((32,), "uint32"), D: T.Buffer((32, 4), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    ra = T.alloc_local([4], "uint32")
    rb = T.alloc_local([2], "uint32")
    rd = T.alloc_local([4], "float32")
    for j in range(4):
        ra[j] = A[tx, j % 2]
        rd[j] = T.float32(0)
    rb[0] = B[tx]
    rb[1] = B[tx]
    T.ptx["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"](rd[0], rd[1], rd[2], rd[3], ra[0], ra[1], ra[2], ra[3], rb[0], rb[1], rd[0], rd[1], rd[2], rd[3])
    for j in range(4):
        D[tx, j] = rd[j]
"""


def test_mma_sync_in_half_a_warp_is_a_divergent_barrier():
    """mma.sync is .sync.aligned: the whole warp runs it (no finding); lanes 0-15 alone leave half of A's and B's
    fragments undefined, a divergent_barrier at its line."""
    one = np.full((32, 2), 0x3C003C00, np.uint32)  # f16 1.0 pairs
    whole = emulate(kernel(MMA, "mm"), one, one[:, 0].copy(), d := np.zeros((32, 4), np.float32))
    assert whole.ok, whole.summary()
    assert (d == 16).all()  # 16 products of 1 x 1 per element
    src = _half_warp(MMA, "mm", 'T.ptx["mma')
    res = emulate(kernel(src, "mm_half"), one, one[:, 0].copy(), np.zeros((32, 4), np.float32))
    bad = [f for f in res.findings if f.kind == "divergent_barrier"]
    assert bad and bad[0].line == line_of(src, "mma.sync"), res.summary()
    assert "lanes 0-15" in bad[0].message and "mma.sync" in bad[0].message, bad[0].message
