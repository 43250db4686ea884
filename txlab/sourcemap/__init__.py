"""The line map: every line of the user's kernel source ↔ the CUDA C, PTX and SASS it became.

    m = compiled.source_map
    m.lines()                 # user lines that have SASS
    m.sass_for(37)            # ['SHFL.BFLY PT, R5, R2, 0x10, 0x1f', 'FADD.FTZ R5, R2, R5', ...]
    m.line_of_sass(0x90)      # 37 (a SASS byte offset, as ncu / compute-sanitizer report it)
    m.instructions[0]         # txlab.sass.Instruction(kernel, offset, text, cuda_line, user_line, ...)
    m.live_registers(37)      # 40: most registers live at the line's SASS (nvdisasm --print-life-ranges)

How it is built (DESIGN.md, "line map"), one module per job:

* **TVMScript → CUDA.** TVM's parser gives every statement a span, and a ``SequentialSpan`` for
  statements inlined from macros and ``tvm.backend.cuda.lang`` classes (the inline stack: the
  user's call first, the library's lines after). Most spans survive the tirx pipeline. TVM's CUDA
  codegen prints no spans, so txlab marks the *final* device IR (after every pass, just before
  codegen): before each statement whose origin differs from the one in effect, an
  ``Evaluate(call_extern("__txlab_line", id))``. Codegen prints each marker as a line of its own;
  txlab strips them and checks that what is left equals TVM's unmarked CUDA, character for
  character — the passes never see a marker, so the compiled code cannot change.
* **CUDA → PTX → SASS.** nvcc ``-lineinfo`` (``.loc`` in PTX, ``.debug_line`` in the cubin) and
  the cubin's line tables with the PTX's inline chains (:mod:`txlab.sass.lines`, equal to what
  ``nvdisasm -gi`` prints). A SASS instruction belongs to the outermost
  frame in the kernel's own function; the CUDA helper it was inlined from (e.g. TVM's
  ``tvm_builtin_cuda_warp_reduce_sum_32``) is recorded as its ``cuda_helper``.

Approximate where TVM's passes drop spans: statements they create (common-subexpression
``Bind``\\ s, hoisted index arithmetic, launch-thread set-up) inherit the origin of the statement
around them, or the kernel's ``T.device_entry()`` line at the top of the kernel (``kind`` "entry");
and where nvcc/ptxas move an instruction, ``-lineinfo`` says which CUDA line it came from, which is
what this map reports.

* ``origins``    — a span's user line (read by :mod:`txlab.ir.spans`, the one span reader) and the
  library function it was inlined from (``Origin``); tile-primitive bodies carry their call site
  (``txlab.build`` puts it back at dispatch);
* ``line_table`` — markers in the final device IR, codegen again, the CUDA line → origin table;
* ``listings``   — CUDA function extents, PTX ``.loc``;
* ``model``      — ``SourceMap`` (the queries) over :class:`txlab.sass.Instruction` records;
* ``lazy``       — the map of a ``Compiled`` (``Compiled.source_map`` keeps it).
"""

from __future__ import annotations

from txlab.sourcemap.lazy import ensure_sass, source_map_of
from txlab.sourcemap.line_table import MARKER, LineTable, build_line_table, mark_device_mods, strip_markers
from txlab.sourcemap.listings import classify, cuda_functions, opcode_of, parse_sass_with_lines, ptx_cuda_lines
from txlab.sourcemap.model import SassInstruction, SourceMap
from txlab.sourcemap.origins import Origin, function_at, origin_of_span, span_signature, user_file_of

__all__ = [
    "MARKER",
    "LineTable",
    "Origin",
    "SassInstruction",
    "SourceMap",
    "build_line_table",
    "classify",
    "cuda_functions",
    "ensure_sass",
    "function_at",
    "mark_device_mods",
    "opcode_of",
    "origin_of_span",
    "parse_sass_with_lines",
    "ptx_cuda_lines",
    "source_map_of",
    "span_signature",
    "strip_markers",
    "user_file_of",
]
