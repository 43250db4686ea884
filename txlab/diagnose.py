"""Compile diagnostics at the user's line: toolchain errors mapped through the line map, hints for
common mistakes, and launchability checks (a kernel that compiles but cannot launch)."""
from __future__ import annotations


def map_toolchain_error(exc, mod, cuda_source, line_table, arch) -> bool:
    return False


def add_hints(exc, mod, arch) -> None:
    return None


def launchability(compiled) -> list[str]:
    return []
