"""psybench.deep: weights from local files, devices, torch sessions and factory models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xxhash

from psybench.deep import (
    build_model,
    built,
    environment_attrs,
    load_weights,
    resolve_device,
    torch_session,
    weights_digest,
)
from psybench.handoff import describe_model, model_from_description
from psybench.registry import DEFAULT_BATCH_SIZE, ModelError, resolve_model

torch = pytest.importorskip("torch")
REPO = Path(__file__).resolve().parents[1]


class TinyPairs(torch.nn.Module):
    """A batched pair model: flow u = gain * (frame1 - frame0), v = 0 (one 1x1 convolution)."""

    def __init__(self, gain: float = 1.0):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 1, 1, bias=False)
        with torch.no_grad():
            self.conv.weight[:] = torch.tensor([-gain, gain]).reshape(1, 2, 1, 1)

    def forward(self, frames0, frames1):
        x = torch.stack([torch.as_tensor(frames0), torch.as_tensor(frames1)], dim=1)
        u = self.conv(x)[:, 0]
        return torch.stack([u, torch.zeros_like(u)], dim=-1).numpy()


def build_tiny(*, weights, device, gain=1.0):
    """Builder of :class:`TinyPairs`: random-free init from ``gain``, then the weights file if any."""
    net = TinyPairs(gain)
    if weights is not None:
        load_weights(net, weights, model="tiny")
    return net.to(device).eval()


def _entry(**extra):
    return {"name": "tiny", "callable": f"{__name__}:build_tiny", "kind": "pairs", "factory": True, **extra}


def test_load_weights_round_trip_and_state_dict_wrapper(tmp_path):
    src = TinyPairs(3.0)
    path = tmp_path / "w.pt"
    torch.save({"state_dict": src.state_dict()}, path)
    dst = TinyPairs(1.0)
    load_weights(dst, path, model="tiny")
    assert torch.equal(dst.conv.weight, src.conv.weight)


def test_load_weights_names_model_file_and_keys(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"conv.weight": torch.zeros(1, 2, 1, 1), "extra.bias": torch.zeros(1)}, path)
    with pytest.raises(ModelError, match=r"model 'tiny'.*w\.pt.*unexpected keys \['extra\.bias'\]"):
        load_weights(TinyPairs(), path, model="tiny")
    torch.save({}, path)
    with pytest.raises(ModelError, match=r"model 'tiny'.*w\.pt.*missing keys \['conv\.weight'\]"):
        load_weights(TinyPairs(), path, model="tiny")
    torch.save({"conv.weight": torch.zeros(1, 3, 1, 1)}, path)
    with pytest.raises(ModelError, match=r"model 'tiny'.*w\.pt.*does not fit"):
        load_weights(TinyPairs(), path, model="tiny")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(ModelError, match=r"model 'tiny'.*cannot read weights file.*junk\.pt"):
        load_weights(TinyPairs(), tmp_path / "junk.pt", model="tiny")
    with pytest.raises(ModelError, match=r"model 'tiny'.*cannot read weights file.*absent\.pt"):
        load_weights(TinyPairs(), tmp_path / "absent.pt", model="tiny")


def test_weights_digest_is_xxh3_128_of_the_bytes(tmp_path):
    data = np.random.default_rng(0).bytes(5_000_000)  # more than one read block
    path = tmp_path / "w.pt"
    path.write_bytes(data)
    assert weights_digest(path) == xxhash.xxh3_128_hexdigest(data)
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert weights_digest(path) != xxhash.xxh3_128_hexdigest(data)


def test_resolve_device():
    assert resolve_device("cpu", model="m") == torch.device("cpu")
    auto = resolve_device("auto", model="m")
    assert auto == torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    for bad in ("gpu", "cuda:", "cuda:01", "CPU", 0):
        with pytest.raises(ModelError, match=r"model 'm'.*'device' must be one of"):
            resolve_device(bad, model="m")
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ModelError, match=rf"model 'm': device 'cuda:{n}' is not available"):
        resolve_device(f"cuda:{n}", model="m")


def test_torch_session_sets_and_restores():
    before = (torch.get_num_threads(), torch.backends.cudnn.benchmark,
              torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    try:
        with torch_session(threads=1, device=torch.device("cpu")):
            assert torch.get_num_threads() == 1
            assert torch.is_inference_mode_enabled()
            attrs = environment_attrs(torch.device("cpu"))
            assert attrs["determinism"] == {"cudnn_benchmark": False, "tf32_matmul": False, "tf32_cudnn": False,
                                            "deterministic_algorithms": False}
        assert not torch.is_inference_mode_enabled()
        assert torch.backends.cudnn.benchmark and torch.backends.cuda.matmul.allow_tf32
        assert torch.backends.cudnn.allow_tf32
        assert torch.get_num_threads() == before[0]
    finally:
        torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32 = before[1], before[2]
        torch.backends.cudnn.allow_tf32 = before[3]


def test_environment_attrs_versions():
    import torchvision

    attrs = environment_attrs(torch.device("cpu"))
    assert attrs["torch"] == torch.__version__ and attrs["torchvision"] == torchvision.__version__
    assert attrs["cuda"] == torch.version.cuda and attrs["device"] == "cpu"


def test_factory_builds_once_and_runs_batches(tmp_path):
    path = tmp_path / "w.pt"
    torch.save(TinyPairs(2.5).state_dict(), path)
    spec = resolve_model(_entry(weights=str(path)), track="motion")
    assert spec.algorithm.factory and spec.params == {"gain": 1.0} and spec.batch_size == DEFAULT_BATCH_SIZE
    f0 = np.zeros((3, 4, 5), np.float32)
    f1 = np.full((3, 4, 5), 0.5, np.float32)
    with built(spec, threads=1) as (model, device):
        assert device == torch.device("cpu") and torch.get_num_threads() == 1
        flow = model(f0, f1)
    assert flow.shape == (3, 4, 5, 2) and flow.dtype == np.float32
    np.testing.assert_allclose(flow[..., 0], 1.25)  # the file's gain (2.5), not the param's (1.0)
    np.testing.assert_array_equal(flow[..., 1], 0.0)
    with torch_session(threads=1):
        model, device = build_model(resolve_model(_entry(params={"gain": 4.0}), track="motion"), threads=1)
        np.testing.assert_allclose(model(f0, f1)[..., 0], 2.0)  # no weights: the builder's own init


def test_plain_function_is_bound_to_its_params():
    def estimate(frames0, frames1, *, k=1.0):
        return np.stack([k * (frames1 - frames0), 0 * frames0], axis=-1)

    spec = resolve_model({"name": "plain", "callable": estimate, "kind": "pairs", "params": {"k": 3.0}},
                         track="motion")
    with built(spec, threads=1) as (model, device):
        assert device is None
        np.testing.assert_allclose(model(np.zeros((1, 2, 2)), np.ones((1, 2, 2)))[..., 0], 3.0)


def test_description_carries_weights_digest_and_detects_a_changed_file(tmp_path):
    path = tmp_path / "w.pt"
    torch.save(TinyPairs(2.0).state_dict(), path)
    desc = describe_model(resolve_model(_entry(weights=str(path), batch_size=4), track="motion"))
    assert desc["factory"] is True and desc["weights"] == str(path) and desc["device"] == "cpu"
    assert desc["batch_size"] == 4 and desc["weights_digest"] == weights_digest(path)
    again = model_from_description(desc)
    assert again.weights == str(path) and again.batch_size == 4 and again.algorithm.factory
    torch.save(TinyPairs(3.0).state_dict(), path)
    assert describe_model(resolve_model(_entry(weights=str(path), batch_size=4), track="motion")) != desc
    with pytest.raises(ModelError, match=r"model 'tiny': weights file .*changed since the workflow was planned"):
        model_from_description(desc)


def test_classic_descriptions_have_no_new_keys():
    desc = describe_model(resolve_model({"name": "hs", "algorithm": "horn_schunck"}, track="motion"))
    assert set(desc) == {"name", "algorithm", "source", "kind", "params", "params_hash"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"weights": "no/such/file.pt"}, r"'weights' file 'no/such/file.pt' does not exist"),
        ({"weights": "."}, r"'weights' '\.' is not a file"),
        ({"device": "gpu0"}, r"'device' must be one of auto, cpu, cuda, cuda:N"),
        ({"batch_size": 0}, r"'batch_size' must be an integer >= 1"),
        ({"resources": {"gpu": -1}}, r"'resources.gpu' must be a non-negative integer"),
        ({"resources": {"gpu": 0.5}}, r"'resources.gpu' must be a non-negative integer"),
        ({"resources": {"threads": 0}}, r"'resources.threads' must be an integer >= 1"),
        ({"resources": {"mem_mb": "1G"}}, r"'resources.mem_mb' must be a number > 0"),
        ({"resources": {"gpus": 1}}, r"'resources' has unknown key\(s\) \['gpus'\]"),
        ({"factory": "yes"}, r"'factory' must be true or false"),
    ],
)
def test_bad_deep_keys_name_the_key(extra, message):
    with pytest.raises(ModelError, match=rf"model 'tiny': {message}"):
        resolve_model(_entry(**extra), track="motion")


def test_weights_and_device_need_a_factory():
    with pytest.raises(ModelError, match=r"model 'hs': 'weights' applies to a factory model"):
        resolve_model({"name": "hs", "algorithm": "horn_schunck", "weights": __file__}, track="motion")
    with pytest.raises(ModelError, match=r"model 'hs': 'batch_size' applies to a deep model"):
        resolve_model({"name": "hs", "algorithm": "horn_schunck", "batch_size": 2}, track="motion")
    spec = resolve_model({"name": "hs", "algorithm": "horn_schunck", "resources": {"mem_mb": 500, "gpu": 0}},
                         track="motion")
    assert spec.resources == {"mem_mb": 500, "gpu": 0}


def test_a_builder_must_take_weights_and_device():
    def build(*, gain=1.0):
        return None

    with pytest.raises(ModelError, match=r"is a factory but does not take \['weights', 'device'\]"):
        resolve_model({"name": "b", "callable": build, "kind": "pairs", "factory": True}, track="motion")


def test_intphys_stream_description_names_its_track():
    def build(*, weights, device, window=2):
        return lambda movie: 0.0

    spec = resolve_model({"name": "enc", "callable": build, "kind": "stream", "factory": True}, track="intphys")
    desc = describe_model(spec)
    assert desc["track"] == "intphys" and desc["kind"] == "stream"


def test_core_imports_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['torchvision'] = None\n"
        "import psybench, psybench.registry, psybench.handoff, psybench.config, psybench.deep\n"
        "from psybench.registry import resolve_model\n"
        "spec = resolve_model({'name': 'hs', 'algorithm': 'horn_schunck'}, track='motion')\n"
        "from psybench.deep import require_torch\n"
        "try:\n"
        "    require_torch('raft')\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert "model 'raft' needs PyTorch" in out.stdout and "pip install 'psybench[deep]'" in out.stdout


def test_readme_and_ci_install_the_pinned_deep_extra():
    """The README's two commands install the deep extra, CI runs the README's test command word for
    word, and the extra pins the torch/torchvision pair that is installed here."""
    import tomllib

    import torchvision

    readme = (REPO / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("python3 -m venv .venv && ")]
    assert len(commands) == 2 and all("pip install -e '.[test,deep]'" in c for c in commands)
    test_command = next(c for c in commands if c.endswith("python -m pytest"))
    assert test_command in (REPO / ".ci" / "run").read_text().splitlines()
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["deep"]
    assert extra == ["torch==2.14.1", "torchvision==0.29.1"]
    assert (torch.__version__.split("+")[0], torchvision.__version__.split("+")[0]) == ("2.14.1", "0.29.1")
