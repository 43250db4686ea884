"""txlab.occupancy: the CUDA occupancy calculator's rules, per arch, checked on hand-worked cases;
on a GPU against the driver (cuOccupancyMaxActiveBlocksPerMultiprocessor) for notebook kernels."""

import pytest

import txlab
from txlab import occupancy as occ_mod


def test_module_is_an_attribute_and_occupancy_of_its_function():
    import txlab.occupancy as m

    assert txlab.occupancy is m and txlab.occupancy_of is m.occupancy
    assert txlab.occupancy.calculate is occ_mod.calculate


def test_hand_worked_sm80():
    # 64 regs x 32 = 2048 per warp; 16384 per sub-partition -> 8 warps each -> 32 warps -> 4 CTAs of 8;
    # smem 48 KiB + 1 KiB reserved = 49 KiB -> 164 // 49 = 3 CTAs; warps 64 // 8 = 8; CTAs 32
    o = occ_mod.calculate("sm_80", threads=256, registers=64, smem_bytes=48 * 1024)
    assert o.limits == {"warps": 8, "registers": 4, "shared_memory": 3, "blocks": 32}
    assert o.blocks_per_sm == 3 and o.limiter == ["shared_memory"]
    assert o.occupancy == pytest.approx(24 / 64)
    assert "need <= " in o.summary()


def test_register_granularity_and_subpartitions():
    # 33 regs -> 1056 per warp, rounded to 1280; 16384 // 1280 = 12 per sub-partition -> 48 warps
    o = occ_mod.calculate("sm_90a", threads=128, registers=33)
    assert o.regs_per_warp == 1280
    assert o.limits["registers"] == 48 // 4
    # 255 regs x 1024 threads does not fit a CTA's 64K registers
    o = occ_mod.calculate("sm_90a", threads=1024, registers=255)
    assert o.blocks_per_sm == 0 and o.problems


def test_per_arch_limits():
    small = dict(threads=32, registers=16, smem_bytes=0)
    assert occ_mod.calculate("sm_86", **small).blocks_per_sm == 16
    assert occ_mod.calculate("sm_89", **small).blocks_per_sm == 24
    assert occ_mod.calculate("sm_90a", **small).blocks_per_sm == 32
    assert occ_mod.calculate("sm_100a", **small).blocks_per_sm == 32
    assert occ_mod.calculate("sm_120", **small).blocks_per_sm == 24
    assert occ_mod.calculate("sm_86", threads=1024, registers=16).limits["warps"] == 1  # 48 warps/SM
    with pytest.raises(txlab.ArchError):
        occ_mod.limits("sm_75")


def test_smem_reserved_and_carveout():
    # 100 KiB per CTA on sm_90: (100 + 1) KiB -> 228 // 101 = 2
    o = occ_mod.calculate("sm_90a", threads=128, registers=32, smem_bytes=100 * 1024)
    assert o.smem_per_cta == 101 * 1024 and o.limits["shared_memory"] == 2
    # a 50% carve-out preference on sm_90 = 114 KiB -> rounded up to 132 KiB -> 1 CTA of 101 KiB
    o = occ_mod.calculate("sm_90a", threads=128, registers=32, smem_bytes=100 * 1024, carveout=50)
    assert o.smem_per_sm == 132 * 1024 and o.limits["shared_memory"] == 1
    # too much for any CTA
    o = occ_mod.calculate("sm_86", threads=128, registers=32, smem_bytes=100 * 1024)
    assert o.blocks_per_sm == 0


def test_compiled_kernels_and_what_if():
    from txlab.examples import transpose as tr
    from txlab.examples import hopper_gemm as hg

    c = txlab.compile(tr.transpose_kernel(256, "padded"), arch="sm_90a")
    o = txlab.occupancy_of(c)
    res = c.resources[o.kernel]
    assert o.threads == 256 and o.registers == res["registers"]
    assert o.smem_bytes == res["static_smem_bytes"] == 4224
    assert o.blocks_per_sm == 8 and "warps" in o.limiter  # 64 warps / 8 per CTA
    sweeps = o.what_if()
    assert set(sweeps) == {"registers", "smem_bytes", "threads"}
    by_regs = {r["value"]: r["blocks_per_sm"] for r in sweeps["registers"]}
    assert by_regs[255] == 1 and by_regs[32] == 8
    g = hg.build(1024, 1024, 1024, hg.GemmConfig())  # the default config: 128x256, 3 warpgroups
    og = txlab.occupancy_of(g)
    assert og.blocks_per_sm == 1 and "shared_memory" in og.limiter
    assert og.to_dict()["occupancy"] == pytest.approx(12 / 64)
    import matplotlib

    matplotlib.use("Agg")
    assert o.plot() is not None


def test_argument_errors():
    with pytest.raises(ValueError):
        occ_mod.calculate("sm_90a", threads=0, registers=32)
    with pytest.raises(ValueError):
        occ_mod.calculate("sm_90a", threads=32, registers=32, carveout=140)


@pytest.mark.gpu
def test_matches_driver_for_notebook_kernels():
    from txlab.examples import bandwidth as bw
    from txlab.examples import hopper_gemm as hg
    from txlab.examples import transpose as tr

    kernels = [txlab.compile(tr.transpose_kernel(1024, v)) for v in tr.VARIANTS]
    kernels += [txlab.compile(bw.copy_kernel(1 << 24)), hg.build(2048, 2048, 2048)]
    for c in kernels:
        assert txlab.occupancy_of(c).blocks_per_sm == occ_mod.driver_blocks_per_sm(c), c.name


def test_the_next_step_names_every_tied_limit_and_holds():
    """Where registers and shared memory both stop the sixth CTA, lowering registers alone gains nothing; the
    advice named registers only. It names both bounds, and meeting them gives the extra CTA."""
    from txlab.occupancy import calculate

    o = calculate("sm_90a", threads=128, registers=96, smem_bytes=40960)
    assert o.blocks_per_sm == 5 and set(o.limiter) == {"registers", "shared_memory"}
    s = o.summary()
    assert "6 CTAs/SM need <= 80 registers per thread (now 96) and <= 37888 bytes of shared memory" in s, s
    assert calculate("sm_90a", threads=128, registers=80, smem_bytes=40960).blocks_per_sm == 5  # one alone: no gain
    assert calculate("sm_90a", threads=128, registers=80, smem_bytes=37888).blocks_per_sm == 6
    alone = calculate("sm_90a", threads=128, registers=200, smem_bytes=1000)
    assert alone.summary().endswith("3 CTAs/SM need <= 168 registers per thread (now 200).")


@pytest.mark.parametrize(
    ("threads", "registers", "smem"),
    [(64, 40, 8256), (128, 168, 0), (256, 32, 48 * 1024), (96, 255, 1000), (384, 72, 100 * 1024), (1024, 64, 0)],
)
def test_the_emulator_and_build_diagnostics_count_resident_ctas_as_occupancy_of(threads, registers, smem):
    """One rule set (txlab.residency): the resident-CTA count the emulator's cooperative/polling windows and the
    build's launchability warnings use is occupancy_of's (they once skipped the 128-byte shared unit and the
    per-sub-partition register rule: 25 CTAs where occupancy_of says 24 for 64 threads, 40 registers, 8256 B)."""
    from txlab.arch import SM_LIMITS
    from txlab.residency import resident_per_sm

    occ = occ_mod.calculate("sm_90a", threads=threads, registers=registers, smem_bytes=smem)
    assert resident_per_sm(SM_LIMITS["sm_90"], threads, smem, registers) == occ.blocks_per_sm
