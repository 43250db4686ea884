"""Command line: ``txlab doctor`` and ``txlab compile FILE.py``."""
from __future__ import annotations

import argparse
import json
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="txlab", description="txlab command line")
    sub = parser.add_subparsers(dest="command", required=True)
    doc = sub.add_parser("doctor", help="versions, GPU, and which features work here")
    doc.add_argument("--json", action="store_true", help="print the report as JSON")
    comp = sub.add_parser("compile", help="compile every @T.prim_func in a Python file")
    comp.add_argument("file")
    comp.add_argument("--arch", default=None)
    comp.add_argument("--emit", default="resources", help="resources,cuda,ptx,sass (printed)")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        from txlab.doctor import format_report, report

        r = report()
        print(json.dumps(r, indent=1, default=str) if args.json else format_report(r))
        return 0
    if args.command == "compile":
        return _compile_file(args)
    return 2


def _compile_file(args) -> int:
    from pathlib import Path

    from txlab.errors import TxlabError
    from txlab.magic import run_cell

    source = Path(args.file).read_text()
    try:
        results = run_cell(source, {}, arch=args.arch)
    except TxlabError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for name, c in results.items():
        print(repr(c))
        for what in args.emit.split(","):
            if what == "resources":
                for k, r in c.resources.items():
                    print(f"  {k}: {r}  launch {c.launch.get(k)}")
            elif what in ("cuda", "ptx", "sass"):
                print({"cuda": c.cuda_source, "ptx": c.ptx, "sass": c.sass}[what])
    return 0


if __name__ == "__main__":
    sys.exit(main())
