"""Global-memory access patterns with known coalescing: a strided read, a gather, a vector copy,
a global atomic (tests/test_coalescing.py; scripts/coalescing_h200.py profiles the same kernels)."""

from tvm.script import tirx as Tx

THREADS = 256


def strided_read(stride: int, n: int = 1 << 16):
    """``B[i] = A[i * stride]``: 4 sectors per request at stride 1, 8 at 2, 16 at 4, 32 at >= 8."""

    @Tx.prim_func
    def strided(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n * stride,), "float32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // THREADS])
        tx = Tx.thread_id([THREADS])
        B[bx * THREADS + tx] = A[(bx * THREADS + tx) * stride]

    return strided


def gather(n: int = 1 << 16):
    """``B[i] = A[I[i]]``: the read of A depends on memory (unknown statically)."""

    @Tx.prim_func
    def gather(A_ptr: Tx.handle, I_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n,), "float32")
        I = Tx.match_buffer(I_ptr, (n,), "int32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // THREADS])
        tx = Tx.thread_id([THREADS])
        B[bx * THREADS + tx] = A[I[bx * THREADS + tx]]

    return gather


def vector_copy(n: int = 1 << 16):
    """``B = A`` with 16-byte lanes (float32x4): a request per quarter warp, 4 sectors each."""

    @Tx.prim_func
    def vcopy(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n,), "float32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // (THREADS * 4)])
        tx = Tx.thread_id([THREADS])
        for v in Tx.vectorized(4):
            B[(bx * THREADS + tx) * 4 + v] = A[(bx * THREADS + tx) * 4 + v]

    return vcopy


def column_sum(n: int = 512):
    """Each thread walks one row of a row-major matrix: lanes are a row apart (uncoalesced), and
    the per-row result goes out through a global atomic into one of 32 counters."""

    @Tx.prim_func
    def colsum(A_ptr: Tx.handle, S_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n, n), "float32")
        S = Tx.match_buffer(S_ptr, (32,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // THREADS])
        tx = Tx.thread_id([THREADS])
        acc = Tx.alloc_local((1,), "float32")
        acc[0] = Tx.float32(0)
        for j in Tx.serial(4):
            acc[0] = acc[0] + A[bx * THREADS + tx, j]
        Tx.cuda.atomic_add(Tx.address_of(S[tx % 32]), acc[0])

    return colsum


# ---- shared memory through ldmatrix / stmatrix / cp.async (tests/test_banks.py) ---------------------
def ldmatrix_tile(row_halves: int, num: int = 4, trans: bool = False, ctas: int = 64):
    """Each warp of 4 reads an 8-row block of a shared fp16 tile with ``ldmatrix .x{num}``; matrix
    ``m`` is columns ``8m .. 8m+7``, its row ``r`` address comes from lane ``8m + r``. The tile's
    rows are ``row_halves`` fp16 apart: 64 (128-byte rows) puts all 8 rows of a matrix on the same
    4 banks (8 wavefronts per matrix), 72 (a 16-byte pad) spreads them (1 per matrix)."""
    rows, warps = 32, 4
    name = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"

    @Tx.prim_func
    def ldsm(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (ctas * rows * row_halves,), "float16")
        B = Tx.match_buffer(B_ptr, (ctas * 32 * warps * 8,), "float16")
        Tx.device_entry()
        bx = Tx.cta_id([ctas])
        tx = Tx.thread_id([32 * warps])
        S = Tx.alloc_shared((rows * row_halves,), "float16")
        for i in Tx.serial(rows * row_halves // (32 * warps)):
            S[i * 32 * warps + tx] = A[bx * rows * row_halves + i * 32 * warps + tx]
        Tx.cuda.cta_sync()
        R = Tx.alloc_local((8,), "float16")
        W = R.view("uint32")
        lane = tx % 32
        ptr = S.ptr_to([(tx // 32 * 8 + lane % 8) * row_halves + lane // 8 % num * 8])
        if num == 1:
            Tx.ptx[name](W[0], ptr)
        elif num == 2:
            Tx.ptx[name](W[0], W[1], ptr)
        else:
            Tx.ptx[name](W[0], W[1], W[2], W[3], ptr)
        for j in Tx.serial(8):
            B[(bx * 32 * warps + tx) * 8 + j] = R[j]

    return ldsm


def stmatrix_tile(row_halves: int, num: int = 4, trans: bool = False, ctas: int = 64):
    """The store twin of :func:`ldmatrix_tile`: each warp writes its 8-row block with ``stmatrix``."""
    rows, warps = 32, 4
    name = f"stmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"

    @Tx.prim_func
    def stsm(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (ctas * 32 * warps * 8,), "float16")
        B = Tx.match_buffer(B_ptr, (ctas * rows * row_halves,), "float16")
        Tx.device_entry()
        bx = Tx.cta_id([ctas])
        tx = Tx.thread_id([32 * warps])
        S = Tx.alloc_shared((rows * row_halves,), "float16")
        R = Tx.alloc_local((8,), "float16")
        for j in Tx.serial(8):
            R[j] = A[(bx * 32 * warps + tx) * 8 + j]
        W = R.view("uint32")
        lane = tx % 32
        ptr = S.ptr_to([(tx // 32 * 8 + lane % 8) * row_halves + lane // 8 % num * 8])
        if num == 1:
            Tx.ptx[name](ptr, W[0])
        elif num == 2:
            Tx.ptx[name](ptr, W[0], W[1])
        else:
            Tx.ptx[name](ptr, W[0], W[1], W[2], W[3])
        Tx.cuda.cta_sync()
        for i in Tx.serial(rows * row_halves // (32 * warps)):
            B[bx * rows * row_halves + i * 32 * warps + tx] = S[i * 32 * warps + tx]

    return stsm


def cp_async_copy(stride: int, ctas: int = 64):
    """Each lane ``cp.async``-copies 16 bytes (4 floats) into shared memory at ``lane * stride * 4``
    floats: stride 1 is conflict-free (4 wavefronts per warp, a quarter warp each), stride 2 puts
    two lanes of a quarter warp on the same banks."""
    threads = 128

    @Tx.prim_func
    def cpasync(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (ctas * threads * 4,), "float32")
        B = Tx.match_buffer(B_ptr, (ctas * threads * 4,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([ctas])
        tx = Tx.thread_id([threads])
        S = Tx.alloc_shared((threads * 4 * stride,), "float32")
        Tx.ptx["cp.async.cg.shared.global"](S.ptr_to([tx * 4 * stride]), A.ptr_to([(bx * threads + tx) * 4]), 16)
        Tx.ptx.cp.async_.commit_group()
        Tx.ptx.cp.async_.wait_group(0)
        Tx.cuda.cta_sync()
        for j in Tx.serial(4):
            B[(bx * threads + tx) * 4 + j] = S[tx * 4 * stride + j]

    return cpasync


def ptx_atomics(space: str):
    """PTX ``atom`` (result kept) and ``red`` (vector, 16 bytes per lane) written with ``Tx.ptx``:
    in ``space`` "global" lane ``l`` hits ``A[l * 32]`` (a cache line of its own), in "shared" a
    shared word ``l * 32`` (every lane in bank 0: a 32-way serialised ATOMS)."""

    @Tx.prim_func
    def ptx_atomics(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (1024,), "uint32")
        B = Tx.match_buffer(B_ptr, (1024,), "float32")
        Tx.device_entry()
        Tx.cta_id([1])
        tx = Tx.thread_id([32])
        d = Tx.local_scalar("uint32")
        v = Tx.local_scalar("float32")
        if space == "global":
            Tx.ptx.atom.global_.add.u32(d, A.ptr_to([tx * 32]), Tx.uint32(1))
            Tx.ptx.red.global_.add.v4.f32(B.ptr_to([tx * 4]), v, v, v, v)
        else:
            S = Tx.alloc_shared((1024,), "uint32")
            Tx.ptx.atom.shared__cta.add.u32(d, S.ptr_to([tx * 32]), Tx.uint32(1))
        A[tx] = d

    return ptx_atomics


def symbolic_rowsum():
    """A row sum over an ``(m, n)`` matrix whose shape is a kernel argument: the tail guard
    ``j * 32 + tx < n`` and the row start ``bx * n`` depend on ``n``, known only at launch."""

    @Tx.prim_func
    def rowsum(A_ptr: Tx.handle, B_ptr: Tx.handle, m: Tx.int32, n: Tx.int32):
        A = Tx.match_buffer(A_ptr, (m, n), "float32")
        B = Tx.match_buffer(B_ptr, (m,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([m])
        tx = Tx.thread_id([32])
        acc = Tx.alloc_local((1,), "float32")
        acc[0] = Tx.float32(0)
        for j in Tx.serial(Tx.ceildiv(n, 32)):
            if j * 32 + tx < n:
                acc[0] = acc[0] + A[bx, j * 32 + tx]
        if tx == 0:
            B[bx] = acc[0]

    return rowsum


def ragged_rows():
    """Row ``bx`` has ``L[bx]`` chunks of 32: the loop's trip count is read from memory."""

    @Tx.prim_func
    def ragged(A_ptr: Tx.handle, L_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (64, 256), "float32")
        L = Tx.match_buffer(L_ptr, (64,), "int32")
        B = Tx.match_buffer(B_ptr, (64,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([64])
        tx = Tx.thread_id([32])
        acc = Tx.alloc_local((1,), "float32")
        acc[0] = Tx.float32(0)
        for j in Tx.serial(L[bx]):
            acc[0] = acc[0] + A[bx, j * 32 + tx]
        if tx == 0:
            B[bx] = acc[0]

    return ragged


def tail_guarded_scale():
    """README's first kernel: ``B = 2 A`` for ``n`` elements, the tail guarded by ``i < n``."""

    @Tx.prim_func
    def scale(A_ptr: Tx.handle, B_ptr: Tx.handle, n: Tx.int32):
        A = Tx.match_buffer(A_ptr, (n,), "float32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([Tx.ceildiv(n, THREADS)])
        tx = Tx.thread_id([THREADS])
        if bx * THREADS + tx < n:
            B[bx * THREADS + tx] = A[bx * THREADS + tx] * Tx.float32(2.0)

    return scale


def guarded_operands(form: str):
    """Half a warp loads ``A[l * 32]`` (a cache line per lane), guarded three ways: ``if_then_else``,
    ``Select`` (CUDA's ``c ? a : b`` evaluates only the chosen operand) and a PTX ``ld`` with
    ``pred=`` (lanes 0-15). The other lanes make no request."""

    @Tx.prim_func
    def guarded(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (1024,), "float32")
        B = Tx.match_buffer(B_ptr, (32,), "float32")
        Tx.device_entry()
        Tx.cta_id([1])
        tx = Tx.thread_id([32])
        if form == "if_then_else":
            B[tx] = Tx.if_then_else(tx < 16, A[tx * 32], Tx.float32(0))
        elif form == "select":
            B[tx] = Tx.Select(tx < 16, A[tx * 32], Tx.float32(0))
        else:
            flag: Tx.uint32 = Tx.uint32(0)
            if tx < 16:
                flag = Tx.uint32(1)
            v = Tx.local_scalar("float32")
            Tx.ptx.ld.global_.f32(v, A.ptr_to([tx * 32]), pred=flag)
            B[tx] = v

    return guarded
