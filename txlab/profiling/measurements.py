"""A profiled launch as data: :class:`Profile` (ncu's metrics, per-instruction samples rolled up to
lines), built from ncu's record and saved as JSON."""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = "txlab.profile"
VERSION = 1

#: headline numbers: key -> (label, candidate ncu metrics, first present wins)
HEADLINE = {
    "duration_ns": ("duration (ns)", ["gpu__time_duration.sum"]),
    "sm_throughput_pct": ("SM throughput % of peak", ["sm__throughput.avg.pct_of_peak_sustained_elapsed"]),
    "memory_throughput_pct": (
        "memory throughput % of peak",
        ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
    ),
    "dram_throughput_pct": (
        "DRAM throughput % of peak",
        [
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ],
    ),
    "l1_throughput_pct": ("L1 throughput % of peak", ["l1tex__throughput.avg.pct_of_peak_sustained_active"]),
    "l2_throughput_pct": ("L2 throughput % of peak", ["lts__throughput.avg.pct_of_peak_sustained_elapsed"]),
    "achieved_occupancy_pct": ("achieved occupancy %", ["sm__warps_active.avg.pct_of_peak_sustained_active"]),
    "theoretical_occupancy_pct": ("theoretical occupancy %", ["sm__maximum_warps_per_active_cycle_pct"]),
    "l1_hit_rate_pct": ("L1 hit rate %", ["l1tex__t_sector_hit_rate.pct"]),
    "l2_hit_rate_pct": ("L2 hit rate %", ["lts__t_sector_hit_rate.pct"]),
    "smem_ld_bank_conflicts": (
        "shared-load bank conflicts",
        ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"],
    ),
    "smem_st_bank_conflicts": (
        "shared-store bank conflicts",
        ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"],
    ),
    "smem_ld_wavefronts": ("shared-load wavefronts", ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]),
    "smem_st_wavefronts": ("shared-store wavefronts", ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]),
    "smem_ld_requests": (
        "shared-load instructions",
        ["smsp__sass_inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_ld.sum"],
    ),
    "smem_st_requests": (
        "shared-store instructions",
        ["smsp__sass_inst_executed_op_shared_st.sum", "smsp__inst_executed_op_shared_st.sum"],
    ),
    "dram_bytes_read": ("DRAM bytes read", ["dram__bytes_read.sum"]),
    "dram_bytes_write": ("DRAM bytes written", ["dram__bytes_write.sum"]),
    "registers_per_thread": ("registers / thread", ["launch__registers_per_thread"]),
    "shared_mem_per_block_bytes": ("shared memory / block (bytes)", ["launch__shared_mem_per_block"]),
    "waves_per_sm": ("waves per SM", ["launch__waves_per_multiprocessor"]),
    "inst_executed": ("warp instructions executed", ["smsp__inst_executed.sum", "sm__inst_executed.sum"]),
}
#: the ncu section that collects each headline number (what to ask for when it is missing)
_SECTION_OF = {
    "theoretical_occupancy_pct": "Occupancy",
    "achieved_occupancy_pct": "Occupancy",
    "registers_per_thread": "LaunchStats",
    "shared_mem_per_block_bytes": "LaunchStats",
    "waves_per_sm": "LaunchStats",
}
_OCC_LIMITS = {
    "blocks": "launch__occupancy_limit_blocks",
    "registers": "launch__occupancy_limit_registers",
    "shared_memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps",
    "barriers": "launch__occupancy_limit_barriers",
}
_KERNEL_STALL_RE = ("smsp__average_warps_issue_stalled_", "_per_issue_active.ratio")
#: per-line counters summed into Profile.lines (ncu's source-level metrics, when collected)
LINE_COUNTERS = {
    "inst_executed": "inst_executed",
    "l2_sectors_global": "memory_l2_theoretical_sectors_global",
    "l2_sectors_global_ideal": "memory_l2_theoretical_sectors_global_ideal",
    "l1_requests_global": "memory_l1_tag_requests_global",
    "shared_wavefronts": "memory_l1_wavefronts_shared",
    "shared_wavefronts_ideal": "memory_l1_wavefronts_shared_ideal",
}


