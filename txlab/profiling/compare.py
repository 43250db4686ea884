"""Comparing two profiles: :class:`ProfileDiff` (``txlab.compare(a, b)`` for two Profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from txlab.profiling.measurements import HEADLINE, Profile


COMPARE = (
    "duration_ns",
    "sm_throughput_pct",
    "memory_throughput_pct",
    "dram_throughput_pct",
    "l1_throughput_pct",
    "l2_throughput_pct",
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
    "l1_hit_rate_pct",
    "l2_hit_rate_pct",
    "tensor_pipe_pct",
    "smem_ld_bank_conflicts",
    "smem_st_bank_conflicts",
    "smem_ld_wavefronts_per_request",
    "smem_st_wavefronts_per_request",
    "dram_bytes_read",
    "dram_bytes_write",
    "registers_per_thread",
    "inst_executed",
)


@dataclass
class ProfileDiff:
    """Two profiles side by side: headline metrics with ratios (b / a) and the hot lines of each."""

    a: Profile
    b: Profile

    @property
    def rows(self) -> list:
        ha, hb = self.a.headline, self.b.headline
        out = []
        for k in COMPARE:
            va, vb = ha.get(k), hb.get(k)
            if va is None and vb is None:
                continue
            ratio = (vb / va) if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va else None
            label = HEADLINE[k][0] if k in HEADLINE else k.replace("_", " ")
            out.append({"metric": k, "label": label, "a": va, "b": vb, "ratio": ratio})
        return out

    @property
    def speedup(self) -> float | None:
        """Duration of a / duration of b (> 1: b is faster)."""
        da, db = self.a.duration_ns, self.b.duration_ns
        return da / db if da and db else None

    def to_dict(self) -> dict:
        return {
            "a": self.a.kernel,
            "b": self.b.kernel,
            "rows": self.rows,
            "speedup": self.speedup,
            "hot_a": self.a.hot_lines(5),
            "hot_b": self.b.hot_lines(5),
        }

    def summary(self) -> str:
        s = self.speedup
        head = f"{self.b.kernel} vs {self.a.kernel}: " + (
            f"{s:.2f}x {'faster' if s >= 1 else 'slower'}" if s else "no durations"
        )
        moved = sorted(
            (r for r in self.rows if r["ratio"] is not None and r["metric"] != "duration_ns"),
            key=lambda r: -abs(_log(r["ratio"])),
        )[:3]
        if moved:
            head += "; biggest changes: " + ", ".join(f"{r['label']} {_fmt(r['a'])} -> {_fmt(r['b'])}" for r in moved)
        return head + "."

    def __repr__(self):
        return f"<ProfileDiff {self.summary()}>"


def diff(a: Profile, b: Profile) -> ProfileDiff:
    """Compare two profiles (``txlab.diff`` dispatches here for two Profiles)."""
    if not isinstance(a, Profile) or not isinstance(b, Profile):
        raise TypeError(f"txlab.profiling.diff compares two Profiles, got {type(a).__name__} and {type(b).__name__}")
    return ProfileDiff(a, b)


def _ratio(r) -> str:
    return "" if r is None else f"{r:.2f}x"


def _log(x: float) -> float:
    import math

    return math.log(x) if x and x > 0 else 0.0


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _register_diff() -> None:
    """``txlab.compare(profile_a, profile_b)`` dispatches to :func:`diff` (txlab.diff's registry)."""
    try:
        from txlab import diff as _diff_module
    except ImportError:  # pragma: no cover - txlab.diff is part of txlab
        return
    _diff_module.register(
        lambda a, b: isinstance(a, Profile) and isinstance(b, Profile),
        lambda a, b, **kw: ProfileDiff(a, b),
        "two txlab.Profile",
    )


_register_diff()
