"""Each SASS instruction's CUDA line and inline frames, read from the cubin and its PTX instead of
from a second nvdisasm run.

ptxas writes two line tables into a cubin built with ``-lineinfo``, both DWARF line programs:
``.debug_line`` (SASS address → CUDA file and line, without the inline chain) and
``.nv_debug_line_sass`` (SASS address → line of the PTX text ptxas compiled). The PTX's ``.loc``
directives carry the whole chain (``.loc 4 97 13, function_name …, inlined_at 3 509 9``), so an
instruction's frames are those of the ``.loc`` in force at its PTX line. pyelftools decodes the
line program (:class:`elftools.dwarf.lineprogram.LineProgram`); the per-kernel start addresses come
from the section's relocations (one ``DW_LNE_set_address`` per kernel).

To give exactly what ``nvdisasm -gi`` printed before (tests/test_sass_lines.py compares the two),
the frames follow nvdisasm's listing rules: an instruction's innermost frame is the last
``.debug_line`` row at its address, and a chain is printed only where that frame changes (an
address with no row, or the same innermost frame, keeps the chain in force, although for about
one instruction in six of the Hopper GEMM the PTX names another outer call site: each
``mbarrier.init`` of a ring at its own line, which nvdisasm shows at the first one's). The outer frames are the PTX's
chain at the instruction's PTX line when its innermost frame is the same; else the rows at the
address (outermost first). tests/test_sass_lines.py checks the result against ``nvdisasm -gi``.
"""

from __future__ import annotations

import io
import os
import re

_FILE_DIR = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_LOC = re.compile(
    r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:,\s*function_name\s+[^,]+,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?"
)
_LINE_SASS = ".nv_debug_line_sass"


def ptx_frames(ptx: str) -> tuple[dict[int, str], list[tuple]]:
    """(``{file index: name}``, per PTX line (0-based) the ``.loc`` chain in force, innermost first,
    as ``(file index, line)`` pairs; ``()`` before a function's first ``.loc``. The parent of an ``inlined_at`` location is the last ``.loc`` written at it."""
    lines = ptx.splitlines()
    files: dict[int, str] = {}
    for line in lines:
        m = _FILE_DIR.match(line)
        if m:
            files[int(m.group(1))] = m.group(2)
    parent: dict[tuple, tuple] = {}
    out: list[tuple] = []
    current: tuple = ()
    for line in lines:
        m = _LOC.match(line)
        if m:
            here = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            if m.group(4):
                parent[here] = (int(m.group(4)), int(m.group(5)), int(m.group(6)))
            else:
                parent.pop(here, None)
            chain, loc = [here], here
            while loc in parent and len(chain) < 64:
                loc = parent[loc]
                chain.append(loc)
            current = tuple((f, ln) for f, ln, _ in chain)
        elif line.lstrip().startswith((".visible", ".entry", ".func")):
            current = ()
        out.append(current)
        if line.rstrip() == "}" or line.startswith(".section"):  # a function's end, debug sections
            current = ()
    return files, out


def line_rows(cubin: bytes, section: str) -> dict[str, list[tuple[int, str, int]]]:
    """``{kernel: [(SASS offset, file, line), ...]}``: the rows of one of the cubin's line programs
    (``.debug_line``: CUDA files; ``.nv_debug_line_sass``: the PTX, file ``""``), in program
    order; a row holds until the next address. ``{}`` when the cubin has no such section."""
    from elftools.common.utils import struct_parse
    from elftools.dwarf.lineprogram import LineProgram
    from elftools.dwarf.structs import DWARFStructs
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(cubin))
    sec = elf.get_section_by_name(section)
    if sec is None:
        return {}
    starts = _sequence_kernels(elf, section)
    structs = DWARFStructs(little_endian=elf.little_endian, dwarf_format=32, address_size=8)
    data = sec.data()
    stream = io.BytesIO(data)
    out: dict[str, list[tuple[int, str, int]]] = {}
    offset, seq = 0, -1
    kernel, base = None, 0
    while offset < len(data):
        header = struct_parse(structs.Dwarf_lineprog_header, stream, offset)
        end = offset + header["unit_length"] + 4
        files = [""] + [f.name.decode("utf-8", "replace") for f in header["file_entry"]]
        for entry in LineProgram(header, stream, structs, stream.tell(), end).get_entries():
            if entry.is_extended and entry.command == 2:  # DW_LNE_set_address: a kernel's sequence
                seq += 1
                if seq >= len(starts):
                    raise ValueError(f"{section}: more address sequences than relocations")
                kernel, start = starts[seq]
                base = start - entry.args[0]
            state = entry.state
            if state is None or state.end_sequence or kernel is None:
                continue
            name = files[state.file] if 0 <= state.file < len(files) else ""
            out.setdefault(kernel, []).append((state.address + base, name, state.line))
        offset = end
    return out


