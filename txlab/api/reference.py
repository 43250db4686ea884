"""``txlab.api.help(name)``: what one name of the TIRx CUDA API takes, what it lowers to, the arch it
needs and the catalogue example that uses it -- enough to write a kernel with it.

    txlab.api.help("__shfl_xor_sync")      # short names resolve when they are unambiguous
    txlab.api.help("Tx.cuda.atomic_add")   # also T.cuda.atomic_add, cuda.atomic_add
    txlab.api.help("Tx.ptx.mbarrier.init.shared.b64", compile=False)

The signature is ``inspect.signature`` of the real TVM object (looking through TVM's wrappers, see
:func:`txlab.api.entries.signature_of`; a ``Tx.ptx`` instruction's operands come from TVM's PTX
instruction table). "Called as" are the lines of the catalogue example that use the name, and
"lowers to" is what the line map of that example, compiled here (no GPU needed), attributes to those
lines: CUDA, PTX and SASS. What cannot be found says ``unknown`` and why.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass, field

from txlab.api.entries import Entry, catalogue, examples, signature_of
from txlab.errors import TxlabError

_MAX_INSTR = 16  # PTX / SASS lines shown per example line


class UnknownAPIName(TxlabError, LookupError):
    """A name that is not in the installed TVM's TIRx API (or is ambiguous); the message lists the
    closest names."""

    def __init__(self, message: str, *, candidates=()):
        self.candidates = list(candidates)
        super().__init__(message)

    def __str__(self) -> str:  # LookupError's KeyError-style quoting is not wanted here
        return self.args[0]


@dataclass
class UsageLine:
    """One line of the example that uses the name, and what the example's line map attributes to it."""

    lineno: int
    source: str
    cuda: list = field(default_factory=list)  # [[CUDA lineno, text]]
    ptx: list = field(default_factory=list)
    sass: list = field(default_factory=list)


