"""Command line: ``txlab doctor`` and ``txlab compile FILE.py``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="txlab", description="txlab command line", allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    doc = sub.add_parser("doctor", help="versions, GPU, and which features work here", allow_abbrev=False)
    doc.add_argument("--json", action="store_true", help="print the report as JSON")
    comp = sub.add_parser("compile", help="compile every @T.prim_func in a Python file", allow_abbrev=False)
    comp.add_argument("file")
    comp.add_argument("--arch", default=None)
    comp.add_argument("--emit", default="resources", help=f"{','.join(EMIT_CHOICES)} (printed)")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        from txlab.doctor import format_report, report

        r = report()
        print(json.dumps(r, indent=1, default=str) if args.json else format_report(r))
        return 0
    if args.command == "compile":
        return _compile_file(args)
    return 2


EMIT_CHOICES = ("resources", "cuda", "ptx", "sass")


def _compile_file(args) -> int:
    import traceback

    from txlab.errors import TxlabError
    from txlab.files import FileReadError, read_bytes_capped
    from txlab.magic import run_cell

    emit = [w.strip() for w in args.emit.split(",") if w.strip()]
    bad = [w for w in emit if w not in EMIT_CHOICES]
    if bad or not emit:
        print(
            f"txlab compile: unknown --emit value(s) {bad or [args.emit]}; choose from {','.join(EMIT_CHOICES)}",
            file=sys.stderr,
        )
        return 2
    try:
        source = read_bytes_capped(args.file, 16 << 20, "source file").decode("utf-8")
    except FileReadError as exc:
        print(f"txlab compile: {exc}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as exc:
        print(f"txlab compile: {args.file} is not UTF-8 text ({exc})", file=sys.stderr)
        return 1
    if not source.strip():
        print(f"txlab compile: {args.file} is empty: nothing to compile", file=sys.stderr)
        return 1
    try:
        with contextlib.redirect_stdout(sys.stderr), _as_module(args.file) as names:
            # (notices and progress: stdout carries only what --emit asks)
            results = run_cell(source, names, arch=args.arch)
    except TxlabError as exc:
        if str(getattr(exc, "filename", None) or "").startswith("<tirx-cell"):  # the file's text, run as a cell
            exc.filename = args.file
            exc.args = (exc._text(),)
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the file's own Python failed: say where, as Python would
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<tirx-cell")]
        where = f" at line {frames[-1].lineno} of {args.file}" if frames else f" in {args.file}"
        print(f"{type(exc).__name__}{where}: {exc}", file=sys.stderr)
        return 1
    if not results:
        from txlab.ir import tirx_alias

        t = tirx_alias(source)
        print(f"txlab compile: {args.file} defines no @{t}.prim_func: nothing was compiled", file=sys.stderr)
        return 1
    for name, c in results.items():
        # one text to emit (--emit ptx > k.ptx): stdout is that text alone, the kernel's name goes to stderr
        print(repr(c), file=sys.stdout if "resources" in emit or len(results) > 1 else sys.stderr)
        for what in emit:
            if what == "resources":
                for k, r in c.resources.items():
                    print(f"  {k}: {r}  launch {c.launch.get(k)}")
            elif what in ("cuda", "ptx", "sass"):
                print({"cuda": c.cuda_source, "ptx": c.ptx, "sass": c.sass}[what])
    return 0


@contextlib.contextmanager
def _as_module(file: str):
    """The names a file starts with when ``txlab compile`` runs it, as ``python FILE.py`` would have them, less
    ``__main__``: its directory first on ``sys.path`` (a sibling module imports), ``__file__``, and ``__name__``
    the file's module name (so an ``if __name__ == "__main__":`` block does not run), registered in
    ``sys.modules`` while the file runs (TVMScript looks an ``@I.ir_module`` class's module up there)."""
    import types

    path = os.path.abspath(file)
    folder = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "__txlab_compile__"
    sys.path.insert(0, folder)
    registered = name not in sys.modules
    if registered:
        sys.modules[name] = types.ModuleType(name)  # (no __file__: TVMScript reads the source the cell registered)
    try:
        yield {"__name__": name, "__file__": path}
    finally:
        if registered:
            sys.modules.pop(name, None)
        try:
            sys.path.remove(folder)
        except ValueError:
            pass


def run(argv=None) -> int:
    """:func:`main`, quiet when the reader of stdout goes away (``txlab compile k.py --emit sass | head``), as Unix
    tools are: no BrokenPipeError traceback."""
    try:
        rc = main(argv)
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's own flush at exit
        return 1


if __name__ == "__main__":
    sys.exit(run())
