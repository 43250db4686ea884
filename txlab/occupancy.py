"""Theoretical occupancy without a GPU: how many CTAs of a kernel fit on one SM, which resource
stops the next one, and the what-if sweeps of a CUDA occupancy calculator.

    occ = txlab.occupancy_of(compiled, arch="sm_90a")
    occ.blocks_per_sm, occ.occupancy, occ.limiter      # 2, 0.375, ['registers']
    occ.what_if()["registers"]                         # rows: registers/thread -> CTAs/SM
    occ.what_if(registers=128)                         # one Occupancy: this kernel at 128 registers/thread
    txlab.occupancy.calculate("sm_80", threads=256, registers=64, smem_bytes=48 * 1024)

The rules are those of NVIDIA's occupancy calculator (``cuda_occupancy.h``, shipped with the
CUDA toolkit and the ``nvidia-cuda-runtime`` wheel, which mirrors what the driver's
``cuOccupancyMaxActiveBlocksPerMultiprocessor`` computes), written once in
:mod:`txlab.residency` (a memory plan's occupancy counts with the same functions):

* **warps**: ``ceil(threads / 32)`` warps per CTA against the SM's warp slots.
* **registers** are allocated per warp: ``registers x 32`` rounded up to the allocation unit
  (256 registers); each of the 4 SM sub-partitions holds ``regs_per_sm / 4`` of them, so the
  warps that fit are ``4 x floor(regs_per_sm / 4 / regs_per_warp)``. A CTA also has to fit the
  per-CTA register limit with its warp count rounded up to a multiple of 4 (the hardware check).
* **shared memory**: static + dynamic + the 1 KiB the driver reserves per CTA (sm_80 and
  later), rounded up to 128 bytes, against the SM's carve-out. With the default carve-out the
  whole shared memory of the SM is available (the driver picks the carve-out); with
  ``carveout=<percent>`` the preference is rounded up to the next size the arch supports (the
  ``carveouts_kib`` of :data:`ARCHS`), but never below what one CTA needs.
* **CTAs**: the arch's resident-CTA limit.

The limits per arch (:data:`ARCHS`, the one table in :mod:`txlab.arch` that memory plans read
too) are the CUDA C++ Programming Guide's "technical specifications per compute capability"
table as encoded in ``cuda_occupancy.h`` of CUDA 13.0 (that header is what the calculator and the
driver agree on; where the two documents differ, for sm_120 resident CTAs, the header's 24 is
used). Not modelled: per-kernel named-barrier counts
(Hopper's barrier limit) and cluster scheduling (``cudaOccupancyMaxActiveClusters``), which only
the driver knows; :func:`driver_blocks_per_sm` asks the driver on a GPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from txlab.arch import SM_LIMITS, ArchLimits  # noqa: F401 (ArchLimits: re-exported)
from txlab.deprecation import callable_module

# the rules themselves are written once, in txlab.residency (in the base layer: memory plans, build diagnostics and the emulator count with them too)
from txlab import residency as _rules
from txlab.residency import (  # noqa: F401 (public here as before)
    REG_ALLOC_UNIT,
    RESERVED_SMEM_PER_CTA,
    SMEM_ALLOC_UNIT,
    SUBPARTITIONS,
    WARP,
)

_KIB = 1024


#: the archs txlab knows the limits of (one table for occupancy and memory plans: txlab.arch)
ARCHS = SM_LIMITS


def limits(arch: str) -> ArchLimits:
    """The :class:`ArchLimits` of ``arch`` ('sm_90a' -> sm_90's). Raises ArchError for others."""
    from txlab.arch import resolve_arch
    from txlab.errors import ArchError

    a = resolve_arch(arch)
    base = a.rstrip("af")
    if base not in ARCHS:
        raise ArchError(
            f"occupancy: no limits table for {a}; known archs are {', '.join(ARCHS)} (and their 'a'/'f' variants)"
        )
    return ARCHS[base]


@dataclass
class Occupancy:
    """Theoretical occupancy of one kernel configuration on one SM."""

    arch: str
    kernel: str
    threads: int
    registers: int
    smem_bytes: int  # static + dynamic, as the kernel asks
    blocks_per_sm: int
    warps_per_cta: int
    max_warps_per_sm: int
    limits: dict  # resource -> CTAs per SM it allows
    limiter: list  # resources whose limit equals blocks_per_sm
    regs_per_warp: int  # allocated (rounded to the allocation unit)
    smem_per_cta: int  # allocated: + reserved 1 KiB, rounded to 128 B
    smem_per_sm: int  # the carve-out that applies
    carveout: int | None = None  # the requested carve-out percentage, if any
    problems: list = field(default_factory=list)  # why nothing fits, if blocks_per_sm == 0

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_cta

    @property
    def occupancy(self) -> float:
        """Active warps / maximum warps per SM (0..1)."""
        return self.warps_per_sm / self.max_warps_per_sm

    def to_dict(self) -> dict:
        return {**asdict(self), "warps_per_sm": self.warps_per_sm, "occupancy": self.occupancy}

    def summary(self) -> str:
        if self.blocks_per_sm == 0:
            return f"{self.kernel} cannot run on {self.arch}: " + "; ".join(self.problems)
        head = (
            f"{self.kernel} on {self.arch}: {self.blocks_per_sm} CTA(s) of {self.threads} threads per "
            f"SM = {self.warps_per_sm}/{self.max_warps_per_sm} warps ({self.occupancy:.0%} "
            f"theoretical occupancy), limited by {' and '.join(self.limiter)}."
        )
        nxt = self._next_step()
        return head + (f" {nxt}" if nxt else "")

    def _next_step(self) -> str | None:
        """What it would take for one more CTA per SM: every limiting resource's bound (where two limits tie, one
        lowered alone gains nothing), and only when meeting them all does give one more CTA."""
        want = self.blocks_per_sm + 1
        lim = ARCHS[self.arch.rstrip("af")]
        needs, change = [], {}
        if "registers" in self.limiter:
            per_sub_warps = -(-want * self.warps_per_cta // SUBPARTITIONS)
            regs_warp = (lim.regs_per_sm // SUBPARTITIONS) // per_sub_warps if per_sub_warps else 0
            regs = (regs_warp // REG_ALLOC_UNIT * REG_ALLOC_UNIT) // WARP
            if regs < 1:
                return None
            needs.append(f"<= {regs} registers per thread (now {self.registers})")
            change["registers"] = regs
        if "shared_memory" in self.limiter:
            per = (self.smem_per_sm // want) // SMEM_ALLOC_UNIT * SMEM_ALLOC_UNIT - RESERVED_SMEM_PER_CTA
            if per < 0:
                return None
            needs.append(f"<= {per} bytes of shared memory per CTA (now {self.smem_bytes})")
            change["smem_bytes"] = per
        if not needs:
            return None
        base = {"threads": self.threads, "registers": self.registers, "smem_bytes": self.smem_bytes, **change}
        if calculate(self.arch, carveout=self.carveout, kernel=self.kernel, **base).blocks_per_sm < want:
            return None  # another limit (threads, CTA slots) stops it too
        return f"{want} CTAs/SM need " + " and ".join(needs) + "."

    def what_if(self, *, registers=None, smem_bytes=None, threads=None):
        """This kernel's occupancy with other resources, keeping the ones not given.

        Each argument is a number or a list of numbers (registers per thread, shared memory bytes per CTA,
        threads per CTA). Numbers only: the :class:`Occupancy` with them (``o.what_if(registers=128)``; two or
        three numbers change them together). With a list: the occupancy calculator's three sweeps, each varying
        one resource over its list (the others over their whole range) with the numbers given kept:
        ``{"registers": [...], "smem_bytes": [...], "threads": [...]}``, rows
        ``{value, blocks_per_sm, warps_per_sm, occupancy, limiter}``; ``what_if()`` sweeps all three.
        A value outside what the arch allows (registers 1 to 255, threads 1 to 1024, shared memory from 0) is an
        :class:`txlab.errors.InputError`."""
        lim = ARCHS[self.arch.rstrip("af")]
        bounds = {
            "registers": (1, lim.max_regs_per_thread, "registers per thread"),
            "smem_bytes": (0, None, "bytes of shared memory per CTA"),
            "threads": (1, lim.max_threads_per_cta, "threads per CTA"),
        }
        given = {"registers": registers, "smem_bytes": smem_bytes, "threads": threads}
        fixed, swept = {}, {}
        for name, value in given.items():
            if value is None:
                continue
            scalar = not isinstance(value, (list, tuple, range, set, frozenset))
            values = [value] if scalar else list(value)
            if not values:
                from txlab.errors import InputError

                raise InputError(f"what_if({name}=...): an empty list; give a number or a list of numbers", param=name)
            for v in values:
                _check_what_if(name, v, *bounds[name], self.arch)
            (fixed if scalar else swept)[name] = value if scalar else values
        base = {"threads": self.threads, "registers": self.registers, "smem_bytes": self.smem_bytes, **fixed}
        if fixed and not swept:
            return calculate(self.arch, carveout=self.carveout, kernel=self.kernel, **base)
        ranges = {
            "registers": list(range(8, lim.max_regs_per_thread + 1, 8)) + [lim.max_regs_per_thread],
            "smem_bytes": list(range(0, lim.max_smem_per_cta_optin + 1, 4 * _KIB)),
            "threads": list(range(WARP, lim.max_threads_per_cta + 1, WARP)),
        }

        def row(**kw):
            o = calculate(self.arch, carveout=self.carveout, kernel=self.kernel, **{**base, **kw})
            return {
                "value": next(iter(kw.values())),
                "blocks_per_sm": o.blocks_per_sm,
                "warps_per_sm": o.warps_per_sm,
                "occupancy": o.occupancy,
                "limiter": o.limiter,
            }

        out = {}
        for name in ("registers", "smem_bytes", "threads"):
            values = swept.get(name) or ([fixed[name]] if name in fixed else ranges[name])
            out[name] = [row(**{name: v}) for v in sorted(set(values))]
        return out

    def plot(self):
        """The calculator's three graphs: occupancy against registers, shared memory and block
        size, this kernel's point marked."""
        import matplotlib.pyplot as plt

        sweeps = self.what_if()
        fig, axes = plt.subplots(1, 3, figsize=(11, 2.8), sharey=True)
        for ax, (key, label, now) in zip(
            axes,
            [
                ("registers", "registers / thread", self.registers),
                ("smem_bytes", "shared memory / CTA (KiB)", self.smem_bytes),
                ("threads", "threads / CTA", self.threads),
            ],
        ):
            xs = [r["value"] / (_KIB if key == "smem_bytes" else 1) for r in sweeps[key]]
            ax.step(xs, [100 * r["occupancy"] for r in sweeps[key]], where="post")
            ax.plot([now / (_KIB if key == "smem_bytes" else 1)], [100 * self.occupancy], "o", color="C3")
            ax.set_xlabel(label)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("occupancy %")
        axes[0].set_ylim(0, 105)
        fig.suptitle(
            f"{self.kernel} on {self.arch}: {self.occupancy:.0%} ({self.blocks_per_sm} CTA/SM, "
            f"limited by {', '.join(self.limiter) or '-'})",
            fontsize=10,
        )
        fig.tight_layout()
        return fig

    def __repr__(self):
        return f"<Occupancy {self.summary()}>"


def _check_what_if(name: str, value, low: int, high: int | None, what: str, arch: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        from txlab.errors import InputError

        span = f"{low} to {high}" if high is not None else f"{low} or more"
        raise InputError(
            f"what_if({name}={value!r}): {what} on {arch} is a whole number from {span} (or a list of them)",
            param=name,
        )


def calculate(
    arch: str, *, threads: int, registers: int, smem_bytes: int = 0, carveout: int | None = None, kernel: str = "kernel"
) -> Occupancy:
    """Theoretical occupancy for explicit resources (``smem_bytes`` = static + dynamic per CTA).
    ``carveout`` is a shared-memory carve-out preference in percent (None: the driver's default)."""
    lim = limits(arch)
    for name, v in (("threads", threads), ("registers", registers), ("smem_bytes", smem_bytes)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"occupancy: {name} must be a non-negative int, got {v!r}")
    if threads == 0:
        raise ValueError("occupancy: threads must be at least 1")
    if carveout is not None and not 0 <= carveout <= 100:
        raise ValueError(f"occupancy: carveout is a percentage 0..100, got {carveout!r}")
    warps = _rules.warps_per_cta(threads)
    regs_warp = _rules.regs_per_warp(registers)
    smem_cta = _rules.smem_per_cta(smem_bytes)
    by_warps, p_warps = _rules.by_warps(lim, threads)
    by_regs, p_regs = _rules.by_registers(lim, registers, threads)
    by_smem, smem_sm, p_smem = _rules.by_shared_memory(lim, smem_bytes, carveout)
    problems = [p for p in (p_warps, p_regs, p_smem) if p]
    by_ctas = lim.max_ctas_per_sm
    table = {"warps": by_warps, "registers": by_regs, "shared_memory": by_smem, "blocks": by_ctas}
    blocks = min(table.values())
    limiter = [k for k, v in table.items() if v == blocks]
    shown = {k: (v if v < _rules.UNLIMITED else None) for k, v in table.items()}
    return Occupancy(
        arch=arch,
        kernel=kernel,
        threads=threads,
        registers=registers,
        smem_bytes=smem_bytes,
        blocks_per_sm=blocks,
        warps_per_cta=warps,
        max_warps_per_sm=lim.max_warps_per_sm,
        limits=shown,
        limiter=limiter,
        regs_per_warp=regs_warp,
        smem_per_cta=smem_cta,
        smem_per_sm=smem_sm,
        carveout=carveout,
        problems=problems,
    )


def occupancy(
    compiled,
    arch: str | None = None,
    *,
    kernel: str | None = None,
    args=None,
    dynamic_smem_bytes: int | None = None,
    carveout: int | None = None,
) -> Occupancy:
    """Theoretical occupancy of ``compiled``'s kernel (registers and static shared memory from
    ptxas, threads and dynamic shared memory from the launch) on ``arch`` (default: the arch it
    was compiled for). A symbolic launch extent is evaluated from ``args`` (the arguments you
    would call it with) or given as ``dynamic_smem_bytes``. ``compiled``: a :class:`txlab.Compiled`,
    or a ``@T.prim_func`` / IRModule (compiled first; no GPU needed)."""
    from txlab.errors import InputError
    from txlab.hooks import as_compiled

    compiled = as_compiled(compiled, what="txlab.occupancy")

    names = list(compiled.launch)
    if not names:
        raise InputError(f"{compiled.name} launches no device kernel")
    if kernel is None:
        kernel = names[0]
    if kernel not in compiled.launch:
        raise InputError(f"{compiled.name} has no kernel {kernel!r}; its kernels: {', '.join(names)}", param="kernel")
    launch = dict(compiled.launch[kernel])
    if args is not None:
        from txlab.run import bind_symbols
        from txlab.launch import eval_dims as _eval_dims

        values = bind_symbols(compiled, args)
        for k in ("block", "dynamic_smem_bytes"):
            launch[k] = _eval_dims(launch.get(k), values)
    res = compiled.resources.get(kernel, {})
    block = launch.get("block") or (1, 1, 1)
    threads = 1
    for b in block:
        if not isinstance(b, int):
            raise InputError(
                f"{kernel}: the block size {tuple(block)} is symbolic; pass args=... "
                "(the kernel's arguments) to evaluate it",
                param="args",
            )
        threads *= b
    if dynamic_smem_bytes is not None and (
        isinstance(dynamic_smem_bytes, bool) or not isinstance(dynamic_smem_bytes, int) or dynamic_smem_bytes < 0
    ):
        raise InputError(
            f"dynamic_smem_bytes={dynamic_smem_bytes!r}: the bytes of dynamic shared memory per CTA, an int >= 0",
            param="dynamic_smem_bytes",
        )
    dyn = dynamic_smem_bytes if dynamic_smem_bytes is not None else launch.get("dynamic_smem_bytes", 0)
    if not isinstance(dyn, int):
        raise InputError(
            f"{kernel}: dynamic shared memory is {dyn!r} (symbolic); pass args=... or dynamic_smem_bytes=...",
            param="dynamic_smem_bytes",
        )
    smem = int(res.get("static_smem_bytes") or 0) + dyn
    return calculate(
        arch or compiled.arch,
        threads=threads,
        registers=int(res.get("registers") or 0),
        smem_bytes=smem,
        carveout=carveout,
        kernel=kernel,
    )


def driver_blocks_per_sm(compiled, kernel: str | None = None, *, dynamic_smem_bytes: int | None = None) -> int:
    """What the CUDA driver says (``cuOccupancyMaxActiveBlocksPerMultiprocessor``) for this exact
    cubin on the local GPU. Needs a GPU; loads the cubin into a context of its own process."""
    from cuda.bindings import driver as cu

    from txlab.device import require_gpu

    require_gpu(
        "asking the driver for occupancy",
        alternative="without one, txlab.occupancy_of(kernel) computes it from the CUDA "
        "occupancy rules (no GPU needed).",
    )
    from txlab.hooks import as_compiled

    compiled = as_compiled(compiled, what="txlab.occupancy.driver_blocks_per_sm")
    kernel = kernel or next(iter(compiled.launch))
    launch = compiled.launch[kernel]
    threads = 1
    for b in launch["block"]:
        threads *= int(b)
    dyn = dynamic_smem_bytes if dynamic_smem_bytes is not None else launch.get("dynamic_smem_bytes", 0)
    dyn = int(dyn) if isinstance(dyn, int) else 0

    def ok(res):
        err = res[0]
        if err != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver call failed: {err.name}")
        return res[1] if len(res) > 1 else None

    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
    try:
        ok(cu.cuCtxPushCurrent(ctx))
        mod = ok(cu.cuModuleLoadData(compiled.cubin))
        try:
            fn = ok(cu.cuModuleGetFunction(mod, kernel.encode()))
            if dyn > 48 * _KIB:
                ok(
                    cu.cuFuncSetAttribute(
                        fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn
                    )
                )
            return int(ok(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, threads, dyn)))
        finally:
            cu.cuModuleUnload(mod)
            cu.cuCtxPopCurrent()
    finally:
        cu.cuDevicePrimaryCtxRelease(dev)


occupancy_of = occupancy  # txlab.occupancy_of(compiled): the public spelling

# txlab.occupancy(compiled) called this module; it is txlab.occupancy_of(compiled) now
callable_module("txlab.occupancy", occupancy, "txlab.occupancy_of(compiled)")
