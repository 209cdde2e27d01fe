"""Labelled stores: every store kind opens with xarray, coordinates with units, no warning.

Each kind is written by its own library writer on a tiny input, gets Snakemake's
``.snakemake_timestamp`` touch file (what ``directory()`` outputs receive), and is
opened with ``xarray.open_zarr`` under warnings-as-errors. Coordinates are checked
against their definitions: frame ``i`` at ``i * 1000 / frames_per_s`` ms (Display),
pixel centres in deg from the image centre, a velocity grid in deg/s.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from psybench.attention.responses import write_feature_store
from psybench.attention.stimuli import write_popout_store
from psybench.intphys.generate import generate_intphys
from psybench.intphys.ingest import ingest_shard
from psybench.io.store import ArraySpec, Coordinate, open_store, write_store
from psybench.motion.display import Display
from psybench.motion.readouts import compute_readouts
from psybench.motion.responses import run_motion_model
from psybench.motion.stimuli import stimulus_set, write_stimulus
from psybench.registry import resolve_model

DISPLAY = {"px_per_deg": 4, "frames_per_s": 50, "width_px": 48, "height_px": 40, "supersample": 1}


def _open(path) -> xr.Dataset:
    (path / ".snakemake_timestamp").touch()  # as Snakemake leaves in every directory() output
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = xr.open_zarr(path)
        ds.load()
    return ds


def _stream(chunks, *, display, gain=1.0):
    """A stream model with a distributed representation over three velocities (px/frame)."""
    for c in chunks:
        p = np.zeros(c.shape + (3,), np.float32)
        p[..., 1] = 1.0
        yield {"flow": np.full(c.shape + (2,), gain, np.float32), "p": p}


_stream.velocities = [[0.0, 0.0], [1.0, 0.0], [0.0, -2.0]]


@pytest.fixture(scope="module")
def motion_stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("stores")
    display = Display.from_config(DISPLAY)
    cfg = {"duration_ms": 100, "directions_deg": [0], "diamonds": {"size_deg": 4, "speed_deg_s": 4,
                                                                    "directions_deg": [0]}}
    name, spec = next(iter(stimulus_set(cfg, display=display, experiments=["diamonds"]).items()))
    stim = write_stimulus(name, spec, DISPLAY, root / "stimuli" / f"{name}.zarr")
    pair = run_motion_model(resolve_model({"name": "hs", "algorithm": "horn_schunck"}), stim,
                            root / "responses/hs" / f"{name}.zarr")
    stream = run_motion_model(resolve_model({"name": "st", "callable": _stream, "kind": "stream"}), stim,
                              root / "responses/st" / f"{name}.zarr")
    (readout,) = compute_readouts([pair], [root / "readouts/hs" / f"{name}.zarr"])
    return {"stimulus": stim, "pair": pair, "stream": stream, "readout": readout}


def test_motion_stimulus_and_responses_have_t_ms_and_deg(motion_stores):
    for kind in ("stimulus", "pair", "stream"):
        ds = _open(motion_stores[kind])
        assert ds["t"].attrs["units"] == "ms" and ds["x"].attrs["units"] == "deg" == ds["y"].attrs["units"]
        np.testing.assert_allclose(ds["t"].values, 20.0 * np.arange(ds.sizes["t"]))  # 50 frames/s
        assert ds.sizes["x"] == 48 and ds.sizes["y"] == 40
        np.testing.assert_allclose(ds["x"].values[[0, -1]], [-5.875, 5.875])  # (0.5 - 24) / 4 px/deg
        np.testing.assert_allclose(ds["y"].values[[0, -1]], [-4.875, 4.875])
        assert ds["x"].values.mean() == pytest.approx(0.0)


def test_velocity_grid_in_deg_per_s(motion_stores):
    ds = _open(motion_stores["stream"])
    assert ds["velocity_u"].attrs["units"] == "deg/s" and "velocity_u" in ds.coords
    # px/frame x 50 frames/s / 4 px/deg
    np.testing.assert_allclose(ds["velocity_u"].values, [0.0, 12.5, 0.0])
    np.testing.assert_allclose(ds["velocity_v"].values, [0.0, 0.0, -25.0])
    assert ds["p"].dims == ("t", "y", "x", "velocity")


def test_readout_store_is_labelled_and_verified(motion_stores):
    ds = _open(motion_stores["readout"])
    assert ds["t"].attrs["units"] == "ms" and ds["speed_deg_s"].dims == ("t",)
    open_store(motion_stores["readout"], deep=True)  # coordinates are in the checksum manifest
    open_store(motion_stores["stream"], deep=True)


def test_attention_stimulus_and_feature_stores(tmp_path):
    stim = write_popout_store(tmp_path / "popout.zarr", n_frames=6, n_distractors=4, frames_per_s=10.0,
                              px_per_deg=32.0)
    ds = _open(stim)
    np.testing.assert_allclose(ds["t"].values, 100.0 * np.arange(6))
    assert ds["x"].attrs["units"] == "deg" and ds.sizes["x"] == 40 and ds.sizes["y"] == 30
    # 640 x 480 source px on a 40 x 30 grid: cells of 16 px, centres at (j + 0.5) * 16 - 320 px, / 32 px/deg
    np.testing.assert_allclose(ds["x"].values[[0, -1]], [-9.75, 9.75])
    np.testing.assert_allclose(ds["y"].values[[0, -1]], [-7.25, 7.25])
    feats = write_feature_store(stim, tmp_path / "raw.zarr", model="raw")
    fds = _open(feats)
    assert fds["maps"].dims[:3] == ("t", "y", "x")
    np.testing.assert_array_equal(fds["x"].values, ds["x"].values)


def test_intphys_shard_store(tmp_path):
    generate_intphys(tmp_path, "dev", blocks=("O1",), n_frames=8, height=16, width=16)
    ingest_shard(tmp_path, "dev", tmp_path / "s.zarr", tmp_path / "s.csv", shard_size=4)
    ds = _open(tmp_path / "s.zarr")
    assert ds["t"].attrs["units"] == "frame" and ds["x"].attrs["units"] == "px"
    np.testing.assert_array_equal(ds["t"].values, np.arange(8))
    assert ds["scene"].dims == ("movie", "t", "y", "x", "c")


def test_coordinate_length_must_match_its_dimension(tmp_path):
    with pytest.raises(ValueError, match=r"coordinate 't': 3 values for dimension 't' of array 'a', shape \[4, 2\]"):
        write_store(tmp_path / "bad.zarr", {"a": ArraySpec(np.zeros((4, 2)), ("t", "x"))},
                    coords={"t": Coordinate(np.arange(3.0), "ms")})
    assert not (tmp_path / "bad.zarr").exists()
