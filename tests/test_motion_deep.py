"""Deep motion models: RAFT (Teed & Deng 2020) and a user's torch model through the batched pair stage.

What is compared, on CPU, with one torch thread on both sides (the bits of a float32
reduction depend on the thread count):

* RAFT through psybench (:class:`~psybench.motion.models.raft.RaftFlow` driven by
  :func:`~psybench.motion.responses.batched_pair_blocks`) against torchvision's RAFT called
  directly, with torchvision's own ``OpticalFlow`` preset, on the same weights and batches:
  bit for bit;
* a 120 x 120 movie (padded to 128 x 128 inside psybench, then cropped) against RAFT called
  directly on the movie padded by NumPy (``mode="edge"``, 4 px per side) and cropped: bit for bit;
* batches of 4 pairs against single pairs: within 1e-4 px/frame (the CPU kernels block a batch
  differently, about 1e-5 px/frame here on flows of a few px);
* Lucas-Kanade written in torch (tests/lk_torch.py) through the deep path against psybench's
  numpy ``lucas_kanade``: within 1e-4 px/frame at least 10 px from the edges (the window
  radius, 8 px, plus the one-sided gradients of the outermost pixel), and both near the true
  shift (sign, axes, units);
* on a machine with a CUDA device, the same entry on ``device: cuda`` against ``device: cpu``
  through the response stage: within 1e-3 px/frame (skipped, with that reason, without one).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the deep extra (pip install 'psybench[deep]') is not installed")
optical_flow = pytest.importorskip("torchvision.models.optical_flow")

from lk_torch import build_lucas_kanade  # noqa: E402

from psybench.io.store import ArraySpec, open_store, write_store  # noqa: E402
from psybench.motion.display import Display  # noqa: E402
from psybench.motion.models.flow import lucas_kanade  # noqa: E402
from psybench.motion.models.raft import RaftFlow, raft_large, raft_padding, raft_small  # noqa: E402
from psybench.motion.responses import batched_pair_blocks, run_motion_model  # noqa: E402
from psybench.registry import ModelError, resolve_model  # noqa: E402

CPU = torch.device("cpu")
UPDATES = 3  # refinement steps: the comparisons hold for any number, 3 keeps the tests short


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Every run here on one torch thread, as psybench's jobs by default: bits depend on the thread count."""
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


