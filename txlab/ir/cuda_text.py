"""The CUDA C that TVM's codegen prints, read as text: function extents and call sites.

The one scanner of function definitions in generated CUDA (the line map, diagnostics and the
sanitizer's findings all ask it which function a CUDA line is in, and which kernel lines call a
helper). TVM prints one definition per top-level header line (``extern "C" __global__ void
__launch_bounds__(128) k(...) {`` or a ``__device__`` helper of its preamble), braces balanced.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_FUNC_HEAD = re.compile(r"^(?!\s)(?:.*\s)?(?:\*\s*)?(\w+)\s*\((?:[^;]*)\)\s*(?:const\s*)?\{*\s*$")


@dataclass(frozen=True)
class CudaFunction:
    """One function definition: its header line ``first``, its closing line ``last`` (1-based)."""

    first: int
    last: int
    name: str
    is_kernel: bool

    def __iter__(self):  # (first, last, name, is_kernel), the tuple callers unpack
        return iter((self.first, self.last, self.name, self.is_kernel))

    def __getitem__(self, i):
        return (self.first, self.last, self.name, self.is_kernel)[i]


def cuda_functions(cuda: str) -> list[CudaFunction]:
    """Every function definition in CUDA C, in text order."""
    lines = cuda.splitlines()
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FUNC_HEAD.match(line)
        if m and not line.startswith("#") and ("{" in line or (i + 1 < len(lines) and lines[i + 1].strip() == "{")):
            depth, j, started = 0, i, False
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if "{" in lines[j]:
                    started = True
                if started and depth <= 0:
                    break
                j += 1
            out.append(CudaFunction(i + 1, j + 1, m.group(1), "__global__" in line))
            i = j + 1
            continue
        i += 1
    return out


def function_at(funcs: list[CudaFunction], cuda_line: int) -> CudaFunction | None:
    """The function whose definition holds ``cuda_line`` (``funcs`` from :func:`cuda_functions`)."""
    starts = [f.first for f in funcs]
    i = bisect.bisect_right(starts, cuda_line) - 1
    if i >= 0 and funcs[i].first <= cuda_line <= funcs[i].last:
        return funcs[i]
    return None


def kernel_lines(funcs: list[CudaFunction]) -> list[tuple[int, int]]:
    """(first, last) lines of each ``__global__`` function's body (header and closing brace out)."""
    return [(f.first + 1, f.last - 1) for f in funcs if f.is_kernel]


def call_sites(cuda: str, funcs: list[CudaFunction], name: str) -> list[int]:
    """Lines inside kernels that call function ``name``."""
    lines = cuda.splitlines()
    call = re.compile(r"\b" + re.escape(name) + r"\s*\(")
    return [ln for lo, hi in kernel_lines(funcs) for ln in range(lo, hi + 1) if call.search(lines[ln - 1])]
