"""Stimulus stores: render one stimulus of the set and write it (frames + attributes) atomically.

:func:`write_stimuli` renders a batch in one process (the workflow renders every stimulus of
a run in one job: start-up paid once); each stimulus keeps its own store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psybench.motion.display import Display
from psybench.motion.stimuli.families import FAMILIES, render

__all__ = ["write_stimuli", "write_stimulus"]


def write_stimulus(
    name: str,
    spec: Mapping[str, Any],
    display: Display | Mapping[str, Any],
    out_path: str | os.PathLike,
    *,
    code_hash: str = "",
) -> Path:
    """Render one stimulus of :func:`stimulus_set` and write its store atomically.

    Parameters
    ----------
    name : str
        Stimulus name (the Snakemake wildcard).
    spec : mapping
        ``{"family", "experiment", "params"}`` as produced by :func:`stimulus_set`.
    display : Display or mapping
        The run's display (a mapping is the ``display`` config section).
    out_path : path-like
        The store to write (a ``.zarr`` directory).
    code_hash : str
        Hash of the stimulus code (:func:`psybench.provenance.code_hash`).

    Returns
    -------
    pathlib.Path
        The store: array ``frames`` (dims ``t, y, x``, float32, chunked along ``t``)
        and group attrs ``{"stage": "stimuli", "display", "stimulus": {"name",
        "family", "experiment", "params", "truth", ...}, "code_hash"}``.
    """
    from psybench.io.store import ArraySpec, write_store

    if not isinstance(display, Display):
        display = Display.from_config(display)
    family = spec.get("family")
    if family not in FAMILIES:
        raise ValueError(f"stimulus {name}: unknown family {family!r}; known: {sorted(FAMILIES)}")
    experiment = spec.get("experiment", FAMILIES[family][1])
    try:
        stim = render(family, display, **dict(spec.get("params", {})))
    except ValueError as exc:
        raise ValueError(f"stimulus {name}: {exc}") from None
    info = {"name": name, "family": family, "experiment": experiment}
    info.update({k: v for k, v in stim.attrs.items() if k != "family"})
    attrs = {"stage": "stimuli", "display": display.to_attrs(), "stimulus": info, "code_hash": code_hash}
    arrays = {
        "frames": ArraySpec(
            stim.frames, ("t", "y", "x"),
            attrs={"units": "luminance, 0 black to 1 white", "frame_ms": display.frame_ms},
        )
    }
    return write_store(out_path, arrays, attrs, coords=display.coords(*np.shape(stim.frames)))


def write_stimuli(
    batch: Sequence[Sequence[Any]],
    out_paths: Sequence[str | os.PathLike],
    *,
    code_hash: str = "",
) -> list[Path]:
    """Render a batch of stimuli, each into its own store (:func:`write_stimulus` per item).

    Parameters
    ----------
    batch : sequence of (name, spec, display), length N
        As :func:`write_stimulus` takes them; the display may differ between items
        (the generalisation runs at other frame rates).
    out_paths : sequence of path-like, length N
        The stores, pairwise with ``batch`` (store ``<name>.zarr``).
    code_hash : str

    Returns the N stores; raises ValueError if the lengths differ, an item is not a
    (name, spec, display) triple, or a store is not named after its stimulus.
    """
    batch, out_paths = list(batch), list(out_paths)
    if len(batch) != len(out_paths):
        raise ValueError(f"{len(batch)} stimuli but {len(out_paths)} stimulus outputs")
    for item, out in zip(batch, out_paths):
        if len(item) != 3:
            raise ValueError(f"stimulus batch item {item!r} is not a (name, spec, display) triple")
        if Path(out).name != f"{item[0]}.zarr":
            raise ValueError(f"stimulus {item[0]!r} does not match its output {out}")
    return [write_stimulus(name, spec, display, out, code_hash=code_hash)
            for (name, spec, display), out in zip(batch, out_paths)]
