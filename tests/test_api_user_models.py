"""User model functions with ordinary keyword parameters.

A user writes ``def estimate(frame0, frame1, radius=3)`` and configures
``params: {radius: 5}``: the registry reads every argument after the kind's data
arguments as a parameter, keyword-only or not; a parameter without a default must
be configured; any refusal says what is accepted and how to declare one.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from psybench.model_params import model_parameters
from psybench.motion.display import Display
from psybench.motion.responses import motion_response_blocks
from psybench.registry import ModelError, list_models, resolve_model

USER_MODULE = '''
import numpy as np
import pandas as pd


def ordinary(frame0, frame1, radius=3, gain=1.0):
    """Constant flow radius * gain to the right: shows which parameter values arrive."""
    out = np.zeros(frame0.shape + (2,), np.float32)
    out[..., 0] = radius * gain
    return out


def required(frame0, frame1, radius):
    return np.full(frame0.shape + (2,), float(radius), np.float32)


def one_frame(frame0, radius=3):
    return np.zeros(frame0.shape + (2,), np.float32)


def lone(frame0, *, radius=3):
    return np.zeros(frame0.shape + (2,), np.float32)


def positional_only(frame0, frame1, /, radius=3):
    return np.full(frame0.shape + (2,), float(radius), np.float32)


def saliency(frames, sigma=2.0):
    return np.repeat(np.asarray(frames)[..., None], 2, axis=-1) * sigma


def plausibility(observation, k=3):
    return pd.Series(dtype=float)


def stream(chunks, display, gain=1.0):
    for c in chunks:
        yield {"flow": np.full(c.shape + (2,), gain, np.float32)}
'''


@pytest.fixture
def user(tmp_path, monkeypatch):
    (tmp_path / "psybench_api_user_models.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "psybench_api_user_models"


def test_ordinary_keyword_parameters_are_accepted_and_reach_the_model(user):
    spec = resolve_model({"name": "mine", "callable": f"{user}:ordinary", "params": {"radius": 5}}, track="motion")
    assert spec.params == {"radius": 5, "gain": 1.0}  # configured value, the other default
    assert spec.algorithm.defaults == {"radius": 3, "gain": 1.0}
    frames = np.zeros((3, 8, 6), np.float32)
    flows = np.concatenate([b["flow"] for b in motion_response_blocks(spec, frames, Display(width_px=6, height_px=8))])
    # frame 0 has no predecessor (zero flow), frames 1-2 get radius * gain = 5
    np.testing.assert_array_equal(flows[1:, ..., 0], 5.0)
    np.testing.assert_array_equal(flows[0], 0.0)


def test_parameters_without_default_must_be_configured(user):
    spec = resolve_model({"name": "r", "callable": f"{user}:required", "params": {"radius": 2}})
    assert spec.params == {"radius": 2}
    with pytest.raises(ModelError, match=r"model 'r': parameter\(s\) \['radius'\] of 'psybench_api_user_models:"
                                         r"required' have no default: give them under 'params'.*params: \{radius: "):
        resolve_model({"name": "r", "callable": f"{user}:required"})


def test_unknown_parameter_error_says_how_to_declare_one(user):
    with pytest.raises(ModelError, match=r"model 'm': unknown parameter\(s\) \['size'\] for algorithm "
                                         r"'psybench_api_user_models:ordinary'; accepted: \['gain', 'radius'\] "
                                         r"\(a parameter is an argument after the data \(frame0, frame1\), e\.g\. "
                                         r"def estimate\(frame0, frame1, size=\.\.\.\), or \*\*kwargs\)"):
        resolve_model({"name": "m", "callable": f"{user}:ordinary", "params": {"size": 1}})


def test_too_few_data_arguments_is_named(user):
    with pytest.raises(ModelError, match=r"model 'lone': 'psybench_api_user_models:lone' takes 1 positional "
                                         r"argument\(s\); a 'pair' model takes 2 \(frame0, frame1\), then its "
                                         r"parameters, e\.g\. def estimate\(frame0, frame1, radius=3\)"):
        resolve_model({"name": "lone", "callable": f"{user}:lone"})


def test_data_arguments_are_never_parameters(user):
    spec = resolve_model({"name": "p", "callable": f"{user}:positional_only", "params": {"radius": 4}})
    assert spec.params == {"radius": 4}
    # one_frame: radius counts as the second data argument of a pair model, so it is not a parameter
    assert model_parameters(__import__(user).one_frame, "pair") == ({}, ())
    with pytest.raises(ModelError, match=r"model 'one': unknown parameter\(s\) \['radius'\].*accepted: \[\]"):
        resolve_model({"name": "one", "callable": f"{user}:one_frame", "params": {"radius": 1}})


@pytest.mark.parametrize("function,kind,track,expected", [
    ("saliency", "saliency", "attention", {"sigma": 2.0}),
    ("plausibility", "plausibility", "intphys", {"k": 3}),
    ("stream", "stream", "motion", {"gain": 1.0}),  # display is passed by the runner, never a parameter
])
def test_every_kind_reads_ordinary_parameters(user, function, kind, track, expected):
    spec = resolve_model({"name": "x", "callable": f"{user}:{function}", "kind": kind}, track=track)
    assert dict(spec.params) == expected


def test_builtin_defaults_are_unchanged():
    """psybench's own algorithms keep exactly their keyword-only parameters as defaults."""
    rows = {r["name"]: r["params"] for r in list_models("motion")}
    assert rows["horn_schunck"].startswith("alpha=") and "frame0" not in rows["horn_schunck"]
    assert "display" not in rows["tlapale_v1mt"]
