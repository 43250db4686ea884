"""The ``%%tirx`` cell magic.

    %load_ext txlab
    %%tirx --arch sm_90a --show resources,cuda,sass
    @T.prim_func
    def scale(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        ...

Every ``@T.prim_func`` defined in the cell is compiled (txlab.compile) and bound in the notebook
under its own name as a :class:`txlab.Compiled`. ``T`` and ``Tx`` (tvm.script.tirx), ``tile``
(tvm.script.tirx.tile), ``tvm`` and the names of ``tvm.backend.cuda.lang`` (Pipeline, TMABar,
ClusterPersistentScheduler2D, ...) are available without imports; the notebook's own names win.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shlex
import time
from collections import OrderedDict

from txlab import ir
from txlab.build import TVM_LOCATION_RE
from txlab.errors import CompileError, TxlabError
from txlab.namespace import lang_names, register_source, tirx_namespace  # noqa: F401  (public here too)

SHOW_CHOICES = ("resources", "script", "cuda", "ptx", "sass", "source")


class MagicArgumentError(TxlabError):
    """A ``%%tirx`` line or its ``--profile``/``--sanitize``/``--emulate`` arguments cannot be used
    (the message names the option and shows the usage)."""


_ArgumentError = MagicArgumentError  # the earlier private name


class MagicHelp(MagicArgumentError):
    """``%%tirx --help``: the magic prints it (the text is the help, not an error)."""


def _usage(parser) -> str:
    """'Usage: %%tirx [--arch ARCH] ...' (argparse's own text starts with 'usage: ')."""
    return "Usage: " + parser.format_usage().strip().removeprefix("usage: ")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would sys.exit(); raise a readable error instead
        raise MagicArgumentError(f"%%tirx: {message}. {_usage(self)}")


class _Once(argparse.Action):
    """An option that may be given once: a repeated ``--arch`` is a mistake, not 'the last wins'."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, f"_seen_{self.dest}", False):
            parser.error(
                f"{option_string} is given twice ({getattr(namespace, self.dest)!r} and {values!r}); give it once"
            )
        setattr(namespace, f"_seen_{self.dest}", True)
        setattr(namespace, self.dest, values)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="%%tirx", add_help=False, allow_abbrev=False)
    p.add_argument("--arch", default=None, action=_Once, help="sm_90a, sm_100a, sm_80, ... (default: the local GPU's)")
    p.add_argument(
        "--show",
        default="resources,script,cuda,ptx,sass",
        action=_Once,
        help=f"comma-separated tabs among {','.join(SHOW_CHOICES)}, or 'none'",
    )
    p.add_argument("--no-cache", action="store_true", help="recompile even if cached")
    p.add_argument("--quiet", action="store_true", help="bind results without displaying them")
    p.add_argument(
        "--emulate",
        default=None,
        metavar="ARGS",
        help="after compiling, run each kernel on the CPU emulator with these arguments "
        '(a Python expression in the notebook\'s namespace, e.g. "a, b, n")',
    )
    p.add_argument(
        "--profile",
        default=None,
        metavar="ARGS",
        help='profile the cell\'s kernel under Nsight Compute with these arguments, e.g. "a, b, n"',
    )
    fm = p.add_mutually_exclusive_group()
    fm.add_argument(
        "--fast-math", dest="fast_math", action="store_true", default=True, help="nvcc --use_fast_math (the default)"
    )
    fm.add_argument("--no-fast-math", dest="fast_math", action="store_false", help="IEEE float math")
    p.add_argument("--maxrregcount", type=int, default=None, help="ptxas register cap per thread")
    p.add_argument(
        "--nvcc-flag",
        dest="nvcc_flags",
        action="append",
        default=[],
        help="an extra nvcc flag (repeat for more; -Xptxas X goes to ptxas)",
    )
    p.add_argument(
        "--sanitize",
        default=None,
        metavar="ARGS",
        help="run compute-sanitizer on the compiled kernel with these arguments (a Python "
        'expression in the notebook\'s names, e.g. "A, B"); binds <kernel>_sanitized',
    )
    p.add_argument(
        "--tools",
        default=None,
        help="with --sanitize: comma-separated compute-sanitizer tools "
        "(default memcheck,racecheck,synccheck,initcheck)",
    )
    return p


def parse_magic_line(line: str):
    """The options of a ``%%tirx`` line; a malformed line is a readable error, not a traceback."""
    try:
        words = shlex.split(line)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise MagicArgumentError(
            f"%%tirx: cannot read the options {line.strip()!r}: {exc} (quote each "
            f"value once, e.g. --show 'resources,sass'). {_usage(_parser())}"
        ) from None
    parser = _parser()
    if "--help" in words or "-h" in words:
        raise MagicHelp(parser.format_help())
    known = [o for a in parser._actions for o in a.option_strings]
    for w in words:
        flag = w.split("=", 1)[0]
        if flag.startswith("--") and flag not in known:
            import difflib

            close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
            if close:
                raise MagicArgumentError(f"%%tirx: unknown option {flag}; did you mean {close[0]}? {_usage(parser)}")
    takes_value = {o for a in parser._actions if a.nargs is None and a.option_strings for o in a.option_strings}
    for w, value in zip(words, words[1:]):
        if w in takes_value and value.startswith("-") and " " not in value and not re.match(r"-[\d.]+$", value):
            # argparse reads such a value as an option ("expected one argument")
            more = f" (repeat {w}=... for more)" if w == "--nvcc-flag" else ""
            raise MagicArgumentError(
                f"%%tirx: {w} {value}: a value that starts with '-' is written with '=': {w}={value}{more}. "
                f"{_usage(parser)}"
            )
    args = parser.parse_args(words)
    for opt in ("emulate", "sanitize"):  # (an empty --profile profiles a kernel that takes no arguments)
        value = getattr(args, opt)
        if value is not None and not value.strip():
            raise MagicArgumentError(
                f"%%tirx --{opt} needs the kernel's arguments, a Python expression in the notebook's names, e.g. "
                f"--{opt} 'a, b, n'"
            )
    if args.tools is not None and args.sanitize is None:
        raise MagicArgumentError("%%tirx --tools chooses compute-sanitizer's tools: give --sanitize 'A, B' with it")
    return args


def profile_cell(results: dict, args_text: str, user_ns: dict):
    """``%%tirx --profile "a, b, n"``: profile the cell's (first) kernel with the arguments the
    expressions evaluate to in the notebook; returns (Compiled, Profile)."""
    from txlab.profiling import profile

    if not results:
        raise MagicArgumentError("%%tirx --profile: the cell defined no @T.prim_func to profile")
    try:
        value = eval(f"({args_text},)" if args_text.strip() else "()", dict(user_ns))  # noqa: S307
    except Exception as exc:  # noqa: BLE001 - the user's own expression
        raise MagicArgumentError(
            f"%%tirx --profile: could not evaluate the arguments {args_text!r}: {type(exc).__name__}: {exc}"
        ) from None
    compiled = next(iter(results.values()))
    return compiled, profile(compiled, *value)


def _is_tvmscript_error(exc: BaseException) -> bool:
    """TVMScript's parser reports problems in a prim_func as a DiagnosticError with a location."""
    return type(exc).__name__ == "DiagnosticError" or bool(re.search(r"--> .+?:\d+:\d+", str(exc)))


def sanitize_cell(results: dict, expr: str, user_ns: dict, tools: str | None = None) -> dict:
    """``%%tirx --sanitize "A, B"``: the arguments evaluated in the notebook's names, then
    :func:`txlab.sanitize` on each kernel the cell compiled. Returns ``{name: SanitizerReport}``
    (also bound as ``<name>_sanitized``)."""
    from txlab.sanitizer import TOOLS, sanitize

    try:
        value = eval(expr, dict(user_ns))  # noqa: S307 - the user's own notebook expression
    except Exception as exc:  # noqa: BLE001
        raise MagicArgumentError(
            f"%%tirx --sanitize {expr!r}: evaluating the arguments failed: {type(exc).__name__}: {exc}"
        ) from None
    args = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    chosen = TOOLS
    if tools:
        chosen = tuple(t.strip() for t in tools.split(",") if t.strip())
        bad = [t for t in chosen if t not in TOOLS]
        if bad:
            raise MagicArgumentError(f"%%tirx: unknown --tools value(s) {bad}; choose from {','.join(TOOLS)}")
    out = {}
    for name, c in results.items():
        out[name] = sanitize(c, *args, tools=chosen)
        user_ns[f"{name}_sanitized"] = out[name]
    return out


def emulate_cell(results: dict, expr: str, user_ns: dict) -> dict:
    """``%%tirx --emulate "A, B"``: the arguments evaluated in the notebook's names, then
    :func:`txlab.emulate` on each kernel the cell compiled. Returns ``{name: result}``, also bound
    as ``<name>_emulated`` and, for the cell's last kernel, ``_tirx_emulation`` (as ``--profile``
    binds ``_profile``)."""
    from txlab.emulator import emulate

    try:
        value = eval(f"({expr},)", dict(user_ns))  # noqa: S307 - the user's own notebook expression
    except Exception as exc:  # noqa: BLE001 - whatever the user's expression raises is reported as the argument error
        raise MagicArgumentError(
            f"%%tirx --emulate {expr!r}: evaluating the arguments failed: {type(exc).__name__}: {exc}"
        ) from None
    out = {}
    for name, c in results.items():
        out[name] = emulate(c, *value)
        user_ns[f"{name}_emulated"] = out[name]
        user_ns["_tirx_emulation"] = out[name]
    return out


_BINDING_CALL = re.compile(r"\b(thread_id|cta_id|cluster_id|warp_id|lane_id|warpgroup_id)\s*\(")


def _not_well_formed(exc, lines: list, ln: int) -> tuple:
    """``(message, line, hint)`` for TVMScript's "Program is not well-formed" (its own advice is about
    turning the check off): the failed check underneath, at the statement it is about where that can be told."""
    reason = None
    c = exc
    while c is not None:  # the innermost "Check failed: (...) is false: why"
        for text_line in str(c).splitlines():
            if "Check failed" in text_line:
                reason = re.split(r"is false:\s*|\)\s*:\s*", text_line, maxsplit=1)[-1].strip() or reason
            elif "TIRxError:" in text_line:
                reason = text_line.split("TIRxError:", 1)[1].strip() or reason
        c = c.__cause__ or c.__context__
    if reason is None:
        return "Program is not well-formed", ln, None
    if "scope binding" in reason:
        seen: dict = {}
        for i, text in enumerate(lines, 1):
            for m in _BINDING_CALL.finditer(text):
                seen.setdefault(m.group(1), []).append(i)
        name, again = next(((k, v) for k, v in seen.items() if len(v) > 1), (None, None))
        if again:
            first = lines[again[0] - 1].strip()
            example = "bx, by = Tx.cta_id([8, 4])" if name == "cta_id" else f"tx, ty = Tx.{name}([32, 16])"
            return (
                f"this launch index is bound twice with different extents ({reason})",
                again[1],
                f"every Tx.{name} call binds the same launch dimensions from x on, so this one and line "
                f"{again[0]} ({first}) both claim x; declare them once with all their dimensions: {example}",
            )
        return f"a launch index is bound inconsistently ({reason})", ln, None
    m = re.search(r"non-positive (thread|block|cta|cluster)\w* count (-?\d+)", reason)
    if m:
        calls = [i for i, text in enumerate(lines, 1) if _BINDING_CALL.search(text)]
        at = next((i for i in calls if re.search(rf"\[\s*{m.group(2)}\s*[,\]]", lines[i - 1])), ln)
        return (
            f"a launch extent of {m.group(2)} ({reason})",
            at,
            "every extent of Tx.cta_id / Tx.thread_id must be at least 1",
        )
    return f"not well-formed: {reason}", ln, None


def _annotation_hint(message: str, source_line: str | None) -> str | None:
    """A parameter annotated with a Python type (``n: int``) or a TIRx alias that is no dtype (``n: Tx.int``)."""
    if "ir_builder.tirx.Arg" not in message:
        return None
    ok = re.compile(r"(?:\w+\.)?(?:u?int\d+|float\d+|bfloat16|bool|handle)$")
    found = [m for m in re.finditer(r"\b(\w+)\s*:\s*([\w.]+)\s*[,)]", source_line or "") if not ok.match(m.group(2))]
    what = f"{found[0].group(1)}: {found[0].group(2)}" if found else "a parameter"
    return (
        f"{what}: annotate a scalar parameter with a TIRx dtype, e.g. n: Tx.int32 or x: Tx.float32 (a Python int or "
        'float, or Tx.int, is not one); a buffer with Tx.Buffer((n,), "float32") or Tx.handle'
    )


#: the dtypes a buffer or scalar is declared with (what a misspelt one is matched against)
_DTYPES = (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float4_e2m1fn", "handle",
)  # fmt: skip


#: names other frameworks use (C, CUDA, numpy, torch, short forms) -> the TIRx dtype
_DTYPE_ALIASES = {
    "half": "float16", "fp16": "float16", "f16": "float16", "bf16": "bfloat16", "float": "float32",
    "fp32": "float32", "f32": "float32", "single": "float32", "double": "float64", "fp64": "float64",
    "f64": "float64", "int": "int32", "i32": "int32", "long": "int64", "i64": "int64", "uint": "uint32",
    "unsigned": "uint32", "u32": "uint32", "char": "int8", "i8": "int8", "u8": "uint8", "byte": "uint8",
    "short": "int16", "i16": "int16", "u16": "uint16", "u64": "uint64", "boolean": "bool", "fp8": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2",
    "tf32": "float32",
}  # fmt: skip


def _dtype_hint(word: str) -> str | None:
    """``did you mean`` for a dtype TIRx does not know: another framework's name for one it does (``half``,
    ``fp32``, ``double``), else the closest spellings."""
    import difflib

    alias = _DTYPE_ALIASES.get(word.lower().removeprefix("torch.").removeprefix("np."))
    if alias is not None:
        return f"unknown dtype {word!r}: TIRx spells it {alias!r}"
    close = difflib.get_close_matches(word, [d for d in _DTYPES if d != "handle"], n=2, cutoff=0.6)
    if close:
        return f"unknown dtype {word!r}: did you mean {' or '.join(repr(c) for c in close)}?"
    return None


def _mistake_hint(message: str, source_line: str | None) -> str | None:
    """The fix for first-hour mistakes whose TVM message names an FFI signature, not the mistake: an extent given as
    an int (``T.cta_id(1)``), a multi-dimensional buffer indexed with too few indices (``A[i]`` of a 2-d ``A``: a
    region, not an element), a misspelt dtype (``"flaot32"``)."""

    line = source_line or ""
    if re.search(r"\b(CtaId|ThreadId|WarpId|LaneId|ClusterId)\(", message) and "but got `int`" in message:
        m = re.search(r"\b(\w+)\.(cta_id|thread_id|warp_id|lane_id|cluster_id)\(\s*([^\[\])][^)]*)\)", line)
        call = f"{m.group(1)}.{m.group(2)}([{m.group(3).strip()}])" if m else "T.cta_id([n])"
        return f"launch extents are a list, one per dimension: write {call}"
    if "Expected `ir.Expr` but got `ir.TensorRegion`" in message:
        return (
            "a buffer indexed with fewer indices than it has dimensions is a region, not an element: index every "
            "dimension (A[i, j] for a 2-d A), or flatten the buffer's shape"
        )
    bad = re.search(r"unknown dtype `([^`]+)`", message)
    words = [bad.group(1)] if bad else []
    if not words and "Unexpected type for TIR Arg: ffi.String" in message:  # a Buffer annotation's dtype
        words = [w for w in re.findall(r"[\"']([A-Za-z][\w]*)[\"']", line) if w not in _DTYPES]
    for w in words:
        hint = _dtype_hint(w)
        if hint:
            return hint
    return None


def _buffer_hint(message: str, source_line: str | None, source: str) -> str | None:
    """The fix when a buffer is used without its declaration: a ``Tx.handle`` parameter indexed as if it were a
    buffer (TVM: "Expected `ir.Var` but got `ir.Var`", "PointerType does not support subscript"), a buffer whose
    ``match_buffer`` line is missing ("Undefined variable: B" next to a ``B_ptr: Tx.handle``), or a buffer indexed
    with a number of indices other than its dimensions."""
    line = source_line or ""
    handles = re.findall(r"\b(\w+)\s*:\s*\w+\.handle\b", source)
    undefined = re.search(r"Undefined variable: (\w+)", message)
    if undefined:
        name = undefined.group(1)
        for h in handles:
            if h.lower() in (f"{name}_ptr".lower(), f"{name}_handle".lower(), f"{name}_h".lower(), f"p{name}".lower()):
                return (
                    f"{name} is not declared: {h} is its handle, so declare the buffer after the signature, "
                    f'{name} = Tx.match_buffer({h}, (n,), "float32") with its shape and dtype'
                )
        return None
    if ("Expected `ir.Var` but got `ir.Var`" in message and "BufferStore" in message) or (
        "PointerType does not support subscript" in message
    ):
        used = [h for h in handles if re.search(rf"\b{re.escape(h)}\s*\[", line)]
        name = used[0] if used else "the handle"
        buf = name[: -len("_ptr")] if name.endswith("_ptr") else f"{name}_buf" if used else "B"
        return (
            f"{name} is a Tx.handle (a pointer), not a buffer: declare {buf} = Tx.match_buffer({name}, (n,), "
            f'"float32") with its shape and dtype, and index {buf}[...]'
        )
    dims = re.search(r"BufferVar (\w+) is (\d+)-dimensional, cannot be indexed with the (\d+)-dimensional", message)
    if dims:
        name, have, used = dims.groups()
        return (
            f"{name} has {have} dimension(s) and is indexed with {used}: index each of its dimensions once "
            f"({name}[i] for 1, {name}[i, j] for 2), or declare it with {used} dimensions"
        )
    return None


def _did_you_mean(cause, source_line: str | None) -> str | None:
    """For a misspelt API name (``T.cuda.cta_summ``: an AttributeError on the namespace object), the names it
    has that are closest, spelt as the user's line spells the object."""
    import difflib

    name, obj = getattr(cause, "name", None), getattr(cause, "obj", None)
    if not isinstance(cause, AttributeError) or not name or obj is None:
        return None
    close = difflib.get_close_matches(name, [n for n in dir(obj) if not n.startswith("_")], n=3, cutoff=0.75)
    if not close:
        return None
    m = re.search(rf"([A-Za-z_][\w.]*)\.{re.escape(name)}\b", source_line or "")
    prefix = f"{m.group(1)}." if m else ""
    return "did you mean " + " or ".join(f"{prefix}{c}" for c in close) + "?"


#: TVM's words that name its internals (an FFI signature, a C++ check), not the user's mistake
_TVM_INTERNALS = re.compile(
    r"InternalError|Check failed|Mismatched type on argument|Expected `|ffi\.|PointerType does not"
)


def _mistake_fix(message: str, source_line: str | None, source: str) -> str | None:
    """What a first-hour mistake TVM reports in its own terms is, and its fix (a misspelt dtype, an extent given as
    an int, a Python type as an annotation, a handle indexed as a buffer, ...), or None."""
    return (
        _annotation_hint(message, source_line)
        or _mistake_hint(message, source_line)
        or _buffer_hint(message, source_line, source)
    )


def _parse_error(exc: BaseException, filename: str, source: str) -> CompileError:
    lines = source.splitlines()
    if isinstance(exc, SyntaxError):
        ln = exc.lineno
        return CompileError(
            "parse",
            f"Python syntax error: {exc.msg}",
            lineno=ln,
            source_line=lines[ln - 1] if ln and ln <= len(lines) else None,
            filename=filename,
        )
    text = str(exc)
    m = TVM_LOCATION_RE.search(text)
    msg_lines = [l for l in text.splitlines() if l.strip() and not l.strip().startswith("-->")]
    msg = msg_lines[0] if msg_lines else type(exc).__name__
    msg = re.sub(r"^error:\s*", "", msg)
    cause = exc.__cause__ or exc.__context__  # the Python error TVMScript's parser turned into a diagnostic
    if cause is not None and str(cause) and msg.startswith(str(cause).splitlines()[0]):
        msg = f"{type(cause).__name__}: {msg}"
    if m:
        ln = int(m.group("line"))
        hint = None
        if msg.startswith("Program is not well-formed"):
            msg, ln, hint = _not_well_formed(exc, lines, ln)
        source_line = lines[ln - 1] if ln <= len(lines) else None
        err = CompileError("parse", msg, lineno=ln, filename=filename, source_line=source_line)
        fix = _mistake_fix(msg, source_line, source)
        if hint is None and fix is not None and _TVM_INTERNALS.search(msg):
            # TVM's text names an FFI signature or a C++ check, not the mistake: the fix is the message, and
            # TVM's own words stay in ``detail``
            err.message, err.detail, err.hint = fix, msg, None
        else:
            err.hint = hint or _did_you_mean(cause, source_line) or fix or err.hint
        err.args = (err._text(),)  # str(err) (a terminal, a log) carries the hint too
        return err
    # A Python error while executing the cell (outside TVMScript): find the cell's frame.
    ln = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            ln = tb.tb_lineno
        tb = tb.tb_next
    return CompileError(
        "parse",
        f"{type(exc).__name__}: {exc}",
        lineno=ln,
        filename=filename,
        source_line=lines[ln - 1] if ln and ln <= len(lines) else None,
    )


# Re-running an unchanged cell: TVMScript parsing costs 20-200 ms (it inspects the call stack), so
# a cell whose text, arch and referenced notebook values are all unchanged is served from memory.
_MEMO: "OrderedDict[str, dict]" = OrderedDict()
_MEMO_SIZE = 64


def forget_cells() -> None:
    """Forget the unchanged-cell memo: the next run of every ``%%tirx`` cell parses it again."""
    _MEMO.clear()


_SIMPLE = (int, float, complex, str, bytes, bool, type(None))


def _referenced_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _referenced_names(const)
    return names


def _defined_names(code) -> set[str]:
    """Names the cell itself binds at top level (its kernels, helpers): not inputs of the cell."""
    import dis

    return {
        ins.argval for ins in dis.get_instructions(code) if ins.opname in ("STORE_NAME", "STORE_GLOBAL", "IMPORT_NAME")
    }


#: packages whose modules, classes and functions a cell may reference and still be memoised by identity
_LIBRARIES = frozenset({"tvm", "tvm_ffi", "txlab", "numpy", "ml_dtypes", "torch", "builtins"})


def _library(value) -> bool:
    """Whether ``value`` (a module, class or function) comes from a library or the standard library, not from the
    notebook or the user's own modules (whose attributes, or the globals a function reads, may change between runs
    of an unchanged cell)."""
    import sys

    name = value.__name__ if isinstance(value, type(sys)) else getattr(value, "__module__", None)
    top = (name or "").split(".")[0]
    return top in _LIBRARIES or top in sys.stdlib_module_names


def _memo_key(source: str, code, user_ns: dict, arch, use_cache: bool, options=None) -> str | None:
    """A key over everything the cell's result depends on, or None when that can't be known
    (a referenced notebook value that is mutable, or a module, class or function of the notebook's or the
    user's own: ``Cfg.N`` may change; the compile cache still serves an unchanged kernel)."""
    import types

    parts = [source, str(arch), str(use_cache), repr(sorted((options or {}).items()))]
    own = _defined_names(code)
    for name in sorted(_referenced_names(code) - own):
        if name not in user_ns:
            continue
        value = user_ns[name]
        if isinstance(value, _SIMPLE) or (isinstance(value, tuple) and all(isinstance(v, _SIMPLE) for v in value)):
            parts.append(f"{name}={value!r}:{type(value).__name__}")
        elif isinstance(value, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)) and _library(
            value
        ):
            parts.append(f"{name}@{id(value)}")
        else:  # the notebook's own class, module or function: its attributes or the globals it reads may change
            return None
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def run_cell(source: str, user_ns: dict, *, arch=None, use_cache=True, **options) -> dict:
    """Execute a %%tirx cell's source; compile each prim_func it defines. Returns {name: Compiled}
    and updates ``user_ns`` with everything the cell defined."""
    __tracebackhide__ = True  # IPython shows the cell's own frames, not these
    import dataclasses

    import tvm

    from txlab.compiler import Compiled
    from txlab.compiler import compile as tx_compile

    t0 = time.perf_counter()
    filename = register_source(source)
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        raise _parse_error(exc, filename, source) from None
    key = _memo_key(source, code, user_ns, arch, use_cache, options) if use_cache else None
    if key is not None and key in _MEMO:
        _MEMO.move_to_end(key)
        elapsed = time.perf_counter() - t0
        bound = {
            name: dataclasses.replace(v, cache_hit=True, compile_seconds=elapsed) if isinstance(v, Compiled) else v
            for name, v in _MEMO[key].items()
        }
        user_ns.update(bound)
        _remember_bound(user_ns, bound)
        return {name: v for name, v in bound.items() if isinstance(v, Compiled)}
    glb = tirx_namespace()
    from tvm.script import ir as I  # noqa: N812 - TVMScript's own spelling, as the script tab prints it

    glb["I"] = I  # (@I.ir_module, as T and Tx; the notebook's own names win)
    glb.update(user_ns)
    before = dict(glb)
    try:
        exec(code, glb)  # noqa: S102 - executing the user's own cell is the point
    except TxlabError:
        raise
    except Exception as exc:
        if _is_tvmscript_error(exc):
            raise _parse_error(exc, filename, source) from None
        # A Python error of the cell's own code (outside TVMScript) is that error, with the cell's
        # lines in its traceback (they are in linecache under the cell's file name).
        raise
    new = {k: v for k, v in glb.items() if k not in before or before[k] is not v}
    compiled = {}
    sets = {}
    for name, value in new.items():
        funcs = ir.kernel_names(value) if isinstance(value, tvm.IRModule) else []
        if len(funcs) > 1:  # a module of several kernels: each compiled on its own (with what it calls), as a set
            each = {
                f: tx_compile(ir.entry_module(value, f), arch=arch, name=f, use_cache=use_cache, **options)
                for f in ir.entry_kernels(value)
            }
            compiled.update({f"{name}.{f}": c for f, c in each.items()})
            sets[name] = KernelSet(name, each, module=value)
        elif isinstance(value, (tvm.tirx.PrimFunc, tvm.IRModule)):
            compiled[name] = tx_compile(value, arch=arch, name=name, use_cache=use_cache, **options)
    bound = {
        name: sets.get(name) or compiled.get(name, value) for name, value in new.items() if not name.startswith("__")
    }
    user_ns.update(bound)
    _remember_bound(user_ns, bound)
    if key is not None:
        _MEMO[key] = bound
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return compiled


