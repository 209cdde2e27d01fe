"""Contrast as stated: the attributes give the contrast the frames really have.

Known answers are measured on the rendered frames themselves: Weber ``(L - L0) / L0``
and Michelson ``(L_max - L_min) / (L_max + L_min)`` over the luminances present.
"""

import pytest

from psybench.motion.display import Display
from psybench.motion.stimuli import render_bar, render_dashed_bar, render_diamond, render_grating

DISPLAY = Display(width_px=64, height_px=64, frames_per_s=50, antialias=False)


def measured(frames):
    lo, hi = float(frames.min()), float(frames.max())
    return lo, hi, (hi - lo) / (hi + lo)


@pytest.mark.parametrize("polarity", [1, -1])
@pytest.mark.parametrize("contrast", [1.0, 0.3, 0.05])
def test_shapes_record_weber_and_their_true_michelson(contrast, polarity):
    kw = dict(contrast=contrast, polarity=polarity, duration_ms=40.0)
    for stim in (render_bar(DISPLAY, length_deg=4.0, width_deg=1.0, **kw),
                 render_dashed_bar(DISPLAY, length_deg=4.0, n_tiles=2, width_deg=1.0, **kw),
                 render_diamond(DISPLAY, handedness="cw", direction_deg=15.0, size_deg=4.0, line_width_deg=0.5, **kw)):
        lo, hi, michelson = measured(stim.frames)
        obj = hi if polarity > 0 else lo
        assert stim.attrs["contrast_definition"] == "weber"
        assert stim.attrs["weber_contrast"] == pytest.approx((obj - 0.5) / 0.5, abs=1e-6)
        assert stim.attrs["weber_contrast"] == pytest.approx(polarity * contrast, abs=1e-6)
        assert stim.attrs["michelson_contrast"] == pytest.approx(michelson, abs=1e-6)
        assert stim.attrs["params"]["contrast"] == contrast  # existing attribute kept
    if polarity > 0 and contrast == 1.0:  # the case: "contrast 1.0" lines are Michelson 1/3
        assert stim.attrs["michelson_contrast"] == pytest.approx(1 / 3, abs=1e-6)


@pytest.mark.parametrize("contrast", [1.0, 0.3])
def test_gratings_are_michelson(contrast):
    stim = render_grating(DISPLAY, diameter_deg=6.0, sf_cpd=0.5, speed_deg_s=4.0, contrast=contrast,
                          duration_ms=40.0)
    _, _, michelson = measured(stim.frames)
    assert stim.attrs["contrast_definition"] == "michelson"
    assert stim.attrs["michelson_contrast"] == contrast
    assert michelson == pytest.approx(contrast, rel=0.02)  # carrier sampled at pixel centres
