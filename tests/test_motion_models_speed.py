"""The bio-inspired models' speed-ups compute what the code before them computed.

Reference: ``tests/data/motion_models_reference/bio_models_flow.npz``, the flow of
each model on a small diamond produced by main before the speed-ups (provenance in
the README beside it). Tolerance 1e-5 px/frame: float32 rounding (the filters now
run in OpenCV and sum in another order), measured <= 2.4e-7 on flows up to 0.89.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

REFERENCE_DIR = Path(__file__).parent / "data" / "motion_models_reference"
_spec = importlib.util.spec_from_file_location("make_reference", REFERENCE_DIR / "make_reference.py")
make_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_reference)
_spec = importlib.util.spec_from_file_location("make_gradient_reference",
                                               REFERENCE_DIR / "make_gradient_reference.py")
make_gradient_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_gradient_reference)


@pytest.fixture(scope="module")
def frames():
    return make_reference.reference_frames()


@pytest.mark.parametrize("name", list(make_reference.MODELS))
def test_flow_equals_main_before_the_speed_up(frames, name):
    ref = np.load(REFERENCE_DIR / "bio_models_flow.npz")[name]
    flow = make_reference.model_flow(name, frames)
    assert np.abs(ref).max() > 0.1  # a moving diamond, not an empty response
    np.testing.assert_allclose(flow, ref, rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", list(make_gradient_reference.MODELS))
def test_gradient_models_keep_every_bit(name):
    """Horn-Schunck's and Lucas-Kanade's speed-ups change no bit of their flows.

    Reference: ``gradient_models_flow.npz``, made by main before them (README beside it),
    single scale and coarse to fine (warping); compared exactly, not to a tolerance.
    """
    ref = np.load(REFERENCE_DIR / "gradient_models_flow.npz")[name]
    flow = make_gradient_reference.model_flow(name, make_gradient_reference.reference_frames())
    assert np.abs(ref).max() > 0.5  # a moving diamond, not an empty response
    np.testing.assert_array_equal(flow, ref)


@pytest.mark.parametrize("name", ["simoncelli_heeger", "tlapale_v1mt"])
def test_without_the_population_the_flow_is_unchanged(frames, name):
    with_p = make_reference.model_flow(name, frames[:10])
    without = make_reference.model_flow(name, frames[:10], return_p=False)
    np.testing.assert_array_equal(without, with_p)


def test_return_p_false_yields_no_population(frames):
    from psybench.motion.models.v1mt import tlapale_v1mt

    outs = list(tlapale_v1mt([frames[:5]], display=make_reference.DISPLAY, return_p=False))
    assert all(set(o) == {"flow"} for o in outs)


def test_opencv_filters_match_scipy():
    from scipy import ndimage

    from psybench.motion.models import filters

    rng = np.random.default_rng(0)
    stack = rng.random((20, 7, 17)).astype(np.float32)  # (h, C, w)
    kernel = filters.gaussian_kernel(1.3)
    ours = filters.correlate_y(filters.correlate_x(stack, kernel), kernel)
    ref = ndimage.gaussian_filter(stack, (1.3, 0, 1.3), mode="nearest", truncate=3.0)
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    image = rng.random((12, 9))
    g = filters.gaussian_matrix(12, 5.0)
    np.testing.assert_allclose(g @ image[:, 0], ndimage.gaussian_filter1d(image[:, 0], 5.0, mode="constant",
                                                                          truncate=3.0), atol=1e-6)
    frames = rng.random((3, 18, 22)).astype(np.float32)
    ref = ndimage.gaussian_filter(frames, (0, 1.0, 1.0), mode="nearest", truncate=3.0)[:, 1::2, 1::2]
    np.testing.assert_allclose(filters.downsample_frames(frames, 2), ref, atol=1e-6)