# (id of a notebook namespace, name) -> (id of the Compiled or KernelSet bound there, when it was compiled)
_BOUND_AT: dict = {}


def _remember_bound(user_ns: dict, bound: dict) -> None:
    stamp = time.strftime("%H:%M:%S")
    for name, value in bound.items():
        if _is_kernel(value):
            _BOUND_AT[(id(user_ns), name)] = (id(value), stamp)


def _is_kernel(value) -> bool:
    return isinstance(value, KernelSet) or type(value).__name__ == "Compiled"


def _cell_definitions(source: str) -> list:
    """The names a cell's top-level ``def`` / ``class`` statements bind (also for a cell that does not parse)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return re.findall(r"^(?:def|class)\s+(\w+)", source, re.M)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def stale_kernels_note(source: str, user_ns: dict) -> str | None:
    """For a ``%%tirx`` cell that failed: which of its kernels the notebook still holds from an earlier run (calls,
    ``txlab.check`` and ``txlab.bench`` run that build until the cell compiles), or None."""
    held = []
    for name in dict.fromkeys(_cell_definitions(source)):
        value = user_ns.get(name)
        if not _is_kernel(value):
            continue
        seen = _BOUND_AT.get((id(user_ns), name))
        when = f"compiled at {seen[1]}" if seen is not None and seen[0] == id(value) else "compiled earlier"
        held.append(f"{name} still holds the version {when}")
    if not held:
        return None
    return (
        "; ".join(held)
        + ": calls, txlab.check and txlab.bench run that version until this cell compiles (nothing was rebound)"
    )


def _add_note(exc: BaseException, note: str) -> None:
    """Put ``note`` on the error of a failed cell: in its text (a terminal, a log) and, for a txlab error, where
    the notebook's error box shows it (``txlab_note``)."""
    if isinstance(exc, TxlabError):
        exc.txlab_note = note
        exc.args = (f"{exc}\n{note}",)
    else:
        exc.add_note(note)


