"""One buffer's geometry, evaluated from its TVM layout object: byte footprint, swizzle, bank groups,
TMEM lanes; names for unnamed pool buffers (from the user's source line), gaps, byte formatting."""

from __future__ import annotations

import linecache
import re

from txlab import ir
from txlab.pools.limits import BANK_BYTES, BANKS, CHUNK_BYTES, KiB, TMEM_LANES


def _int(x):
    try:
        return int(x)
    except Exception:  # noqa: BLE001 - an object without a readable value has no constant
        return None


def _shape(buf):
    return [(_int(s) if _int(s) is not None else str(s)) for s in buf.shape]


_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*(?:[\w.]+\.)?([A-Za-z_]\w*)\s*\(")
_METHOD = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.([A-Za-z_]\w*)\s*\(")


def _footprint_bytes(buf, shape, bits):
    """Bytes the buffer spans: its layout's span (so strided/padded layouts count what they
    touch), never less than the dense size."""
    n = ir.prod(shape)
    dense = (n * bits + 7) // 8 if n is not None else None
    lay = buf.layout
    span = None
    if lay is not None:
        try:
            span = _int(lay.span())
        except Exception:  # noqa: BLE001 - a node without a span has no line
            span = None
    if span is not None:
        spanned = (span * bits + 7) // 8
        return max(spanned, dense or 0)
    return dense


def _free_vars(exprs) -> list[str]:
    """Names of the variables in ``exprs`` (TVM expressions; ints have none), in first-seen order: what a
    size or an offset that is no constant depends on (a kernel argument such as ``n``)."""
    import tvm
    import tvm_ffi

    names: list[str] = []

    def on_var(v):
        if v.name not in names:
            names.append(v.name)

    for e in exprs:
        if isinstance(e, tvm.ir.Var):
            on_var(e)
        elif isinstance(e, tvm.ir.Expr):
            tvm_ffi.structural_walk(e, [(tvm.ir.Var, on_var)], order="pre")
    return names


def _symbolic_bytes(buf, bits) -> tuple[str | None, list[str]]:
    """``(bytes as text, variables it depends on)`` of a buffer whose shape is not constant, e.g.
    ``("n * 4", ["n"])`` for ``float32[n]``; ``(None, [])`` for a constant shape."""
    dims = list(buf.shape)
    if all(_int(d) is not None for d in dims):
        return None, []
    names = _free_vars(dims)
    factor = 1
    rest = []
    for d in dims:
        if _int(d) is not None:
            factor *= _int(d)
        else:
            rest.append(f"({d})" if any(op in str(d) for op in "+-") else str(d))
    if bits % 8 == 0:
        factor *= bits // 8
        text = " * ".join(rest + ([str(factor)] if factor != 1 else []))
    else:
        text = f"({' * '.join(rest + ([str(factor)] if factor != 1 else []))} * {bits} + 7) // 8"
    return text, names


def _swizzle_text(lay, bits):
    if lay is None or type(lay).__name__ != "ComposeLayout":
        return None
    per, sw, atom = int(lay.per_element), int(lay.swizzle_len), int(lay.atom_len)
    unit_bytes = (2**per) * bits // 8
    span_bytes = unit_bytes * (2**sw)
    return f"{span_bytes}B swizzle (Swizzle<{sw},{per},{atom}>, {unit_bytes}B units)"


def _bank_pattern(lay, shape, bits, base_offset, rows=8, max_chunks=16):
    """Evaluate the buffer's layout for (row r, 16-byte chunk c) of its last two dims."""
    if len(shape) < 2 or not all(isinstance(s, int) for s in shape) or bits > 128 or bits == 0:
        return None
    nrows, ncols = shape[-2], shape[-1]
    per_chunk = (CHUNK_BYTES * 8) // bits
    if per_chunk == 0 or ncols % per_chunk != 0:
        return None
    nchunks = min(ncols // per_chunk, max_chunks)
    nr = min(nrows, rows)
    lead = [0] * (len(shape) - 2)
    groups = []
    for r in range(nr):
        row = []
        for c in range(nchunks):
            coord = lead + [r, c * per_chunk]
            if lay is None:
                elem = r * ncols + c * per_chunk
            else:
                out = lay.apply(*coord, shape=shape)
                elem = int(out["m"]) if "m" in out else int(next(iter(out.values())))
            byte = base_offset + elem * bits // 8
            row.append((byte % (BANKS * BANK_BYTES)) // CHUNK_BYTES)
        groups.append(row)
    # A column of 16-byte chunks read across 8 rows (ldmatrix / one 128 B wavefront each): ways of
    # bank conflict = rows sharing the most popular bank group.
    ways = 1
    for c in range(nchunks):
        col = [groups[r][c] for r in range(min(nr, 8))]
        ways = max(ways, max(col.count(g) for g in set(col)))
    return {"rows": nr, "chunks": nchunks, "bank_group": groups, "conflict_ways": ways, "row_bytes": ncols * bits // 8}


def _tmem_lanes(lay, shape):
    """Lane intervals the TMEM buffer occupies, by evaluating its layout over rows (and first/last
    column, which catches layouts whose lane depends on the column group)."""
    if len(shape) != 2 or not all(isinstance(s, int) for s in shape):
        t = _int(lay.span("TLane")) or TMEM_LANES
        return [[0, t]]
    rows, cols = shape
    lanes = set()
    for r in range(rows):
        for c in {0, cols - 1, cols // 2}:
            out = lay.apply(r, c, shape=shape)
            if "TLane" in out:
                lanes.add(int(out["TLane"]))
    if not lanes:
        return [[0, TMEM_LANES]]
    ivs, lo, prev = [], None, None
    for x in sorted(lanes):
        if lo is None:
            lo = prev = x
        elif x == prev + 1:
            prev = x
        else:
            ivs.append([lo, prev + 1])
            lo = prev = x
    ivs.append([lo, prev + 1])
    return ivs


def _lanes_overlap(a, b):
    return any(x0 < y1 and y0 < x1 for x0, x1 in a for y0, y1 in b)


def _name_unnamed(allocations):
    """Unnamed buffers (the pool's allocators and Pipeline/MBarrier leave some without a name) are
    named from the user's source line that first touches them, else from what they are."""
    taken = {a["name"] for a in allocations if a["name"]}
    by_line = {}
    for a in allocations:
        if a["_line"]:
            by_line.setdefault(a["_line"], []).append(a)
    for a in allocations:
        if a["name"]:
            continue
        base, origin = None, None
        if a["_line"]:
            fname, line = a["_line"]
            text = linecache.getline(fname, line).strip()
            if text:
                origin = f"line {line}: {text}"
                m = _ASSIGN.match(text)
                if m:
                    var, ctor = m.group(1), m.group(2)
                    siblings = by_line[a["_line"]]
                    if ctor == "Pipeline" and len(siblings) == 2:
                        base = f"{var}.{'full' if siblings[0] is a else 'empty'}"
                    elif len(siblings) > 1:
                        base = f"{var}.{siblings.index(a)}"
                    else:
                        base = var
                else:
                    m = _METHOD.search(text)
                    if m and m.group(1) not in ("T", "Tx", "T.ptx", "T.cuda"):
                        base = m.group(1)
        if base is None:
            kind = _usage_kind(a)
            base = f"{kind}@{a['offset']}"
            origin = origin or f"unnamed in the IR; {kind} inferred from its dtype/uses"
        name, i = base, 1
        while name in taken:
            i += 1
            name = f"{base}#{i}"
        taken.add(name)
        a["name"], a["origin"] = name, origin


def _usage_kind(a):
    ops = " ".join(a["uses"])
    if "mbarrier" in ops or "tcgen05_commit" in ops or (a["dtype"] == "uint64" and a["scope"] != "tmem"):
        if "expect_tx" in ops:
            return "tma_bar"
        if "tcgen05_commit" in ops:
            return "tcgen05_bar"
        return "mbarrier"
    if "tcgen05_alloc" in ops:
        return "tmem_addr"
    return f"{a['scope']}_{a['dtype']}"


def _gaps(dyn, high):
    """Byte ranges below the high-water mark that no allocation covers, with a reason."""
    covered = sorted((a["offset"], i, a["offset"] + (a["nbytes"] or 0), a) for i, a in enumerate(dyn))
    gaps, cursor = [], 0
    for start, _, end, a in covered:
        if start > cursor:
            gap = start - cursor
            align = a["align"] or 1
            reason = (
                f"alignment of {a['name']} to {align} B"
                if gap < align and start % align == 0
                else f"unused range before {a['name']} (move_base_to or explicit offset)"
            )
            gaps.append({"offset": cursor, "nbytes": gap, "before": a["name"], "reason": reason})
        cursor = max(cursor, end)
    return gaps


def _fmt_bytes(n):
    if n is None:
        return "?"
    if n >= KiB and n % KiB == 0:
        return f"{n // KiB} KiB"
    if n >= KiB:
        return f"{n / KiB:.1f} KiB"
    return f"{n} B"
