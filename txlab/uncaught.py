"""A TVMScript error that reaches the top of a script is printed, not swallowed.

apache-tvm 0.27 replaces ``sys.excepthook`` when ``tvm`` is imported: for a ``DiagnosticError`` (what the
TVMScript parser raises for a typo in an API name, a wrong argument, a type mismatch) it prints only
``note: run with `TVM_BACKTRACE=1` environment variable to display a backtrace.`` and drops the error
itself, which names the file, the line and what is wrong. ``import txlab`` wraps TVM's hook (now, or
right after ``tvm`` is imported, whichever comes later) so that the error's text is printed before TVM's
note. Notebooks do not use this hook: IPython shows exceptions itself, and the txlab extension
(``txlab.magic``) shows a TVMScript error there as its diagnostic and txlab's hint. ``TVM_BACKTRACE=1`` and a
test run are left alone too: TVM's hook prints the traceback there.
"""

from __future__ import annotations

import sys


def _wrap(hook):
    if getattr(hook, "_txlab_uncaught", False):
        return hook

    def excepthook(exctype, value, tb):
        tvm = sys.modules.get("tvm")
        error = getattr(tvm, "error", None)
        diagnostic = getattr(error, "DiagnosticError", None)
        quiet = getattr(tvm, "_should_print_backtrace", None)
        if diagnostic is not None and isinstance(exctype, type) and issubclass(exctype, diagnostic):
            if quiet is None or not quiet():
                print(f"{exctype.__name__}: {value}", file=sys.stderr)
        hook(exctype, value, tb)

    excepthook._txlab_uncaught = True
    return excepthook


class _AfterTvm:
    """A meta-path finder that lets ``tvm`` import as usual, then wraps the hook its import installed."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tvm":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec("tvm", path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            try:
                run(module)
            finally:
                _remove_finder()
                sys.excepthook = _wrap(sys.excepthook)

        spec.loader.exec_module = exec_module
        return spec


def _remove_finder() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AfterTvm)]


def install() -> bool:
    """Wrap TVM's excepthook now if ``tvm`` is imported, else once it is (idempotent). True when wrapped now."""
    if "tvm" in sys.modules:
        sys.excepthook = _wrap(sys.excepthook)
        return True
    if not any(isinstance(f, _AfterTvm) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTvm())
    return False
