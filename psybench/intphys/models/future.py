"""The short- and long-span future-prediction baselines of IntPhys: a CNN encoder-decoder.

Riochet et al. 2018 (IntPhys V1.0, "Baseline results") score "a resnet and a GAN on
the output of a mask reconstruction CNN, tested in a future prediction task with a
span of 5 and 35 frames", trained on the possible-only train split, with a movie's
plausibility from its prediction error. ``cnn_future`` is the ResNet one: an
encoder-decoder that predicts the scene's object masks (or, ``channel: scene``,
the frames) ``horizon`` frames ahead of its input frames; trained by
:func:`psybench.intphys.train.train_future_stores` (rule ``intphys_train_model``,
one checkpoint per model), scored here. The GAN is left out (docs/real_tasks.md says why).

Choices the paper states: a ResNet-style encoder and a decoder back to the image
("Baseline results"); masks as the predicted signal; spans 5 (this model's default)
and 35 (``horizon: 35``); training on possible movies only ("Train set");
plausibility from the future-prediction error. Choices it leaves open, taken from the
public baseline code its page links (IntPhys-Baselines, ``resnet_ae``) where that has
them, else ours:

- input: ``n_input`` frames (1), each encoded by the same encoder, latents
  concatenated (public code: ``input_seq``, one frame by default);
- resolution: frames area-downsampled to ``size`` x ``size`` (64 in the public code);
- masks: one binary channel per element kind, objects and occluders (the public
  code's ``mask_object`` default); the ground-truth masks of the dataset stand for
  the "mask reconstruction CNN" output (ours: that CNN is trained on the same masks);
- encoder: ResNet-18's stem and first two stages (7x7/2 convolution, 3x3/2 max
  pooling, two stages of two basic blocks, the second with stride 2: 1/8 of the
  input side), at width ``width`` (64 in ResNet-18) and trained from scratch (the
  public code starts from ImageNet weights, which psybench never downloads);
- bottleneck: a linear layer to ``latent`` units with a sigmoid (public code: 512,
  sigmoid), then a linear layer back to the feature map;
- decoder: three stages of nearest-neighbour 2x upsampling, 3x3 convolution, batch
  normalisation and ReLU, and a last 3x3 convolution with a sigmoid (public code);
- loss: mean squared error; Adam with ``lr`` and ``beta1`` (public code: 1e-4, 0.5);
- surprise: the largest mean squared prediction error over a movie's clips (each
  target frame ``horizon`` frames after its inputs); P = exp(-surprise / scale).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from psybench.registry import register

if TYPE_CHECKING:  # annotations only: planning imports the registry without pandas or torch
    import pandas as pd

    from psybench.intphys.models.observation import Observation

__all__ = ["FUTURE_REFERENCE", "MASK_KINDS", "build_network", "cnn_future_surprise", "movie_errors"]

FUTURE_REFERENCE = ("Riochet et al. 2018 (IntPhys V1.0), \"Baseline results\": a ResNet encoder-decoder predicting "
                    "object masks 5 (or 35) frames ahead; surprise = largest prediction error over time")
#: The element kinds that make the mask channels (public baseline code: objects and occluders).
MASK_KINDS = ("object", "occluder")


def build_network(*, in_channels: int, out_channels: int, n_input: int, size: int, width: int, latent: int) -> Any:
    """The encoder-decoder (a ``torch.nn.Module``): ``(b, n_input*C, s, s) -> (b, C, s, s)`` in [0, 1]."""
    import torch
    from torch import nn

    if size % 8:
        raise ValueError(f"size must be a multiple of 8 (the encoder halves it three times), got {size}")

    class Block(nn.Module):  # ResNet basic block (He et al. 2016, fig. 2)
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + self.down(x))

    class FuturePredictor(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w, side = width, size // 8
            self.n_input, self.channels, self.side, self.width = n_input, in_channels, side, w
            self.encoder = nn.Sequential(
                nn.Conv2d(in_channels, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                nn.MaxPool2d(3, 2, 1), Block(w, w, 1), Block(w, w, 1), Block(w, 2 * w, 2), Block(2 * w, 2 * w, 1))
            self.bottleneck = nn.Sequential(nn.Linear(2 * w * side * side, latent), nn.Sigmoid())
            self.expand = nn.Linear(n_input * latent, 2 * w * side * side)
            layers: list[nn.Module] = []
            cin = 2 * w
            for cout in (4 * w, 2 * w, w):
                layers += [nn.Conv2d(cin, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU(), nn.Upsample(scale_factor=2)]
                cin = cout
            self.decoder = nn.Sequential(*layers, nn.Conv2d(cin, out_channels, 3, 1, 1), nn.Sigmoid())

        def forward(self, x):
            b = x.shape[0]
            frames = x.reshape(b * self.n_input, self.channels, x.shape[-2], x.shape[-1])
            z = self.bottleneck(self.encoder(frames).flatten(1)).reshape(b, -1)
            return self.decoder(self.expand(z).reshape(b, 2 * self.width, self.side, self.side))

    return FuturePredictor()


def movie_errors(net: Any, channels: np.ndarray, *, horizon: int, n_input: int, batch_size: int = 32,
                 device: Any = "cpu") -> np.ndarray:
    """Mean squared prediction error of every clip of one movie, in time order.

    ``channels``: the movie as :func:`psybench.intphys.clips.movie_channels` gives it,
    ``(T, C, s, s)``; ``net`` in eval mode. Returns shape ``(n_clips,)``.
    """
    import torch

    from psybench.intphys.clips import clip_starts

    starts = clip_starts(channels.shape[0], horizon=horizon, n_input=n_input)
    span = n_input - 1 + horizon
    x = torch.from_numpy(np.ascontiguousarray(channels))
    out = []
    for a in range(0, len(starts), batch_size):
        t = starts[a : a + batch_size]
        inputs = torch.stack([x[k : k + n_input].reshape(-1, *x.shape[-2:]) for k in t]).to(device)
        pred = net(inputs).float().cpu()
        out.append(((pred - x[t + span]) ** 2).mean(dim=(1, 2, 3)).double().numpy())
    return np.concatenate(out)


@register("cnn_future", track="intphys", kind="plausibility", reference=FUTURE_REFERENCE,
          bounds={"horizon": (1, None), "n_input": (1, None), "size": (8, 1024), "width": (1, 512),
                  "latent": (1, 65536), "epochs": (1, None), "batch_size": (1, None), "lr": (0, None),
                  "beta1": (0, 1), "window": (1, None), "checkpoint_every": (1, None), "scale": (0, None),
                  "threads": (1, 256)})
def cnn_future_surprise(observation: Observation, *, weights: Any, horizon: int = 5, n_input: int = 1,
                        channel: str = "masks", size: int = 64, width: int = 64, latent: int = 512,
                        epochs: int = 1, batch_size: int = 32, lr: float = 1e-4, beta1: float = 0.5,
                        seed: int = 0, window: int = 4, checkpoint_every: int = 50, device: str = "cpu",
                        amp: bool = False, scale: float = 0.01, threads: int = 1) -> pd.Series:
    """P = exp(-max_t error_t / scale) of the trained encoder-decoder, for every movie of a shard.

    Parameters
    ----------
    weights : path-like
        The checkpoint of rule ``intphys_train_model``
        (:func:`psybench.intphys.train.train_future_stores`); the network, span and
        channels are the ones it was trained with (``horizon`` ... ``amp`` are its
        training parameters: they reach the scoring only through it).
    scale : float
        P = exp(-s / scale), s the movie's largest mean squared error.
    device : str
        Where the network runs (``cpu``, ``auto``, ``cuda``, ``cuda:N``).
    """
    import pandas as pd

    from psybench.deep import require_torch, resolve_device
    from psybench.intphys.checkpoint import read_checkpoint
    from psybench.intphys.clips import movie_channels

    torch = require_torch("cnn_future")
    ckpt = read_checkpoint(weights)
    cfg = ckpt["config"]
    torch.set_num_threads(int(threads))
    dev = resolve_device(device, model="cnn_future")
    net = network_of(cfg)
    net.load_state_dict(ckpt["state_dict"], strict=True)
    net.to(dev).eval()
    source = observation.masks if cfg["channel"] == "masks" else observation.scene
    if source is None:
        raise ValueError(f"cnn_future: the shard has no {cfg['channel']!r} array")
    p = []
    with torch.inference_mode():
        for i, raw in enumerate(source):
            names = observation.masks_grayscale[i] if cfg["channel"] == "masks" else None
            x = movie_channels(raw, channel=cfg["channel"], size=cfg["size"], names=names, mask_kinds=MASK_KINDS)
            err = movie_errors(net, x, horizon=cfg["horizon"], n_input=cfg["n_input"], device=dev)
            p.append(math.exp(-float(err.max()) / scale))
    return pd.Series(p, index=list(observation.movies), dtype=float)


def network_of(cfg: dict[str, Any]) -> Any:
    """The (untrained) network a training config describes."""
    c = 3 if cfg["channel"] == "scene" else len(MASK_KINDS)
    return build_network(in_channels=c, out_channels=c, n_input=cfg["n_input"], size=cfg["size"],
                         width=cfg["width"], latent=cfg["latent"])
