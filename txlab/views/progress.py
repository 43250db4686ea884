"""The notebook side of :mod:`txlab.progress`: an ipywidgets bar when the session is a Jupyter
kernel (registered with :func:`txlab.hooks.register_progress` by ``txlab.views``)."""

from __future__ import annotations


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython

        shell = get_ipython()
        return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"
    except Exception:  # noqa: BLE001 - no usable front end means plain text
        return False


class NotebookBar:
    """A FloatProgress and a label, displayed on creation."""

    def __init__(self, total):
        import ipywidgets as w
        from IPython.display import display

        self.bar = w.FloatProgress(min=0, max=total or 1, description="", layout=w.Layout(width="320px"))
        self.text = w.Label()
        self.total = total
        display(w.HBox([self.bar, self.text]))

    def update(self, done, text):
        self.bar.value = done if self.total else 0.5
        self.text.value = text

    def finish(self, text):
        self.bar.value = self.bar.max
        self.text.value = text
        self.bar.bar_style = "success"


def notebook_bar(total):
    """A :class:`NotebookBar` in a Jupyter kernel, else None."""
    if not _in_notebook():
        return None
    try:
        return NotebookBar(total)
    except Exception:  # noqa: BLE001 - no usable front end means plain text
        return None
