"""Example kernels for the TIRx CUDA authoring API, one module per category.

Each :class:`Example` is TVMScript text defining one ``@T.prim_func`` (the same text the APIExplorer
inserts into a notebook cell), the API names it really uses, the arch it needs, and -- where an H200
can run it -- an input builder and a numpy function giving the expected outputs, so
``txlab.api.verify`` checks a real result, not just a launch.
"""
from __future__ import annotations

import importlib
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

CATEGORY_MODULES = ("sync", "memory", "reduce", "descriptors", "calls", "convert", "instrument",
                    "wgmma", "blackwell", "nvshmem", "lang", "schedulers", "iket")


@dataclass
class Example:
    """One example kernel. ``uses`` are qualified API names as a user writes them."""

    id: str
    uses: tuple[str, ...]
    source: str
    arch: str = "sm_90a"
    inputs: Callable[[], list] | None = None
    expected: Callable[..., Any] | None = None  # numpy reference(*inputs) -> array | tuple | dict
    outputs: tuple[str, ...] | None = None
    rtol: float = 0.0
    atol: float = 0.0
    invariant: Callable[..., str | None] | None = None  # post-run check of args (runs before the comparison; may mask nondeterministic bits in place); message if broken
    not_on_h200: str | None = None  # why an H200 cannot run it (sm_100a-only, multi-GPU, ...)
    needs: tuple[str, ...] = field(default_factory=tuple)  # toolchain needs, e.g. ("nvshmem",)
    note: str = ""
    # a custom build (e.g. through an extra TVM pass): compile(example) -> anything; raises on failure
    compile: Callable[["Example"], Any] | None = None
    # regex over the generated CUDA per API name: the lines that API produced (APIExplorer highlight)
    emits: dict = field(default_factory=dict)

    def __post_init__(self):
        self.source = textwrap.dedent(self.source).strip("\n") + "\n"

    @property
    def runnable(self) -> bool:
        return self.not_on_h200 is None and self.inputs is not None and self.expected is not None

    def prim_func(self):
        """Parse the source (registered in linecache, as a notebook cell would be)."""
        import tvm

        import txlab.compat  # noqa: F401  (parse-time workarounds)
        from txlab.namespace import register_source, tirx_namespace

        filename = register_source(self.source, tag=f"api-{self.id}")
        ns = tirx_namespace()
        exec(compile(self.source, filename, "exec"), ns)  # noqa: S102 - our own example text
        funcs = [v for k, v in ns.items() if isinstance(v, tvm.tirx.PrimFunc) and k == self.id]
        if not funcs:
            raise ValueError(f"example {self.id!r} does not define @T.prim_func {self.id}")
        return funcs[0]

    def to_dict(self) -> dict:
        return {"id": self.id, "uses": list(self.uses), "source": self.source, "arch": self.arch,
                "runnable": self.runnable, "not_on_h200": self.not_on_h200, "needs": list(self.needs),
                "note": self.note}


def all_examples() -> list[Example]:
    out: list[Example] = []
    for mod in CATEGORY_MODULES:
        try:
            m = importlib.import_module(f"txlab.api_examples.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name == f"txlab.api_examples.{mod}":
                continue
            raise
        out.extend(m.EXAMPLES)
    ids = [e.id for e in out]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate example ids: {sorted(dup)}")
    return out
