"""Non-tensor bulk copies on the emulator (``cp.async.bulk``): global -> shared with an mbarrier's complete_tx,
shared -> global, and shared -> a peer CTA's shared memory (DSMEM, what ``Tx.copy_async(dispatch="dsmem")`` lowers
to; TVM's ``copy_async/test_dsmem.py``). Each stopped the run with NotEmulatedError before."""

import numpy as np

from txlab.emulator import emulate

from test_emulator import kernel, line_of

ROUND_TRIP = """
@T.prim_func
def round_trip(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    bar = T.shared_scalar("uint64")
    smem = T.alloc_shared([128], "float32")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](
            smem.ptr_to([0]), A.data, T.uint32(SIZE), T.address_of(bar))
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(SIZE))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    smem[tx] = smem[tx] * T.float32(2.0)
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](B.data, smem.ptr_to([0]), T.uint32(SIZE))
        T.ptx.cp.async_.bulk.commit_group()
        T.ptx.cp.async_.bulk.wait_group(0)
"""


def test_global_to_shared_and_back():
    k = kernel(ROUND_TRIP.replace("SIZE", "512"), "round_trip")
    a, b = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    res = emulate(k, a, b)
    assert res.ok, res.findings
    assert np.array_equal(b, a * 2)


def test_a_size_off_16_bytes_is_misaligned():
    src = ROUND_TRIP.replace("SIZE", "500")
    res = emulate(kernel(src, "round_trip"), np.arange(128, dtype=np.float32), np.zeros(128, np.float32), timeout_s=60)
    bad = [f for f in res.findings if f.kind == "misaligned"]
    assert bad and bad[0].line == line_of(src, 'T.ptx["cp.async.bulk.shared::cta.global')
    assert "size 500 bytes" in bad[0].message and "multiple of 16" in bad[0].message


DSMEM = """
@T.prim_func
def dsmem(A_ptr: T.handle, B_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256,), "float16")
    B = T.match_buffer(B_ptr, (256,), "float16")
    T.device_entry()
    rank = T.cta_id_in_cluster([2])
    T.cta_id([2])
    tid = T.thread_id([1])
    pool = T.SMEMPool()
    src = pool.alloc([256], "float16", align=128)
    dst = pool.alloc([256], "float16", align=128)
    mbar = MBarrier(pool, 1)
    pool.commit()
    mbar.init(1)
    T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cluster_sync()
    if rank == 0:
        tile.copy(src[0:256], A[0:256])
        T.ptx.fence.proxy.async_.shared__cta()
        tile.copy_async(dst[0:256], src[0:256], dispatch="dsmem", mbar=mbar.ptr_to([0]), remote_cta_id=T.int32(1))
    else:
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(512))
        mbar.wait(0, 0)
        tile.copy(B[0:256], dst[0:256])
"""


def test_a_dsmem_bulk_copy_lands_in_the_peer_and_completes_its_mbarrier():
    a = (np.arange(256) % 97).astype(np.float16)
    b = np.zeros(256, np.float16)
    res = emulate(kernel(DSMEM, "dsmem"), a, b)
    assert res.ok, res.findings
    assert np.array_equal(b, a)


ST_BULK = """
@T.prim_func
def zero(O: T.Buffer((64,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    buf = T.alloc_shared([64], "int32")
    buf[tx] = tx + 1
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx.st_bulk.weak.shared__cta(T.address_of(buf[START]), T.uint64(SIZE))
    SYNC
    O[tx] = buf[tx]
"""


def test_st_bulk_zeroes_shared_memory_and_checks_its_rules():
    """``st.bulk`` stopped the run as not emulated; it zeroes ``size`` bytes, which must be a multiple of 8 at an
    8-byte aligned address, inside the CTA's shared memory, and its stores race a read with no barrier between."""
    ok = ST_BULK.replace("START", "8").replace("SIZE", "64").replace("SYNC", "T.cuda.cta_sync()")
    o = np.zeros(64, np.int32)
    res = emulate(kernel(ok, "zero"), o, arch="sm_100a")
    assert res.ok, res.findings
    want = np.arange(1, 65, dtype=np.int32)
    want[8:24] = 0
    assert np.array_equal(o, want)
    bad = ok.replace("buf[8]", "buf[1]").replace("T.uint64(64)", "T.uint64(12)")
    res = emulate(kernel(bad, "zero"), np.zeros(64, np.int32), arch="sm_100a")
    assert [f.kind for f in res.findings] == ["misaligned"], res.findings
    past = ST_BULK.replace("START", "56").replace("SIZE", "64").replace("SYNC", "T.cuda.cta_sync()")
    res = emulate(kernel(past, "zero"), np.zeros(64, np.int32), arch="sm_100a")
    assert any(f.kind == "out_of_bounds" for f in res.findings), res.findings
    racy = ST_BULK.replace("START", "40").replace("SIZE", "64").replace("SYNC", "")  # read by warp 1
    res = emulate(kernel(racy, "zero"), np.zeros(64, np.int32), arch="sm_100a")
    assert any(f.kind == "shared_race" for f in res.findings), res.findings
