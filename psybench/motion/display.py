"""The display mapping: one conversion between physical and numerical units per run.

Motion Psychobench (RR-7317, section 2.1) insists that every stimulus of a run
uses the same mapping between visual-field degrees and pixels, between
milliseconds and frames, and between luminance and pixel values, or model results
are not comparable. :class:`Display` is that mapping. Every store psybench writes
carries ``Display.to_attrs()`` so that any artifact can be traced back to it.

Conventions
-----------
* Space: ``px_per_deg`` pixels per degree of visual angle. Image axes are rows
  (``y``, downwards) then columns (``x``, rightwards).
* Time: ``frames_per_s`` frames per second; frame ``i`` is shown at
  ``t = i * 1000 / frames_per_s`` ms.
* Luminance: pixel values are luminance normalised to [0, 1]; the background is
  ``background`` (mean luminance L0). A Michelson contrast ``c`` gives
  ``L_max = L0 (1 + c)`` and ``L_min = L0 (1 - c)``.
* Directions: degrees counter-clockwise from rightward with the *visual* y axis
  pointing up (so a flow ``(u, v)`` in image coordinates has direction
  ``atan2(-v, u)``).
* Anti-aliasing (section 2.2) is explicit: ``antialias`` on renders each frame
  by ``supersample`` x ``supersample`` supersampling of the analytic stimulus.

The default, 8 px/deg and 100 frames/s, keeps the original benchmark's spatial
scale (1 deg = 8 px) but not its 16 frames/s: at 16 frames/s one frame lasts
62.5 ms, so the ~15-20 ms delay of the 2D component of ocular following
(Masson et al. 2000) and exponential decays with tau ~ 100 ms would be sampled
by one or two frames. At 100 frames/s a frame is 10 ms and a 100 ms time constant
spans ten samples, while a 10 deg/s target still moves under one pixel per frame
(0.8 px/frame), within the small-displacement range classic flow methods assume.
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Mapping
from typing import Any

from psybench import units

__all__ = ["Display", "TemporalAliasingWarning", "direction_deg", "scaled_display", "wrap_deg"]


class TemporalAliasingWarning(UserWarning):
    """A stimulus moves too fast for the frame rate to carry its motion."""


@dataclasses.dataclass(frozen=True)
class Display:
    """Physical-to-numerical mapping shared by every stimulus of a run.

    Parameters
    ----------
    px_per_deg : float
        Pixels per degree of visual angle.
    frames_per_s : float
        Frame rate (frames per second).
    width_px, height_px : int
        Frame size in pixels.
    background : float
        Mean luminance L0 in normalised units (0 black, 1 white).
    antialias : bool
        Whether rendering supersamples the analytic stimulus.
    supersample : int
        Supersampling factor per axis when ``antialias`` is on.
    """

    px_per_deg: float = 8.0
    frames_per_s: float = 100.0
    width_px: int = 256
    height_px: int = 256
    background: float = 0.5
    antialias: bool = True
    supersample: int = 4

    def __post_init__(self) -> None:
        # one form from the config to every artifact: a YAML ``frames_per_s: 100`` and a
        # generalisation level ``100.0`` give the same display and the same store attributes
        for key, kind in (("px_per_deg", float), ("frames_per_s", float), ("background", float)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"display.{key} must be a number, got {value!r}")
            object.__setattr__(self, key, kind(value))
        for key in ("px_per_deg", "frames_per_s"):
            if not getattr(self, key) > 0:
                raise ValueError(f"display.{key} must be > 0, got {getattr(self, key)!r}")
        for key in ("width_px", "height_px", "supersample"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or int(value) != value or value < 1:
                raise ValueError(f"display.{key} must be a positive integer, got {value!r}")
            object.__setattr__(self, key, int(value))
        if self.antialias not in (True, False):
            raise ValueError(f"display.antialias must be true or false, got {self.antialias!r}")
        object.__setattr__(self, "antialias", bool(self.antialias))
        if not 0.0 < self.background < 1.0:
            raise ValueError(f"display.background must lie in (0, 1), got {self.background!r}")

    # --- conversions -----------------------------------------------------------------
    def deg_to_px(self, deg: float) -> float:
        """Convert a length in degrees of visual angle to pixels."""
        return deg * self.px_per_deg

    def px_to_deg(self, px: float) -> float:
        """Convert a length in pixels to degrees of visual angle."""
        return px / self.px_per_deg

    def speed_to_px_per_frame(self, deg_per_s: float) -> float:
        """Convert a speed in deg/s to px/frame."""
        return deg_per_s * self.px_per_deg / self.frames_per_s

    def px_per_frame_to_speed(self, px_per_frame: float) -> float:
        """Convert a speed in px/frame to deg/s."""
        return px_per_frame * self.frames_per_s / self.px_per_deg

    def ms_to_frames(self, ms: float) -> int:
        """Number of whole frames in a duration given in milliseconds (:func:`psybench.units.ms_to_frames`)."""
        return units.ms_to_frames(ms, self.frames_per_s)

    @property
    def frame_ms(self) -> float:
        """Duration of one frame in milliseconds (:func:`psybench.units.frame_ms`)."""
        return units.frame_ms(self.frames_per_s)

    def contrast_levels(self, michelson: float) -> tuple[float, float]:
        """Return ``(L_min, L_max)`` for a Michelson contrast around the background.

        Raises
        ------
        ValueError
            If the contrast is outside [0, 1] or the levels leave [0, 1].
        """
        if not 0.0 <= michelson <= 1.0:
            raise ValueError(f"Michelson contrast must lie in [0, 1], got {michelson!r}")
        lo = self.background * (1.0 - michelson)
        hi = self.background * (1.0 + michelson)
        if hi > 1.0 + 1e-12:
            raise ValueError(
                f"contrast {michelson} around background {self.background} exceeds the "
                "displayable range: lower the contrast or the background"
            )
        return lo, hi

    def check_temporal_aliasing(
        self, speed_deg_s: float, *, spatial_period_deg: float | None = None, what: str = "stimulus"
    ) -> bool:
        """Warn when a speed cannot be carried by the frame rate.

        A periodic pattern of period ``P`` px moving ``d`` px/frame aliases when
        ``d >= P / 2`` (the temporal frequency reaches the Nyquist limit,
        ``frames_per_s / 2``). Edges without a period alias in practice when they
        jump by more than a few pixels per frame; we warn above 4 px/frame, the
        largest displacement the single-scale gradient methods here can measure.

        Returns
        -------
        bool
            True when the speed aliases (and a warning was issued).
        """
        disp = abs(self.speed_to_px_per_frame(speed_deg_s))
        if spatial_period_deg is not None:
            period_px = self.deg_to_px(spatial_period_deg)
            if disp >= period_px / 2.0:
                tf = abs(speed_deg_s) / spatial_period_deg
                warnings.warn(
                    f"{what}: {speed_deg_s} deg/s with a {spatial_period_deg:.3g} deg period is "
                    f"{tf:.3g} Hz, at or above the Nyquist limit {self.frames_per_s / 2:.3g} Hz "
                    f"of {self.frames_per_s} frames/s: the motion aliases",
                    TemporalAliasingWarning,
                    stacklevel=2,
                )
                return True
        if disp > 4.0:
            warnings.warn(
                f"{what}: {speed_deg_s} deg/s is {disp:.3g} px/frame at {self.px_per_deg} px/deg "
                f"and {self.frames_per_s} frames/s; displacements above 4 px/frame alias for "
                "gradient-based models",
                TemporalAliasingWarning,
                stacklevel=2,
            )
            return True
        return False

    # --- serialisation ---------------------------------------------------------------
    def coords(self, n_t: int | None = None, height: int | None = None, width: int | None = None,
               velocities: Any = None) -> dict[str, Any]:
        """Store coordinates with units (:class:`psybench.io.Coordinate`) of the given dimensions.

        ``t`` in ms (frame ``i`` at ``i * frame_ms``); ``y`` and ``x`` in deg of
        visual angle of each pixel's centre from the image centre (``y`` along the
        rows, downwards); ``velocity_u``, ``velocity_v`` (along ``velocity``) in
        deg/s for a velocity grid ``velocities`` of shape ``(V, 2)`` in px/frame
        (image axes: ``v`` downwards).
        """
        import numpy as np

        from psybench.io.coords import Coordinate

        out: dict[str, Any] = {}
        if n_t is not None:
            t_ms = units.frames_to_ms(np.arange(n_t), self.frames_per_s)
            out["t"] = Coordinate(t_ms, "ms", long_name="time from stimulus onset")
        for name, n in (("y", height), ("x", width)):
            if n is not None:
                out[name] = Coordinate((np.arange(n) + 0.5 - n / 2) / self.px_per_deg, "deg",
                                       long_name=f"{name}, pixel centre from the image centre")
        if velocities is not None:
            vel = np.asarray(velocities, dtype=float) * self.frames_per_s / self.px_per_deg
            for i, name in enumerate(("velocity_u", "velocity_v")):
                out[name] = Coordinate(vel[:, i], "deg/s", dim="velocity",
                                       long_name=f"{name[-1]} of the velocity grid, image axes")
        return out

    def to_attrs(self) -> dict[str, Any]:
        """Deterministic, JSON-serialisable description for store attributes."""
        out = dataclasses.asdict(self)
        out["contrast_definition"] = "michelson"
        out["luminance_range"] = [0.0, 1.0]
        out["direction_convention"] = "deg counter-clockwise from rightward, visual y up"
        return out

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> Display:
        """Build a display from the ``display`` section of the config (extra keys rejected)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(cfg) - fields - {"contrast_definition", "luminance_range", "direction_convention"})
        if unknown:
            raise ValueError(f"display: unknown key(s) {unknown}; allowed: {sorted(fields)}")
        return cls(**{k: v for k, v in cfg.items() if k in fields})


def direction_deg(u, v):
    """Direction of image-coordinate flow ``(u, v)`` in degrees, visual y up.

    ``u`` is rightward and ``v`` downward (image rows grow downwards), so the
    returned angle is ``atan2(-v, u)`` in degrees, in (-180, 180].
    """
    import numpy as np

    # 0.0 - v (not -v) so that v = +0.0 gives +0.0 and leftward motion is +180, not -180
    return np.degrees(np.arctan2(0.0 - np.asarray(v, dtype=float), np.asarray(u, dtype=float)))


def wrap_deg(angle):
    """Wrap angles in degrees into [-180, 180)."""
    import numpy as np

    return (np.asarray(angle) + 180.0) % 360.0 - 180.0


scaled_display = units.scaled_display  # a plain mapping operation: the core's config checks use it too
