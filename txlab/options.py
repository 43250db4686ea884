"""Compile options: what ``txlab.compile(..., fast_math=, maxrregcount=, nvcc_flags=)`` and the
``%%tirx`` flags ``--fast-math/--no-fast-math``, ``--maxrregcount N``, ``--nvcc-flag F`` choose.

The default is TVM's own nvcc path: ``--use_fast_math`` on (FADD/FMUL are ``.FTZ``, division and
``exp`` approximate: ``MUFU.EX2``), no register cap. Every option is part of the cache key and is
shown in the result header.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

FAST_MATH_FLAG = "--use_fast_math"


@dataclass(frozen=True)
class CompileOptions:
    fast_math: bool = True
    maxrregcount: int | None = None
    nvcc_flags: tuple = field(default_factory=tuple)

    @classmethod
    def make(cls, fast_math=True, maxrregcount=None, nvcc_flags=None) -> "CompileOptions":
        from txlab.errors import InputError

        if not isinstance(fast_math, bool):
            raise InputError(f"fast_math must be True or False, not {fast_math!r}", param="fast_math")
        if maxrregcount is not None:
            if isinstance(maxrregcount, bool) or not isinstance(maxrregcount, int) or not 16 <= maxrregcount <= 255:
                raise InputError(
                    f"maxrregcount must be an int from 16 to 255 (or None), not {maxrregcount!r}", param="maxrregcount"
                )
        if nvcc_flags is None:
            flags: tuple = ()
        elif isinstance(nvcc_flags, str):
            flags = tuple(shlex.split(nvcc_flags))
        else:
            flags = tuple(str(f) for f in nvcc_flags)
        for f in flags:
            if f in ("-o", "--output-file", "--ptx", "-ptx", "-c", "--cubin", "-cubin") or f.startswith(
                ("-gencode", "-arch", "--gpu-architecture")
            ):
                raise InputError(
                    f"nvcc flag {f!r} is chosen by txlab (output and arch: use arch=...)", param="nvcc_flags"
                )
        return cls(fast_math, maxrregcount, flags)

    def nvcc_args(self) -> list[str]:
        """Every nvcc flag: txlab's defaults, fast math or not, then the user's (ptxas's removed)."""
        from txlab import toolchain

        base = [f for f in toolchain.NVCC_FLAGS if f != FAST_MATH_FLAG or self.fast_math]
        return base + self._split()[0]

    def ptxas_args(self) -> list[str]:
        out = [f"-maxrregcount={self.maxrregcount}"] if self.maxrregcount else []
        return out + self._split()[1]

    def _split(self) -> tuple[list[str], list[str]]:
        """The user's flags for nvcc, and those it would have passed to ptxas (``-Xptxas X``):
        txlab runs ptxas itself, so those go there directly."""
        nv, px = [], []
        it = iter(self.nvcc_flags)
        for f in it:
            if f in ("-Xptxas", "--ptxas-options"):
                px.extend(next(it, "").split(","))
            elif f.startswith(("-Xptxas=", "--ptxas-options=")):
                px.extend(f.split("=", 1)[1].split(","))
            else:
                nv.append(f)
        return nv, [p for p in px if p]

    def key(self) -> dict:
        return {"fast_math": self.fast_math, "maxrregcount": self.maxrregcount, "nvcc_flags": list(self.nvcc_flags)}

    def to_dict(self) -> dict:
        return self.key()

    @classmethod
    def from_dict(cls, d) -> "CompileOptions":
        if not d:
            return cls()
        return cls(bool(d.get("fast_math", True)), d.get("maxrregcount"), tuple(d.get("nvcc_flags") or ()))

    def describe(self) -> str:
        """One line for the result header, e.g. 'fast math on (default) · maxrregcount 128'."""
        parts = ["fast math on (default: --use_fast_math)" if self.fast_math else "fast math off (IEEE)"]
        if self.maxrregcount:
            parts.append(f"maxrregcount {self.maxrregcount}")
        if self.nvcc_flags:
            parts.append("nvcc " + " ".join(self.nvcc_flags))
        return " · ".join(parts)
