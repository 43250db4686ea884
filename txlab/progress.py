"""Progress for long work, in the notebook (an ipywidgets bar) and on the command line (stderr).

Work shorter than ``delay_s`` shows nothing, so warm paths stay quiet. The notebook bar is the
view layer's (``txlab.views.progress``, found through :func:`txlab.hooks.progress_bar`), so this
engine module imports nothing from Jupyter.
"""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    """A progress display. ``update(label, fraction=None)``; ``close()``. Appears after ``delay_s``."""

    def __init__(self, title: str, total: int | None = None, delay_s: float = 1.0):
        from txlab.settings import config

        self.title = title
        self.total = total
        self.enabled = config.progress
        self.delay_s = delay_s
        self.t0 = time.perf_counter()
        self.label = ""
        self.done = 0
        self._widget = None
        self._shown = False
        self._lock = threading.Lock()
        self._timer = None
        if self.enabled:
            self._timer = threading.Timer(delay_s, self._show)
            self._timer.daemon = True
            self._timer.start()

    def _show(self):
        with self._lock:
            if self._shown or not self.enabled:
                return
            self._shown = True
            from txlab.hooks import progress_bar

            self._widget = progress_bar(self.total)
            self._render()

    def _render(self):
        elapsed = time.perf_counter() - self.t0
        msg = f"{self.title}: {self.label} ({elapsed:.1f} s)"
        if self._widget is not None:
            self._widget.update(self.done, msg)
        else:
            sys.stderr.write(f"\r{msg:<78}")
            sys.stderr.flush()

    def update(self, label: str, advance: int = 0):
        with self._lock:
            self.label = label
            self.done += advance
            if self._shown:
                self._render()

    def close(self):
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if self._shown:
                elapsed = time.perf_counter() - self.t0
                if self._widget is not None:
                    self._widget.finish(f"{self.title}: done in {elapsed:.1f} s")
                else:
                    sys.stderr.write(f"\r{self.title}: done in {elapsed:.1f} s{' ' * 30}\n")
                    sys.stderr.flush()
            self.enabled = False


def stage_reporter(title: str):
    """A callback ``report(stage)``; ``report(None)`` closes. Used by txlab.compile."""
    bar = {"p": None}

    def report(stage):
        if stage is None:
            if bar["p"] is not None:
                bar["p"].close()
            return
        if bar["p"] is None:
            bar["p"] = Progress(title, total=5)
        bar["p"].update(stage, advance=1)

    return report
