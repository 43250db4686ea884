"""One API example kernel: TVMScript text, the API names it uses, and how to check its result."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable


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
    # regex over the generated CUDA per API name: the lines that API produced (APIView highlight)
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


def kernel_source(name: str, params, *, threads: int, ctas: int = 1, comment=(), preamble: str = "",
                  body: str, attrs: str = "") -> str:
    """The TVMScript text of an example kernel of the common form: ``preamble`` (module-level code
    the kernel uses), ``@T.prim_func`` ``def name(params):``, the ``comment`` lines, ``T.func_attr(attrs)``
    when ``attrs`` (a dict's text) is given, then its launch -- ``T.device_entry()``,
    ``cta = T.cta_id([ctas])``, ``tx = T.thread_id([threads])`` -- and ``body`` (indented as a function
    body). ``params``: the parameter list, a string or one string per line (later lines aligned under
    the first)."""
    lines = [params] if isinstance(params, str) else list(params)
    head = f"def {name}("
    text = [
        "@T.prim_func",
        head + ("\n" + " " * len(head)).join(lines) + "):",
        *(f"    # {c}" for c in comment),
        *([f"    T.func_attr({attrs})"] if attrs else []),
        "    T.device_entry()",
        f"    cta = T.cta_id([{ctas}])",
        f"    tx = T.thread_id([{threads}])",
    ]
    start = preamble.lstrip("\n") + "\n" if preamble.strip() else ""
    return start + "\n".join(text) + "\n" + body.lstrip("\n")
