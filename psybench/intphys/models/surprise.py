"""Representation-prediction surprise of a user's frame encoder, streamed per movie.

After Garrido et al. 2025 ("Intuitive physics understanding emerges from
self-supervised pretraining on natural videos", Sec. 2 "Violation-of-expectation"
and Sec. 3): a movie is cut into windows of ``window`` frames (16) every ``stride``
frames (2); in each window the first ``context`` frames are the context and the rest
the targets; the window's surprise is the mean L1 distance between the predicted and
the LayerNorm'd target representations; a movie's surprise is the maximum over its
windows (or the mean, ``reduce: mean``). Re-implemented from that description.

The encoder is the user's: ``encoder: "package.module:factory"`` names a function
``factory() -> torch.nn.Module`` mapping frames ``(b, 3, H, W)`` float32 in [0, 1] to
features ``(b, D)`` or tokens ``(b, N, D)``; LayerNorm (no affine parameters) acts on
the last axis. The predictor here is not learned (the paper's is a trained
transformer): ``predictor: last`` predicts every target as the last context
representation (a still world), ``predictor: linear`` extrapolates the last two context
representations linearly (target k frames after the last context frame:
``z[C-1] + k * (z[C-1] - z[C-2])``). A movie shorter than ``window`` is one window of all its
frames. Only one batch's representations and the last ``window - 1`` before it are
held, so memory does not grow with the movie's length; the windows that end in a batch
are scored together.

The model returns the movie's surprise; the responses stage writes
``P = exp(-surprise)`` (:func:`psybench.intphys.models.stream.surprise_to_plausibility`):
a per-movie score, so that no movie's P depends on which movies share its shard.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

import numpy as np

from psybench.registry import register

__all__ = ["RepresentationSurprise", "representation_surprise", "window_surprises", "import_factory"]

PREDICTORS = ("last", "linear")
REDUCTIONS = ("max", "mean")


def import_factory(path: str, *, model: str = "representation_surprise") -> Any:
    """The callable ``package.module:name`` names (a clear error naming ``model`` otherwise)."""
    module, sep, name = str(path).partition(":")
    if not sep or not module or not name:
        raise ValueError(f"model {model!r}: encoder must read 'package.module:factory', got {path!r}")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"model {model!r}: cannot import encoder {path!r} ({exc})") from None
    if not callable(obj):
        raise ValueError(f"model {model!r}: encoder {path!r} is not callable")
    return obj


def _check(window: int, stride: int, context: int, predictor: str, reduce: str) -> None:
    if predictor not in PREDICTORS:
        raise ValueError(f"predictor must be one of {PREDICTORS}, got {predictor!r}")
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be one of {REDUCTIONS}, got {reduce!r}")
    low = 2 if predictor == "linear" else 1
    if not (int(stride) >= 1 and low <= int(context) < int(window)):
        raise ValueError(f"need stride >= 1 and {low} <= context < window, got window={window}, "
                         f"stride={stride}, context={context}")


def window_surprises(z: np.ndarray, *, window: int = 16, stride: int = 2, context: int = 8,
                     predictor: str = "last") -> np.ndarray:
    """Surprise of each window of LayerNorm'd representations ``z`` ``(T, ...)`` (NumPy, float64).

    The reference computation the streamed model reproduces (and the tests compare with).
    """
    _check(window, stride, context, predictor, "max")
    z = np.asarray(z, dtype=np.float64)
    t = z.shape[0]
    if t <= context:
        raise ValueError(f"a movie of {t} frames is too short for {context} context frames")
    w = min(window, t)
    out = []
    for s in range(0, t - w + 1, stride):
        win = z[s : s + w]
        last = win[context - 1]
        k = np.arange(1, w - context + 1).reshape((-1,) + (1,) * (z.ndim - 1))
        pred = last + k * (last - win[context - 2]) if predictor == "linear" else last[None]
        out.append(np.abs(pred - win[context:]).mean())
    return np.array(out)


class RepresentationSurprise:
    """A stream model: ``model(movie) -> surprise`` (see the module docstring)."""

    def __init__(self, encoder: Any, device: Any, *, window: int = 16, stride: int = 2, context: int = 8,
                 predictor: str = "last", reduce: str = "max", eps: float = 1e-5) -> None:
        _check(window, stride, context, predictor, reduce)
        self.encoder, self.device = encoder, device
        self.window, self.stride, self.context = int(window), int(stride), int(context)
        self.predictor, self.reduce, self.eps = predictor, reduce, float(eps)

    def encode(self, scene: np.ndarray) -> Any:
        """LayerNorm'd representations ``(b, ...)`` (a torch tensor) of ``(b, H, W, 3)`` uint8 frames."""
        import torch
        x = torch.from_numpy(np.array(scene)).to(self.device)  # a writable copy of the read-only batch
        x = x.permute(0, 3, 1, 2).to(torch.float32) / 255.0
        f = self.encoder(x)
        if f.ndim < 2 or f.shape[0] != scene.shape[0]:
            raise ValueError(f"the encoder returned shape {tuple(f.shape)} for {scene.shape[0]} frames; "
                             "expected (b, D) or (b, N, D)")
        return torch.nn.functional.layer_norm(f.to(torch.float32), f.shape[-1:], eps=self.eps)

    def _windows(self, wins: Any) -> Any:
        """Surprise of each window of ``wins`` ``(n, w, ...)`` (LayerNorm'd representations), float64 ``(n,)``."""
        import torch
        c = self.context
        last = wins[:, c - 1 : c]
        if self.predictor == "linear":
            k = torch.arange(1, wins.shape[1] - c + 1, dtype=wins.dtype, device=wins.device)
            pred = last + k.reshape((1, -1) + (1,) * (wins.ndim - 2)) * (last - wins[:, c - 2 : c - 1])
        else:
            pred = last
        return (pred - wins[:, c:]).abs().to(torch.float64).flatten(1).mean(1)

    def __call__(self, movie: Iterable[Any]) -> float:
        import torch
        with torch.inference_mode():
            return self._surprise(movie)

    def _surprise(self, movie: Iterable[Any]) -> float:
        import torch
        n_frames = getattr(movie, "n_frames", None)
        w = self.window if n_frames is None else min(self.window, int(n_frames))
        if w <= self.context:
            raise ValueError(f"a movie of {n_frames} frames is too short for {self.context} context frames")
        tail, t, surprises = None, 0, []  # tail: the last w - 1 representations of the batches before
        for frames in movie:
            z = self.encode(frames.scene)
            held = z if tail is None else torch.cat([tail, z])
            first, t = t - (len(held) - len(z)), t + len(z)  # frame of held[0]; frames seen
            # the windows [s, s + w) that end in this batch: s >= 0, s % stride == 0, t - len(z) < s + w <= t
            lo = max(0, t - len(z) - w + 1)
            lo += -lo % self.stride
            if lo <= t - w:  # windows starting at lo, lo + stride, ... <= t - w: views of held, (n, w, ...)
                wins = held[lo - first :].unfold(0, w, self.stride).movedim(-1, 1)
                surprises.extend(self._windows(wins).tolist())
            tail = held[-(w - 1) :]
        if not surprises:
            raise ValueError(f"a movie of {t} frames gave no window of {w} frames")
        return max(surprises) if self.reduce == "max" else float(np.mean(surprises))


