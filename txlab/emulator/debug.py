"""The kernel's own debugging calls: ``T.cuda.printf`` and device-side asserts (``T.cuda.trap_when_assert_failed``).

``printf``: each active lane formats its line with the C format (Python's ``%`` formatting of the same
conversions; C's length modifiers ``h``/``l``/``ll``/``z``/``j``/``t`` are dropped, ``%u``/``%x``/``%o`` show a
negative int as the unsigned value a GPU prints, ``%p`` as hex), lanes in thread order, CTAs in the order the
emulator runs them. The GPU buffers device printf and prints it when the host synchronises, in an order CUDA does
not define; the emulator collects the lines in ``EmulationResult.printed`` and writes them to standard output when
the run ends.

``trap_when_assert_failed(cond)``: a lane whose ``cond`` is false traps (``asm("trap;")``), which ends the launch
with an error on a GPU: here ``KernelFault("trap")`` naming the line, the first failing thread and its CTA (what
the CTAs run before it wrote stays written, as on a GPU; a kernel call, ``compiled(...)``, leaves the arrays as
they were).
"""

from __future__ import annotations

import re

import numpy as np

from txlab.emulator.ops import HANDLERS

#: a C conversion specification: flags, width, precision, length modifier, conversion
_SPEC = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?(?P<len>hh|h|ll|l|L|z|j|t)?(?P<conv>[diouxXeEfFgGaAcsp%])"
)


def _converter(spec: re.Match):
    """(Python format, function of the lane's value) for one C conversion."""
    conv, length = spec.group("conv"), spec.group("len") or ""
    flags, width, prec = spec.group("flags"), spec.group("width") or "", spec.group("prec")
    body = f"%{flags}{width}" + (f".{prec}" if prec is not None else "")
    bits = 64 if length in ("l", "ll", "z", "j", "t") else 32
    if conv in "di":
        return body + "d", int
    if conv in "ouxX":
        return body + conv.replace("u", "d"), lambda v: int(v) & ((1 << bits) - 1)
    if conv == "c":
        return body + "c", lambda v: chr(int(v) & 0xFF)
    if conv == "p":
        return body + "s", lambda v: hex(int(v))
    if conv in "aA":
        return body + "s", lambda v: float(v).hex()
    if conv == "s":
        return body + "s", str
    return body + conv, float  # e E f F g G: C promotes float to double


def _formatter(fmt: str):
    """``fmt`` as a Python ``%`` format and the converters of its arguments, in order; None for a format that
    takes its width or precision from an argument (``%*d``), which is not modelled."""
    out, conv, pos = [], [], 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos : m.start()].replace("%", "%%"))
        pos = m.end()
        if m.group("conv") == "%":
            out.append("%%")
            continue
        if "*" in (m.group("width") or "") + (m.group("prec") or ""):
            return None
        py, fn = _converter(m)
        out.append(py)
        conv.append(fn)
    out.append(fmt[pos:].replace("%", "%%"))
    return "".join(out), conv


def _printf(comp, call):
    fmt_node, *arg_nodes = call.args
    fmt = getattr(fmt_node, "value", None)
    if not isinstance(fmt, str):
        return comp.not_emulated("T.cuda.printf", "a format that is not a string constant")
    parsed = _formatter(fmt)
    if parsed is None:
        return comp.not_emulated("T.cuda.printf", "a width or precision given by an argument (%*d)")
    py, conv = parsed
    if len(conv) != len(arg_nodes):
        return comp.not_emulated(
            "T.cuda.printf", f"the format {fmt!r} takes {len(conv)} argument(s) and the call passes {len(arg_nodes)}"
        )
    args = [comp.expr(a) for a in arg_nodes]

    def f(g):
        vals = [np.broadcast_to(np.asarray(a(g)), (g.L,)) for a in args]
        prog = g.cta.program
        lines = prog.__dict__.setdefault("printed", [])
        for lane in np.flatnonzero(g.active()):
            lines.append(py % tuple(c(v[lane]) for c, v in zip(conv, vals)))
        return np.int32(0)

    return f


def _trap_when_assert_failed(comp, call):
    cond = comp.expr(call.args[0])
    line = comp.line

    def f(g):
        c = np.broadcast_to(np.asarray(cond(g)).astype(bool), (g.L,))
        bad = np.flatnonzero(g.active() & ~c)
        if bad.size:
            from txlab.errors import KernelFault

            prog = g.cta.program
            lane = int(bad[0])
            raise KernelFault(
                "trap",
                f"{prog.kernel_name} on the CPU emulator: the assert at line {line} failed for thread "
                f"{int(g.tid[lane])} of CTA {g.cta_of(lane)} ({bad.size} thread(s) of this group); on a GPU the "
                "launch ends with a trap (cudaErrorAssert) and later CUDA calls in the process fail",
                kernel=prog.kernel_name,
                hint="the assert's condition is false for the values this launch computed: print them with "
                "T.cuda.printf before the assert, or check the inputs",
            )
        return np.int32(0)

    return f


HANDLERS["tirx.cuda.printf"] = _printf
HANDLERS["tirx.cuda.trap_when_assert_failed"] = _trap_when_assert_failed