class KernelSet(dict):
    """What a cell binds for an ``@I.ir_module`` of several kernels: ``{function name: Compiled}``, each also an
    attribute (``Mod.first(a, b)``, ``Mod["second"]``); calling the set itself says to pick one. Each kernel is
    built on its own (with the functions it calls: :func:`txlab.ir.entry_module`), so its resources, launch and
    SASS are its own; a ``private=True`` helper another kernel calls is not one of the set."""

    def __init__(self, name: str, kernels: dict, module=None):
        super().__init__(kernels)
        self.name = name
        self._module = module

    @property
    def ir_module(self):
        """The whole module (what txlab.compile, txlab.check and the emulator read: they ask which kernel)."""
        return self._module if self._module is not None else next(iter(self.values())).ir_module

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            return self[attr]
        except KeyError:
            raise AttributeError(f"{self.name} holds the kernels {', '.join(self)}, not {attr!r}") from None

    def __call__(self, *args, **kwargs):
        from txlab.errors import InputError

        first = next(iter(self))
        raise InputError(
            f"{self.name} is a module of {len(self)} kernels ({', '.join(self)}): call one, e.g. {self.name}.{first}(...)"
        )

    def __repr__(self):
        return f"KernelSet({self.name}: {', '.join(f'{k}={v.name}' for k, v in self.items())})"


