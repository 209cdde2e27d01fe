"""Figures of the attention track: the response-percentile curves (Shic & Scassellati 2007, Fig. 8)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from psybench.attention.evaluate import GROUPS
from psybench.io.atomic import atomic_output

__all__ = ["plot_curves"]


def plot_curves(curves: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Fig. 8-style curves: one panel per (model, train/test pair), one line per group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = curves[["features", "L"]].drop_duplicates().to_records(index=False).tolist()
    pairs = curves[["train", "test"]].drop_duplicates().to_records(index=False).tolist()
    fig, axes = plt.subplots(len(models), len(pairs), figsize=(3.2 * len(pairs), 2.8 * len(models)), squeeze=False)
    for i, (kind, L) in enumerate(models):
        for j, (tr, te) in enumerate(pairs):
            ax = axes[i][j]
            sub = curves[
                (curves["features"] == kind) & (curves["L"] == L) & (curves["train"] == tr) & (curves["test"] == te)
            ]
            for group in GROUPS:
                g = sub[sub["group"] == group].sort_values("rp")
                if len(g):
                    ax.plot(g["rp"], g["value"], label=group)
            ax.plot([0, 100], [50, 50], color="0.7", lw=0.8, ls="--")
            ax.set_ylim(0, 100)
            ax.set_title(f"{kind} L={L}: {tr} on {te}", fontsize=9)
            ax.set_xlabel("response percentile (%)", fontsize=8)
            ax.set_ylabel("saliency rank percentile (%)", fontsize=8)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    try:
        with atomic_output(path) as tmp:
            fig.savefig(tmp, dpi=100)
    finally:
        plt.close(fig)
    return path

