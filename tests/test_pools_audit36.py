"""Memory plans (audit 36, items 7-11): an SMEMPool never committed, sizes that depend on a kernel argument,
several dynamic arenas, every arch txlab compiles for, alignment warnings only where an alignment is needed,
no occupancy from an invalid tcgen05.alloc."""

import json

import pytest

tvm = pytest.importorskip("tvm")
from tvm.script import tirx as T  # noqa: E402
from tvm.backend.cuda.lang import MBarrier, Pipeline  # noqa: E402

import txlab.pools as pools  # noqa: E402
from txlab.errors import ArchError, InputError  # noqa: E402


@T.prim_func
def no_commit(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    S = pool.alloc((128,), "float32", align=128)
    S[tx] = A[tx]
    T.cuda.cta_sync()
    B[tx] = S[127 - tx]


@T.prim_func
def committed(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    S = pool.alloc((128,), "float32", align=128)
    pool.commit()
    S[tx] = A[tx]
    T.cuda.cta_sync()
    B[tx] = S[127 - tx]


@T.prim_func
def backed_pool(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    # a pool over a buffer of its own: commit() is a no-op, the buffer's extent sizes the memory
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    buf = T.alloc_buffer((1024,), "uint8", scope="shared.dyn")
    pool = T.SMEMPool(buf.data)
    S = pool.alloc((128,), "float32", align=128)
    S[tx] = A[tx]
    T.cuda.cta_sync()
    B[tx] = S[127 - tx]


@T.prim_func
def sym_dyn(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    S = T.alloc_buffer((n,), "float32", scope="shared.dyn")
    S[tx] = A[tx]


@T.prim_func
def two_pools(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    p1 = T.SMEMPool()
    X = p1.alloc((1024,), "float32", align=128)
    p1.commit()
    p2 = T.SMEMPool()
    Y = p2.alloc((16384,), "float32", align=128)
    p2.commit()
    X[tx] = A[tx]
    Y[tx] = A[tx + 128]
    T.cuda.cta_sync()
    B[tx] = X[127 - tx] + Y[tx]


@T.prim_func
def two_buffers(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    X = T.alloc_buffer((256,), "float32", scope="shared.dyn")
    Y = T.alloc_buffer((512,), "float32", scope="shared.dyn")
    X[tx] = A[tx]
    Y[tx] = A[tx + 128]
    T.cuda.cta_sync()
    B[tx] = X[127 - tx] + Y[tx]


@T.prim_func
def small(A: T.Buffer((128,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    S = pool.alloc((128,), "float32", align=128)
    pool.commit()
    S[tx] = A[tx]


@T.prim_func
def flag_after_barriers(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([256])
    pool = T.SMEMPool()
    load = Pipeline(pool, 3, full="tma", empty="mbar")
    flag = pool.alloc((1,), "int32")
    bar = MBarrier(pool, 1)
    As = pool.alloc_tcgen05_mma_AB((3, 128, 64), "float16")
    pool.commit()
    As[0, tx // 2, 0] = A[tx // 2, 0]


@T.prim_func
def word_after_flag(A: T.Buffer((128,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    flag = pool.alloc((1,), "int32")
    word = pool.alloc((1,), "uint64")
    pool.commit()
    if tx == 0:
        word[0] = T.uint64(1)
        flag[0] = 1


@T.prim_func
def tmem_96(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    warp = T.warp_id([4])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    tmem = T.TMEMPool(pool, total_cols=96)
    pool.commit()
    acc = tmem.alloc((128, 96), "float32")
    tmem.commit()


@T.prim_func
def tmem_256(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    warp = T.warp_id([4])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    tmem = T.TMEMPool(pool, total_cols=256)
    pool.commit()
    acc = tmem.alloc((128, 256), "float16")
    acc2 = tmem.alloc((64, 64), "float32")
    tmem.commit()


# -- 7: a pool never committed ---------------------------------------------------------------------


def test_pool_never_committed_is_an_error_naming_the_fix():
    """No tirx.dyn_smem_bytes: the plan said 512 B and 16 CTA/SM and check() passed, while TVM refuses the kernel."""
    plan = pools.layout(no_commit, arch="sm_90a")
    assert plan.dynamic_smem_bytes is None
    (err,) = plan.errors
    assert err["kind"] == "smem" and err["allocation"] == "S"
    assert "never committed" in err["message"] and "pool.commit()" in err["message"]
    assert "SMEMPool 'pool'" in err["message"], err["message"]
    with pytest.raises(pools.PoolOverflowError, match="never committed"):
        plan.check()
    assert plan.occupancy.ctas_per_sm is None and "never committed" in plan.occupancy.unknown
    assert "CTA/SM unknown" in plan.summary()


@pytest.mark.parametrize("kernel", [committed, backed_pool], ids=["committed", "backed_by_a_buffer"])
def test_committed_or_backed_pools_stay_clean(kernel):
    plan = pools.layout(kernel, arch="sm_90a")
    assert plan.errors == [] and plan.warnings == [], (plan.errors, plan.warnings)
    assert plan.occupancy.ctas_per_sm == 16 and plan.occupancy.unknown is None
    plan.check()
    (arena,) = plan.arenas
    assert arena["pool"] and arena["allocations"] == ["S"]


# -- 8: a size that depends on a kernel argument ---------------------------------------------------


def test_size_that_depends_on_an_argument_is_said_not_counted():
    plan = pools.layout(sym_dyn, arch="sm_90a")
    (a,) = plan.allocations
    assert a["nbytes"] is None and a["nbytes_expr"] == "n * 4" and a["depends_on"] == ["n"]
    assert plan.total_smem_bytes is None and plan.depends_on == ["n"]
    (u,) = plan.unknown_sizes
    assert u["allocation"] == "S" and not u["in_total"]
    assert any("depends on n" in w and "params={'n': ...}" in w for w in plan.warnings), plan.warnings
    # occupancy is not claimed from a 0-byte size
    occ = plan.occupancy
    assert occ.ctas_per_sm is None and occ.limits["smem"] is None and occ.smem_per_cta_bytes is None
    assert "depends on n" in occ.unknown and any("at most 16" in n for n in occ.notes)
    plan.check()  # nothing known to be wrong; the warning says what is not judged
    # every formatter copes with the unknown size (summary() raised TypeError)
    text = plan.summary()
    assert text == str(plan)
    assert "? shared (depends on n)" in text and "n * 4 B" in text and "float32[n]" in text
    assert "CTA/SM unknown" in text
    json.dumps(plan.to_dict())
    import matplotlib

    matplotlib.use("Agg")
    plan.plot()
    from txlab.views.pool import PoolView

    assert json.loads(PoolView(plan).data)["plan"]["total_smem_bytes"] is None


def test_params_bind_the_argument_a_size_depends_on():
    fits = pools.layout(sym_dyn, arch="sm_90a", params={"n": 1024})
    assert fits.total_smem_bytes == 4096 and fits.unknown_sizes == [] and fits.errors == []
    assert fits.occupancy.ctas_per_sm == 16
    over = pools.layout(sym_dyn, arch="sm_90a", params={"n": 100_000})
    assert [e["allocation"] for e in over.errors] == ["S"]
    with pytest.raises(pools.PoolOverflowError):
        pools.check(sym_dyn, arch="sm_90a", params={"n": 100_000})
    for bad, match in (({"m": 3}, "'m' is not an integer argument"), ({"n": "x"}, "must be an int"), ([1], "dict")):
        with pytest.raises(InputError, match=match):
            pools.layout(sym_dyn, arch="sm_90a", params=bad)


# -- 9: several dynamic arenas ---------------------------------------------------------------------


def test_two_pools_are_two_arenas_not_a_missing_commit():
    """TVM refuses a second dynamic shared allocation; the plan blamed 'Y' for passing the first pool's commit."""
    plan = pools.layout(two_pools, arch="sm_90a")
    assert [ar["name"] for ar in plan.arenas] == ["p1_buf", "p2_buf"]
    (err,) = plan.errors
    msg = err["message"]
    assert "2 dynamic shared memory arenas" in msg and "Only one dynamic shared memory allocation" in msg
    assert "'X' and 'Y' would overlap" in msg and "past the kernel's dynamic shared memory annotation" not in msg
    # both arenas start at byte 0 of the one extern array: the buffers alias across pools
    assert plan["X"]["aliases"] == ["Y"] and plan["Y"]["aliases"] == ["X"]
    assert plan.occupancy.ctas_per_sm is None and "2 dynamic shared memory arenas" in plan.occupancy.unknown
    with pytest.raises(pools.PoolOverflowError, match="arenas"):
        plan.check()


def test_two_shared_dyn_buffers_are_two_arenas_too():
    plan = pools.layout(two_buffers, arch="sm_90a")
    assert len(plan.arenas) == 2 and not any(ar["pool"] for ar in plan.arenas)
    assert "2 dynamic shared memory arenas" in plan.errors[0]["message"]


# -- 10: every arch txlab compiles for --------------------------------------------------------------


def test_every_supported_arch_is_judged_or_refused_with_its_reason():
    from txlab.arch import SM_LIMITS, SUPPORTED_ARCH_BASES, UNJUDGED_ARCHS

    # one table: every arch txlab compiles for has a row or a reason, and nothing else has either
    assert set(SM_LIMITS) | set(UNJUDGED_ARCHS) == set(SUPPORTED_ARCH_BASES)
    assert not set(SM_LIMITS) & set(UNJUDGED_ARCHS)
    assert set(pools.ARCH_LIMITS) == set(SM_LIMITS)
    for base in SUPPORTED_ARCH_BASES:
        if base in UNJUDGED_ARCHS:
            with pytest.raises(ArchError) as info:
                pools.layout(small, arch=base)
            assert "Turing" in str(info.value) and "no shared-memory limits" not in str(info.value)
            continue
        plan = pools.layout(small, arch=base)
        assert plan.errors == [] and plan.limit_bytes == SM_LIMITS[base].max_smem_per_cta_optin


@pytest.mark.parametrize(
    "arch, optin_kib, ctas, threads, tmem",
    [
        ("sm_87", 163, 16, 1536, 0),
        ("sm_88", 99, 16, 1536, 0),
        ("sm_110a", 227, 24, 1536, 512),
        ("sm_121a", 99, 24, 1536, 0),
    ],
)
def test_new_arch_rows(arch, optin_kib, ctas, threads, tmem):
    lim = pools.arch_limits(arch)
    assert lim["smem_per_block_optin"] == optin_kib * 1024 and lim["max_ctas_per_sm"] == ctas
    assert lim["max_warps_per_sm"] * 32 == threads and lim["tmem_columns"] == tmem
    assert pools.layout(small, arch=arch).occupancy.ctas_per_sm == min(ctas, threads // 128)


def test_tensor_memory_on_sm_110_not_on_sm_121():
    from test_pools import blackwell_tmem

    assert pools.layout(blackwell_tmem, arch="sm_110a").errors == []
    assert any("no tensor memory" in e["message"] for e in pools.layout(blackwell_tmem, arch="sm_121a").errors)


# -- 11a: alignment warnings only where an alignment is needed --------------------------------------


def test_a_flag_after_barriers_is_not_warned_about_a_default_alignment():
    plan = pools.layout(flag_after_barriers, arch="sm_90a")
    assert plan["flag"]["offset"] == 48 and plan.warnings == [], plan.warnings


def test_a_buffer_off_its_element_size_is_warned_about():
    """pool.alloc((1,), "uint64") after an int32: TVM keeps the offset in elements (4 // 8 = 0), so the word lands
    on the flag."""
    plan = pools.layout(word_after_flag, arch="sm_90a")
    assert plan["word"]["offset"] == 0 and plan["word"]["aliases"] == ["flag"]
    (w,) = plan.warnings
    assert "'word' (uint64) follows 'flag'" in w and "align=8" in w


# -- 11b: no occupancy from an invalid tcgen05.alloc ------------------------------------------------


def test_invalid_tmem_alloc_claims_no_occupancy():
    plan = pools.layout(tmem_96, arch="sm_100a")
    assert any("power of two" in e["message"] for e in plan.errors)
    occ = plan.occupancy
    assert occ.ctas_per_sm is None and occ.limits["tmem"] is None and "96 columns" in occ.unknown
    assert "(tmem)" not in plan.summary() and "CTA/SM unknown" in plan.summary()
    ok = pools.layout(tmem_256, arch="sm_100a")
    assert ok.errors == [] and ok.occupancy.ctas_per_sm == 2 and ok.occupancy.limited_by == "tmem"
