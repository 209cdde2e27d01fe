"""Motion-track figures: stimulus frames, flow fields, direction-error curves with fits.

Every function reads psybench stores, draws with matplotlib's Agg backend and
saves a PNG without timestamps in its metadata, so figures are reproducible.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from psybench import units  # noqa: E402
from psybench.io.atomic import atomic_output  # noqa: E402
from psybench.io.integrity import open_group, verify_store  # noqa: E402
from psybench.motion import EXPERIMENTS  # noqa: E402

__all__ = ["stimuli_montage", "flow_figure", "direction_error_figure", "model_figures", "save_png"]


#: Font size (points) of every label: at the 90 dpi of :func:`save_png`, 9 pt is 11 px, read at 100 % zoom.
_FONT = 9.0


def _legend_outside(ax, n_columns: int | None = None) -> None:
    """The axes' legend right of its data (never over the curves), long labels wrapped."""
    import textwrap

    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    labels = ["\n".join(textwrap.wrap(label, 42)) or label for label in labels]
    ncol = n_columns or (1 if len(labels) <= 12 else 2)
    ax.legend(handles, labels, fontsize=_FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=ncol,
              borderaxespad=0.0, frameon=False)


def save_png(fig, path: str | os.PathLike) -> Path:
    """Save ``fig`` as PNG atomically, with no date in the metadata."""
    path = Path(path)
    with atomic_output(path) as tmp:
        fig.savefig(tmp, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return path


def _open(path: str | os.PathLike):
    """A verified store's Zarr group: the few frames or samples a figure draws are read as NumPy, no Dask."""
    verify_store(path)
    return open_group(Path(path))


def _name(path: str | os.PathLike) -> str:
    return Path(path).name.removesuffix(".zarr")


def stimuli_montage(stimulus_paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> Path:
    """First, middle and last frame of every stimulus, stimuli in a grid of about square shape.

    Each stimulus is three frames side by side, its name above the middle one and
    each frame's time (ms) in its corner; stimuli fill ``n_groups`` such triplets per
    row (one long column of 30 stimuli was a 405 x 3375 px strip).
    """
    n = len(stimulus_paths)
    n_groups = max(1, int(round(np.sqrt(n / 3.0))))
    n_rows = -(-n // n_groups)
    fig, axes = plt.subplots(n_rows, 3 * n_groups, figsize=(1.7 * 3 * n_groups, 1.9 * n_rows), squeeze=False)
    for ax in axes.ravel():
        ax.set_axis_off()
    for k, p in enumerate(stimulus_paths):
        row, group = k % n_rows, k // n_rows
        store = _open(p)
        frames = store["frames"]
        fps = store.attrs["display"]["frames_per_s"]
        for col, t in enumerate((0, frames.shape[0] // 2, frames.shape[0] - 1)):
            ax = axes[row, 3 * group + col]
            ax.set_axis_on()
            ax.imshow(np.asarray(frames[t]), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.text(0.03, 0.97, f"{units.frames_to_ms(t, fps):.0f} ms", transform=ax.transAxes, fontsize=_FONT,
                    va="top", bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
        axes[row, 3 * group + 1].set_title(_name(p), fontsize=_FONT)
    fig.tight_layout()
    return save_png(fig, out)


def flow_figure(response_paths: Sequence[str | os.PathLike], out: str | os.PathLike, *, step: int = 12) -> Path:
    """Flow field at mid-stimulus over the frame, one panel per response store."""
    n = len(response_paths)
    ncol = min(n, 4)  # a grid, so that the panels stay at a readable size
    nrow = -(-n // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.9 * nrow + 0.4), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_axis_off()
    for ax, p in zip(axes.ravel(), response_paths):
        store = _open(p)
        flow = store["flow"]
        t = flow.shape[0] // 2
        f = np.asarray(flow[t])
        h, w = f.shape[:2]
        yy, xx = np.mgrid[step // 2:h:step, step // 2:w:step]
        u, v = f[yy, xx, 0], f[yy, xx, 1]
        speed = np.hypot(f[..., 0], f[..., 1])
        ax.imshow(speed, cmap="magma", interpolation="nearest")
        vmax = float(np.percentile(np.hypot(u, v), 99)) or 1.0
        ax.quiver(xx, yy, u, v, color="cyan", angles="xy", scale_units="xy", scale=vmax / (0.9 * step), width=0.006)
        truth = store.attrs.get("stimulus", {}).get("truth", {}).get("velocity_px_per_frame")
        title = _name(p)
        if truth:
            title += f"\ntrue ({truth[0]:.2f}, {truth[1]:.2f}) px/fr"
        ax.set_title(title, fontsize=_FONT)
        ax.set_xticks([])
        ax.set_yticks([])
    model = store.attrs.get("model", {}).get("name", "")
    fig.suptitle(f"{model}: flow at mid-stimulus (colour = speed, px/frame)", fontsize=_FONT + 2)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()), h_pad=1.5)  # room for the titles
    return save_png(fig, out)


def _exp(t, a, tau, b):
    return a * np.exp(-t / tau) + b


def _stimulus_direction(stim) -> float | None:
    """The stimulus's motion direction (deg): its ``direction_deg`` attribute, parameter or truth."""
    for src in (stim, stim.get("params") or {}, stim.get("truth") or {}):
        if src.get("direction_deg") is not None:
            return float(src["direction_deg"])
    return None


def _half_differential(items):
    """Half-differential error (CW - CCW)/2 per direction and its mean, positive toward the vector average.

    Each CW/CCW pair is oriented by the sign of its CW diamond's vector-average
    bias, as :func:`psybench.motion.criteria.score_diamonds` does, so the mean is
    the curve the criterion fits. Returns ``(mean (T,), {direction: (T,)})`` or
    ``(None, {})`` without a complete pair.
    """
    from psybench.motion.display import wrap_deg

    by_dir: dict = {}
    for _, _, err, stim, _ in items:
        hand = stim.get("handedness", (stim.get("params") or {}).get("handedness"))
        if hand in ("cw", "ccw"):
            by_dir.setdefault(_stimulus_direction(stim), {})[hand] = (err, stim)
    curves = {}
    for direction, pair in by_dir.items():
        if {"cw", "ccw"} <= set(pair):
            (e_cw, s_cw), (e_ccw, _) = pair["cw"], pair["ccw"]
            va = s_cw.get("vector_average_direction_deg")
            sign = np.sign(wrap_deg(va - s_cw["truth"]["direction_deg"])) if va is not None else 1.0
            curves[direction] = sign * (e_cw - e_ccw) / 2.0
    if not curves:
        return None, {}
    with np.errstate(all="ignore"):
        stacked = np.stack(list(curves.values()))
        n = np.isfinite(stacked).sum(axis=0)
        return np.where(n > 0, np.nansum(stacked, axis=0) / np.maximum(n, 1), np.nan), curves


#: The fitted curve of each experiment that has a human time course (fits-table ``family``).
_HUMAN_CURVES = {"diamonds": "half_differential", "dashed_bars": "bar"}


def _short(citation: str) -> str:
    """Author(s) and year of each part of a citation: "A & B (2002), J. X; C (2005), Y" -> "A & B (2002); C (2005)"."""
    parts = [p.strip() for p in citation.split(";") if p.strip()]
    return "; ".join(p[: p.index(")") + 1] if ")" in p else p for p in parts)


def _draw_human(ax, literature, exp: str, t0: float, t_end: float) -> None:
    """Draw the literature's human reference next to the model's curve, labelled with its source.

    The full exponential (with its one-SD envelope) when A, tau and B are all
    known; otherwise what is known: the asymptote B (and its SD) and the
    ``kind: bound`` facts (e.g. "converged within 300 ms").
    """
    from psybench.motion.literature import human_reference

    if exp not in _HUMAN_CURVES or not literature:
        return
    ref = human_reference(literature, exp, _HUMAN_CURVES[exp])
    tt = np.linspace(0.0, max(t_end - t0, 1.0), 200)
    if ref.complete:
        mean, lo, hi = ref.band(tt)
        ax.plot(t0 + tt, mean, color="darkgreen", lw=1.5, label=f"human: {_short(ref.citations())}")
        ax.fill_between(t0 + tt, lo, hi, color="darkgreen", alpha=0.12, lw=0)
    elif "B" in ref.params:
        b = ref.params["B"]
        sd = b.get("sigma")
        ax.axhline(float(b["value"]), color="darkgreen", lw=1.2, ls="-.",
                   label=f"human asymptote B = {float(b['value']):g}" + (f" +/- {sd:g}" if sd else " (no SD)")
                   + f": {_short(b['citation'])}")
        if sd:
            ax.axhspan(float(b["value"]) - sd, float(b["value"]) + sd, color="darkgreen", alpha=0.1)
    for name, entry in ref.bounds.items():
        # a bound past the end of the record is not drawn (it would stretch the time axis)
        if name.endswith("_ms") and isinstance(entry["value"], (int, float)) and t0 + entry["value"] <= t_end:
            ax.axvline(t0 + float(entry["value"]), color="darkgreen", lw=0.8, ls=":",
                       label=f"human {name.removesuffix('_ms').replace('_', ' ')} < {entry['value']:g} ms: "
                             f"{_short(entry['citation'])}")


def direction_error_figure(
    readout_paths: Sequence[str | os.PathLike],
    fits_csv: str | os.PathLike,
    scores_csv: str | os.PathLike,
    out: str | os.PathLike,
    *,
    literature_path: str | os.PathLike | None = None,
) -> Path:
    """Direction error of w(t) per stimulus, grouped by experiment, with the fitted curves.

    For the diamonds the thin curves are the half-differential error
    (CW - CCW) / 2 of each translation direction (stimulus ``direction_deg``) and
    the thick black curve their mean, the quantity the criterion fits. Fits are
    drawn from their onset (``t_onset_ms`` of the fits table), the verdict's own
    fit (``verdict_*`` columns) where the table has it. With ``literature_path``
    (``config/literature.yaml``) the human reference is drawn next to the
    model's curve in green, labelled with its source (see :func:`_draw_human`).
    """
    from psybench.io.tables import read_csv_checked  # here, as in barberpole_figure: the frames' figures need no pandas
    from psybench.motion.literature import load_literature

    literature = load_literature(literature_path) if literature_path else None
    groups: dict[str, list] = {}
    model = ""
    for p in readout_paths:
        store = _open(p)
        stim = store.attrs.get("stimulus", {})
        model = store.attrs.get("model", {}).get("name", model)
        fps = store.attrs["display"]["frames_per_s"]
        err = store["direction_error_deg"][...]
        speed = store["speed_deg_s"][...]
        t = units.frames_to_ms(np.arange(err.shape[0]), fps)
        groups.setdefault(stim.get("experiment", "?"), []).append((_name(p), t, err, stim, speed))
    fits = read_csv_checked(fits_csv)
    scores = read_csv_checked(scores_csv)
    order = [e for e in EXPERIMENTS if e in groups]
    order += [e for e in groups if e not in order]
    # one experiment per row, its legend right of the curves
    fig, axes = plt.subplots(len(order), 1, figsize=(12.0, 3.8 * len(order) + 0.5), squeeze=False)
    for ax, exp in zip(axes[:, 0], order):
        items = groups[exp]
        t_end = items[0][1][-1]
        thin = 0.5 if exp == "diamonds" else 0.9
        if exp == "grating_size":
            # the criterion reads the early response's size, not its direction
            for name, t, _, _, speed in items:
                ax.plot(t, speed, lw=0.9, label=name)
            ax.set_ylabel("pursuit speed |w| (deg/s)")
        else:
            for name, t, err, _, _ in items:
                ax.plot(t, err, lw=thin, alpha=0.4 if exp == "diamonds" else 1.0,
                        label=None if exp == "diamonds" else name)
            ax.set_ylabel("direction error (deg)")
        if exp == "diamonds":
            hd, per_direction = _half_differential(items)
            for direction, curve in sorted(per_direction.items(), key=lambda kv: (kv[0] is None, kv[0] or 0.0)):
                if len(per_direction) > 1:
                    ax.plot(items[0][1], curve, lw=1.0, ls="-", label=f"(CW - CCW) / 2 at {direction:g} deg")
            if hd is not None:
                ax.plot(items[0][1], hd, "k", lw=2, label="(CW - CCW) / 2, mean, + toward vector average")
        t_on = 0.0
        for _, row in fits[fits["experiment"] == exp].iterrows() if exp != "grating_size" else ():
            t0 = float(row.get("t_onset_ms", 0.0)) if np.isfinite(row.get("t_onset_ms", np.nan)) else 0.0
            t_on = t0 if row.get("family") == _HUMAN_CURVES.get(exp) else t_on
            tt = np.linspace(0, t_end - t0, 200)
            if row.get("verdict_fit") == "double":  # the curve the verdict judged (two exponentials by BIC)
                y = (_exp(tt, row["double_A1"], row["double_tau1_ms"], 0.0)
                     + _exp(tt, row["double_A2"], row["double_tau2_ms"], row["double_B"]))
                tau = row["double_tau2_ms"]
            else:
                tau = row.get("tau_ms", np.nan)
                y = _exp(tt, row.get("A", np.nan), tau, row.get("B", np.nan))
            if np.all(np.isfinite(y)):
                ax.plot(t0 + tt, y, "--", color="crimson", lw=1.2,
                        label=f"fit {row.get('curve', '')}: tau={tau:.0f} ms")
        _draw_human(ax, literature, exp, t_on, t_end)
        verdict = scores.loc[scores["experiment"] == exp]
        if len(verdict):
            r = verdict.iloc[0]
            ax.set_title(
                f"{exp}: {'pass' if bool(r['passed']) else 'fail'} (error {float(r['error']):.3g})",
                fontsize=_FONT + 1.5)
        else:
            ax.set_title(exp, fontsize=_FONT + 1.5)
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_xlabel("time (ms)", fontsize=_FONT + 1)
        ax.yaxis.label.set_fontsize(_FONT + 1)
        ax.tick_params(labelsize=_FONT)
        _legend_outside(ax)
    fig.suptitle(f"{model}: direction error of the pursuit readout", fontsize=_FONT + 3)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / fig.get_figheight()))  # room for the title
    return save_png(fig, out)


def model_figures(
    response_paths: Sequence[str | os.PathLike],
    readout_paths: Sequence[str | os.PathLike],
    fits_csv: str | os.PathLike,
    scores_csv: str | os.PathLike,
    flow_out: str | os.PathLike,
    direction_error_out: str | os.PathLike,
    *,
    literature_path: str | os.PathLike | None = None,
) -> tuple[Path, Path]:
    """One model's two figures: :func:`flow_figure` and :func:`direction_error_figure`.

    One job draws both: the interpreter, Matplotlib and the stores' readers
    start once per model instead of twice; each PNG is the one its function draws alone.
    """
    flow = flow_figure(response_paths, flow_out)
    return flow, direction_error_figure(readout_paths, fits_csv, scores_csv, direction_error_out,
                                        literature_path=literature_path)


def barberpole_figure(score_csvs: Sequence[str | os.PathLike], out: str | os.PathLike) -> Path:
    """Perceived direction of every model against the barber-pole's aspect ratio.

    Drawn in the frame of the criterion: 0 deg is the grating normal (the 1D
    motion), and the dotted line the aperture's long axis, which people perceive
    (Wallach 1935; Masson et al. 2000). The shaded band is where the rule of
    :func:`psybench.motion.criteria.score_barberpole` passes (closer to the long axis).
    When the stimuli of a model carry several motion directions (``direction_deg``
    in the score details' ``stimuli``), one line per direction.
    """
    import json

    from psybench.io.tables import read_csv_checked

    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    span = None
    for p in score_csvs:
        scores = read_csv_checked(p)
        row = scores[scores["experiment"] == "barberpole"]
        if row.empty:
            continue
        details = json.loads(row.iloc[0]["details"])
        verdict = "pass" if bool(row.iloc[0]["passed"]) else "fail"
        by_direction: dict = {}
        for r in details.get("stimuli", []):
            by_direction.setdefault(_stimulus_direction(r), []).append(r)
        for direction, stimuli in sorted(by_direction.items(), key=lambda kv: (kv[0] is None, kv[0] or 0.0)):
            stimuli = sorted(stimuli, key=lambda r: r["aspect_ratio"])
            ar = [r["aspect_ratio"] for r in stimuli]
            dev = [r.get("deviation_toward_long_axis_deg", 0.0) if r["aspect_ratio"] > 1 else
                   float(np.degrees(np.arctan2(np.sin(np.radians(r["perceived_deg"] - r["grating_normal_deg"])),
                                               np.cos(np.radians(r["perceived_deg"] - r["grating_normal_deg"])))))
                   for r in stimuli]
            for r in stimuli:
                if "long_axis_direction_deg" in r:
                    d = r["long_axis_direction_deg"] - r["grating_normal_deg"]
                    span = abs(float((d + 180) % 360 - 180))
            at = f", {direction:g} deg" if direction is not None and len(by_direction) > 1 else ""
            ax.plot(ar, dev, "o-", lw=1.2, label=f"{row.iloc[0]['model']}{at} ({verdict})")
    if span:
        ax.axhline(span, color="k", ls=":", lw=1, label="long axis (human percept)")
        ax.axhspan(span / 2, span, color="green", alpha=0.08, label="closer to the long axis")
    ax.axhline(0, color="grey", lw=0.8, label="grating normal (1D)")
    ax.set_xlabel("aperture aspect ratio")
    ax.set_ylabel("perceived direction, deg from grating normal\n(positive toward the long axis)")
    ax.set_title("Barber-pole: steady-state direction of w(t)", fontsize=_FONT + 2)
    ax.tick_params(labelsize=_FONT)
    _legend_outside(ax)
    fig.tight_layout()
    return save_png(fig, out)