def is_tvm_diagnostic(exc: BaseException) -> bool:
    """A TVMScript parse error as it reaches a notebook cell (``tvm.error.DiagnosticError``), told by name: TVM is
    imported lazily, so its class may not exist yet when the extension loads."""
    return any(c.__name__ == "DiagnosticError" and c.__module__.startswith("tvm") for c in type(exc).__mro__)


def diagnostic_text(exc: BaseException) -> str:
    """A TVMScript diagnostic as a cell shows it: TVM's own text (the message, the file, line and column, the line
    marked) without the ~200 lines of the parser's chained traceback, then txlab's hint where it has one (a
    misspelt API name or dtype, an extent given as an int, ...), as ``%%tirx`` gives it."""
    import linecache

    text = f"{type(exc).__name__}: {exc}"
    m = TVM_LOCATION_RE.search(str(exc))
    if m is None:
        return text
    filename = m.group("file")
    source = "".join(linecache.getlines(filename))
    if not source:
        return text
    try:
        err = _parse_error(exc, filename, source)
    except Exception:  # noqa: BLE001 - a hint is best effort; TVM's text is shown anyway
        return text
    hint = err.hint or (err.message if err.detail else None)  # (a fix that became the message: TVM said internals)
    return text + (f"\nhint: {hint}" if hint else "")


