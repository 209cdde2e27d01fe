"""Tests of the recurrent V1-MT model (Tlapale, Masson & Kornprobst 2010 style).

Known answers are the psychophysical facts the model must reproduce
(RR-7317 sec. 3): the population direction on a type II diamond starts near the
vector average of the edges' normal motions and converges to the true
direction; on a tilted bar it starts biased toward the bar's normal and
converges, with a larger bias for a longer bar; ablating the feedback and the
diffusion removes the convergence (so the tests can fail); a uniform field gives
no motion. Stimuli come from psybench.motion.stimuli on a 128 x 128 display.

The diamond and bar facts are asserted for the published structure (``PUBLISHED``:
no pooling of V1 over directions in MT), which snaps off-grid directions to its
grid; the default now pools directions (no snapping, tested on rigid
textures) and no longer solves these diamonds within 300 ms (a strict xfail below).
"""

import numpy as np
import pytest
from motion_model_runs import translating_texture

from psybench.motion.display import Display, direction_deg, wrap_deg
from psybench.motion.models.v1mt import tlapale_v1mt
from psybench.motion.stimuli import render_bar, render_diamond, render_grating
from psybench.registry import get_algorithm, resolve_model

DISPLAY = Display(width_px=128, height_px=128)
PUBLISHED = {"direction_pooling_deg": 0.0}  # Tlapale et al. 2010 / Bayerl & Neumann 2004 structure


def run(frames, chunk=10, **kw):
    outs = list(tlapale_v1mt((frames[i:i + chunk] for i in range(0, len(frames), chunk)), display=DISPLAY, **kw))
    return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}


def population_direction(flow):
    """Direction (deg, visual y up) of the domain-mean flow at each frame."""
    m = flow.reshape(flow.shape[0], -1, 2).mean(axis=1)
    return direction_deg(m[:, 0], m[:, 1]), np.hypot(m[:, 0], m[:, 1])


def diamond_errors(duration_ms=350.0, **kw):
    out = {}
    for hand in ("cw", "ccw"):
        stim = render_diamond(DISPLAY, handedness=hand, direction_deg=0.0, duration_ms=duration_ms)
        d, _ = population_direction(run(stim.frames, **kw)["flow"])
        out[hand] = wrap_deg(d - stim.attrs["truth"]["direction_deg"])
    return (out["cw"] - out["ccw"]) / 2.0, stim


def test_registered_as_motion_stream_with_velocities():
    algo = get_algorithm("tlapale_v1mt")
    assert (algo.track, algo.kind) == ("motion", "stream")
    spec = resolve_model({"name": "v1mt", "algorithm": "tlapale_v1mt", "params": {"n_velocity_directions": 6}})
    vel = algo.function.velocities(**spec.params, display=DISPLAY)
    assert vel.shape == (1 + len(spec.params["speeds_deg_s"]) * 6, 2)
    np.testing.assert_allclose(vel.sum(axis=0), 0.0, atol=1e-12)  # symmetric grid: r0 adds no bias


def test_uniform_field_gives_no_motion():
    frames = np.full((8, 64, 64), 0.7, np.float32)
    out = run(frames, chunk=3)
    # float rounding of the anti-alias blur leaves ~1e-8 luminance ripples: no motion to 1e-12
    assert np.abs(out["flow"]).max() < 1e-12
    np.testing.assert_allclose(out["p"], 0.5, atol=1e-9)  # the spontaneous rate r0 at every velocity


def test_streaming_is_chunk_invariant_and_causal():
    stim = render_bar(DISPLAY, length_deg=4.0, duration_ms=150.0)
    a, b = run(stim.frames, chunk=15), run(stim.frames, chunk=4)
    np.testing.assert_allclose(a["flow"], b["flow"], atol=1e-5)
    changed = stim.frames.copy()
    changed[9:] = DISPLAY.background
    c = run(changed, chunk=4)
    np.testing.assert_array_equal(c["flow"][:9], b["flow"][:9])
    n_vel = len(tlapale_v1mt.velocities(display=DISPLAY))
    assert a["p"].shape == (15, 128, 128, n_vel) and a["p"].dtype == np.float32


def test_diamond_starts_at_vector_average_and_converges():
    hd, stim = diamond_errors(**PUBLISHED)
    t = np.arange(len(hd)) * DISPLAY.frame_ms
    va_bias = abs(wrap_deg(stim.attrs["vector_average_direction_deg"] - stim.attrs["truth"]["direction_deg"]))
    early = hd[(t >= 30) & (t <= 60)]
    # starts biased toward the vector average (same side, a large part of its 44 deg bias) ...
    assert np.all(np.sign(early) == np.sign(hd[5])) and np.abs(early).max() > 0.5 * va_bias
    # ... and converges to the true direction within ~300 ms (Wallace et al. 2005)
    assert np.abs(hd[t >= 300]).max() < 3.0
    # the decay is gradual, an exponential-like time course over tens of ms
    peak = int(np.argmax(np.abs(hd)))
    half = peak + int(np.argmax(np.abs(hd[peak:]) < np.abs(hd[peak]) / 2))
    assert 20.0 <= (half - peak) * DISPLAY.frame_ms <= 250.0


@pytest.mark.xfail(strict=True, reason="known limit (docs/models.md): with MT's direction pooling (the "
                   "default, 30 deg) the feedback no longer solves the 5-deg diamond within 300 ms (error 18-19 deg)")
