"""Deep attention models: CNN feature families (the map-output kind: :mod:`psybench.attention.map_models`).

Two ways a network enters the attention track, both fed the RGB movie frames
(``uint8``, shape (B, H, W, 3)) rather than the grey model grid:

* **features** -- a network's layer activations as a *feature family*: the base
  maps the paper's Fisher tuning reads like those of raw patches, the Gaussian
  pyramid or the Itti model (Shic & Scassellati 2007, sec. 2.2 and 5.2).
  :class:`CNNFeatures` takes layers of a torchvision ResNet (He et al. 2016) or VGG
  (Simonyan & Zisserman 2015) with
  ``torchvision.models.feature_extraction.create_feature_extractor``, on frames
  resized to a chosen resolution and normalised with the ImageNet mean and SD that
  torchvision documents for its classification weights, in channels-last memory.
  psybench area-pools (:func:`area_resize`) each layer to the model grid and stacks
  the layers as channels (called alone, the model pools them to the finest selected
  layer's size).
* **map** -- a model that outputs one saliency map or log-density per frame, the
  way the MIT saliency benchmark scores models (Bylinskii et al. 2019) and
  DeepGaze-style networks work (Kummerer, Wallis & Bethge 2016). The map is
  area-resized to the grid (a log-density as its density, so that the mass
  of each cell is kept) and scored without any tuning by the MIT metrics
  (:func:`psybench.attention.metrics.score_frames`) and by the paper's rank
  percentile (sec. 5.2) of every observer's gaze (:func:`psybench.attention.map_models.untuned_map_scores`).
  :func:`psybench.attention.map_models.centre_bias` is the built-in: the Gaussian centre prior that every
  saliency benchmark reports as its baseline (Judd et al. 2009, sec. 4).

Area pooling: output cell ``[i s, (i + 1) s)`` with ``s = n_in / n_out`` (per axis)
is the mean of the input cells weighted by their overlap with it, the
separable weights of :func:`area_weights`. For a shrink this is what OpenCV's
``INTER_AREA`` computes (and a block mean at an integer factor); for an
enlargement each output cell takes the input cell(s) it overlaps (piecewise
constant, no interpolation).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psybench.registry import ModelError, register

__all__ = [
    "ARCHITECTURES",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "area_weights",
    "area_resize",
    "CNNFeatures",
    "build_cnn_features",
    "rgb_batches",
    "write_rgb_feature_store",
]

#: The torchvision classification networks a CNN feature family may use.
ARCHITECTURES = ("resnet18", "resnet34", "resnet50", "vgg11", "vgg16")
#: Largest storage chunk of a feature store that holds one whole batch of frames (else chunks of ~2 MB).
_BATCH_CHUNK_BYTES = 2**23
#: ImageNet channel mean and SD of torchvision's classification weights (its ``transforms`` document them).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """Weights (n_out, n_in) of area pooling along one axis; each row sums to 1.

    Output cell ``i`` covers ``[i s, (i + 1) s)`` of the input axis, ``s = n_in / n_out``;
    row ``i`` holds each input cell's overlap with it, divided by ``s``.
    """
    if n_in < 1 or n_out < 1:
        raise ValueError(f"area pooling needs sizes >= 1, got {n_in} -> {n_out}")
    edges_out = np.arange(n_out + 1) * (n_in / n_out)
    lo = np.maximum(edges_out[:-1, None], np.arange(n_in)[None, :])
    hi = np.minimum(edges_out[1:, None], np.arange(1, n_in + 1)[None, :])
    w = np.clip(hi - lo, 0.0, None)
    return w / w.sum(1, keepdims=True)


def area_resize(maps: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Area-pool maps (B, h, w, K) or (B, h, w) to ``shape = (H, W)`` (rows, columns), float32.

    Computed in float64 with the separable weights of :func:`area_weights`, one axis
    at a time, the one that shrinks most first: an axis already of its size is kept, an
    integer shrink is a block mean (one pass over both axes where both shrink so), an
    integer enlargement repeats each cell, any other size is the product with the axis'
    weights, summed over their band (the few input cells each output cell overlaps;
    never a product over the whole axis, nor over both axes at once).
    """
    a = np.asarray(maps)
    if a.ndim not in (3, 4):
        raise ValueError(f"maps must have shape (B, h, w) or (B, h, w, K), got {a.shape}")
    H, W = (int(s) for s in shape)
    h, w = a.shape[1:3]
    if H >= 1 and W >= 1 and h % H == 0 and w % W == 0 and (h, w) != (H, W):  # block means: one pass over both
        a = a.reshape((a.shape[0], H, h // H, W, w // W) + a.shape[3:]).mean(axis=(2, 4), dtype=np.float64)
    elif h * W >= w * H:  # the axis that shrinks most first: the other one's pass then runs on fewer cells
        a = _area_axis(_area_axis(a, 1, H), 2, W)
    else:
        a = _area_axis(_area_axis(a, 2, W), 1, H)
    return np.ascontiguousarray(a, dtype=np.float32)


def _area_axis(a: np.ndarray, axis: int, n_out: int) -> np.ndarray:
    """``a`` area-pooled along ``axis`` to ``n_out`` cells (float64 where cells are averaged)."""
    n_in = a.shape[axis]
    if n_out < 1:
        raise ValueError(f"area pooling needs sizes >= 1, got {n_in} -> {n_out}")
    if n_in == n_out:
        return a
    if n_in % n_out == 0:  # each output cell: the mean of n_in / n_out whole input cells
        blocks = a.reshape(a.shape[:axis] + (n_out, n_in // n_out) + a.shape[axis + 1:])
        return blocks.mean(axis=axis + 1, dtype=np.float64)
    if n_out % n_in == 0:  # each output cell lies inside one input cell: weight 1
        return np.repeat(a, n_out // n_in, axis=axis)
    # the weights are a band: output cell i overlaps only the few input cells from first[i] on, so the
    # product is a sum over the band's width (a few slices of ``a``), never over the whole axis
    w = area_weights(n_in, n_out)
    nonzero = w > 0
    first = nonzero.argmax(axis=1)
    width = int((n_in - nonzero[:, ::-1].argmax(axis=1) - first).max())
    shape = [1] * a.ndim
    shape[axis] = n_out
    out = None
    for k in range(width):
        idx = np.minimum(first + k, n_in - 1)
        wk = np.where(first + k < n_in, w[np.arange(n_out), idx], 0.0).reshape(shape)
        term = np.take(a, idx, axis=axis) * wk  # float64: the weights are
        out = term if out is None else np.add(out, term, out=out)
    return out


def _torch(model: str):
    try:
        import torch
    except ImportError as e:  # pragma: no cover - the deep extra is installed in CI
        raise ModelError(f"model {model!r} needs PyTorch: pip install 'psybench[deep]'") from e
    return torch


class CNNFeatures:
    """Layer activations of a torchvision ResNet or VGG as base maps, shape (B, h, w, K).

    Parameters
    ----------
    arch : str
        One of :data:`ARCHITECTURES`.
    layers : sequence of str
        Node names of ``torchvision.models.feature_extraction.get_graph_node_names``
        (e.g. ``layer2`` of a ResNet, ``features.15`` of a VGG).
    resolution : "native" or [width, height]
        The frames are resized (bilinear, antialiased) to this size before the
        network; "native" keeps the movie's frame size.
    weights : str or None
        A local state-dict file (strict key match); None keeps torchvision's random
        initialisation (``weights=None``), seeded with ``seed``.
    device : torch.device or str
    seed : int
        Seed of the random initialisation (ignored when ``weights`` is given).
    """

    def __init__(self, *, arch: str = "resnet18", layers: Sequence[str] = ("layer2",),
                 resolution: str | Sequence[int] = "native", weights: str | None = None, device: Any = "cpu",
                 seed: int = 0):
        torch = _torch(f"cnn {arch}")
        import torchvision
        from torchvision.models.feature_extraction import create_feature_extractor, get_graph_node_names

        if arch not in ARCHITECTURES:
            raise ModelError(f"cnn features: arch {arch!r} is not one of {list(ARCHITECTURES)}")
        layers = [layers] if isinstance(layers, str) else list(layers)
        if not (resolution == "native" or (isinstance(resolution, Sequence) and not isinstance(resolution, str)
                                           and len(resolution) == 2 and all(int(r) >= 1 for r in resolution))):
            raise ModelError(f"cnn features: resolution {resolution!r} is not 'native' nor [width, height]")
        if weights is None:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                net = getattr(torchvision.models, arch)(weights=None)
        else:
            from psybench.deep import load_weights

            # Every tensor comes from the file (strict keys; these networks have no buffer outside their
            # state dict), so none is drawn at random first: built without memory, then allocated.
            with torch.device("meta"):
                net = getattr(torchvision.models, arch)(weights=None)
            net = net.to_empty(device="cpu")
            load_weights(net, weights, model=f"cnn {arch}")
        nodes = {n for n, _ in net.named_modules() if n}
        if any(n not in nodes for n in layers):  # a node that is no module (an add, a flatten): trace the graph
            nodes |= set(get_graph_node_names(net)[1])
        unknown = [n for n in layers if n not in nodes]
        if not layers or unknown:
            raise ModelError(f"cnn features: layers {unknown or layers!r} are not nodes of {arch} "
                             f"(e.g. {sorted(n for n in nodes if '.' not in n)})")
        self.arch, self.layers, self.resolution = arch, layers, resolution
        self.device = torch.device(device)
        # channels-last (NHWC) memory, the layout of the decoded frames: convolutions run faster in it on CPUs
        # (oneDNN) and GPUs alike, with the same results as in NCHW to float rounding
        self.extractor = create_feature_extractor(net.eval(), return_nodes={n: n for n in layers}).to(
            self.device, memory_format=torch.channels_last)
        self.channels: list[str] | None = None

    def input_tensor(self, frames: np.ndarray):
        """The network's input: (B, 3, H', W') float32, resized and ImageNet-normalised, on the device."""
        torch = _torch(self.arch)
        from torchvision.transforms.v2 import functional as TF

        f = np.asarray(frames)
        if f.ndim != 4 or f.shape[-1] != 3 or f.dtype != np.uint8:
            raise ValueError(f"cnn features: frames must be uint8 RGB (B, H, W, 3), got {f.dtype} {f.shape}")
        x = torch.from_numpy(np.ascontiguousarray(f)).to(self.device).permute(0, 3, 1, 2)  # NHWC memory, kept
        x = TF.to_dtype(x, torch.float32, scale=True)
        if self.resolution != "native":
            w, h = (int(r) for r in self.resolution)
            x = TF.resize(x, [h, w], interpolation=TF.InterpolationMode.BILINEAR, antialias=True)
        return TF.normalize(x, IMAGENET_MEAN, IMAGENET_STD).contiguous(memory_format=torch.channels_last)

    def features(self, frames: np.ndarray) -> dict[str, np.ndarray]:
        """Each layer's activations, layer -> (B, C, h, w) float32, before any pooling."""
        torch = _torch(self.arch)
        with torch.inference_mode():
            out = self.extractor(self.input_tensor(frames))
        return {n: out[n].detach().cpu().numpy() for n in self.layers}

    def __call__(self, frames: np.ndarray) -> np.ndarray:
        """Base maps (B, h, w, K): the layers area-pooled to the finest one's size, channels stacked."""
        return self.to_grid(frames, None)

    def to_grid(self, frames: np.ndarray, shape: Sequence[int] | None) -> np.ndarray:
        """Base maps (B, H, W, K): each layer area-pooled straight to ``shape = (H, W)``, channels stacked.

        The same maps as area-pooling :meth:`__call__`'s to ``shape`` wherever the layers'
        sizes divide the finest one's (each coarser layer is then piecewise constant on
        it): strided networks such as ResNet and VGG at any frame size whose sides are
        multiples of their total stride; without the stack at the finest size in
        between. ``shape=None`` pools to the finest layer's size.
        """
        feats = self.features(frames)
        if shape is None:
            shape = max((f.shape[2], f.shape[3]) for f in feats.values())
        # each (B, C, h, w) view of NHWC memory is transposed back to that contiguous memory
        maps = [area_resize(f.transpose(0, 2, 3, 1), shape) for f in feats.values()]
        if self.channels is None:
            self.channels = [f"{n}:{c}" for n, f in feats.items() for c in range(f.shape[1])]
        return np.concatenate(maps, axis=-1)


@register("cnn", track="attention", kind="features", factory=True,
          reference="He et al. 2016 (ResNet); Simonyan & Zisserman 2015 (VGG); torchvision feature extraction")
def build_cnn_features(*, weights: str | None = None, device: Any = "cpu", arch: str = "resnet18",
                       layers: Sequence[str] = ("layer2",), resolution: str | Sequence[int] = "native",
                       seed: int = 0) -> CNNFeatures:
    """Builder of the ``cnn`` feature family (a factory: built once per job, then called on batches)."""
    return CNNFeatures(arch=arch, layers=layers, resolution=resolution, weights=weights, device=device, seed=seed)


def rgb_batches(stimulus: Any, *, movie_file: str | os.PathLike | None = None,
                batch_size: int = 8) -> Iterator[np.ndarray]:
    """The RGB frames of a stimulus store's movie, uint8 batches (b, H, W, 3), b <= ``batch_size``.

    A store ingested from a movie file (``stimulus.kind == "movie"``) is decoded
    again from ``movie_file`` with OpenCV at its own resolution (BGR to RGB), as
    many frames as the store holds; the file must be the store's (its name and frame
    size are checked). Any other store (a rendered scene, an in-memory movie) holds
    only its grey grid frames: they are given as RGB (the luminance x 255, rounded,
    in all three channels) on the grid.
    """
    from psybench.attention.stimuli import MovieReadError, read_stimulus

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    stim = read_stimulus(stimulus)
    name = Path(stim.path).name
    T = int(stim["frames"].shape[0])
    kind = (stim.attrs.get("stimulus") or {}).get("kind")
    if kind != "movie":
        for a in range(0, T, batch_size):
            grey = np.asarray(stim["frames"][a : a + batch_size], np.float32)
            yield np.repeat(np.rint(grey * 255).astype(np.uint8)[..., None], 3, axis=-1)
        return
    import cv2

    if movie_file is None:
        raise MovieReadError(f"stimulus {name}: an RGB model needs the movie file it was ingested from")
    movie_file = Path(movie_file)
    expected = stim.attrs["stimulus"].get("file")
    if movie_file.name != expected:
        raise MovieReadError(f"stimulus {name} was ingested from {expected!r}, not {movie_file}")
    cap = cv2.VideoCapture(str(movie_file))
    try:
        if not cap.isOpened():
            raise MovieReadError(f"OpenCV cannot open movie file {movie_file}")
        n, buf = 0, []
        while n < T:
            ok, frame = cap.read()
            if not ok:
                raise MovieReadError(f"movie file {movie_file} ends after {n} frames; its store holds {T}")
            if [frame.shape[1], frame.shape[0]] != list(stim.attrs["source_size"]):
                raise MovieReadError(f"movie file {movie_file}: frames {frame.shape[1]}x{frame.shape[0]}, its store "
                                     f"says {stim.attrs['source_size']}")
            buf.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
            n += 1
            if len(buf) == batch_size:
                yield np.stack(buf)
                buf = []
        if buf:
            yield np.stack(buf)
    finally:
        cap.release()


def write_rgb_feature_store(
    stimulus: str | os.PathLike,
    out: str | os.PathLike,
    *,
    model: Callable[[np.ndarray], np.ndarray],
    description: dict[str, Any],
    movie_file: str | os.PathLike | None = None,
    batch_size: int = 8,
    lags_ms: Sequence[float] | None = None,
    code_hash: str | None = None,
    extra_attrs: dict[str, Any] | None = None,
) -> Path:
    """Base maps of a ``features`` model on a movie's RGB frames, area-pooled to the grid, as a feature store.

    The store is the one :func:`psybench.attention.responses.write_feature_store`
    writes (``maps``, dims t, y, x, channel; the stimulus' attributes, ``features``,
    ``lags_ms``, ``code_hash``), so the Fisher tuning reads it like any family's; its
    ``features`` attribute also says ``input`` (the RGB frame size the model saw).
    The maps stream: one batch of ``batch_size`` frames in memory at a time.

    Parameters
    ----------
    model : callable
        ``model(frames (b, H, W, 3) uint8) -> maps (b, h, w, K)``, e.g. a built
        :class:`CNNFeatures`; an optional attribute ``channels`` names the K channels, and an
        optional method ``to_grid(frames, (H, W))`` gives the maps pooled to the grid itself.
    description : dict
        ``{"model": name, "params": {...}}`` of the model (joined by its weights
        digest where it has one), recorded as the store's ``features``.
    """
    from psybench.attention.defaults import LAGS_MS
    from psybench.attention.grid_coords import grid_coords
    from psybench.attention.stimuli import read_stimulus
    from psybench.io.codecs import FLOAT_COMPRESSORS
    from psybench.io.store import StreamSpec, write_store_stream

    stim = read_stimulus(stimulus)
    T = int(stim["frames"].shape[0])
    gw, gh = (int(g) for g in stim.attrs["grid"])
    name = description.get("model", "model")
    batches = rgb_batches(stim, movie_file=movie_file, batch_size=batch_size)
    seen: dict[str, Any] = {}

    to_grid = getattr(model, "to_grid", None)

    def pooled(batch: np.ndarray) -> np.ndarray:
        maps = np.asarray(model(batch) if to_grid is None else to_grid(batch, (gh, gw)))
        if maps.ndim != 4 or maps.shape[0] != len(batch):
            raise ValueError(f"model {name!r}: maps of a batch of {len(batch)} frames must be (b, h, w, K), "
                             f"got {maps.shape}")
        seen.setdefault("input", [int(batch.shape[2]), int(batch.shape[1])])
        grid = area_resize(maps, (gh, gw))
        # written from its own memory (zero copy, below): a copy where it is the array a user's model returned,
        # whose buffer the model may fill again for the next batch (CNNFeatures returns a new array each time)
        return grid.copy() if not isinstance(model, CNNFeatures) and np.shares_memory(grid, maps) else grid

    first = pooled(next(batches))
    K = first.shape[-1]
    names = list(getattr(model, "channels", None) or [f"c{i}" for i in range(K)])
    if len(names) != K:
        names = [f"c{i}" for i in range(K)]
    attrs = {k: stim.attrs.get(k) for k in ("frames_per_s", "grid", "source_size", "px_per_deg", "stimulus")}
    attrs.update({
        "features": {**description, "channels": names, "input": seen["input"]},
        "lags_ms": [float(x) for x in (LAGS_MS if lags_ms is None else lags_ms)],
        "code_hash": code_hash,
        **(extra_attrs or {}),
    })

    def blocks():
        yield {"maps": first}
        for b in batches:
            yield {"maps": pooled(b)}

    # a storage chunk per batch where one fits in _BATCH_CHUNK_BYTES: each batch is then written from its own
    # memory (zero copy), one chunk at a time; else chunks of the store's usual size
    frame_bytes = gh * gw * K * 4
    chunks = (max(1, min(T, batch_size)), gh, gw, K) if batch_size * frame_bytes <= _BATCH_CHUNK_BYTES else None
    spec = StreamSpec(shape=(T, gh, gw, K), dtype=np.float32, dims=("t", "y", "x", "channel"),
                      attrs={"channels": names}, compressors=FLOAT_COMPRESSORS, chunks=chunks)
    return write_store_stream(out, {"maps": spec}, blocks(), attrs, coords=grid_coords(attrs, T),
                              zero_copy=chunks is not None)
