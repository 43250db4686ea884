"""What an emulation found and measured: :class:`Finding` (one problem at a user line) and
:class:`EmulationResult` (findings, statistics, outputs written in place)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: finding kinds: out_of_bounds (global, shared or thread-local), misaligned, shared_race, global_race,
#: uninitialized_shared_read (a read of shared bytes nothing of the CTA wrote before it), uninitialized_tmem_read
#: (a tcgen05.ld, or an MMA accumulating, of TMEM cells nothing wrote since their tcgen05.alloc), missing_fence (a
#: tcgen05 operation ordered after another thread's through a synchronisation without tcgen05.fence::*_thread_sync),
#: divergent_barrier, barrier_deadlock, mbarrier_deadlock, over_arrival, phase_skip, tx_mismatch, note
KINDS = (
    "out_of_bounds",
    "misaligned",
    "shared_race",
    "global_race",
    "uninitialized_shared_read",
    "uninitialized_tmem_read",
    "missing_fence",
    "divergent_barrier",
    "deadlock",
    "over_arrival",
    "phase_skip",
    "note",
)


@dataclass
class Finding:
    """One problem. ``line``/``other_line`` are the user's lines (TVMScript numbering, as in
    ``CompileError.lineno``; None when the statement lost its source span in lowering);
    ``cta`` the CTA index (x, y, z); ``threads`` a few offending thread indices (linear within the
    CTA); ``count`` how many lane-accesses hit it in total."""

    kind: str
    message: str
    line: int | None = None
    other_line: int | None = None
    cta: tuple | None = None
    threads: list = field(default_factory=list)
    index: list = field(default_factory=list)
    buffer: str | None = None
    count: int = 1

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "unknown line"
        if self.other_line is not None:
            where += f" and line {self.other_line}"
        cta = f" CTA {self.cta}" if self.cta is not None else ""
        extra = f" ({self.count} accesses)" if self.count > 1 else ""
        return f"[{self.kind}] {where}{cta}: {self.message}{extra}"


def cta_finding(cta, kind, message, line, *tag, **kw):
    """Report a finding of ``cta`` at ``line`` through its program, once per (``kind``, ``line``,
    ``*tag``); ``kw`` (``other_line``, ``threads``) as for ``Program.finding``."""
    return cta.program.finding(kind, message, line=line, cta=cta.index, key=(kind, line, *tag), **kw)


@dataclass
class EmulationResult:
    """Outcome of :func:`txlab.emulate`. The kernel's outputs are in the numpy arguments (as after a
    GPU run). ``ok`` is True when nothing was found."""

    kernel: str
    findings: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    #: IKET annotations run as events (``emulate(..., iket=True)``): ``(kernel, cta, warp, name,
    #: start, end, payload, line)``, clocks in emulated warp-instructions (:mod:`txlab.emulator.iket`)
    iket_events: list = field(default_factory=list)
    #: what the kernel's ``T.cuda.printf`` calls printed, a line per lane and call (:mod:`txlab.emulator.debug`)
    printed: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not [f for f in self.findings if f.kind != "note"]

    def __bool__(self):
        return self.ok

    def by_kind(self, kind: str) -> list:
        return [f for f in self.findings if f.kind == kind]

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "ok": self.ok,
            "findings": [f.to_dict() for f in self.findings],
            "stats": dict(self.stats),
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        s = self.stats
        head = (
            f"{self.kernel}: {s.get('ctas_run', '?')} CTA(s) x {s.get('threads_per_cta', '?')} threads, "
            f"{s.get('instructions', 0):,} IR statements x lanes = {s.get('lane_instructions', 0):,} "
            f"lane-instructions in {s.get('seconds', 0):.3f} s"
        )
        if self.ok:
            return head + "; no findings"
        return head + f"; {len(self.findings)} finding(s):\n" + "\n".join(f"  {f}" for f in self.findings)

    def __repr__(self):
        return f"<EmulationResult {'OK' if self.ok else 'FINDINGS'} {self.summary()}>"