def register(ipython) -> None:
    from IPython.core.magic import register_cell_magic
    from IPython.display import HTML, display

    def show_compile_error(shell, etype, evalue, tb, tb_offset=None):
        # A txlab error is its message, not a traceback: the HTML summary for the notebook (its plain text for a
        # terminal), and an error output of one line, so Run All stops here and nbval / nbconvert --execute see
        # the failure like any other error, without the message twice.
        import html

        from txlab.display import html_of

        shown = html_of(evalue)
        if shown is None:
            shell._showtraceback(etype, evalue, [f"{etype.__name__}: {evalue}"])
            return None
        note = getattr(evalue, "txlab_note", None)
        if note:
            shown += f'<div class="txlab-warn">{html.escape(note)}</div>'
        display({"text/html": shown, "text/plain": f"{etype.__name__}: {evalue}"}, raw=True)
        first = str(evalue).splitlines()[0] if str(evalue) else ""
        shell._showtraceback(etype, evalue, [f"{etype.__name__}: {first} (details above)"])
        return None

    def show_error(shell, etype, evalue, tb, tb_offset=None):
        if isinstance(evalue, TxlabError) or is_tvm_diagnostic(evalue):
            import sys

            sys.last_type, sys.last_value, sys.last_traceback = etype, evalue, tb  # (%debug, as IPython keeps them)
        if isinstance(evalue, TxlabError):
            return show_compile_error(shell, etype, evalue, tb, tb_offset)
        if is_tvm_diagnostic(evalue):  # a TVMScript error in a plain cell: the diagnostic, not the parser's frames
            shell._showtraceback(etype, evalue, [diagnostic_text(evalue)])
            return None
        shell.showtraceback((etype, evalue, tb), tb_offset=tb_offset)  # anything else: as IPython shows it
        return None

    # (DiagnosticError is a RuntimeError; its class is looked up by name because TVM is imported lazily)
    ipython.set_custom_exc((TxlabError, RuntimeError), show_error)

    @register_cell_magic("tirx")
    def tirx(line, cell):
        __tracebackhide__ = True  # IPython shows the cell's own frames, not the magic's
        try:
            args = parse_magic_line(line)
        except MagicHelp as h:
            print(h)
            return
        show = [] if args.show.strip() in ("none", "") else [s.strip() for s in args.show.split(",") if s.strip()]
        bad = [s for s in show if s not in SHOW_CHOICES]
        if bad:
            raise MagicArgumentError(f"%%tirx: unknown --show value(s) {bad}; choose from {','.join(SHOW_CHOICES)}")
        try:
            results = run_cell(
                cell,
                ipython.user_ns,
                arch=args.arch,
                use_cache=not args.no_cache,
                fast_math=args.fast_math,
                maxrregcount=args.maxrregcount,
                nvcc_flags=args.nvcc_flags,
            )
        except Exception as exc:
            note = stale_kernels_note(cell, ipython.user_ns)
            if note:
                _add_note(exc, note)
            raise
        if not results:
            print(f"%%tirx: the cell defined no @{ir.tirx_alias(cell)}.prim_func (nothing compiled)")
            return
        reports = sanitize_cell(results, args.sanitize, ipython.user_ns, args.tools) if args.sanitize else {}
        if args.emulate:
            for run in emulate_cell(results, args.emulate, ipython.user_ns).values():
                print(run.summary())
        if args.profile is not None:
            compiled, prof = profile_cell(results, args.profile, ipython.user_ns)
            ipython.user_ns["_profile"] = prof
            if args.quiet:
                return
            try:
                from txlab.views import SourceView
            except ImportError:
                SourceView = None
            if SourceView is not None:
                display(SourceView(compiled, profile=prof))
            from txlab.display import html_of

            display(HTML(html_of(prof)))
            return
        if args.quiet or not show:
            import sys

            for c in results.values():  # what keeps a kernel from launching is said even when nothing is shown
                for w in c.warnings:
                    print(f"%%tirx warning: {w}", file=sys.stderr)
            for r in reports.values():
                display(r)
            return
        from txlab.display import compiled_html

        tabs = [s for s in show if s != "source"]
        for c in results.values():
            if tabs:
                display(HTML(compiled_html(c, show=tabs)))
            if "source" in show:
                from txlab.views.source import SourceView

                display(SourceView(c))
        for r in reports.values():
            display(r)

    from IPython.core.magic import register_line_magic

    @register_line_magic("tirx")
    def tirx_line(line):
        """``%tirx --help``: the options of the ``%%tirx`` cell magic (``%%tirx`` itself needs a cell body)."""
        words = line.split()
        if not words or "--help" in words or "-h" in words:
            print(_parser().format_help())
            return
        raise MagicArgumentError(
            f"%%tirx is a cell magic: put '%%tirx {line.strip()}' on the first line of a cell, with the kernel "
            "below it (%tirx --help lists the options)"
        )

    @register_line_magic("tirx_help")
    def tirx_help(line):
        """``%tirx_help NAME [--no-compile]``: ``txlab.api.help(NAME)`` -- signature, arch, the catalogue
        example's lines using NAME and the PTX/SASS they lower to (``--no-compile``: skip nvcc)."""
        from txlab.api import help as api_help

        words = line.split()
        names = [w for w in words if not w.startswith("--")]
        flags = [w for w in words if w.startswith("--")]
        if len(names) != 1 or set(flags) - {"--no-compile"}:
            raise MagicArgumentError("usage: %tirx_help NAME [--no-compile], e.g. %tirx_help __shfl_xor_sync")
        return api_help(names[0], compile="--no-compile" not in flags)