@register("representation_surprise", track="intphys", kind="stream", factory=True,
          reference=("Garrido et al. 2025, \"Intuitive physics understanding emerges from self-supervised "
                     "pretraining on natural videos\", Sec. 2-3: surprise = max over 16-frame windows of the "
                     "L1 error of predicted representations (here a non-learned predictor)"),
          bounds={"window": (2, None), "stride": (1, None), "context": (1, None)})
def representation_surprise(*, weights: str | None = None, device: Any = "cpu", encoder: str | None = None,
                            window: int = 16, stride: int = 2, context: int = 8, predictor: str = "last",
                            reduce: str = "max") -> RepresentationSurprise:
    """Build the surprise model around the user's encoder (``weights``: its state dict, strict keys).

    A builder (a factory): called once per job; the model it returns is called per movie.
    ``encoder`` is required (a default of None, so that the config check,
    :func:`psybench.intphys.config_checks.check_config`, names the key before any job).
    """
    import torch
    if not encoder:
        raise ValueError("model 'representation_surprise': params.encoder is required ('package.module:factory')")
    module = import_factory(encoder)()
    if not isinstance(module, torch.nn.Module):
        raise ValueError(f"encoder {encoder!r} returned {type(module).__name__}, not a torch.nn.Module")
    if weights is not None:
        from psybench.deep import load_weights
        load_weights(module, weights, model="representation_surprise")
    module = module.to(device).eval()
    return RepresentationSurprise(module, device, window=window, stride=stride, context=context,
                                  predictor=predictor, reduce=reduce)
