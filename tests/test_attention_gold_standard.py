"""The regularised leave-one-observer-out gold standard (psybench.attention.gold_standard) as the metrics' ceiling.

Real case: DIEM's recording of another movie (tests/data/gaze/diem), looped and started
1.1 s apart as 8 observers of a 200-frame movie (the fixtures of test_attention_chance).
The ceiling is scored per held-out observer, so the noise maps it must beat are scored
against the same held-out fixations.
"""

from __future__ import annotations

import numpy as np
import pytest

from psybench.attention.chance import noise_maps
from psybench.attention.gold_standard import UNIFORM_WEIGHTS, choose_regularisation, regularised_density
from psybench.attention.metrics import METRIC_DIRECTIONS, fixation_density, loo_ceiling, observer_counts, score_frames
from psybench.attention.movies import MovieData


def test_regularised_density_is_a_positive_density():
    c = np.zeros((3, 30, 40))
    c[0, 5, 5] = 2
    c[1, 29, 39] = 1
    d = regularised_density(c, bandwidth=1.0, weight=0.1)
    np.testing.assert_allclose(d.sum((1, 2)), 1.0)
    assert (d > 0).all() and d[2].std() == 0  # a frame without fixations: uniform


def test_uniform_gaze_chooses_the_uniform_density():
    """People who look anywhere at random: the others predict nothing, cross-validation picks w = 1 (chance)."""
    rng = np.random.default_rng(0)
    oc = np.zeros((6, 100, 30, 40))
    for o in range(6):
        oc[o, np.arange(100), rng.integers(30, size=100), rng.integers(40, size=100)] = 1
    assert choose_regularisation(oc)[1] == UNIFORM_WEIGHTS[-1] == 1.0


def test_shared_spot_chooses_a_sharp_density():
    """People who mostly look at one spot: a narrow kernel with little uniform weight."""
    rng = np.random.default_rng(1)
    oc = np.zeros((6, 100, 30, 40))
    for o in range(6):
        r = np.where(rng.random(100) < 0.9, 15, rng.integers(30, size=100))
        c = np.where(rng.random(100) < 0.9, 20, rng.integers(40, size=100))
        oc[o, np.arange(100), r, c] = 1
    bandwidth, weight = choose_regularisation(oc)
    assert bandwidth <= 1.0 and 0 < weight <= 0.3


@pytest.fixture(scope="module")
def per_observer():
    from test_attention_chance import looped_diem_movie

    movie = looped_diem_movie()
    return observer_counts(movie, np.arange(movie.maps.shape[0]))


def _noise_on_held_out(oc, draws=4):
    """Each noise map's metrics against each held-out observer's fixations, mean over observers: (draws,) per metric."""
    total = oc.sum(0)
    per = []
    for o in range(len(oc)):
        held = np.where((total - oc[o]).sum((1, 2))[:, None, None] > 0, oc[o], 0.0)
        per.append(score_frames(noise_maps(oc.shape[1:], draws=draws, seed=100 + o), held))
    return {k: np.array([[d[k] for d in p] for p in per]).mean(0) for k in METRIC_DIRECTIONS}


def test_every_ceiling_beats_every_noise_map_on_real_gaze(per_observer):
    ceiling = loo_ceiling(per_observer)
    noise = _noise_on_held_out(per_observer)
    for k, direction in METRIC_DIRECTIONS.items():
        better = ceiling[k] > noise[k].max() if direction == "higher" else ceiling[k] < noise[k].min()
        assert better, (k, ceiling[k], noise[k])


def test_unregularised_counts_were_no_ceiling(per_observer):
    """The former ceiling, blurred counts of the others, is worse than noise on IG (zero where one falls alone)."""
    oc, total = per_observer, per_observer.sum(0)
    ig = []
    for o in range(len(oc)):
        held = np.where((total - oc[o]).sum((1, 2))[:, None, None] > 0, oc[o], 0.0)
        ig.append(score_frames(fixation_density(total - oc[o]), held)["IG"])
    assert np.mean(ig) < _noise_on_held_out(oc)["IG"].min() < loo_ceiling(oc)["IG"]