@dataclass
class ApiHelp:
    """Everything ``txlab.api.help`` knows about one API name (text repr; HTML in notebooks)."""

    name: str
    kind: str
    category: str
    signature: str
    signature_how: str
    arch: str
    doc: str
    example_id: str | None
    example_source: str
    usage: list = field(default_factory=list)  # [UsageLine]
    cuda_lines: list = field(default_factory=list)  # [[lineno, text]] the CUDA the name produced
    cuda_how: str = ""
    lowering: str = ""  # "" when PTX/SASS were found; else why they are unknown
    other_examples: list = field(default_factory=list)

    @property
    def call(self) -> str:
        """``name(signature)``, e.g. ``Tx.cuda.__shfl_xor_sync(mask, var, lane_mask, width)``."""
        return self.name + self.signature

    @property
    def ptx(self) -> list[str]:
        return [p for u in self.usage for p in u.ptx]

    @property
    def sass(self) -> list[str]:
        return [s for u in self.usage for s in u.sass]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["call"] = self.call
        return d

    def summary(self) -> str:
        out = [
            self.call,
            f"  {self.kind}, {self.category}; needs {self.arch}",
            f"  (signature: {self.signature_how}; Tx and T are the same module, tvm.script.tirx)",
        ]
        if self.doc:
            out += ["", *("  " + ln for ln in self.doc.splitlines())]
        if self.example_id is None:
            out += ["", "  example: none in the catalogue uses this name"]
            return "\n".join(out)
        out += ["", f"called as (catalogue example {self.example_id!r}, arch {self.arch}):"]
        for u in self.usage:
            out.append(f"  {u.lineno:>3} | {u.source}")
        if not self.usage:
            out.append("  (no line of the example spells the name)")
        out += ["", "lowers to:"]
        if self.cuda_lines:
            out.append(f"  CUDA ({self.cuda_how}):")
            out += [f"    {n:>4}  {t}" for n, t in self.cuda_lines[:_MAX_INSTR]]
            if len(self.cuda_lines) > _MAX_INSTR:
                out.append(f"    ... {len(self.cuda_lines) - _MAX_INSTR} more CUDA lines")
        elif self.cuda_how:
            out.append(f"  CUDA: {self.cuda_how}")
        if self.lowering:
            out.append(f"  PTX/SASS: {self.lowering}")
        for u in self.usage:
            if not (u.ptx or u.sass):
                continue
            out.append(f"  line {u.lineno}:")
            out += [f"    PTX   {p}" for p in u.ptx[:_MAX_INSTR]]
            out += [f"    SASS  {s}" for s in u.sass[:_MAX_INSTR]]
            for what, got in (("PTX", u.ptx), ("SASS", u.sass)):
                if len(got) > _MAX_INSTR:
                    out.append(f"    ... {len(got) - _MAX_INSTR} more {what} lines")
        out += [
            "",
            f"example {self.example_id} (txlab.api.example_cell({self.example_id!r}) gives a notebook cell):",
            *("  " + ln for ln in self.example_source.rstrip("\n").splitlines()),
        ]
        if self.other_examples:
            out.append(f"also used in: {', '.join(self.other_examples)}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return self.summary()


# ---- names ----------------------------------------------------------------------------------
def _canonical(name: str) -> str:
    name = name.strip()
    if name.startswith("T."):
        name = "Tx." + name[2:]
    if name.startswith(("cuda.", "nvshmem.", "ptx.")):
        name = "Tx." + name
    for short, full in (("lang.", "tvm.backend.cuda.lang."), ("iket.", "tvm.backend.cuda.iket.")):
        if name.startswith(short):
            name = full + name[len(short) :]
    return name


def _resolve_tx(name: str):
    """The object ``Tx.<path>`` names in the installed TVM (``tvm.script.tirx``), or None."""
    from tvm.script import tirx as Tx

    obj = Tx
    for part in name.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except (AttributeError, KeyError):
            return None
    return obj


def _resolve_tile(path: str):
    """The tile primitive ``path`` names in ``tvm.script.tirx.tile`` (``copy_async``,
    ``cta.copy``: what a ``%%tirx`` cell calls ``tile.<path>``), or None."""
    from tvm.script.tirx import tile

    parts = path.split(".")
    if len(parts) == 2 and hasattr(tile, parts[0]) and callable(getattr(tile, parts[1], None)):
        return getattr(tile, parts[1])  # tile.cta.copy is tile.copy at scope cta (its signature, scope=)
    obj = tile
    for part in parts:
        if not part or part.startswith("_"):
            return None
        try:
            obj = getattr(obj, part)
        except (AttributeError, KeyError):
            return None
    return obj if callable(obj) else None


def _find(name: str) -> tuple[Entry | None, object, str]:
    """(catalogue entry or None, TVM object, canonical name)."""
    import tvm.backend.cuda.lang as lang

    full = _canonical(name)
    entries = catalogue()
    by_name = {e.name: e for e in entries}
    if full in by_name:
        return by_name[full], None, full
    if "." not in full:  # a short name: the unique entry it ends, else a Tx or lang attribute
        hits = [e for e in entries if e.name.rsplit(".", 1)[-1] == full]
        if len(hits) > 1:
            names = [e.name for e in hits]
            raise UnknownAPIName(
                f"{name!r} is ambiguous: it names {', '.join(names)}; "
                f"pass the full name, e.g. txlab.api.help({names[0]!r})",
                candidates=names,
            )
        if hits:
            return hits[0], None, hits[0].name
        if full in getattr(lang, "__all__", ()):
            return by_name.get(f"tvm.backend.cuda.lang.{full}"), getattr(lang, full), f"tvm.backend.cuda.lang.{full}"
        full = "Tx." + full
    # tile primitives: tile.copy_async / tile.cta.copy (Tx.cta.copy is the same op at scope cta)
    path = full.removeprefix("Tx.").removeprefix("tile.")
    tile_op = _resolve_tile(path)
    if tile_op is not None and (full.startswith("tile.") or "." in path):
        return None, tile_op, f"tile.{path}"
    if full.startswith("Tx."):
        obj = _resolve_tx(full)
        if obj is not None:
            return None, obj, full
    if tile_op is not None:
        return None, tile_op, f"tile.{path}"
    known = list(by_name) + [e.name.rsplit(".", 1)[-1] for e in entries]
    close = difflib.get_close_matches(name, known, n=4, cutoff=0.6)
    close = close or difflib.get_close_matches(_canonical(name), list(by_name), n=4, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownAPIName(
        f"{name!r} is not a name of the installed TVM's TIRx API{hint} "
        "(txlab.api.catalogue() lists the catalogued names; any Tx.<attribute> or tile.<primitive> works too)",
        candidates=close,
    )


def _ptx_signature(chain) -> tuple[str, str] | None:
    """A ``Tx.ptx`` instruction chain's operands, from TVM's PTX instruction table."""
    cands = getattr(chain, "_cands", None)
    if not cands:
        return None
    forms = []
    for entry, _filled in cands:
        ops = ", ".join(f"{o.name}" + ("" if o.rw == "r" else f" [{o.rw}]") for o in entry.operands)
        form = f"({ops}{', ' if ops else ''}*, pred=None)"
        if form not in forms:
            forms.append(form)
    mods = sorted(
        {f"{s.name}: {'|'.join(c for c in s.choices)}" for e, f in cands for s, t in zip(e.slots, f) if t is None}
    )
    how = "operands from TVM's PTX instruction table ([w] = written destination)"
    if mods:
        how += "; modifiers still open: " + "; ".join(mods)
    return " or ".join(forms[:4]), how


# ---- usage and lowering -----------------------------------------------------------------------
def _usage_pattern(full: str) -> re.Pattern:
    """How an example's source spells ``full``: ``T.cuda.atomic_add`` / ``Tx.cuda.atomic_add`` for Tx
    names, the bare class or ``.method`` for lang and iket names."""
    if full.startswith("Tx."):
        rest = re.escape(full[3:])
        if full.startswith("Tx.ptx."):
            return re.compile(rf"\bTx?\.{rest}\s*\(")
        return re.compile(rf"\bTx?\.{rest}\b(?!\.)")
    short = full.rsplit(".", 2)
    if full.startswith("tvm.backend.cuda.lang.") and len(short) == 3 and short[-2][:1].isupper():
        return re.compile(rf"\.{re.escape(short[-1])}\s*\(")  # a method: pool.commit(...)
    if full.startswith("tile."):  # tile.cta.copy(...), Tx.copy_async(...) with Tx the tile module
        scopes = r"(?:(?:cta|warp|warpgroup|wg|thread|cluster)\.)?"
        return re.compile(rf"\b(?:tile|Tx)\.{scopes}{re.escape(full.rsplit('.', 1)[-1])}\s*\(")
    if full.startswith("tvm.backend.cuda.iket."):
        return re.compile(rf"\biket\.{re.escape(short[-1])}\b")
    return re.compile(rf"\b{re.escape(short[-1])}\b")


def _examples_using(full: str, entry: Entry | None) -> list:
    exs = examples()
    if entry is not None and entry.examples:
        return [exs[i] for i in entry.examples]
    rx = _usage_pattern(full)
    return [ex for ex in exs.values() if rx.search(ex.source)]


def _lower(ex, usage: list[UsageLine]) -> str:
    """Fill each usage line's PTX and SASS from the example's line map; '' or why it is unknown."""
    if "nvshmem" in ex.needs or "iket" in ex.needs or ex.compile is not None:
        return (
            f"unknown: example {ex.id!r} builds through its own path ({', '.join(ex.needs) or 'custom build'}), "
            "which txlab's line map does not cover"
        )
    from txlab.compiler import compile as compile_kernel

    try:
        compiled = compile_kernel(ex.prim_func(), arch=ex.arch, progress=lambda *_: None)
        smap = compiled.source_map
    except Exception as exc:  # noqa: BLE001 - the reason is the answer: no toolchain, a TVM that changed, ...
        return (
            f"unknown: compiling example {ex.id!r} for {ex.arch} failed ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else ''})"
        )
    for u in usage:
        u.cuda = [[n, t] for n, t in zip(smap.cuda_lines_for(u.lineno), smap.cuda_for(u.lineno))]
        u.ptx = smap.ptx_for(u.lineno)
        u.sass = smap.sass_for(u.lineno)
    if usage and not any(u.ptx or u.sass for u in usage):
        return (
            "no PTX or SASS is attributed to these lines: the name shapes the IR (layout, allocation, "
            "control) rather than emitting an instruction there"
        )
    return ""


def help(name: str, *, example: str | None = None, compile: bool = True) -> ApiHelp:  # noqa: A001, A002
    """Signature, doc, required arch, the catalogue example's lines that use ``name`` and what they
    lower to (CUDA; PTX and SASS when ``compile`` -- nvcc and nvdisasm, no GPU). ``name`` may be
    full (``Tx.cuda.__shfl_xor_sync``, ``tvm.backend.cuda.lang.MBarrier``), spelled with ``T.``,
    or short when unambiguous (``atomic_add``, ``MBarrier``). ``example`` picks another example
    that uses it. Raises :class:`UnknownAPIName` for a name TVM does not have."""
    if not isinstance(name, str):
        raise UnknownAPIName(
            f"txlab.api.help takes an API name as a string (e.g. 'Tx.cuda.atomic_add'), not {type(name).__name__}"
        )
    entry, obj, full = _find(name)
    if entry is not None:
        kind, category, signature, how, arch, doc = (
            entry.kind,
            entry.category,
            entry.signature,
            entry.signature_how,
            entry.arch,
            entry.doc,
        )
    else:
        import inspect

        kind = "class" if inspect.isclass(obj) else "function"
        category = (
            "Tx (tvm.script.tirx)"
            if full.startswith("Tx.")
            else "tile primitives (tvm.script.tirx.tile)"
            if full.startswith("tile.")
            else full.rsplit(".", 1)[0]
        )
        signature, _plain, how = signature_of(obj)
        ptx = _ptx_signature(obj) if full.startswith("Tx.ptx.") else None
        if ptx is not None:
            kind, category, (signature, how) = "PTX instruction", "Tx.ptx (table-driven PTX)", ptx
        arch = "unknown: not in txlab's catalogue (the arch is known for catalogued names only)"
        doc = inspect.getdoc(obj) or ""
    users = _examples_using(full, entry)
    if example is not None:
        chosen = [ex for ex in users if ex.id == example]
        if not chosen:
            raise UnknownAPIName(
                f"example {example!r} does not use {full}; examples that do: "
                f"{', '.join(ex.id for ex in users) or 'none'}",
                candidates=[ex.id for ex in users],
            )
        users = chosen + [ex for ex in users if ex.id != example]
    result = ApiHelp(full, kind, category, signature, how, arch, doc, None, "")
    if not users:
        result.cuda_how = "unknown: no catalogue example uses this name"
        return result
    ex = users[0]
    result.example_id, result.example_source = ex.id, ex.source
    result.other_examples = [e.id for e in users[1:]]
    if entry is None and arch.startswith("unknown"):
        result.arch = f"{ex.arch} (the arch its example {ex.id!r} compiles for; not catalogued)"
    rx = _usage_pattern(full)
    result.usage = [UsageLine(i + 1, ln.strip()) for i, ln in enumerate(ex.source.splitlines()) if rx.search(ln)]
    if entry is not None:
        from txlab.api.sources import emitted_lines

        try:
            shown = emitted_lines(full, ex.id, context=0)
            keep = set(shown["highlight"]) | set(shown["definitions"])
            result.cuda_lines = [ln for ln in shown["lines"] if ln[0] in keep]
            result.cuda_how = shown["how"]
        except Exception as exc:  # noqa: BLE001 - generating the CUDA needs TVM's codegen: say why it is missing
            result.cuda_how = f"unknown: generating the CUDA failed ({type(exc).__name__}: {exc})"
    if compile:
        result.lowering = _lower(ex, result.usage)
        if entry is None and not result.cuda_lines:
            result.cuda_lines = [c for u in result.usage for c in u.cuda]
            result.cuda_how = "the CUDA the line map attributes to the example lines above" if result.cuda_lines else ""
    else:
        result.lowering = "not compiled (help(..., compile=True) compiles the example: nvcc and nvdisasm, no GPU)"
    return result
