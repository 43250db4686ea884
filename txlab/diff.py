"""What changed between two builds: ``txlab.compare(a, b)`` (this module is ``txlab.diff``).

For two :class:`txlab.Compiled` it returns a :class:`CompileDiff`: per-kernel resources side by
side (registers, shared memory, spills, stack), the SASS instruction-class histogram of each, and
the SASS aligned per user line -- the two kernels' source lines are aligned with difflib, and a
line is *changed* when its instructions differ once register numbers are set aside (so a pure
register renaming is not a change, a different address offset or opcode is).

The verdict comes first (:attr:`CompileDiff.headline`): whether the two builds' SASS is
*identical* (every instruction's opcode and operands, in order), *identical modulo register
renaming* (a one-to-one map of register names turns one into the other; the map is shown) or
*different*. Source lines that were rewritten but compiled to the same SASS -- a block of
changed lines whose instructions together are the same, or any rewritten line of two builds whose
SASS is identical -- have status ``same_sass``: not a change.

``diff`` dispatches on the argument types; other models register their own comparison with
:func:`register` (the profiler adds Profile vs Profile this way). Pure Python, no Jupyter.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Callable

from txlab.deprecation import callable_module
from txlab.sass import CLASSES

RESOURCE_FIELDS = (
    "registers",
    "static_smem_bytes",
    "dynamic_smem_bytes",
    "spill_store_bytes",
    "spill_load_bytes",
    "stack_bytes",
)

# (accepts(a, b) -> bool, make(a, b, **kw)) in registration order; the first that accepts wins
_HANDLERS: list[tuple[Callable, Callable, str]] = []


def register(accepts: Callable, make: Callable, what: str) -> None:
    """Add a comparison: ``accepts(a, b)`` says whether ``make(a, b, **kwargs)`` handles the
    pair; ``what`` names it in the error for unsupported types (e.g. "two txlab.Profile")."""
    _HANDLERS.append((accepts, make, what))


def diff(a, b, **kwargs):
    """Compare two results of the same kind: two ``Compiled`` give a :class:`CompileDiff`."""
    for accepts, make, what in _HANDLERS:
        if accepts(a, b):
            import inspect

            takes = inspect.signature(make).parameters
            open_ = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in takes.values())
            unknown = [] if open_ else sorted(k for k in kwargs if k not in takes)
            if unknown:
                from txlab.errors import InputError

                extra = list(takes)[2:]
                module = (
                    "; to compare one kernel of a module, compile that kernel (txlab.compile(mod, name=...)) or use "
                    "the %%tirx cell's member (Mod.first)"
                    if make is compile_diff
                    else ""
                )
                raise InputError(
                    f"txlab.compare of {what} takes no {', '.join(f'{k}=' for k in unknown)}"
                    + (f" (it takes {', '.join(f'{k}=' for k in extra)})" if extra else ": pass the two results only")
                    + module,
                    param=unknown[0],
                )
            return make(a, b, **kwargs)
    kinds = ", ".join(w for _, _, w in _HANDLERS)
    raise TypeError(f"txlab.compare compares {kinds}; got {type(a).__name__} and {type(b).__name__}")


def _both_compiled(a, b) -> bool:
    from txlab.compiler import Compiled

    return isinstance(a, Compiled) and isinstance(b, Compiled)


# ---------------------------------------------------------------------------------------------
_REGNUM = re.compile(r"\b(U?R|U?P)(\d+)\b")


def normalize(ins_text: str) -> str:
    """Instruction text with register numbers removed (R12 -> R, UP1 -> UP), `.reuse` dropped."""
    return _REGNUM.sub(lambda m: m.group(1), ins_text.replace(".reuse", ""))


def register_renaming(a_texts: list[str], b_texts: list[str]) -> dict[str, str] | None:
    """The one-to-one map of register names (``R``, ``UR``, ``P``, ``UP`` with a number) that turns
    the instruction texts ``a_texts`` into ``b_texts``, or None when there is none (different
    length, opcodes, operands, or a register of a used for two of b's). ``{}``: identical."""
    if len(a_texts) != len(b_texts):
        return None
    fwd: dict[str, str] = {}
    back: dict[str, str] = {}
    for x, y in zip(a_texts, b_texts):
        x, y = x.replace(".reuse", ""), y.replace(".reuse", "")
        if normalize(x) != normalize(y):
            return None
        for ra, rb in zip((m.group(0) for m in _REGNUM.finditer(x)), (m.group(0) for m in _REGNUM.finditer(y))):
            if fwd.setdefault(ra, rb) != rb or back.setdefault(rb, ra) != ra:
                return None
    return {a: b for a, b in fwd.items() if a != b}


def _verdict(ka, kb, sa: list, sb: list) -> dict:
    """SASS of one kernel pair compared as a whole: ``verdict`` "identical", "renamed" (identical
    modulo register renaming, ``renaming`` the map) or "different"; ``control_differs``: how many
    instructions of an identical pair differ only in their scheduling control bits."""
    out = {
        "kernel_a": ka,
        "kernel_b": kb,
        "instructions_a": len(sa),
        "instructions_b": len(sb),
        "renaming": None,
        "control_differs": 0,
    }
    renaming = register_renaming([i.text for i in sa], [i.text for i in sb]) if ka and kb else None
    if renaming is None:
        out["verdict"] = "different"
    else:
        out["verdict"] = "identical" if not renaming else "renamed"
        out["renaming"] = renaming or None
        out["control_differs"] = sum(1 for x, y in zip(sa, sb) if x.control.text() != y.control.text())
    return out


def _headline(kernels: list[dict]) -> str:
    """One sentence that says first whether the SASS is the same."""
    n = sum(k["instructions_a"] for k in kernels)
    if kernels and all(k["verdict"] == "identical" for k in kernels):
        head = f"SASS identical: {n} instructions, same opcodes, operands and registers"
    elif kernels and all(k["verdict"] in ("identical", "renamed") for k in kernels):
        ren = {a: b for k in kernels for a, b in (k["renaming"] or {}).items()}
        shown = ", ".join(f"{a}→{b}" for a, b in list(ren.items())[:6]) + (", …" if len(ren) > 6 else "")
        head = f"SASS identical modulo register renaming: {n} instructions, same opcodes and operands ({shown})"
    else:
        diff_k = [k for k in kernels if k["verdict"] == "different"]
        head = (
            "SASS differs"
            + ("" if len(kernels) <= 1 else f" in {len(diff_k)} of {len(kernels)} kernels")
            + ": "
            + ", ".join(f"{k['instructions_a']} → {k['instructions_b']} instructions" for k in diff_k[:3])
        )
        return head
    ctl = sum(k["control_differs"] for k in kernels)
    if ctl:
        head += f"; scheduling control bits differ in {ctl}"
    return head


def _instr_dict(ins) -> dict:
    return dict(ins.to_dict(("kernel", "offset", "text", "opcode", "cls", "control")), mark="equal")


def _mark(a_list: list[dict], b_list: list[dict]) -> bool:
    """Mark each instruction 'equal' / 'changed' / 'removed' / 'added' (difflib over the
    normalised texts); True when anything differs."""
    sa = [normalize(i["text"]) for i in a_list]
    sb = [normalize(i["text"]) for i in b_list]
    changed = False
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, sa, sb, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        changed = True
        for i in range(i1, i2):
            a_list[i]["mark"] = "changed" if tag == "replace" else "removed"
        for j in range(j1, j2):
            b_list[j]["mark"] = "changed" if tag == "replace" else "added"
    return changed


def _pair_kernels(ka: list[str], kb: list[str]) -> list[tuple[str | None, str | None]]:
    """Kernels with the same name pair up; the rest pair in order (a renamed kernel)."""
    common = [k for k in ka if k in kb]
    rest_a = [k for k in ka if k not in kb]
    rest_b = [k for k in kb if k not in ka]
    pairs = [(k, k) for k in common]
    for i in range(max(len(rest_a), len(rest_b))):
        pairs.append((rest_a[i] if i < len(rest_a) else None, rest_b[i] if i < len(rest_b) else None))
    return pairs


def _source_lines(compiled) -> dict[int, str]:
    """{user line: text} of the kernel's source (as CompileError.lineno numbers it)."""
    sm = _source_map(compiled)
    got = getattr(sm, "user_source", None) if sm is not None else None
    if isinstance(got, (list, tuple)) and got:
        return {i: str(t).rstrip("\n") for i, t in enumerate(got, 1)}
    from txlab.build import user_source

    src = user_source(compiled.ir_module) if compiled.ir_module is not None else None
    if src is None:
        return {}
    return {i: t.rstrip("\n") for i, t in enumerate(src[2], 1)}


def _source_map(compiled):
    try:
        return compiled.source_map
    except Exception:  # noqa: BLE001 - a kernel without a line map
        return None


@dataclass
class CompileDiff:
    """Two builds compared. ``resources``: rows {kernel_a, kernel_b, field, a, b, delta};
    ``histogram``: {class: {"a", "b", "delta"}}; ``lines``: the SASS aligned per user line,
    rows {a_line, b_line, a_lines, b_lines, a_text, b_text, a_sass, b_sass, status} with status
    ``same``, ``changed``, ``removed`` (only in a), ``added`` (only in b) or ``same_sass`` (the
    source was rewritten, the SASS is the same: ``a_lines``/``b_lines`` name the rewritten block);
    each SASS entry carries a ``mark``. Without a line map (``by_line`` False) there is one row per
    kernel pair. ``sass``: per kernel pair, the verdict on the SASS as a whole (see the module
    docstring); :attr:`headline` says it in one sentence."""

    a_name: str
    b_name: str
    a_arch: str
    b_arch: str
    kernels: list[tuple[str | None, str | None]]
    resources: list[dict]
    histogram: dict[str, dict]
    lines: list[dict] = field(default_factory=list)
    by_line: bool = False
    kind: str = "compile"
    sass: list[dict] = field(default_factory=list)

    @property
    def changed_lines(self) -> list[dict]:
        """Rows whose SASS changed (not those rewritten to the same SASS)."""
        return [r for r in self.lines if r["status"] not in ("same", "same_sass")]

    @property
    def same_sass_lines(self) -> list[dict]:
        """Rows whose source changed and whose SASS did not."""
        return [r for r in self.lines if r["status"] == "same_sass"]

    @property
    def sass_identical(self) -> bool:
        """Whether every kernel pair's SASS is identical, registers included."""
        return bool(self.sass) and all(k["verdict"] == "identical" for k in self.sass)

    @property
    def sass_verdict(self) -> str:
        """ "identical", "renamed" (identical modulo register renaming) or "different"."""
        vs = {k["verdict"] for k in self.sass}
        return "different" if not vs or "different" in vs else "renamed" if "renamed" in vs else "identical"

    @property
    def headline(self) -> str:
        return _headline(self.sass)

    def _lines_text(self) -> str:
        unit = "user lines" if self.by_line else "kernels"
        text = f"{len(self.changed_lines)} of {len(self.lines)} {unit} changed"
        if self.same_sass_lines:
            text += f"; {len(self.same_sass_lines)} rewritten in the source, compiled the same"
        return text

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "a": {"name": self.a_name, "arch": self.a_arch},
            "b": {"name": self.b_name, "arch": self.b_arch},
            "kernels": [list(p) for p in self.kernels],
            "resources": self.resources,
            "histogram": self.histogram,
            "lines": self.lines,
            "by_line": self.by_line,
            "changed": len(self.changed_lines),
            "same_sass": len(self.same_sass_lines),
            "total": len(self.lines),
            "sass": self.sass,
            "sass_verdict": self.sass_verdict,
            "headline": self.headline,
        }

    def view(self, **kwargs):
        """The interactive widget of this comparison (:class:`txlab.views.DiffView`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def summary(self) -> str:
        out = [f"{self.a_name} ({self.a_arch}) vs {self.b_name} ({self.b_arch})", f"  {self.headline}"]
        for ka, kb in self.kernels:
            rows = [r for r in self.resources if r["kernel_a"] == ka and r["kernel_b"] == kb]
            moved = [
                f"{r['field'].replace('_bytes', '')} {r['a']} -> {r['b']} ({r['delta']:+d})" for r in rows if r["delta"]
            ]
            name = ka if ka == kb else f"{ka} vs {kb}"
            out.append(f"  {name}: " + ("; ".join(moved) if moved else "same resources"))
        h = [f"{c} {v['a']} -> {v['b']} ({v['delta']:+d})" for c, v in self.histogram.items() if v["delta"]]
        out.append("  instructions: " + (", ".join(h) if h else "same count per class"))
        ch = self.changed_lines
        out.append(f"  {self._lines_text()}")
        for r in ch[:12] + self.same_sass_lines[: max(0, 12 - len(ch))]:
            where = (
                f"{_span(r.get('a_lines'), r['a_line'])} -> {_span(r.get('b_lines'), r['b_line'])}"
                if self.by_line
                else r.get("kernel", "")
            )
            text = (r["b_text"] or r["a_text"] or "").strip().replace("\n", " ⏎ ")
            out.append(f"    {where} [{r['status']}] {len(r['a_sass'])} -> {len(r['b_sass'])} instr  {text[:60]}")
        if len(ch) > 12:
            out.append(f"    ... {len(ch) - 12} more")
        return "\n".join(out)

    def plot(self, ax=None):
        """Instructions per class, a next to b, and the resource deltas."""
        from txlab.figures import side_by_side

        fig, axes = side_by_side(ax)
        cls = list(self.histogram)
        x = range(len(cls))
        axes[0].bar([i - 0.2 for i in x], [self.histogram[c]["a"] for c in cls], width=0.4, label=self.a_name)
        axes[0].bar([i + 0.2 for i in x], [self.histogram[c]["b"] for c in cls], width=0.4, label=self.b_name)
        axes[0].set_xticks(list(x))
        axes[0].set_xticklabels(cls, fontsize=8)
        axes[0].legend(fontsize=7)
        axes[0].set_title("instructions per class")
        moved = [r for r in self.resources if r["delta"]]
        axes[1].barh(
            [f"{r['kernel_b'] or r['kernel_a']}: {r['field']}" for r in moved],
            [r["delta"] for r in moved],
            color=["C3" if r["delta"] > 0 else "C2" for r in moved],
        )
        axes[1].set_title("resources, b - a")
        axes[1].tick_params(axis="y", labelsize=7)
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        return (
            f"<CompileDiff {self.a_name} vs {self.b_name}: {self.sass_verdict} SASS, "
            f"{len(self.changed_lines)} of {len(self.lines)} changed>"
        )


def _span(lines, line) -> str:
    """ "line 9", "lines 9-10" or "-"."""
    lines = [n for n in (lines or ([line] if line is not None else [])) if n is not None]
    if not lines:
        return "-"
    return f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}"


def compile_diff(a, b) -> CompileDiff:
    """:class:`CompileDiff` of two Compiled (what ``txlab.compare(a, b)`` returns for them). Two entries of one
    build (``txlab.compile(mod, name=...)`` of a module of several kernels, each holding the whole module) are
    refused: their SASS is the same by construction, whatever the kernels do."""
    from txlab import sass

    if a.name != b.name and a.cubin == b.cubin and len(a.kernels) > 1:
        from txlab.errors import InputError

        raise InputError(
            f"txlab.compare: {a.name} and {b.name} are two entries of one build (the same cubin, holding the kernels "
            f"{', '.join(a.kernels)}), so their SASS is the same whatever the kernels do. Build each kernel on its "
            f"own: a %%tirx cell does (Mod.{a.name} and Mod.{b.name} of an @I.ir_module cell are separate builds), or "
            f"txlab.compile(tvm.IRModule({{{a.name!r}: mod[{a.name!r}]}}), name={a.name!r})"
        )

    ia = [i for i in sass.instructions(a) if not i.padding]
    ib = [i for i in sass.instructions(b) if not i.padding]
    pairs = _pair_kernels(a.kernels, b.kernels)
    resources = []
    for ka, kb in pairs:
        ra = a.resources.get(ka, {}) if ka else {}
        rb = b.resources.get(kb, {}) if kb else {}
        na = sum(1 for i in ia if i.kernel == ka)
        nb = sum(1 for i in ib if i.kernel == kb)
        for f, va, vb in [(f, ra.get(f, 0), rb.get(f, 0)) for f in RESOURCE_FIELDS] + [("instructions", na, nb)]:
            va = va if isinstance(va, int) else 0
            vb = vb if isinstance(vb, int) else 0
            resources.append({"kernel_a": ka, "kernel_b": kb, "field": f, "a": va, "b": vb, "delta": vb - va})
    histogram = {}
    for c in CLASSES:
        na = sum(1 for i in ia if i.cls == c)
        nb = sum(1 for i in ib if i.cls == c)
        if na or nb:
            histogram[c] = {"a": na, "b": nb, "delta": nb - na}
    verdicts = [
        _verdict(ka, kb, [i for i in ia if i.kernel == ka], [i for i in ib if i.kernel == kb]) for ka, kb in pairs
    ]
    by_line = any(i.line is not None for i in ia) and any(i.line is not None for i in ib)
    lines = _align_lines(a, b, ia, ib) if by_line else _align_kernels(pairs, ia, ib)
    if verdicts and all(v["verdict"] != "different" for v in verdicts):
        # the same SASS: a row that differs only differs in the source (or in which line an
        # instruction is attributed to), never in what runs
        for r in lines:
            if r["status"] != "same":
                r["status"] = "same_sass"
                for i in r["a_sass"] + r["b_sass"]:
                    i["mark"] = "equal"
    return CompileDiff(a.name, b.name, a.arch, b.arch, pairs, resources, histogram, lines, by_line, sass=verdicts)


def _align_kernels(pairs, ia, ib) -> list[dict]:
    rows = []
    for ka, kb in pairs:
        sa = [_instr_dict(i) for i in ia if i.kernel == ka]
        sb = [_instr_dict(i) for i in ib if i.kernel == kb]
        changed = _mark(sa, sb)
        status = "removed" if kb is None else "added" if ka is None else "changed" if changed else "same"
        rows.append(
            {
                "kernel": ka or kb,
                "a_line": None,
                "b_line": None,
                "a_lines": [],
                "b_lines": [],
                "a_text": ka,
                "b_text": kb,
                "a_sass": sa,
                "b_sass": sb,
                "status": status,
            }
        )
    return rows


def _align_lines(a, b, ia, ib) -> list[dict]:
    """Align the user lines that span each kernel's SASS (difflib over the stripped source
    text), then compare the SASS of each aligned pair."""

    def per_line(instrs):
        out: dict[int, list[dict]] = {}
        unmapped = []
        for i in instrs:
            (out.setdefault(i.line, []) if i.line is not None else unmapped).append(_instr_dict(i))
        return out, unmapped

    la, ua = per_line(ia)
    lb, ub = per_line(ib)
    src_a, src_b = _source_lines(a), _source_lines(b)
    span_a = list(range(min(la), max(la) + 1))
    span_b = list(range(min(lb), max(lb) + 1))
    ta = [src_a.get(n, "").strip() for n in span_a]
    tb = [src_b.get(n, "").strip() for n in span_b]
    rows = []

    def add(na, nb):
        sa = la.get(na, []) if na is not None else []
        sb = lb.get(nb, []) if nb is not None else []
        if not sa and not sb:
            return  # a line that does no work on either side
        changed = _mark(sa, sb)
        status = "removed" if not sb else "added" if not sa else "changed" if changed else "same"
        rows.append(
            {
                "a_line": na,
                "b_line": nb,
                "a_lines": [na] if na is not None else [],
                "b_lines": [nb] if nb is not None else [],
                "a_text": src_a.get(na) if na is not None else None,
                "b_text": src_b.get(nb) if nb is not None else None,
                "a_sass": sa,
                "b_sass": sb,
                "status": status,
            }
        )

    def same_block(lines_a, lines_b) -> bool:
        """A rewritten block whose instructions, together and in order, are the same: one row."""
        sa = sorted((i for n in lines_a for i in la.get(n, [])), key=lambda i: (i["kernel"], i["offset"]))
        sb = sorted((i for n in lines_b for i in lb.get(n, [])), key=lambda i: (i["kernel"], i["offset"]))
        if not sa or not sb or _mark([dict(i) for i in sa], [dict(i) for i in sb]):
            return False
        worked_a = [n for n in lines_a if la.get(n)]
        worked_b = [n for n in lines_b if lb.get(n)]
        rows.append(
            {
                "a_line": worked_a[0],
                "b_line": worked_b[0],
                "a_lines": list(lines_a),
                "b_lines": list(lines_b),
                "a_text": "\n".join(src_a.get(n, "") for n in lines_a),
                "b_text": "\n".join(src_b.get(n, "") for n in lines_b),
                "a_sass": sa,
                "b_sass": sb,
                "status": "same_sass",
            }
        )
        return True

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag == "replace" and same_block(span_a[i1:i2], span_b[j1:j2]):
            continue
        if tag in ("equal", "replace"):
            for k in range(max(i2 - i1, j2 - j1)):
                add(span_a[i1 + k] if i1 + k < i2 else None, span_b[j1 + k] if j1 + k < j2 else None)
        elif tag == "delete":
            for k in range(i1, i2):
                add(span_a[k], None)
        else:
            for k in range(j1, j2):
                add(None, span_b[k])
    if ua or ub:
        changed = _mark(ua, ub)
        rows.append(
            {
                "a_line": None,
                "b_line": None,
                "a_lines": [],
                "b_lines": [],
                "a_text": "(no user line)",
                "b_text": "(no user line)",
                "a_sass": ua,
                "b_sass": ub,
                "status": "changed" if changed else "same",
            }
        )
    return rows


register(_both_compiled, compile_diff, "two txlab.Compiled")


compare = diff  # txlab.compare(a, b): the public spelling

# txlab.diff(a, b) called this module; it is txlab.compare(a, b) now (one release of warnings)
callable_module("txlab.diff", diff, "txlab.compare(a, b)")
