"""Attention features: Itti's N(), raw/pyramid maps, extended Itti model, streaming over time."""

import numpy as np
import pytest
from skimage.filters import gaussian

from psybench.attention.families import pyramid_maps
from psybench.attention.itti import itti_maps, itti_normalize
from psybench.attention.responses import feature_maps, write_feature_store
from psybench.attention.stimuli import render_popout, write_popout_store
from psybench.io.store import open_store


def _two_peaks():
    m = np.zeros((9, 9), np.float32)
    m[2, 2] = 2.0  # global max -> rescaled to 1
    m[6, 6] = 1.0  # other local max -> 0.5
    return m


def test_itti_normalize_hand_case_both_conventions():
    m = _two_peaks()
    ex = itti_normalize(m, exclude_global_max=True)  # mbar = 0.5 -> factor 0.25
    assert ex[2, 2] == pytest.approx(0.25) and ex[6, 6] == pytest.approx(0.125)
    inc = itti_normalize(m, exclude_global_max=False)  # mbar = 0.75 -> factor 0.0625
    assert inc[2, 2] == pytest.approx(0.0625) and inc[6, 6] == pytest.approx(0.03125)
    single = np.zeros((5, 5), np.float32)
    single[2, 2] = 3.0
    np.testing.assert_allclose(itti_normalize(single, exclude_global_max=True)[2, 2], 1.0)
    np.testing.assert_allclose(itti_normalize(single, exclude_global_max=False), 0.0)
    np.testing.assert_array_equal(itti_normalize(-np.ones((4, 4))), 0.0)  # clamped at 0
    # stacks are normalised map by map
    stack = np.stack([m, 2 * m])
    np.testing.assert_allclose(itti_normalize(stack)[1], itti_normalize(m), rtol=1e-6)


def test_itti_normalize_promotes_a_unique_peak():
    rng = np.random.default_rng(0)
    many = np.zeros((30, 40), np.float32)
    many[rng.integers(0, 30, 12), rng.integers(0, 40, 12)] = 1.0
    one = np.zeros((30, 40), np.float32)
    one[10, 10] = 1.0
    assert itti_normalize(one).max() > 5 * itti_normalize(many).max()


def test_pyramid_levels_match_skimage_gaussian():
    frames = np.random.default_rng(1).random((3, 30, 40)).astype(np.float32)
    maps = pyramid_maps(frames, levels=3, sigma=1.0)
    assert maps.shape == (3, 30, 40, 3)
    np.testing.assert_array_equal(maps[..., 0], frames)
    ref = gaussian(gaussian(frames[1], sigma=1.0, mode="nearest", truncate=4.0, preserve_range=True),
                   sigma=1.0, mode="nearest", truncate=4.0, preserve_range=True)
    np.testing.assert_allclose(maps[1, ..., 2], ref, atol=1e-5)


@pytest.mark.parametrize("kind", ["raw", "pyramid", "itti"])
def test_chunked_equals_whole(kind):
    frames = render_popout(n_frames=23, seed=0).frames
    whole = feature_maps(frames, model=kind, chunk_frames=23).compute()
    chunked = feature_maps(frames, model=kind, chunk_frames=5).compute()
    np.testing.assert_allclose(chunked, whole, atol=1e-6)
    assert whole.shape[:3] == frames.shape and whole.dtype == np.float32


def test_motion_modality_pops_out_the_odd_mover():
    """Fig. 12 (left): one box moving left among 8 right-moving boxes stands out in N(M).

    (The default scene is crowded -- 41 boxes, see render_popout -- where pooled
    motion conspicuity no longer singles the target out.)
    """
    s = render_popout(n_frames=40, seed=3, noise_sd=0.0, luminance_range=None, box_luminance=0.65,
                      n_distractors=8, frames_per_s=30.0, background=0.35,
                      target_direction_deg=180.0, distractor_direction_deg=0.0)
    m = itti_maps(s.frames)[..., 2]

    def rank(t, xy):
        x, y = (xy[t] / 16).astype(int)
        return (m[t] < m[t, y, x]).mean()

    target = np.median([rank(t, s.target_xy) for t in range(8, 40)])
    other = np.median([rank(t, s.lure_xy) for t in range(8, 40)])  # the lure is an ordinary distractor here
    assert target > 0.95 and target > other + 0.05
    # no motion, no motion conspicuity
    still = np.repeat(s.frames[:1], 6, axis=0)
    assert np.abs(itti_maps(still)[..., 2]).max() == 0.0


def test_feature_store_roundtrip(tmp_path):
    stim = write_popout_store(tmp_path / "s.zarr", n_frames=10, seed=0)
    out = write_feature_store(stim, tmp_path / "f.zarr", model="pyramid", chunk_frames=4, levels=2)
    store = open_store(out, deep=True)
    assert store["maps"].shape == (10, 30, 40, 2) and store.dims["maps"] == ("t", "y", "x", "channel")
    assert store.attrs["features"]["model"] == "pyramid" and store.attrs["lags_ms"] == [100.0, 300.0]
    with pytest.raises(ValueError, match="saliency model .deep. is not one of"):
        feature_maps(np.zeros((2, 30, 40)), model="deep")


def test_one_job_writes_every_models_store_as_written_alone(tmp_path):
    """write_feature_stores (the workflow's one job per movie) writes each store's files as write_feature_store
    alone does."""
    import shutil

    from psybench.attention.responses import write_feature_stores

    stim = write_popout_store(tmp_path / "s.zarr", n_frames=6, seed=0)
    specs = [{"out": tmp_path / "b" / "raw.zarr", "model": "raw", "code_hash": "h1"},
             {"out": tmp_path / "b" / "pyr.zarr", "model": "pyramid", "params": {"levels": 2}, "code_hash": "h2"}]
    write_feature_stores(stim, specs, chunk_frames=4)
    for s in specs:
        alone = write_feature_store(stim, tmp_path / "alone.zarr", model=s["model"], chunk_frames=4,
                                    code_hash=s["code_hash"], **s.get("params", {}))
        files = sorted(p.relative_to(alone) for p in alone.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(s["out"]) for p in s["out"].rglob("*") if p.is_file())
        for f in files:
            assert (alone / f).read_bytes() == (s["out"] / f).read_bytes(), f
        assert open_store(s["out"]).attrs["code_hash"] == s["code_hash"]
        shutil.rmtree(alone)
