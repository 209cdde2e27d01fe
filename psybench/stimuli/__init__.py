"""Stimuli stage: render (or, later, ingest) the stimuli of each benchmark track.

:mod:`psybench.stimuli.motion` renders the Motion Psychobench stimuli (RR-7317)
from physical units through the run's :class:`~psybench.display.Display`.
"""

from psybench.stimuli.motion import (
    FAMILIES,
    Stimulus,
    render,
    stimulus_set,
    write_stimulus,
)

__all__ = ["FAMILIES", "Stimulus", "render", "stimulus_set", "write_stimulus"]
