"""The built-in feature families raw patches and Gaussian pyramid (Shic & Scassellati 2007, sec. 2.2).

Saliency models of the attention track (the interface is described in
:mod:`psybench.attention.responses`); the extended Itti model is in
:mod:`psybench.attention.itti`.
"""

from __future__ import annotations

import numpy as np

from psybench.registry import register

__all__ = ["raw_maps", "pyramid_maps"]


@register("raw", track="attention", kind="saliency", reference="Shic & Scassellati 2007, sec. 2.2.1")
def raw_maps(frames: np.ndarray) -> np.ndarray:
    """Raw-patch base maps: the luminance, shape (T, H, W, 1)."""
    return np.asarray(frames, np.float32)[..., None]


raw_maps.channels = ("I",)


@register("pyramid", track="attention", kind="saliency", reference="Shic & Scassellati 2007, sec. 2.2.2",
          bounds={"levels": (0, 16)})
def pyramid_maps(frames: np.ndarray, *, levels: int = 3, sigma: float = 1.0) -> np.ndarray:
    """Gaussian-pyramid base maps ``I * G^i``, i = 0..levels-1 (section 2.2.2), shape (T, H, W, levels).

    ``G`` is a Gaussian of standard deviation ``sigma`` grid cells; ``G^i`` is ``i``
    successive convolutions; all levels keep the grid's resolution (Fig. 4).
    """
    from scipy import ndimage  # here: the registry imports this module at planning
    if levels < 1:
        raise ValueError(f"pyramid levels must be >= 1, got {levels!r}")
    cur = np.asarray(frames, np.float32)
    out = [cur]
    for _ in range(levels - 1):
        cur = ndimage.gaussian_filter(cur, sigma=(0, sigma, sigma), mode="nearest").astype(np.float32)
        out.append(cur)
    return np.stack(out, axis=-1)
pyramid_maps.channels = "G{}"
