"""The one model registry of every track: built-ins, user callables and installed plugins."""

from __future__ import annotations

import pytest

from psybench import registry
from psybench.config import ConfigError, track_models
from psybench.registry import ModelError, list_models, resolve_model

PLUGIN = '''
from psybench.registry import register


@register("demo_flow", track="motion", kind="pair", reference="a plugin of the tests")
def demo_flow(frame0, frame1, *, gain=1.0):
    """Constant flow, from an installed plugin."""
    import numpy as np

    return np.full(frame0.shape + (2,), gain, np.float32)
'''


def _install(tmp_path, monkeypatch, entry_point: str, module: str = PLUGIN) -> None:
    """A distribution on sys.path whose module ``name`` declares ``entry_point`` in the psybench.models group."""
    name = entry_point.split("=")[1].strip().split(":")[0]
    (tmp_path / f"{name}.py").write_text(module)
    dist = tmp_path / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[psybench.models]\n{entry_point}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    # a fresh registry state, so the plugin is looked up (and the real one is restored after)
    monkeypatch.setattr(registry, "_LOADED", set())
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))


def test_every_track_lists_its_models_with_defaults():
    rows = list_models()
    tracks = {r["track"] for r in rows}
    assert tracks == {"motion", "attention", "intphys"}
    by_name = {(r["track"], r["name"]): r for r in rows}
    assert ("motion", "horn_schunck") in by_name and ("attention", "itti") in by_name
    assert ("intphys", "tracking") in by_name
    assert "value=0.5" in by_name[("intphys", "constant")]["params"]
    assert all(r["track"] == "attention" for r in list_models("attention"))
    with pytest.raises(ModelError, match="unknown track 'sound'"):
        list_models("sound")


def test_installed_plugin_registers_through_entry_point(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, "demo = psyplugin_demo")
    names = [r["name"] for r in list_models("motion")]
    assert "demo_flow" in names
    spec = resolve_model({"name": "mine", "algorithm": "demo_flow", "params": {"gain": 2.0}}, track="motion")
    assert spec.params == {"gain": 2.0} and spec.kind == "pair"
    # and from config, like any built-in
    models = track_models({"motion": {"models": [{"name": "d", "algorithm": "demo_flow"}]}}, "motion")
    assert models["d"].params == {"gain": 1.0}


def test_broken_plugin_is_named(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, "demo = psyplugin_broken", module="raise ImportError('no such dependency')\n")
    with pytest.raises(ModelError, match=r"entry point 'demo' \(psyplugin_broken\).*no such dependency"):
        list_models()


def test_plugin_function_must_be_registered(tmp_path, monkeypatch):
    _install(tmp_path, monkeypatch, "demo = psyplugin_plain:plain", module="def plain(frame0, frame1):\n    pass\n")
    with pytest.raises(ModelError, match="not decorated with psybench.registry.register"):
        list_models()


@pytest.mark.parametrize(
    "track,entries,expected",
    [
        ("intphys", {"constant": {"kind": "constant"}}, r"intphys\.models: expected a list"),
        ("motion", [{"name": "x", "algorithm": "raw"}], r"motion\.models\[0\].*track 'attention', not 'motion'"),
        ("attention", ["raw"], r"attention\.models\[0\]: 'raw' is not a model entry"),
    ],
    ids=["old-mapping", "other-track", "bare-name"],
)
def test_model_entries_of_another_shape_name_the_key_and_show_the_shape(track, entries, expected):
    with pytest.raises(ConfigError, match=expected) as err:
        track_models({track: {"models": entries}}, track)
    assert "name: NAME, algorithm:" in str(err.value)
