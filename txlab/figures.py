"""The figure a model's ``plot()`` draws on: new, or the caller's axes. Every ``plot()`` returns
a matplotlib Figure (DESIGN.md); this is the one place that decides where it is drawn."""

from __future__ import annotations


def side_by_side(ax=None, *, figsize=(9, 2.6)):
    """``(figure, [left, right])``: two new axes side by side, or the caller's pair ``ax`` and
    its figure."""
    if ax is not None:
        axes = list(ax)
        if len(axes) != 2:
            raise ValueError(f"plot(ax=...) takes a pair of matplotlib Axes (left, right); got {len(axes)}")
        return axes[0].figure, axes
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=figsize)
    return fig, list(axes)
