"""Deep attention models: CNN feature families and untuned map-output models.

Two ways a network enters the attention track, both fed the RGB movie frames
(``uint8``, shape (B, H, W, 3)) rather than the grey model grid:

* **features** -- a network's layer activations as a *feature family*: the base
  maps the paper's Fisher tuning reads like those of raw patches, the Gaussian
  pyramid or the Itti model (Shic & Scassellati 2007, sec. 2.2 and 5.2).
  :class:`CNNFeatures` takes layers of a torchvision ResNet (He et al. 2016) or VGG
  (Simonyan & Zisserman 2015) with
  ``torchvision.models.feature_extraction.create_feature_extractor``, on frames
  resized to a chosen resolution and normalised with the ImageNet mean and SD that
  torchvision documents for its classification weights. Each layer is area-pooled
  (:func:`area_resize`) to the finest selected layer's size and the layers are
  stacked as channels; psybench then area-pools the stack to the model grid.
* **map** -- a model that outputs one saliency map or log-density per frame, the
  way the MIT saliency benchmark scores models (Bylinskii et al. 2019) and
  DeepGaze-style networks work (Kummerer, Wallis & Bethge 2016). The map is
  area-resized to the grid (a log-density as its density, so that the mass
  of each cell is kept) and scored without any tuning by the MIT metrics
  (:func:`psybench.attention.metrics.score_frames`) and by the paper's rank
  percentile (sec. 5.2) of every observer's gaze (:func:`untuned_map_scores`).
  :func:`centre_bias` is the built-in: the Gaussian centre prior that every
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
    "MAP_OUTPUTS",
    "area_weights",
    "area_resize",
    "CNNFeatures",
    "build_cnn_features",
    "centre_bias",
    "maps_to_grid",
    "untuned_map_scores",
    "rgb_batches",
    "write_rgb_feature_store",
    "map_model_scores",
]

#: The torchvision classification networks a CNN feature family may use.
ARCHITECTURES = ("resnet18", "resnet34", "resnet50", "vgg11", "vgg16")
#: ImageNet channel mean and SD of torchvision's classification weights (its ``transforms`` document them).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: What a map-output model's ``output`` parameter may say.
MAP_OUTPUTS = ("saliency", "log_density")


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

    Computed in float64 with the separable weights of :func:`area_weights`.
    """
    a = np.asarray(maps, np.float64)
    if a.ndim not in (3, 4):
        raise ValueError(f"maps must have shape (B, h, w) or (B, h, w, K), got {a.shape}")
    H, W = (int(s) for s in shape)
    wy, wx = area_weights(a.shape[1], H), area_weights(a.shape[2], W)
    sub = "byx" if a.ndim == 3 else "byxk"
    out = np.einsum(f"Yy,{sub},Xx->{sub.replace('y', 'Y').replace('x', 'X')}", wy, a, wx)
    return out.astype(np.float32)


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
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = getattr(torchvision.models, arch)(weights=None)
        if weights is not None:
            from psybench.deep import load_weights

            load_weights(net, weights, model=f"cnn {arch}")
        nodes = set(get_graph_node_names(net)[1]) | {n for n, _ in net.named_modules() if n}
        unknown = [n for n in layers if n not in nodes]
        if not layers or unknown:
            raise ModelError(f"cnn features: layers {unknown or layers!r} are not nodes of {arch} "
                             f"(e.g. {sorted(n for n in nodes if '.' not in n)})")
        self.arch, self.layers, self.resolution = arch, layers, resolution
        self.device = torch.device(device)
        self.extractor = create_feature_extractor(net.eval(), return_nodes={n: n for n in layers}).to(self.device)
        self.channels: list[str] | None = None

    def input_tensor(self, frames: np.ndarray):
        """The network's input: (B, 3, H', W') float32, resized and ImageNet-normalised, on the device."""
        torch = _torch(self.arch)
        from torchvision.transforms.v2 import functional as TF

        f = np.asarray(frames)
        if f.ndim != 4 or f.shape[-1] != 3 or f.dtype != np.uint8:
            raise ValueError(f"cnn features: frames must be uint8 RGB (B, H, W, 3), got {f.dtype} {f.shape}")
        x = torch.from_numpy(np.ascontiguousarray(f)).to(self.device).permute(0, 3, 1, 2).contiguous()
        x = TF.to_dtype(x, torch.float32, scale=True)
        if self.resolution != "native":
            w, h = (int(r) for r in self.resolution)
            x = TF.resize(x, [h, w], interpolation=TF.InterpolationMode.BILINEAR, antialias=True)
        return TF.normalize(x, IMAGENET_MEAN, IMAGENET_STD)

    def features(self, frames: np.ndarray) -> dict[str, np.ndarray]:
        """Each layer's activations, layer -> (B, C, h, w) float32, before any pooling."""
        torch = _torch(self.arch)
        with torch.inference_mode():
            out = self.extractor(self.input_tensor(frames))
        return {n: out[n].detach().cpu().numpy() for n in self.layers}

    def __call__(self, frames: np.ndarray) -> np.ndarray:
        """Base maps (B, h, w, K): the layers area-pooled to the finest one's size, channels stacked."""
        feats = self.features(frames)
        h, w = max((f.shape[2], f.shape[3]) for f in feats.values())
        maps = [area_resize(f.transpose(0, 2, 3, 1), (h, w)) for f in feats.values()]
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