MAX_PROFILE_BYTES = 256 << 20  # a saved profile of the GEMM is ~0.4 MB


@dataclass
class Profile:
    """One profiled kernel launch: ncu's metrics and per-instruction samples rolled up to lines."""

    name: str
    kernel: str
    arch: str
    device: str
    metrics: dict  # ncu metric name -> [value, unit]
    instructions: list  # per SASS instruction: offset, sass, samples, stalls, counters, lines
    line_kind: str = "cuda"  # what Profile.lines rows are: "tvmscript" or "cuda" lines
    source: list = field(default_factory=list)  # the text of those lines (index = line - 1)
    cuda_source: list = field(default_factory=list)  # Compiled.cuda_source lines
    launch: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)  # seconds: ncu run, report read, total
    ncu_version: str | None = None
    sections: list = field(default_factory=list)
    args: str = ""
    recorded: str = ""
    report_path: str | None = None

    # ---- numbers -------------------------------------------------------------------------------
    def metric(self, name: str, default=None):
        """The value of an ncu metric (without its unit), or ``default``."""
        v = self.metrics.get(name)
        return default if v is None else v[0]

    @property
    def duration_ns(self) -> float | None:
        return self.metric("gpu__time_duration.sum")

    @property
    def headline(self) -> dict:
        """The numbers an engineer looks at first (None where ncu did not collect them)."""
        out = {}
        for key, (_, names) in HEADLINE.items():
            out[key] = next((self.metrics[n][0] for n in names if n in self.metrics), None)
        for key, (value, _source) in self._derived().items():
            if out.get(key) is None:
                out[key] = value
        out["tensor_pipe_pct"] = self._tensor_pipe()
        for side in ("ld", "st"):
            wf, req = out[f"smem_{side}_wavefronts"], out[f"smem_{side}_requests"]
            out[f"smem_{side}_wavefronts_per_request"] = (wf / req) if wf is not None and req else None
        limits = {k: self.metric(m) for k, m in _OCC_LIMITS.items() if self.metric(m) is not None}
        out["occupancy_limits"] = limits
        if limits:
            low = min(limits.values())
            out["occupancy_limiter"] = [k for k, v in limits.items() if v == low]
        else:
            out["occupancy_limiter"] = []
        return out

    def _derived(self) -> dict:
        """Headline numbers ncu's report does not hold under their own name but that follow from
        what it (or the build's ptxas) does hold: ``{key: (value, how)}``."""
        got: dict = {}
        st, dyn = (
            self.metric("launch__shared_mem_per_block_static"),
            self.metric("launch__shared_mem_per_block_dynamic"),
        )
        if st is not None or dyn is not None:
            got["shared_mem_per_block_bytes"] = ((st or 0) + (dyn or 0), "ncu: static + dynamic shared memory")
        regs = self.launch.get("ptxas_registers")
        if regs is not None:
            got["registers_per_thread"] = (regs, "ptxas -v of the profiled build")
        limits = [self.metric(m) for m in _OCC_LIMITS.values()]
        limits = [v for v in limits if isinstance(v, (int, float))]
        block = self.launch.get("threads_per_block") or self.metric("launch__block_size")
        max_warps = self.metric("device__attribute_max_warps_per_multiprocessor")
        if limits and block and max_warps:
            warps = min(limits) * -(-int(block) // 32)
            got["theoretical_occupancy_pct"] = (
                100.0 * min(warps, max_warps) / max_warps,
                "ncu's occupancy limits (blocks per SM x warps per block)",
            )
        return got

    @property
    def headline_sources(self) -> dict:
        """For each headline number: where it came from (the ncu metric, a derivation), or why it
        is missing (which section to collect) -- so an empty field never reads as zero or fine."""
        out, derived = {}, self._derived()
        for key, (_, names) in HEADLINE.items():
            found = next((n for n in names if n in self.metrics), None)
            if found is not None:
                out[key] = f"ncu: {found}"
            elif key in derived:
                out[key] = derived[key][1]
            else:
                section = _SECTION_OF.get(key)
                if section and section not in self.sections:
                    out[key] = f"missing: ncu did not collect the {section} section (profile with it)"
                else:
                    out[key] = f"missing: this report has none of {', '.join(names)}"
        return out

    def _tensor_pipe(self):
        cands = [
            v[0]
            for k, v in self.metrics.items()
            if isinstance(v[0], (int, float))
            and (
                (k.startswith("sm__pipe_tensor") and "cycles_active.avg.pct_of_peak_sustained_active" in k)
                or (k.startswith("sm__inst_executed_pipe_tensor") and k.endswith("avg.pct_of_peak_sustained_active"))
            )
        ]
        return max(cands) if cands else None

    @property
    def stalls(self) -> dict:
        """Kernel-wide warp stall reasons: warps stalled per issued instruction, by reason
        (ncu's WarpStateStats), largest first."""
        pre, suf = _KERNEL_STALL_RE
        out = {
            k[len(pre) : -len(suf)]: v[0]
            for k, v in self.metrics.items()
            if k.startswith(pre) and k.endswith(suf) and isinstance(v[0], (int, float))
        }
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    @property
    def total_samples(self) -> int:
        return int(sum(i.get("samples", 0) for i in self.instructions))

    # ---- lines -----------------------------------------------------------------------------------
    def _rollup(self, key: str, text: list) -> list:
        rows: dict[int, dict] = {}
        total = self.total_samples or 1
        for ins in self.instructions:
            ln = ins.get(key)
            if ln is None:
                continue
            r = rows.setdefault(
                ln,
                {
                    "line": ln,
                    "text": text[ln - 1].strip() if 0 < ln <= len(text) else "",
                    "samples": 0,
                    "stalls": {},
                    "sass_offsets": [],
                    **{c: 0 for c in LINE_COUNTERS},
                },
            )
            r["samples"] += ins.get("samples", 0)
            for s, n in ins.get("stalls", {}).items():
                r["stalls"][s] = r["stalls"].get(s, 0) + n
            for c in LINE_COUNTERS:
                r[c] += ins.get("counters", {}).get(c, 0)
            r["sass_offsets"].append(ins["offset"])
        out = []
        for r in rows.values():
            r["share"] = r["samples"] / total
            r["stalls"] = dict(sorted(r["stalls"].items(), key=lambda kv: -kv[1]))
            r["top_stalls"] = [[s, n] for s, n in list(r["stalls"].items())[:3]]
            out.append(r)
        return sorted(out, key=lambda r: (-r["samples"], r["line"]))

    @property
    def lines(self) -> list:
        """One row per user line (TVMScript where a line map exists, else CUDA), hottest first:
        ``line, text, samples, share, stalls, top_stalls, inst_executed, l2_sectors_global, ...,
        sass_offsets``."""
        return self._rollup("user_line", self.source)

    @property
    def cuda_lines(self) -> list:
        """Like :attr:`lines`, per line of the generated CUDA source."""
        return self._rollup("cuda_line", self.cuda_source)

    @property
    def unattributed(self) -> dict:
        """Samples at instructions no line is known for (``share`` of all samples)."""
        n = sum(i.get("samples", 0) for i in self.instructions if i.get("user_line") is None)
        return {"samples": n, "share": n / (self.total_samples or 1)}

    @property
    def attributed_share(self) -> float:
        return 1.0 - self.unattributed["share"] if self.total_samples else 0.0

    def hot_lines(self, n: int = 5) -> list:
        return [r for r in self.lines if r["samples"]][:n]

    def heat(self) -> dict:
        """``{user_line: {"samples": n, "stalls": {reason: n}}}`` for ``SourceView(heat=...)``."""
        return {r["line"]: {"samples": r["samples"], "stalls": dict(r["stalls"])} for r in self.lines}

    def instructions_at(self, line: int) -> list:
        """The profiled SASS instructions of one user line."""
        return [i for i in self.instructions if i.get("user_line") == line]

    def line_of(self, pattern: str):
        """The hottest row whose SASS matches ``pattern`` (a regex), e.g. ``'HGMMA'``."""
        import re

        rx = re.compile(pattern)
        lines = {i.get("user_line") for i in self.instructions if rx.search(i.get("sass", ""))}
        return next((r for r in self.lines if r["line"] in lines), None)

    def for_build(self, compiled) -> "Profile":
        """This profile with its samples attributed to lines through ``compiled``'s line map: for a
        profile saved before its source file changed around the kernel (lines moved) while the
        kernel's SASS stayed the same. Returns ``self`` when the profiled source is ``compiled``'s;
        raises :class:`ValueError` naming the first differing instruction when the SASS is not the
        profiled SASS (then the samples cannot be placed on this build's lines)."""
        import dataclasses

        smap = getattr(compiled, "source_map", None)
        if self.line_kind != "tvmscript" or smap is None or not hasattr(smap, "line_of_sass"):
            raise ValueError(
                f"profile of {self.kernel!r}: only a TVMScript-line profile can be re-attributed "
                "(this one has CUDA lines, or the build has no line map)"
            )
        source = list(getattr(smap, "user_source", None) or [])
        if source == list(self.source):
            return self
        ours = compiled.sass_listing.by_offset(self.kernel)
        for r in self.instructions:
            if r.get("sass") and r["sass"].split() != (ours.get(r["offset"]) or "").split():
                raise ValueError(
                    f"profile of {self.kernel!r}: the SASS at offset {r['offset']:#06x} was "
                    f"{r['sass']!r}, this build has {ours.get(r['offset'])!r}: profile this build"
                )
        rows = [
            {
                **{k: v for k, v in r.items() if k != "exit_drain"},
                "user_line": _line_of_sass(smap, r["offset"], self.kernel),
            }
            for r in self.instructions
        ]
        _attribute_exit_padding(rows)
        return dataclasses.replace(
            self, instructions=rows, source=source, cuda_source=compiled.cuda_source.splitlines()
        )

    # ---- words and pictures --------------------------------------------------------------------
    def bound(self) -> str:
        """``compute``, ``memory`` or ``latency``: which throughput is nearest its peak."""
        h = self.headline
        sm, mem = h["sm_throughput_pct"] or 0.0, h["memory_throughput_pct"] or 0.0
        if max(sm, mem) < 60.0:
            return "latency"
        return "compute" if sm >= mem else "memory"

    def summary(self) -> str:
        h = self.headline
        dur = h["duration_ns"]
        parts = [
            f"{self.kernel} on {self.device or self.arch}: {dur / 1000:.1f} µs under ncu"
            if dur
            else f"{self.kernel} on {self.device or self.arch}"
        ]
        sm, mem, dram = h["sm_throughput_pct"], h["memory_throughput_pct"], h["dram_throughput_pct"]
        b = self.bound()
        if sm is not None and mem is not None:
            if b == "memory":
                units = {"DRAM": dram, "L1": h["l1_throughput_pct"], "L2": h["l2_throughput_pct"]}
                busiest = max(
                    ((k, v) for k, v in units.items() if v is not None), key=lambda kv: kv[1], default=("memory", mem)
                )
                parts.append(
                    f"memory-bound: memory throughput {mem:.0f}% of peak (busiest: {busiest[0]} "
                    f"{busiest[1]:.0f}%), SM {sm:.0f}%."
                )
            elif b == "compute":
                tp = h["tensor_pipe_pct"]
                parts.append(
                    f"compute-bound: SM throughput {sm:.0f}% of peak, memory {mem:.0f}%"
                    + (f", tensor pipe {tp:.0f}%." if tp else ".")
                )
            else:
                st = next(iter(self.stalls), None)
                parts.append(
                    f"latency-bound: neither SM ({sm:.0f}%) nor memory ({mem:.0f}%) throughput is "
                    f"near peak" + (f"; warps mostly wait on {st}" if st else "") + "."
                )
        occ_a, occ_t = h["achieved_occupancy_pct"], h["theoretical_occupancy_pct"]
        if occ_a is not None and occ_t is not None:
            lim = ", ".join(h["occupancy_limiter"]) or "-"
            parts.append(f"Occupancy {occ_a:.0f}% achieved of {occ_t:.0f}% theoretical (limited by {lim}).")
        wpr = h["smem_ld_wavefronts_per_request"]
        if wpr is not None and h["smem_ld_requests"]:
            parts.append(
                f"Shared loads: {wpr:.1f} wavefronts per request (1 = conflict-free), "
                f"{h['smem_ld_bank_conflicts'] or 0:,.0f} bank conflicts."
            )
        hot = self.hot_lines(3)
        if hot:
            words = []
            for r in hot:
                st = r["top_stalls"][0] if r["top_stalls"] else None
                words.append(
                    f"{self.line_kind} line {r['line']} ({_clip(r['text'])}) {r['share']:.0%} of samples"
                    + (f", mostly {st[0]} ({st[1] / max(r['samples'], 1):.0%})" if st else "")
                )
            parts.append("Hot lines: " + "; ".join(words) + ".")
        if self.total_samples:
            parts.append(f"{self.attributed_share:.1%} of {self.total_samples:,} samples attributed to lines.")
        return " ".join(parts)

    def plot(self, n: int = 10):
        """Speed-of-light bars (left) and the hottest lines' samples split by stall reason (right)."""
        import matplotlib.pyplot as plt

        h = self.headline
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1, 1.6]})
        bars = [
            ("SM", h["sm_throughput_pct"]),
            ("memory", h["memory_throughput_pct"]),
            ("DRAM", h["dram_throughput_pct"]),
            ("L1", h["l1_throughput_pct"]),
            ("L2", h["l2_throughput_pct"]),
            ("tensor", h["tensor_pipe_pct"]),
            ("occ. achieved", h["achieved_occupancy_pct"]),
            ("occ. theoretical", h["theoretical_occupancy_pct"]),
        ]
        bars = [(k, v) for k, v in bars if v is not None]
        ax0.barh([k for k, _ in bars][::-1], [v for _, v in bars][::-1], color="C0")
        ax0.set_xlim(0, 100)
        ax0.set_xlabel("% of peak")
        ax0.set_title(f"{self.kernel}: {self.bound()}-bound", fontsize=10)
        hot = self.hot_lines(n)
        reasons = []
        for r in hot:
            for s in r["stalls"]:
                if s not in reasons:
                    reasons.append(s)
        labels = [f"{r['line']}: {_clip(r['text'], 38)}" for r in hot][::-1]
        left = [0] * len(hot)
        for j, s in enumerate(reasons[:10]):
            vals = [r["stalls"].get(s, 0) for r in hot][::-1]
            ax1.barh(labels, vals, left=left, label=s, color=f"C{j % 10}")
            left = [a + b for a, b in zip(left, vals)]
        ax1.set_xlabel("samples")
        ax1.set_title(f"hot {self.line_kind} lines by stall reason", fontsize=10)
        if reasons:
            ax1.legend(fontsize=7, loc="lower right")
        ax1.tick_params(axis="y", labelsize=7)
        fig.tight_layout()
        return fig

    def __repr__(self):
        d = self.duration_ns
        return (
            f"<Profile {self.kernel} ({self.device or self.arch}): "
            f"{d / 1000:.1f} µs, {self.bound()}-bound, {len(self.lines)} lines, "
            f"{self.total_samples} samples>"
            if d
            else f"<Profile {self.kernel}>"
        )

    # ---- files -----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "version": VERSION,
            "name": self.name,
            "kernel": self.kernel,
            "arch": self.arch,
            "device": self.device,
            "ncu_version": self.ncu_version,
            "sections": list(self.sections),
            "args": self.args,
            "recorded": self.recorded,
            "launch": self.launch,
            "timings": self.timings,
            "line_kind": self.line_kind,
            "metrics": self.metrics,
            "instructions": self.instructions,
            "source": self.source,
            "cuda_source": self.cuda_source,
            "report_path": self.report_path,
            "headline": self.headline,
            "headline_sources": self.headline_sources,
            "lines": self.lines,
            "unattributed": self.unattributed,
        }

    def save(self, path) -> Path:
        """Write this profile as JSON (``Profile.load`` reads it back)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), separators=(",", ":")))
        os.replace(tmp, path)
        return path

    @classmethod
    def from_dict(cls, d: dict) -> "Profile":
        from txlab.errors import FormatError

        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            raise FormatError(
                f"not a txlab profile (schema {d.get('schema') if isinstance(d, dict) else None!r}, "
                f"expected {SCHEMA!r})"
            )
        if d.get("version") != VERSION:
            raise FormatError(
                f"txlab profile version {d.get('version')!r} is not supported (this txlab "
                f"reads version {VERSION}); re-record it with txlab.profile"
            )
        need = ("name", "kernel", "arch", "metrics", "instructions")
        missing = [k for k in need if k not in d]
        if missing:
            raise FormatError(f"txlab profile is missing {', '.join(missing)}")
        if not isinstance(d["metrics"], dict) or not isinstance(d["instructions"], list):
            raise FormatError("txlab profile: metrics must be an object and instructions a list")
        for m, v in d["metrics"].items():
            if not (isinstance(v, list) and len(v) == 2):
                raise FormatError(f"txlab profile: metric {m!r} is not [value, unit]")
        for i in d["instructions"]:
            if not isinstance(i, dict) or not isinstance(i.get("offset"), int):
                raise FormatError("txlab profile: every instruction needs an integer offset")
        return cls(
            name=d["name"],
            kernel=d["kernel"],
            arch=d["arch"],
            device=d.get("device", ""),
            metrics=d["metrics"],
            instructions=d["instructions"],
            line_kind=d.get("line_kind", "cuda"),
            source=d.get("source", []),
            cuda_source=d.get("cuda_source", []),
            launch=d.get("launch", {}),
            timings=d.get("timings", {}),
            ncu_version=d.get("ncu_version"),
            sections=d.get("sections", []),
            args=d.get("args", ""),
            recorded=d.get("recorded", ""),
            report_path=d.get("report_path"),
        )

    @classmethod
    def load(cls, path) -> "Profile":
        """Read a profile written by :meth:`save`; raises :class:`txlab.errors.FormatError` when
        the file is not one (schema, version and fields are checked)."""
        from txlab.errors import FormatError
        from txlab.files import read_bytes_capped

        data = read_bytes_capped(path, MAX_PROFILE_BYTES, "saved profile")  # regular files only, capped
        try:
            d = json.loads(data)
        except json.JSONDecodeError as exc:
            raise FormatError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
        except UnicodeDecodeError as exc:
            raise FormatError(f"{path} is not JSON text ({exc.reason})") from None
        return cls.from_dict(d)

    @classmethod
    def from_report(
        cls,
        report_path,
        compiled=None,
        *,
        kernel: str | None = None,
        cubin: bytes | None = None,
        timings: dict | None = None,
        sections=(),
        args: str = "",
    ) -> "Profile":
        """A Profile from an ``.ncu-rep`` file (read with NVIDIA's ``ncu_report``). With
        ``compiled`` (and the ``cubin`` that was profiled, default ``compiled.cubin``), each
        instruction is mapped to its CUDA line and, through ``compiled.source_map``, TVMScript line."""
        from txlab import ncu

        t0 = time.perf_counter()
        raw = ncu.read_report(report_path, kernel)
        read_s = time.perf_counter() - t0
        return _build(
            raw,
            compiled,
            cubin=cubin,
            timings={**(timings or {}), "read_report_s": read_s},
            sections=sections,
            args=args,
            report_path=str(report_path),
        )


def _clip(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def sass_by_offset(sass: str, kernel: str) -> dict:
    """{offset: instruction text} of one kernel in nvdisasm (or cuobjdump) output."""
    from txlab.sass.listing import parse

    return {i.offset: i.text for i in parse(sass)[1] if i.kernel == kernel}


def _build(raw: dict, compiled, *, cubin=None, timings=None, sections=(), args="", report_path=None) -> Profile:
    from txlab import ncu, sass

    kernel = raw["kernel"]
    metrics = raw["metrics"]
    cuda_lines, sass_text, user_map, source, kind = {}, {}, None, [], "cuda"
    cuda_src = []
    if compiled is not None:
        cubin = cubin if cubin is not None else compiled.cubin
        ptx = getattr(compiled, "ptx", None) or None  # the lines of its own PTX when it is this cubin's
        cuda_lines = sass.cuda_line_table(cubin, ptx=ptx).get(kernel, {})
        sass_text = compiled.sass_listing.by_offset(kernel)
        cuda_src = compiled.cuda_source.splitlines()
        try:
            smap = getattr(compiled, "source_map", None)
        except Exception:  # noqa: BLE001 - no TVMScript map for this kernel: CUDA lines it is
            smap = None
        if smap is not None and hasattr(smap, "line_of_sass"):
            user_map = smap
            kind = "tvmscript"
            source = list(getattr(smap, "user_source", None) or _user_lines(compiled))
        else:
            source = cuda_src
    instructions = []
    for off in sorted(raw["pcs"]):
        counters = raw["pcs"][off]
        row = {
            "offset": int(off),
            "sass": sass_text.get(off) or raw.get("sass", {}).get(off, ""),
            "samples": int(counters.get("smsp__pcsamp_sample_count", 0)),
            "stalls": {k: int(v) for k, v in ncu.stall_reasons(counters).items()},
            "counters": {k: counters[m] for k, m in LINE_COUNTERS.items() if m in counters},
            "cuda_line": cuda_lines.get(off),
        }
        row["user_line"] = _line_of_sass(user_map, off, kernel) if user_map is not None else row["cuda_line"]
        instructions.append(row)
    _attribute_exit_padding(instructions)
    device = metrics.get("device__attribute_display_name", [""])[0]
    launch = {}
    if compiled is not None and kernel in compiled.launch:
        launch = {k: (list(v) if isinstance(v, tuple) else v) for k, v in compiled.launch[kernel].items()}
    for k in (
        "grid_size",
        "block_size",
        "registers_per_thread",
        "shared_mem_per_block_dynamic",
        "shared_mem_per_block_static",
        "cluster_size",
    ):
        m = metrics.get(f"launch__{k}")
        if m is not None:
            launch.setdefault(f"ncu_{k}", m[0])
    if compiled is not None and kernel in getattr(compiled, "resources", {}):
        regs = compiled.resources[kernel].get("registers")
        if regs is not None:
            launch.setdefault("ptxas_registers", int(regs))
    return Profile(
        name=compiled.name if compiled is not None else kernel,
        kernel=kernel,
        arch=compiled.arch if compiled is not None else "",
        device=str(device),
        metrics=metrics,
        instructions=instructions,
        line_kind=kind,
        source=source,
        cuda_source=cuda_src,
        launch=launch,
        timings=dict(timings or {}),
        ncu_version=ncu.ncu_version() if ncu.find_ncu() else None,
        sections=list(sections),
        args=args,
        recorded=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        report_path=report_path,
    )


def _line_of_sass(user_map, offset: int, kernel: str):
    """The user line ``user_map`` gives the SASS instruction at ``offset``, None when it knows none."""
    try:
        return user_map.line_of_sass(offset, kernel=kernel)
    except Exception:  # noqa: BLE001 - an offset the map does not know
        return None


def _attribute_exit_padding(instructions: list) -> None:
    """Samples ncu puts on the padding after a kernel's last ``EXIT`` (the branch-to-self and
    NOPs the line map leaves unattributed) are warps draining their stores at exit: they belong
    to the line of that ``EXIT``. Marked ``"exit_drain": True``."""
    from txlab.sass.opcodes import base, split_predicate

    exit_line = None
    for row in instructions:
        pred, body = split_predicate(row.get("sass") or "")
        op = body.split()[0] if body else ""
        if pred:
            exit_line = None
            continue
        if op == "EXIT":
            exit_line = row.get("user_line")
        elif row.get("user_line") is None and exit_line is not None and base(op) in ("BRA", "NOP"):
            row["user_line"] = exit_line
            row["exit_drain"] = True
        elif row.get("user_line") is not None:
            exit_line = None


def _user_lines(compiled) -> list:
    from txlab.build import user_source as _user_source

    src = _user_source(compiled.ir_module) if compiled.ir_module is not None else None
    return [l.rstrip("\n") for l in src[2]] if src else []
