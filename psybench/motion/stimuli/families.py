"""The stimulus families: renderer and experiment of each, and :func:`render` to dispatch.

The experiments are the four rows of Tlapale et al. 2010, RR-7317 Table 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psybench.motion.display import Display
from psybench.motion.stimuli.barberpole import render_barberpole
from psybench.motion.stimuli.bars import render_bar, render_dashed_bar
from psybench.motion.stimuli.diamonds import render_diamond
from psybench.motion.stimuli.geometry import Stimulus
from psybench.motion.stimuli.gratings import render_grating

__all__ = ["FAMILIES", "render"]

#: family -> (renderer, experiment); experiments are the four rows of RR-7317 Table 1.
FAMILIES: dict[str, tuple[Callable[..., Stimulus], str]] = {
    "diamond": (render_diamond, "diamonds"),
    "bar": (render_bar, "dashed_bars"),
    "dashed_bar": (render_dashed_bar, "dashed_bars"),
    "barberpole": (render_barberpole, "barberpole"),
    "grating": (render_grating, "grating_size"),
}


def render(family: str, display: Display, **params: Any) -> Stimulus:
    """Render a stimulus of ``family`` (a key of :data:`FAMILIES`) with ``params``."""
    try:
        renderer, _ = FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown stimulus family {family!r}; known: {sorted(FAMILIES)}") from None
    try:
        return renderer(display, **params)
    except TypeError as exc:  # unknown or missing keyword
        raise ValueError(f"{family}: bad parameters {sorted(params)}: {exc}") from None