def test_density_information_gain_is_the_log_ratio_at_fixations():
    from psybench.attention.gold_standard import density_information_gain
    from psybench.attention.metrics import centre_baseline

    base = centre_baseline((30, 40))
    b = (base - base.min()) / (base - base.min()).sum()
    fix = np.zeros((2, 30, 40))
    fix[0, 3, 4] = fix[1, 15, 20] = 1
    assert density_information_gain(np.stack([b, b]), fix, base) == pytest.approx(0, abs=1e-9)  # the baseline itself
    flat = np.full((2, 30, 40), 1 / 1200)
    want = np.mean([np.log2(1 / 1200) - np.log2(b[3, 4]), np.log2(1 / 1200) - np.log2(b[15, 20])])
    assert density_information_gain(flat, fix, base) == pytest.approx(want, rel=1e-9)


def _ceiling_and_se(movie, frames):
    """Table 1's rank ceiling (%) on ``frames``: the mean over observers and its standard error."""
    from psybench.attention.gold_standard import rank_ceilings

    meds = rank_ceilings(observer_counts(movie, np.asarray(frames, int)))
    return float(meds.mean()), float(meds.std(ddof=1) / np.sqrt(len(meds)))


def test_rank_ceiling_never_below_chance_on_the_tiny_config():
    """The tiny workflow config's movies (45 frames, two observers who prefer target and lure): the blurred
    counts of the other observer put the held-out one at 47.0 % (ties at the bottom), below chance."""
    from psybench.attention import gaze as gz
    from psybench.attention.defaults import EvaluationSettings
    from psybench.attention.split import pair_frames
    from psybench.attention.stimuli import render_popout
    from psybench.attention.tuning import lag_frames

    for name, seed, p in (("A", 1, [0.9, 0.1]), ("B", 2, [0.1, 0.9])):
        scene = render_popout(seed=seed, n_frames=45)
        fps, T = scene.attrs["frames_per_s"], len(scene.frames)
        raw = gz.synthetic_observers(scene.target_xy, scene.lure_xy, p_target=p, frames_per_s=fps,
                                     source_size=(640, 480), seed=seed, movie=name)
        gaze = gz.resample_to_frames(raw, frames_per_s=fps, n_frames=T, movie=name)
        movie = MovieData(name, np.zeros((T, 30, 40, 1), np.float32), fps, (640, 480), gaze, "raw")
        _fit, held, _gap = pair_frames(movie, movie, lag_frames((100, 300), fps), EvaluationSettings())
        mean, se = _ceiling_and_se(movie, held)
        assert mean >= 50 - se, (name, mean, se)


def test_rank_ceiling_above_chance_on_real_gaze():
    """The split tests' real case (DIEM gaze of another movie, 8 observers, 1650 frames at 25 frames/s, the
    blocks split's test frames): people's agreement ranks well above chance (96.8 %)."""
    from test_attention_split import FPS, _real_gaze

    from psybench.attention.defaults import EvaluationSettings
    from psybench.attention.split import pair_frames
    from psybench.attention.tuning import lag_frames

    T = 1650
    movie = MovieData("M", np.zeros((T, 30, 40, 1), np.float32), FPS, (1066, 710), _real_gaze(T, 8))
    _fit, held, _gap = pair_frames(movie, movie, lag_frames((100, 300), FPS), EvaluationSettings())
    mean, se = _ceiling_and_se(movie, held)
    assert mean - 3 * se > 50 and mean > 90, (mean, se)


def test_rank_ceiling_of_people_who_look_anywhere_is_chance():
    """Uniformly random gaze: cross-validation picks the uniform density, every rank is 50 %."""
    from psybench.attention.gold_standard import rank_ceilings

    rng = np.random.default_rng(0)
    oc = np.zeros((6, 100, 30, 40))
    for o in range(6):
        oc[o, np.arange(100), rng.integers(30, size=100), rng.integers(40, size=100)] = 1
    np.testing.assert_allclose(rank_ceilings(oc), 50.0)
