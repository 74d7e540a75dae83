"""Test helper: how many ticks a figure's axes show (the multi-panel KS figures keep them few, issue 31)."""

from __future__ import annotations


def shown_ticks(axes) -> list[int]:
    """Per axis of ``axes`` (an iterable of matplotlib Axes), x then y: the major ticks inside its view limits.

    Draws the figure first, so the locators have placed the ticks that a reader sees.
    """
    axes = list(axes)
    axes[0].figure.canvas.draw()
    return [sum(0 <= (t - lo) / (hi - lo) <= 1 for t in ticks) for ax in axes
            for ticks, (lo, hi) in ((ax.get_xticks(), ax.get_xlim()), (ax.get_yticks(), ax.get_ylim()))]