@register("centre_bias", track="attention", kind="map", reference="Judd et al. 2009, sec. 4 (centre prior)",
          bounds={"sigma_frac": (0, None)})
def centre_bias(frames: np.ndarray, *, sigma_frac: float = 0.25, output: str = "log_density") -> np.ndarray:
    """Centre-bias log-density, the same map for every frame, shape (B, H, W) float32.

    An isotropic Gaussian centred on the frame, SD ``sigma_frac`` x its larger side
    (:func:`psybench.attention.metrics.centre_baseline`, normalised to sum 1), as a
    log-density: the centre prior that saliency benchmarks report as a baseline
    (Judd et al. 2009, sec. 4). ``output`` says how psybench reads the maps
    (:func:`maps_to_grid`); this model gives a log-density only.
    """
    from psybench.attention.metrics import centre_baseline

    f = np.asarray(frames)
    if f.ndim != 4:
        raise ValueError(f"centre_bias: frames must be (B, H, W, 3), got {f.shape}")
    if not sigma_frac > 0:
        raise ValueError(f"centre_bias: sigma_frac must be > 0, got {sigma_frac!r}")
    if output != "log_density":
        raise ValueError(f"centre_bias: output must be 'log_density' (its maps are log-densities), got {output!r}")
    log_p = np.log(centre_baseline(f.shape[1:3], sigma_frac=sigma_frac)).astype(np.float32)
    return np.broadcast_to(log_p, (f.shape[0], *log_p.shape)).copy()


def maps_to_grid(maps: np.ndarray, grid_shape: Sequence[int], *, output: str = "saliency") -> np.ndarray:
    """A map model's maps (T, h, w) on the model grid (T, H, W), float64.

    ``output="saliency"``: area-resized as they are. ``output="log_density"``: the
    density ``exp(log p)`` (normalised per frame) is area-resized and normalised
    again, so that each grid cell holds the probability mass it covers.
    """
    if output not in MAP_OUTPUTS:
        raise ValueError(f"map output must be one of {list(MAP_OUTPUTS)}, got {output!r}")
    m = np.asarray(maps, np.float64)
    if m.ndim != 3:
        raise ValueError(f"maps must have shape (T, h, w), got {m.shape}")
    if output == "log_density":
        m = np.exp(m - m.max(axis=(1, 2), keepdims=True))
        m /= m.sum(axis=(1, 2), keepdims=True)
    g = area_resize(m, grid_shape).astype(np.float64)
    if output == "log_density":
        g /= g.sum(axis=(1, 2), keepdims=True)
    return g