def _movie(n_t: int, height: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((n_t, height, width), dtype=np.float32)


def _shifted(n_t: int, height: int, width: int, shift: tuple[float, float]) -> np.ndarray:
    """A smooth texture moving by ``shift`` = (right, down) px per frame: frame t(x) = frame 0(x - t shift)."""
    y, x = np.mgrid[0:height, 0:width].astype(float)
    frames = []
    for t in range(n_t):
        xs, ys = x - t * shift[0], y - t * shift[1]
        frames.append(0.5 + 0.2 * np.sin(2 * np.pi * (xs / 17 + ys / 23))
                      + 0.2 * np.cos(2 * np.pi * (xs / 11 - ys / 29)))
    return np.stack(frames).astype(np.float32)


def _through_psybench(model, frames: np.ndarray, batch_size: int) -> np.ndarray:
    with torch.inference_mode():
        return np.concatenate([b["flow"] for b in batched_pair_blocks(model, frames, name="m", batch_size=batch_size)])


def _direct(which: str, state: dict, frames: np.ndarray, batch_size: int) -> np.ndarray:
    """torchvision's RAFT on grey-to-RGB frames with its weights' own preset, pairs batched as psybench does."""
    network = getattr(optical_flow, which)(weights=None, progress=False)
    network.load_state_dict(state)
    network.eval()
    preset = optical_flow.Raft_Small_Weights.DEFAULT.transforms()  # normalize(0.5, 0.5): no download
    out = [np.zeros(frames.shape[1:] + (2,), np.float32)]
    with torch.inference_mode():
        for start in range(1, len(frames), batch_size):
            stop = min(len(frames), start + batch_size)
            img1 = torch.from_numpy(frames[start - 1:stop - 1].copy())[:, None].expand(-1, 3, -1, -1)
            img2 = torch.from_numpy(frames[start:stop].copy())[:, None].expand(-1, 3, -1, -1)
            img1, img2 = preset(img1, img2)
            flow = network(img1, img2, num_flow_updates=UPDATES)[-1]
            out.extend(flow.permute(0, 2, 3, 1).numpy())
    return np.stack(out)


def test_padding_reaches_a_multiple_of_8_and_128_px_centred():
    assert raft_padding(128, 256) == (0, 0, 0, 0)
    assert raft_padding(120, 120) == (4, 4, 4, 4)
    assert raft_padding(60, 133) == (34, 34, 1, 2)  # 128 high; 133 -> 136 wide, the odd pixel right


@pytest.mark.parametrize("which,build", [("raft_small", raft_small), ("raft_large", raft_large)])
def test_raft_through_psybench_equals_torchvision_bit_for_bit(which, build):
    torch.manual_seed(0)
    model = build(weights=None, device=CPU, num_flow_updates=UPDATES)
    assert isinstance(model, RaftFlow)
    frames = _movie(4, 128, 128)
    ours = _through_psybench(model, frames, batch_size=2)
    theirs = _direct(which, model.network.state_dict(), frames, batch_size=2)
    assert ours.shape == (4, 128, 128, 2) and ours.dtype == np.float32
    assert not ours[0].any() and np.abs(ours[1:]).max() > 0.01  # a random network still moves something
    np.testing.assert_array_equal(ours, theirs)


def test_raft_pads_and_crops_like_an_edge_padded_direct_call():
    torch.manual_seed(1)
    model = raft_small(weights=None, device=CPU, num_flow_updates=UPDATES)
    frames = _movie(3, 120, 120, seed=1)
    ours = _through_psybench(model, frames, batch_size=2)
    padded = np.pad(frames, ((0, 0), (4, 4), (4, 4)), mode="edge")
    theirs = _direct("raft_small", model.network.state_dict(), padded, batch_size=2)[:, 4:124, 4:124]
    assert ours.shape == (3, 120, 120, 2)
    np.testing.assert_array_equal(ours, theirs)
    # and the padding matters: torchvision refuses RAFT on the unpadded 120 x 120 frames
    with pytest.raises(ValueError, match="at least 8 \\* 16 = 128"):
        _direct("raft_small", model.network.state_dict(), frames, batch_size=2)


def test_a_batch_of_n_pairs_equals_n_single_pairs():
    torch.manual_seed(2)
    model = raft_small(weights=None, device=CPU, num_flow_updates=UPDATES)
    frames = _movie(6, 96, 136, seed=2)
    batched = _through_psybench(model, frames, batch_size=4)  # batches of 4 and 1 pairs
    single = _through_psybench(model, frames, batch_size=1)
    assert batched.shape == (6, 96, 136, 2)
    np.testing.assert_allclose(batched, single, rtol=0, atol=1e-4)


def test_torch_lucas_kanade_through_the_deep_path_equals_psybench_lucas_kanade():
    shift = (0.5, -0.3)  # right and up
    frames = _shifted(5, 48, 64, shift)
    model = build_lucas_kanade(weights=None, device=CPU)
    deep = _through_psybench(model, frames, batch_size=3)
    numpy_flow = np.stack([np.zeros((48, 64, 2), np.float32)]
                          + [lucas_kanade(frames[t - 1], frames[t], n_warps=1, sigma=0.0) for t in range(1, 5)])
    m = 10
    np.testing.assert_allclose(deep[:, m:-m, m:-m], numpy_flow[:, m:-m, m:-m], rtol=0, atol=1e-4)
    mean = deep[1:, m:-m, m:-m].mean(axis=(0, 1, 2))
    np.testing.assert_allclose(mean, shift, atol=0.05)  # u right, v down, px/frame
    # swapping the components or the sign would break it: the check is not vacuous
    assert np.abs(deep[1:, m:-m, m:-m, ::-1] - numpy_flow[1:, m:-m, m:-m]).max() > 0.1


def _stimulus_store(path, frames: np.ndarray):
    n_t, height, width = frames.shape
    attrs = {"stage": "stimuli", "display": Display(width_px=width, height_px=height).to_attrs(),
             "stimulus": {"name": "texture"}}
    write_store(path, {"frames": ArraySpec(frames, ("t", "y", "x"), chunks=(3, height, width))}, attrs)
    return path


def test_a_user_torch_factory_runs_through_the_response_stage(tmp_path):
    frames = _shifted(6, 40, 48, (-0.4, 0.6))
    stim = _stimulus_store(tmp_path / "stimuli" / "texture.zarr", frames)
    deep = resolve_model({"name": "lk_torch", "callable": "lk_torch:build_lucas_kanade", "kind": "pairs",
                          "factory": True, "batch_size": 2})
    classic = resolve_model({"name": "lk", "algorithm": "lucas_kanade", "params": {"n_warps": 1, "sigma": 0.0}})
    ours = open_store(run_motion_model(deep, stim, tmp_path / "deep.zarr", show_progress=False))
    theirs = open_store(run_motion_model(classic, stim, tmp_path / "lk.zarr", show_progress=False))
    m = 10
    got, want = ours["flow"].compute(), theirs["flow"].compute()
    np.testing.assert_allclose(got[:, m:-m, m:-m], want[:, m:-m, m:-m], rtol=0, atol=1e-4)
    env = ours.attrs["environment"]
    assert env["torch"] == torch.__version__ and env["device"] == "cpu"
    assert env["determinism"] == {"cudnn_benchmark": False, "tf32_matmul": False, "tf32_cudnn": False,
                                  "deterministic_algorithms": False}
    assert ours.attrs["model"]["batch_size"] == 2
    assert "environment" not in theirs.attrs  # a classic model's store is unchanged


def test_raft_with_a_weights_file_through_the_response_stage_equals_torchvision(tmp_path):
    torch.manual_seed(4)
    network = optical_flow.raft_small(weights=None, progress=False)
    torch.save(network.state_dict(), tmp_path / "raft_small.pt")
    frames = _movie(5, 64, 72, seed=4)
    stim = _stimulus_store(tmp_path / "stimuli" / "noise.zarr", frames)
    spec = resolve_model({"name": "raft", "algorithm": "raft_small", "weights": str(tmp_path / "raft_small.pt"),
                          "params": {"num_flow_updates": UPDATES}, "batch_size": 3})
    store = open_store(run_motion_model(spec, stim, tmp_path / "raft.zarr", show_progress=False))
    top, bottom, left, right = raft_padding(64, 72)  # 32 + 32 rows, 28 + 28 columns
    padded = np.pad(frames, ((0, 0), (top, bottom), (left, right)), mode="edge")
    theirs = _direct("raft_small", network.state_dict(), padded, batch_size=3)[:, top:top + 64, left:left + 72]
    np.testing.assert_array_equal(store["flow"].compute(), theirs)
    assert store.attrs["model"]["weights_digest"]
    assert store.attrs["environment"]["torchvision"] is not None


def test_a_model_returning_the_wrong_shape_is_named():
    def bad(frames0, frames1):
        return np.zeros(frames0.shape + (3,), np.float32)

    with pytest.raises(ModelError, match="'m'.*flow"):
        _through_psybench(bad, _movie(3, 16, 16), batch_size=2)


def test_the_frames_a_model_gets_are_writable_copies():
    seen = []

    def scribble(frames0, frames1):
        seen.append(frames0.flags.writeable and frames1.flags.writeable)
        frames0[:] = 9.0  # must not reach frames1 nor the stored frames
        return np.zeros(frames0.shape + (2,), np.float32)

    frames = _movie(4, 8, 8)
    before = frames.copy()
    _through_psybench(scribble, frames, batch_size=2)
    assert seen == [True, True]
    np.testing.assert_array_equal(frames, before)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine: GPU = CPU not compared")
def test_raft_on_gpu_equals_cpu_within_tolerance(tmp_path):
    """The same entry on ``device: cuda`` and ``device: cpu``, through the response stage: float32 on both,
    TF32 and the cuDNN autotuner off (psybench.deep.torch_session), different kernels: within 1e-3 px/frame."""
    torch.manual_seed(3)
    torch.save(optical_flow.raft_small(weights=None, progress=False).state_dict(), tmp_path / "raft.pt")
    stim = _stimulus_store(tmp_path / "stimuli" / "noise.zarr", _movie(5, 120, 160, seed=3))
    flows = {}
    for device in ("cpu", "cuda"):
        spec = resolve_model({"name": "raft", "algorithm": "raft_small", "weights": str(tmp_path / "raft.pt"),
                              "device": device, "params": {"num_flow_updates": UPDATES}, "batch_size": 4})
        store = open_store(run_motion_model(spec, stim, tmp_path / f"{device}.zarr", show_progress=False))
        assert store.attrs["environment"]["device"].startswith(device)
        flows[device] = store["flow"].compute()
    np.testing.assert_allclose(flows["cuda"], flows["cpu"], rtol=0, atol=1e-3)
