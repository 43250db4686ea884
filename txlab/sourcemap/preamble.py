"""The generated preamble of TVM's CUDA source: what TVM's codegen puts before the first kernel --
the ``#ifdef __CUDACC_RTC__`` block of includes and type aliases, ``#define``\\ s, and the helper
functions and types the kernel uses (``tvm_builtin_cuda_warp_reduce_sum_32``, bf16 packing, the
GMMA descriptor; ~65 lines for a small kernel, hundreds for the Hopper GEMM). Views fold it so a
CUDA listing opens on the kernel, one click away from the rest.
"""

from __future__ import annotations

import re

_IF = re.compile(r"^\s*#\s*if(n?def)?\b")
_ENDIF = re.compile(r"^\s*#\s*endif\b")

#: a preamble shorter than this is not worth folding
MIN_FOLD = 8


_GLOBAL = re.compile(r"^\s*(extern\s+\"C\"\s+)?(static\s+)?__global__\b")


def preamble_lines(cuda_source: str, cuda_user=None) -> int:
    """How many leading lines of ``cuda_source`` come before its first ``__global__`` function
    (and before the first line the line map ``cuda_user`` -- a user line or None per CUDA line --
    gives a user line). Without a ``__global__`` line: the leading preprocessor set-up
    (:func:`directive_lines`). 0 when that is shorter than :data:`MIN_FOLD` lines."""
    lines = cuda_source.splitlines()
    first_mapped = next((i for i, u in enumerate(cuda_user or ()) if u), len(lines))
    first_global = next((i for i, line in enumerate(lines) if _GLOBAL.match(line)), None)
    n = directive_lines(cuda_source) if first_global is None else first_global
    n = min(n, first_mapped)
    return n if n >= MIN_FOLD else 0


def directive_lines(cuda_source: str) -> int:
    """How many leading lines of ``cuda_source`` are preprocessor set-up: blank lines,
    preprocessor directives (and their ``\\`` continuations) and everything inside an
    ``#if``/``#ifdef`` block, up to the first line of code outside one. 0 when there is no such
    block."""
    depth = 0
    continued = False
    n = 0
    last_directive = 0  # lines up to and including the last directive (trailing blanks included)
    for line in cuda_source.splitlines():
        s = line.strip()
        if continued:
            continued = s.endswith("\\")
        elif _IF.match(s):
            depth += 1
            continued = s.endswith("\\")
        elif _ENDIF.match(s):
            depth = max(0, depth - 1)
        elif s.startswith("#"):
            continued = s.endswith("\\")
        elif s and depth == 0:
            break
        n += 1
        if s or depth:
            last_directive = n
    # the blank lines right after the block fold with it
    return max(n, last_directive)