def untuned_map_scores(maps: np.ndarray, observer_counts: np.ndarray, *, ties: str = "mid",
                       **score_kwargs) -> dict[str, float]:
    """Scores of an untuned map model on one movie's frames: the MIT metrics and the rank percentile.

    Parameters
    ----------
    maps : ndarray, shape (T, H, W)
        The model's maps on the grid (:func:`maps_to_grid`).
    observer_counts : ndarray, shape (N, T, H, W)
        Per-observer fixation counts on the same frames
        (:func:`psybench.attention.metrics.observer_counts`).
    ties, **score_kwargs
        Of :func:`psybench.attention.evaluate.rank_percentiles` and
        :func:`psybench.attention.metrics.score_frames`.

    Returns
    -------
    dict: every MIT metric (mean over frames with fixations) and ``rank_percentile``:
    each observer's median rank percentile (%) of the gazed cell over the frames
    it fixates (sec. 5.2, the paper's tie rule as configured), mean over observers --
    the statistic of the ``n ma`` group, here with the map in place of a tuned filter.
    """
    from psybench.attention.evaluate import rank_percentiles
    from psybench.attention.metrics import score_frames

    maps = np.asarray(maps, np.float64)
    oc = np.asarray(observer_counts)
    if oc.ndim != 4 or oc.shape[1:] != maps.shape:
        raise ValueError(f"observer counts {oc.shape} must be (N, *maps.shape) with maps {maps.shape}")
    scores = score_frames(maps, oc.sum(0), **score_kwargs)
    meds = []
    for o in range(oc.shape[0]):
        t_ok = oc[o].sum((1, 2)) > 0
        if t_ok.any():
            cells = oc[o][t_ok].reshape(int(t_ok.sum()), -1).argmax(1)
            R = rank_percentiles(maps[t_ok].reshape(int(t_ok.sum()), -1), cells, ties=ties)
            meds.append(float(np.median(R)) * 100)
    scores["rank_percentile"] = float(np.mean(meds)) if meds else float("nan")
    return scores


