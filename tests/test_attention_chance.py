"""Chance levels of the saliency metrics (psybench.attention.chance) against noise maps as the oracle.

The fixations are real: DIEM's recording of another movie (tests/data/gaze/diem), looped
and started 1.1 s apart as 8 observers of a 25 frames/s, 200-frame movie.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psybench.attention import gaze as gz
from psybench.attention.chance import fraction_of_ceiling, judd_chance, noise_maps
from psybench.attention.map_metrics import auc_judd
from psybench.attention.metrics import noise_chance, observer_counts, score_frames
from psybench.attention.movies import MovieData

DIEM = Path(__file__).parent / "data" / "gaze" / "diem" / "diem5s01.asc_15_arctic_bears_1066x710.txt"


def looped_diem_movie() -> MovieData:
    """A 200-frame, 25 frames/s movie watched by 8 'observers': DIEM's real recording, looped and shifted."""
    d = gz.load_gaze(DIEM)
    t, x, y = d["t_ms"].to_numpy(), d["x"].to_numpy(), d["y"].to_numpy()
    T, period = 200, t[-1] + (t[1] - t[0])
    rows = []
    for k in range(8):
        i = np.clip(np.searchsorted(t, (np.arange(T) * 40.0 + 1100.0 * k) % period, side="right") - 1, 0, len(t) - 1)
        rows.append(pd.DataFrame({"subject": f"s{k}", "frame": np.arange(T), "x": x[i], "y": y[i],
                                  "valid": np.isfinite(x[i] + y[i])}))
    return MovieData(name="M", maps=np.zeros((T, 30, 40, 1)), frames_per_s=25.0, source_size=(1066, 710),
                     gaze=pd.concat(rows, ignore_index=True))


@pytest.fixture(scope="module")
def counts():
    movie = looped_diem_movie()
    return observer_counts(movie, np.arange(movie.maps.shape[0])).sum(0)


@pytest.mark.parametrize("n", [1, 3, 10])
def test_judd_chance_is_the_mean_of_noise_maps(n):
    rng = np.random.default_rng(n)
    fix = np.zeros((30, 40))
    fix.ravel()[rng.choice(fix.size, n, replace=False)] = 1
    v = np.array([auc_judd(rng.random((30, 40)), fix) for _ in range(4000)])
    assert judd_chance(fix[None]) == pytest.approx(0.5 + 1 / (2 * (n + 1)))  # 0.75 for one fixation
    assert abs(v.mean() - judd_chance(fix[None])) < 4 * v.std() / np.sqrt(len(v))


def test_chance_column_is_the_noise_maps_mean(counts):
    level, se = noise_chance(counts)
    assert level["AUC-Judd"] > 0.55 and level["AUC-Borji"] == 0.5  # AUC-Judd: 1/2 + 1/(2 (n + 1)), n <= 8
    oracle = score_frames(noise_maps(counts.shape, draws=24, seed=12345), counts)
    for k in level:
        v = np.array([o[k] for o in oracle])
        sem = np.hypot(v.std(ddof=1) / np.sqrt(len(v)), se[k])
        assert abs(v.mean() - level[k]) <= 4 * sem + 1e-12, (k, v.mean(), level[k], sem)


def test_fraction_of_ceiling():
    assert fraction_of_ceiling(0.8, 0.6, 1.0) == pytest.approx(0.5)
    assert fraction_of_ceiling(2.0, 3.0, 1.0, direction="lower") == pytest.approx(0.5)  # KL: lower is better
    assert np.isnan(fraction_of_ceiling(0.8, 0.6, 0.5))  # a ceiling below chance measures nothing
    assert np.isnan(fraction_of_ceiling(2.0, 3.0, 4.0, direction="lower"))
