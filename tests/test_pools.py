"""txlab.pools: plans read back from the IR of real TIRx kernels (parsed here, no GPU needed)."""

import pytest

tvm = pytest.importorskip("tvm")
from tvm.script import tirx as T  # noqa: E402
from tvm.backend.cuda.lang import Pipeline, TCGen05Bar  # noqa: E402

import txlab.pools as pools  # noqa: E402


@T.prim_func
def hopper_pipeline(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([256])
    pool = T.SMEMPool()
    load = Pipeline(pool, 4, full="tma", empty="mbar")
    As = pool.alloc_tcgen05_mma_AB((4, 128, 64), "float16")
    Bs = pool.alloc_tcgen05_mma_AB((4, 128, 64), "float16")
    pool.move_base_to(1024)  # epilogue tile reuses the A stages
    Cs = pool.alloc((128, 128), "float16", align=128)
    pool.commit()
    load.full.wait(0, 0)
    Cs[tx // 2, 0] = A[tx // 2, 0]


@T.prim_func
def too_big(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    As = pool.alloc_tcgen05_mma_AB((5, 128, 64), "float16")
    Bs = pool.alloc_tcgen05_mma_AB((5, 256, 64), "float16")
    pool.commit()
    As[0, tx, 0] = A[tx, 0]


@T.prim_func
def blackwell_tmem(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    warp = T.warp_id([4])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    mma_done = TCGen05Bar(pool, 1)
    tmem = T.TMEMPool(pool)
    As = pool.alloc_tcgen05_mma_AB((2, 128, 64), "float16")
    pool.commit()
    acc = tmem.alloc((128, 256), "float32")
    acc2 = tmem.alloc((128, 128), "float32")
    tmem.commit()
    As[0, tx, 0] = A[tx, 0]


@T.prim_func
def tmem_over(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    warp = T.warp_id([4])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    tmem = T.TMEMPool(pool, total_cols=1024)
    pool.commit()
    acc = tmem.alloc((128, 256), "float32")
    acc2 = tmem.alloc((128, 384), "float32")
    tmem.commit()


def test_hopper_plan_offsets_names_and_aliases():
    plan = pools.layout(hopper_pipeline, arch="sm_90a")
    by = {a["name"]: a for a in plan.allocations}
    # Unnamed Pipeline barriers are named from the source line that built them.
    assert by["load.full"]["offset"] == 0 and by["load.full"]["nbytes"] == 32
    assert by["load_empty_buf"]["offset"] == 32  # TVM named this one itself
    assert by["As"]["offset"] == 1024 and by["As"]["nbytes"] == 4 * 128 * 64 * 2
    assert by["Bs"]["offset"] == 1024 + 65536
    assert by["As"]["align"] == 1024 and by["As"]["swizzle"].startswith("128B swizzle")
    assert by["Cs"]["offset"] == 1024 and by["Cs"]["aliases"] == ["As"]
    assert "Cs" in by["As"]["aliases"] and by["Bs"]["aliases"] == []
    assert plan.dynamic_smem_bytes == 1024 + 2 * 65536 == plan.high_water_bytes
    assert plan.padding_bytes == 1024 - 64
    assert plan.gaps[0]["before"] == "As" and "alignment" in plan.gaps[0]["reason"]
    assert plan.limit_bytes == 227 * 1024 and plan.errors == []
    plan.check()


def test_occupancy_shared_memory_and_registers():
    plan = pools.layout(hopper_pipeline, arch="sm_90a")
    occ = plan.occupancy
    # 132096 B + 1 KiB reserved per CTA into 228 KiB -> 1 CTA; 8 warps -> 8 CTAs by warps.
    assert occ.smem_per_cta_bytes == 132096 + 1024
    assert occ.limits["smem"] == (228 * 1024) // (132096 + 1024) == 1
    assert occ.threads_per_cta == 256 and occ.limits["threads"] == 8
    assert occ.ctas_per_sm == 1 and occ.limited_by == "smem"

    class FakeCompiled:  # the shape of txlab.Compiled's interface (ir_module/arch/resources/launch)
        ir_module = tvm.IRModule({"hopper_pipeline": hopper_pipeline})
        arch = "sm_90a"
        resources = {"hopper_pipeline_kernel": {"registers": 168, "static_smem_bytes": 0, "dynamic_smem_bytes": 132096}}
        launch = {
            "hopper_pipeline_kernel": {"grid": (1,), "block": (256,), "cluster": None, "dynamic_smem_bytes": 132096}
        }

    occ = pools.layout(FakeCompiled()).occupancy
    # 168 regs x 32 lanes = 5376 per warp (already a multiple of 256); 8 warps -> 43008 per CTA.
    assert occ.registers_per_thread == 168 and occ.limits["registers"] == 65536 // 43008 == 1
    # shared memory and registers both allow one CTA: a tie names both, as txlab.occupancy_of does
    assert occ.ctas_per_sm == 1 and occ.limited_by == "smem and registers"


def test_over_limit_names_the_allocation_and_excess():
    plan = pools.layout(too_big, arch="sm_90a")
    assert plan.dynamic_smem_bytes == 5 * 16384 + 5 * 32768  # 245760
    excess = plan.dynamic_smem_bytes - 227 * 1024
    with pytest.raises(pools.PoolOverflowError) as info:
        plan.check()
    err = info.value
    assert err.kind == "smem" and err.allocation == "Bs" and err.excess == excess == 13312
    assert "Bs" in str(err) and "13312 B" in str(err) and "sm_90a" in str(err)
    assert plan.occupancy.ctas_per_sm == 0
    # sm_86 (99 KiB): As (80 KiB) still fits, Bs crosses.
    e86 = pools.layout(too_big, arch="sm_86").errors[0]
    assert (e86["allocation"], e86["excess"]) == ("Bs", 245760 - 99 * 1024)


def test_tmem_plan_and_overflow():
    plan = pools.layout(blackwell_tmem, arch="sm_100a")
    by = {a["name"]: a for a in plan.allocations}
    assert (by["acc"]["offset"], by["acc"]["nbytes"]) == (0, 256)
    assert (by["acc2"]["offset"], by["acc2"]["nbytes"]) == (256, 128)
    assert by["acc"]["lanes"] == [[0, 128]]
    assert plan.tmem_columns == 384 and plan.tmem_alloc_columns == 512
    assert by["tmem__addr_buf"]["dtype"] == "uint32"
    assert "mbarrier" in [a for a in by if a.startswith("mbarrier")][0]
    assert plan.errors == [] and plan.occupancy.limits["tmem"] == 1

    over = pools.layout(tmem_over, arch="sm_100a")
    kinds = [(e["kind"], e["allocation"], e["excess"]) for e in over.errors]
    assert ("tmem", "acc2", 640 - 512) in kinds
    with pytest.raises(pools.PoolOverflowError, match="acc2"):
        over.check()
    # TMEM on Hopper is an error too.
    assert any("no tensor memory" in e["message"] for e in pools.layout(blackwell_tmem, arch="sm_90a").errors)


def test_bank_pattern_is_tvms_own_swizzle():
    from tvm.backend.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout

    plan = pools.layout(hopper_pipeline, arch="sm_90a")
    bp = pools.bank_pattern(plan, "As")
    # 128B swizzle: 16-byte chunk c of row r lands in bank group c ^ (r % 8) -- the CUTLASS
    # Swizzle<3,4,3> pattern; TVM's layout object must agree on every cell.
    assert bp["bank_group"] == [[c ^ (r % 8) for c in range(8)] for r in range(8)]
    assert bp["conflict_ways"] == 1
    # Independent evaluation of the layout TVM builds for this request, at the same base offset.
    lay = mma_shared_layout("float16", SwizzleMode.SWIZZLE_128B_ATOM, (4, 128, 64))
    for r in range(8):
        for c in range(8):
            m = int(lay.apply(0, r, c * 8, shape=[4, 128, 64])["m"])
            assert ((1024 + 2 * m) % 128) // 16 == bp["bank_group"][r][c]
    # Unswizzled row-major 128 B rows: every row starts in bank group 0 -> 8-way conflict.
    assert plan["Cs"]["bank_pattern"]["conflict_ways"] == 8


def test_64b_swizzle_pattern():
    @T.prim_func
    def k64(A: T.Buffer((128, 64), "float16")):
        T.device_entry()
        cta = T.cta_id([1])
        tx = T.thread_id([128])
        pool = T.SMEMPool()
        Xs = pool.alloc_tcgen05_mma_AB((64, 32), "float16", swizzle_mode=pools_swizzle(2))
        pool.commit()
        Xs[tx // 2, 0] = A[tx, 0]

    plan = pools.layout(k64, arch="sm_90a")
    a = plan["Xs"]
    assert a["swizzle"].startswith("64B swizzle")
    # 64 B rows: chunk c of row r -> bank group ((r % 2) * 4 + (c ^ ((r // 2) % 4)))
    g = a["bank_pattern"]["bank_group"]
    assert g == [[((r % 2) * 4) + (c ^ ((r // 2) % 4)) for c in range(4)] for r in range(8)]


def pools_swizzle(n):
    from tvm.backend.cuda.tile_primitive.tma_utils import SwizzleMode

    return SwizzleMode(n)


def test_to_dict_plot_and_widget():
    plan = pools.layout(blackwell_tmem, arch="sm_100a")
    d = plan.to_dict()
    import json

    json.dumps(d)
    assert d["limit_bytes"] == 227 * 1024 and d["tmem_limit_columns"] == 512
    import matplotlib

    matplotlib.use("Agg")
    fig = plan.plot()
    assert len(fig.axes) == 2
    from txlab.views.pool import PoolView

    w = PoolView(plan)
    assert json.loads(w.data)["plan"]["kernel"] == "blackwell_tmem"


def test_errors_for_bad_input():
    with pytest.raises(TypeError, match="prim_func"):
        pools.layout(42)
    with pytest.raises(ValueError, match="unknown arch"):
        pools.arch_limits("sm_42")
    mod = tvm.IRModule({"a": hopper_pipeline, "b": too_big})
    with pytest.raises(ValueError, match="name="):
        pools.layout(mod)
    assert pools.layout(mod, "b", arch="sm_90a").kernel == "b"


DYN = """
@T.prim_func
def dyn(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    T.device_entry()
    bx = T.cta_id([16])
    tid = T.thread_id([256])
    S = T.alloc_buffer((ELEMS,), "float32", scope="shared.dyn", align=128)
    S[tid * 32] = A[bx * 256 + tid]
    T.cuda.cta_sync()
    B[bx * 256 + tid] = S[tid * 32]
"""


def test_dynamic_shared_memory_allocated_as_a_buffer_is_in_the_plan():
    """``T.alloc_buffer(..., scope="shared.dyn")`` (not carved by an SMEMPool) was invisible: the plan said 0 B and 8
    CTAs per SM for a kernel with 32 KiB of dynamic shared memory, and nothing for one past the limit."""
    from test_emulator import kernel

    lay = pools.layout(kernel(DYN.replace("ELEMS", "8192"), "dyn"), arch="sm_90a")
    (a,) = lay.allocations
    assert a["name"] == "S" and a["scope"] == "shared.dyn" and a["offset"] == 0 and a["nbytes"] == 32768
    big = pools.layout(kernel(DYN.replace("ELEMS", "61440"), "dyn"), arch="sm_90a")
    assert [e["allocation"] for e in big.errors] == ["S"] and big.errors[0]["excess"] == 13312, big.errors