def rgb_batches(stimulus: str | os.PathLike, *, movie_file: str | os.PathLike | None = None,
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
    T = int(stim["frames"].shape[0])
    kind = (stim.attrs.get("stimulus") or {}).get("kind")
    if kind != "movie":
        for a in range(0, T, batch_size):
            grey = np.asarray(stim["frames"][a : a + batch_size], np.float32)
            yield np.repeat(np.rint(grey * 255).astype(np.uint8)[..., None], 3, axis=-1)
        return
    import cv2

    if movie_file is None:
        raise MovieReadError(f"stimulus {Path(stimulus).name}: an RGB model needs the movie file it was ingested from")
    movie_file = Path(movie_file)
    expected = stim.attrs["stimulus"].get("file")
    if movie_file.name != expected:
        raise MovieReadError(f"stimulus {Path(stimulus).name} was ingested from {expected!r}, not {movie_file}")
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
        :class:`CNNFeatures`; an optional attribute ``channels`` names the K channels.
    description : dict
        ``{"model": name, "params": {...}}`` of the model (joined by its weights
        digest where it has one), recorded as the store's ``features``.
    """
    from psybench.attention.defaults import LAGS_MS
    from psybench.attention.grid_coords import grid_coords
    from psybench.attention.stimuli import read_stimulus
    from psybench.io.store import StreamSpec, write_store_stream

    stim = read_stimulus(stimulus)
    T = int(stim["frames"].shape[0])
    gw, gh = (int(g) for g in stim.attrs["grid"])
    name = description.get("model", "model")
    batches = rgb_batches(stimulus, movie_file=movie_file, batch_size=batch_size)
    seen: dict[str, Any] = {}

    def pooled(batch: np.ndarray) -> np.ndarray:
        maps = np.asarray(model(batch))
        if maps.ndim != 4 or maps.shape[0] != len(batch):
            raise ValueError(f"model {name!r}: maps of a batch of {len(batch)} frames must be (b, h, w, K), "
                             f"got {maps.shape}")
        seen.setdefault("input", [int(batch.shape[2]), int(batch.shape[1])])
        return area_resize(maps, (gh, gw))

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

    spec = StreamSpec(shape=(T, gh, gw, K), dtype=np.float32, dims=("t", "y", "x", "channel"),
                      attrs={"channels": names})
    return write_store_stream(out, {"maps": spec}, blocks(), attrs, coords=grid_coords(attrs, T))


def map_model_scores(
    model: Any,
    stimulus: str | os.PathLike,
    gaze_table: Any,
    *,
    movie_file: str | os.PathLike | None = None,
    same_movie: bool = False,
    lags_ms: Sequence[float] | None = None,
    threads: int = 1,
    density_sigma: float | None = None,
    n_splits: int | None = None,
    seed: int | None = None,
) -> dict[str, dict[str, float]]:
    """A map-output model scored untuned on one test movie, with the leave-one-observer-out ceiling.

    The model (a resolved spec, its description or config entry, kind ``map``) is built
    once (:func:`psybench.deep.built`), run on the movie's RGB frames in batches of its
    ``batch_size`` (:func:`rgb_batches`), put on the grid (:func:`maps_to_grid`, its
    ``output`` parameter, default "saliency") and scored on the test frames of
    :func:`psybench.attention.tuning.test_frames` (the odd frames when the movie also
    trained the other models, ``same_movie``), frame t by the map of the frame shown
    ``lags_ms[0]`` before it, as the metrics' untuned feature maps are.

    Returns
    -------
    ``{"scores": untuned_map_scores(...), "ceiling": loo_ceiling(...)}``.
    """
    from psybench.attention.defaults import DENSITY_SIGMA, LAGS_MS, N_SPLITS, SEED
    from psybench.attention.metrics import loo_ceiling, observer_counts
    from psybench.attention.movies import MovieData
    from psybench.attention.stimuli import read_stimulus
    from psybench.attention.tuning import lag_frames, test_frames
    from psybench.deep import built
    from psybench.handoff import as_model
    from psybench.io.tables import read_table

    spec = as_model(model, track="attention")
    if spec.kind != "map":
        raise ModelError(f"model {spec.name!r} is of kind {spec.kind!r}, not 'map'")
    output = spec.params.get("output", "saliency")
    stim = read_stimulus(stimulus)
    gw, gh = (int(g) for g in stim.attrs["grid"])
    with built(spec, threads=threads) as (net, _device):
        raw = []
        for batch in rgb_batches(stimulus, movie_file=movie_file, batch_size=spec.batch_size):
            m = np.asarray(net(batch))
            if m.shape[:1] != (len(batch),) or m.ndim != 3:
                raise ModelError(f"model {spec.name!r}: maps of a batch of {len(batch)} frames must be (b, h, w), "
                                 f"got {m.shape}")
            raw.append(area_resize(m, (gh, gw)) if output == "saliency" else maps_to_grid(m, (gh, gw), output=output))
    grid = np.concatenate(raw).astype(np.float64)
    gaze = gaze_table if not isinstance(gaze_table, (str, os.PathLike)) else read_table(gaze_table)
    movie = MovieData(name=Path(stimulus).stem, maps=grid[..., None], frames_per_s=float(stim.attrs["frames_per_s"]),
                      source_size=tuple(stim.attrs["source_size"]), gaze=gaze)
    lags = lag_frames(LAGS_MS if lags_ms is None else lags_ms, movie.frames_per_s)
    frames = test_frames(len(grid), lags, same_movie=same_movie)
    oc = observer_counts(movie, frames)
    settings = {"density_sigma": DENSITY_SIGMA if density_sigma is None else density_sigma,
                "n_splits": N_SPLITS if n_splits is None else n_splits, "seed": SEED if seed is None else seed}
    return {"scores": untuned_map_scores(grid[frames - lags[0]], oc, **settings),
            "ceiling": loo_ceiling(oc, **settings)}