def _sequence_kernels(elf, section: str) -> list[tuple[str, int]]:
    """(kernel, start offset) of each ``DW_LNE_set_address`` of a line program section, in order:
    the section's relocations name the kernel's symbol (the stored address is 0)."""
    rela = elf.get_section_by_name(".rela" + section)
    if rela is None:
        return []
    symtab = elf.get_section(rela["sh_link"])
    out = []
    for r in sorted(rela.iter_relocations(), key=lambda r: r["r_offset"]):
        sym = symtab.get_symbol(r["r_info_sym"])
        name = elf.get_section(sym["st_shndx"]).name
        out.append((name.removeprefix(".text."), sym["st_value"] + r.entry.get("r_addend", 0)))
    return out


def _check_same_ptx(cubin: bytes, ptx: str) -> None:
    """Raise ValueError unless ``ptx`` is the text this cubin was compiled from: ptxas keeps it in
    ``.nv_debug_ptx_txt``, one NUL-ended line per PTX line, with directives such as ``.loc``
    blanked, so the line numbers of the line table are those of ``ptx``."""
    from elftools.elf.elffile import ELFFile

    sec = ELFFile(io.BytesIO(cubin)).get_section_by_name(".nv_debug_ptx_txt")
    if sec is None:
        return
    kept = sec.data().decode("utf-8", "replace").split("\0")
    ours = ptx.splitlines()
    for i, line in enumerate(kept):
        if line and (i >= len(ours) or ours[i].strip() != line.strip()):
            raise ValueError(f"the PTX differs from the cubin's at line {i + 1}: {line[:60]!r}")


def frames_of(cubin: bytes, ptx: str, instructions) -> list[tuple]:
    """Per instruction (``(kernel, offset)`` records in listing order), its frames innermost first
    as ``(file name, line)``, by the rules in this module's docstring; ``()`` when unknown."""
    import bisect

    names, per_line = ptx_frames(ptx)
    _check_same_ptx(cubin, ptx)
    cuda, sass_ptx = line_rows(cubin, ".debug_line"), line_rows(cubin, _LINE_SASS)
    groups: dict[str, dict[int, list]] = {}
    for kernel, rows in cuda.items():
        for addr, name, line in rows:
            groups.setdefault(kernel, {}).setdefault(addr, []).append((name, line))
    ptx_at = {k: ([a for a, _, _ in rows], [ln for _, _, ln in rows]) for k, rows in sass_ptx.items()}
    out: list[tuple] = []
    shown: dict[str, tuple] = {}  # the chain in force per kernel
    for ins in instructions:
        group = groups.get(ins.kernel, {}).get(ins.offset)
        prev = shown.get(ins.kernel, ())
        if not group or (
            prev and (os.path.basename(prev[0][0]), prev[0][1]) == (os.path.basename(group[-1][0]), group[-1][1])
        ):  # nvdisasm prints no new chain here
            out.append(prev)
            continue
        chain = tuple(reversed(group))
        addrs, ptx_lines = ptx_at.get(ins.kernel, ((), ()))
        i = bisect.bisect_right(addrs, ins.offset) - 1
        if i >= 0 and 0 < ptx_lines[i] <= len(per_line):
            full = tuple((names.get(f, ""), ln) for f, ln in per_line[ptx_lines[i] - 1])
            if full and (os.path.basename(full[0][0]), full[0][1]) == (os.path.basename(chain[0][0]), chain[0][1]):
                chain = full
        shown[ins.kernel] = chain
        out.append(chain)
    return out
