"""RAFT optical flow (Teed & Deng 2020) from torchvision, as a batched pair model of psybench.

torchvision's RAFT (:func:`torchvision.models.optical_flow.raft_small`, ``raft_large``) takes
two RGB batches ``(B, 3, H, W)`` scaled to [-1, 1] (the ``OpticalFlow`` preset of its weights:
``normalize(mean=0.5, std=0.5)``) with ``H`` and ``W`` multiples of 8, and returns one flow per
refinement step, ``(B, 2, H, W)`` with ``flow[:, 0]`` = dx (right) and ``flow[:, 1]`` = dy (down)
in pixels, mapping the first image to the second: ``image1(x) ~ image2(x + flow(x))``
(Teed & Deng 2020, sec. 3: the correlation of image 1's features at ``x`` with image 2's at
``x + flow``). That is psybench's convention, ``frame0(x) ~ frame1(x + flow(x))`` in px/frame,
so the flow is only moved to psybench's axis order ``(B, H, W, 2)``.

psybench's frames are luminance ``(B, H, W)`` in [0, 1]: :class:`RaftFlow` repeats them on the
three colour channels, scales them to [-1, 1], pads them (edges replicated, centred) to a
multiple of 8 and to at least :data:`MIN_SIDE` px per side (the correlation pyramid of four
levels, Teed & Deng 2020 sec. 3.2, starts at 1/8 resolution and torchvision asks its feature
maps for at least 16 cells per side), and crops the flow back to the frame.

No weights are ever downloaded: a builder gets a local ``weights`` file (a state dict) or
none (the random initialisation of torchvision's ``weights=None``).

References
----------
.. [TD20] Teed, Z. & Deng, J. (2020). RAFT: Recurrent All-Pairs Field Transforms for Optical
   Flow. ECCV 2020, 402-419.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psybench.registry import register

__all__ = ["MIN_SIDE", "RAFT_REFERENCE", "RaftFlow", "raft_padding"]

RAFT_REFERENCE = "Teed & Deng (2020), RAFT: Recurrent All-Pairs Field Transforms for Optical Flow, ECCV 402-419"

#: Smallest padded side (px) a frame is given before RAFT sees it.
MIN_SIDE = 128

#: Padded sides are multiples of this (RAFT's feature encoders work at 1/8 resolution).
MULTIPLE = 8


def raft_padding(height: int, width: int) -> tuple[int, int, int, int]:
    """``(top, bottom, left, right)`` px that bring a frame to a multiple of 8 and at least 128 px, centred.

    Each side is padded to ``max(MIN_SIDE, ceil(side / 8) * 8)``; an odd excess puts the extra
    pixel at the bottom (right).
    """
    pads = []
    for side in (height, width):
        target = max(MIN_SIDE, -(-side // MULTIPLE) * MULTIPLE)
        before = (target - side) // 2
        pads += [before, target - side - before]
    return pads[0], pads[1], pads[2], pads[3]


class RaftFlow:
    """A RAFT network as psybench's batched pair model: ``model(frames0, frames1) -> flows``.

    Parameters
    ----------
    network : torchvision.models.optical_flow.RAFT
        The network, already on ``device`` and in eval mode.
    device : torch.device
    num_flow_updates : int
        Refinement iterations of the recurrent update operator (Teed & Deng 2020, sec. 3.3;
        12 is torchvision's default and the paper's at evaluation).

    Notes
    -----
    Call it under :func:`torch.inference_mode` (psybench's deep path does); the frames are
    copied into new tensors, so read-only input arrays are fine.
    """

    def __init__(self, network: Any, device: Any, *, num_flow_updates: int = 12) -> None:
        self.network = network
        self.device = device
        self.num_flow_updates = int(num_flow_updates)

    def prepare(self, frames: np.ndarray) -> Any:
        """Luminance ``(B, H, W)`` in [0, 1] -> RAFT's input ``(B, 3, H', W')`` in [-1, 1], padded."""
        import torch
        import torch.nn.functional as F  # noqa: N812 (torch's own convention)

        height, width = frames.shape[1:]
        top, bottom, left, right = raft_padding(height, width)
        x = torch.tensor(np.asarray(frames, dtype=np.float32), device=self.device)[:, None]  # a copy: writable
        if top or bottom or left or right:
            x = F.pad(x, (left, right, top, bottom), mode="replicate")
        x = x.expand(-1, 3, -1, -1)
        # torchvision's OpticalFlow preset, normalize(mean=0.5, std=0.5): [0, 1] -> [-1, 1]
        return ((x - 0.5) / 0.5).contiguous()

    def __call__(self, frames0: np.ndarray, frames1: np.ndarray) -> np.ndarray:
        """Flow ``(B, H, W, 2)`` float32, px/frame, ``frames0[b](x) ~ frames1[b](x + flow[b](x))``."""
        height, width = frames0.shape[1:]
        top, _, left, _ = raft_padding(height, width)
        flows = self.network(self.prepare(frames0), self.prepare(frames1),
                             num_flow_updates=self.num_flow_updates)[-1]
        flows = flows[:, :, top:top + height, left:left + width]
        # (B, 2, H, W) with channel 0 = dx (u), 1 = dy (v): psybench's (B, H, W, 2), (u, v)
        return np.ascontiguousarray(flows.permute(0, 2, 3, 1).to("cpu").numpy(), dtype=np.float32)


def _build(which: str, *, weights: str | None, device: Any, num_flow_updates: int) -> RaftFlow:
    """torchvision's ``raft_small``/``raft_large`` with random weights or the local ``weights`` file."""
    from torchvision.models import optical_flow

    network = getattr(optical_flow, which)(weights=None, progress=False)
    if weights is not None:
        from psybench.deep import load_weights

        load_weights(network, weights, model=which)
    network.to(device).eval()
    return RaftFlow(network, device, num_flow_updates=num_flow_updates)


@register("raft_small", track="motion", kind="pairs", factory=True, reference=RAFT_REFERENCE,
          bounds={"num_flow_updates": (1, 1_000)})
def raft_small(*, weights: str | None = None, device: Any = "cpu", num_flow_updates: int = 12) -> RaftFlow:
    """Build RAFT-small (Teed & Deng 2020, sec. 4: the 1M-parameter model) as a batched pair model.

    Parameters
    ----------
    weights : str or None
        A local state-dict file (loaded with ``weights_only=True``, strict keys); None: random
        initialisation.
    device : torch.device
    num_flow_updates : int
        Iterations of the update operator (Teed & Deng 2020, sec. 3.3).

    Returns
    -------
    RaftFlow
        ``model(frames0, frames1) -> flows (B, H, W, 2)`` px/frame.

    References
    ----------
    Teed & Deng (2020), ECCV 402-419.
    """
    return _build("raft_small", weights=weights, device=device, num_flow_updates=num_flow_updates)


@register("raft_large", track="motion", kind="pairs", factory=True, reference=RAFT_REFERENCE,
          bounds={"num_flow_updates": (1, 1_000)})
def raft_large(*, weights: str | None = None, device: Any = "cpu", num_flow_updates: int = 12) -> RaftFlow:
    """Build RAFT (the full model of Teed & Deng 2020, sec. 3) as a batched pair model.

    Parameters as :func:`raft_small`.

    References
    ----------
    Teed & Deng (2020), ECCV 402-419.
    """
    return _build("raft_large", weights=weights, device=device, num_flow_updates=num_flow_updates)