def test_default_diamond_converges_within_300_ms():
    hd, _ = diamond_errors()
    assert np.abs(hd[np.arange(len(hd)) * DISPLAY.frame_ms >= 300]).max() < 3.0


def test_without_feedback_and_diffusion_the_diamond_does_not_converge():
    hd, _ = diamond_errors(duration_ms=250.0, feedback_gain=0.0, diffusion_per_ms=0.0, **PUBLISHED)
    assert np.abs(hd[-5:]).min() > 10.0


def test_tilted_bar_error_starts_at_normal_and_grows_with_length():
    peaks, finals = [], []
    for length in (2.0, 8.0):
        stim = render_bar(DISPLAY, length_deg=length, duration_ms=300.0)
        d, _ = population_direction(run(stim.frames, **PUBLISHED)["flow"])
        err = wrap_deg(d - stim.attrs["truth"]["direction_deg"])
        normal = wrap_deg(stim.attrs["normal_direction_deg"] - stim.attrs["truth"]["direction_deg"])
        early = err[3:10]
        assert np.all(np.sign(early) == np.sign(normal))  # biased toward the bar's normal
        peaks.append(np.abs(err[1:]).max())
        finals.append(np.abs(err[-5:]).max())
    assert peaks[1] > peaks[0] + 5.0
    assert max(finals) < 3.0


def test_mt_surround_suppresses_large_gratings():
    """Centre-surround normalisation: local MT-driven speed falls as the aperture grows."""
    local = {}
    for diam in (2.0, 12.0):
        stim = render_grating(DISPLAY, diameter_deg=diam, duration_ms=120.0)
        flow = run(stim.frames)["flow"]
        c = DISPLAY.width_px // 2
        local[diam] = np.hypot(*flow[-1, c - 4:c + 4, c - 4:c + 4].reshape(-1, 2).mean(axis=0))
    off = {}
    for diam in (2.0, 12.0):
        stim = render_grating(DISPLAY, diameter_deg=diam, duration_ms=120.0)
        flow = run(stim.frames, surround_area_deg2=float("inf"))["flow"]
        c = DISPLAY.width_px // 2
        off[diam] = np.hypot(*flow[-1, c - 4:c + 4, c - 4:c + 4].reshape(-1, 2).mean(axis=0))
    assert local[12.0] < 0.5 * local[2.0]
    assert off[12.0] > 0.8 * off[2.0]  # without the surround there is no such suppression


@pytest.mark.parametrize(
    "bad", [{"downsample": 3}, {"tau_mt_ms": 0.0}, {"feedback_gain": -1.0}, {"surround_area_deg2": 0.0}]
)
def test_bad_parameters_name_the_key(bad):
    key = next(iter(bad))
    with pytest.raises(ValueError, match=key if key != "downsample" else "match_downsample"):
        next(tlapale_v1mt(iter([np.full((2, 32, 32), 0.5, np.float32)]), display=DISPLAY, **bad))


def texture_direction_errors(**params):
    """Direction error (deg) of the domain-mean flow, averaged over the last 100 ms, for a 10-deg/s texture
    moving at 0, 5, ..., 45 deg (64 x 64 px at 8 px/deg, 300 ms)."""
    display = Display(width_px=64, height_px=64)
    errors = []
    for direction in range(0, 50, 5):
        frames = translating_texture(display, direction, 10.0, 30)
        outs = tlapale_v1mt((frames[i:i + 16] for i in range(0, 30, 16)), display=display, return_p=False, **params)
        flow = np.concatenate([o["flow"] for o in outs])[-10:].reshape(-1, 2).mean(axis=0)
        errors.append(wrap_deg(direction_deg(flow[0], flow[1]) - direction))
    return np.array(errors)


def test_texture_direction_is_decoded_off_the_grid():
    """A rigid texture has one true velocity; the 12-direction grid has units every 30 deg.

    Bound, set before any benchmark verdict was computed: 5 deg, a sixth of the grid
    spacing. A population snapping to the nearest grid unit errs by up to half the
    spacing (15 deg at 15 and 45 deg); a continuous one only by the texture's own
    sampling noise (the feedforward model, ``feedback_gain=0``, errs by up to 4.6 deg
    over three other seeds; Horn-Schunck < 0.4 deg). The published structure without
    MT's direction pooling snaps (the feedback loop with the exponent-2 competition
    is winner-take-all on the grid): errors 0, -5, -10, -15, +10, +5, 0, ... deg.
    """
    pooled = texture_direction_errors()
    assert np.abs(pooled).max() < 5.0, pooled.round(1)
    snapped = texture_direction_errors(direction_pooling_deg=0.0)
    assert np.abs(snapped).max() > 10.0, snapped.round(1)
    # the snapping error is the distance to the nearest grid direction (0 or 30 deg) ...
    nearest = wrap_deg(np.round(np.arange(0, 50, 5) / 30.0) * 30.0 - np.arange(0, 50, 5))
    off = np.array([0, 1, 2, 4, 5, 6, 7, 8])  # 15 and 45 deg lie half-way: either neighbour
    np.testing.assert_allclose(snapped[off], nearest[off], atol=1.5)
    # ... of which the pooled population keeps less than a third (least-squares fraction)
    fraction = float(pooled[off] @ nearest[off] / (nearest[off] @ nearest[off]))
    assert fraction < 1 / 3, (fraction, pooled.round(1))
