"""Motion stimuli of Motion Psychobench (Tlapale et al. 2010, RR-7317 sec. 3), rendered from physical units.

Every renderer takes the run's :class:`~psybench.motion.display.Display` (the one mapping
between degrees, milliseconds, luminance and pixels, frames; RR-7317 section 2.1)
and keyword-only physical parameters: sizes in degrees of visual angle, speeds
in deg/s, durations in ms, contrast around ``display.background`` (Michelson for
gratings, Weber for shapes; see Luminance below).
It returns a :class:`Stimulus`: frames ``(T, H, W)`` float32 luminance in [0, 1]
and the attributes written into the stimulus store (parameters, ground-truth
velocity and family-specific facts such as the vector-average direction of a
diamond's edges).

Rendering (RR-7317 section 2.2)
-------------------------------
* Shapes are analytic: a sample at position ``(x, y)`` (deg, visual y up, origin
  at the display centre) is inside or outside the shape. Positions are analytic
  functions of time, ``c(t) = c_mid + v (t - t_mid)``, evaluated in float64, so
  sub-pixel motion is exact (nothing is rounded to whole pixels).
* Anti-aliasing is explicit: with ``display.antialias`` each pixel averages
  ``display.supersample**2`` regularly spaced samples (a box filter over the
  pixel area); without it each pixel is point-sampled at its centre.
* Gratings are band-limited carriers (below the spatial Nyquist frequency), so the
  carrier is sampled at pixel centres, exactly; only the aperture (a
  discontinuity) is box-filtered. A pixel is ``L0 (1 + c a(x) g(x, t))`` with
  ``a`` the aperture coverage in [0, 1] and ``g`` the unit sinusoid.
* Every renderer calls :meth:`Display.check_temporal_aliasing` with the spatial
  period of its pattern measured along the motion (none for solid shapes), which
  warns (:class:`~psybench.motion.display.TemporalAliasingWarning`) when the speed
  reaches the temporal Nyquist limit of the frame rate.
* Luminance: line drawings and bars are drawn at ``L0 (1 + polarity c)`` on the
  background ``L0``: ``c`` is their *Weber* contrast, and their Michelson contrast
  (over the two luminances present) is ``c / (2 + polarity c)``, 1/3 for a bright
  line of ``contrast`` 1. A true Michelson contrast above ``(1 - L0) / (1 + L0)``
  cannot be drawn as a bright line, so shapes keep the Weber definition and their
  attributes say so: ``contrast_definition: "weber"``, ``weber_contrast``,
  ``michelson_contrast``. Gratings modulate ``L0 (1 + c cos(...))``, so their
  Michelson contrast is exactly ``c`` (``contrast_definition: "michelson"``).

Timing: ``T = display.ms_to_frames(duration_ms)`` frames, frame ``i`` shown at
``i * 1000 / frames_per_s`` ms. Moving objects travel symmetrically about
``center_deg`` (their position at the middle frame), so an object that fits at
its first and last frame fits throughout.

References
----------
.. [1] Tlapale, Kornprobst, Bouecke, Neumann, Masson (2010). Towards a bio-inspired
   evaluation methodology for motion estimation models. INRIA RR-7317.
.. [2] Masson & Stone (2002). From following edges to pursuing objects.
   J Neurophysiol 88:2869-2873.
.. [3] Pack & Born (2001). Temporal dynamics of a neural solution to the aperture
   problem in visual area MT of macaque brain. Nature 409:1040-1042.
.. [4] Lorenceau, Shiffrar, Wells, Castet (1993). Different motion sensitive units
   are involved in recovering the direction of moving lines. Vision Res 33:1207.
.. [5] Masson, Rybarczyk, Castet, Mestre (2000). Temporal dynamics of motion
   integration for the initiation of tracking eye movements at ultra-short
   latencies. Vis Neurosci 17:753-767.
.. [6] Barthelemy, Vanzetta, Masson (2006). Behavioral receptive field for
   ocular following in humans. J Neurophysiol 95:3319-3330.
"""

from psybench.motion.stimuli.barberpole import render_barberpole
from psybench.motion.stimuli.bars import render_bar, render_dashed_bar
from psybench.motion.stimuli.diamonds import diamond_geometry, render_diamond
from psybench.motion.stimuli.families import FAMILIES, render
from psybench.motion.stimuli.geometry import Stimulus
from psybench.motion.stimuli.gratings import render_grating
from psybench.motion.stimuli.sets import stimulus_set
from psybench.motion.stimuli.store import write_stimuli, write_stimulus

__all__ = [
    "Stimulus",
    "FAMILIES",
    "render",
    "render_diamond",
    "render_bar",
    "render_dashed_bar",
    "render_barberpole",
    "render_grating",
    "diamond_geometry",
    "stimulus_set",
    "write_stimuli",
    "write_stimulus",
]

