"""The extended Itti model: conspicuity maps of intensity, orientation and motion.

Itti, Koch & Niebur (1998) for intensity and orientation, extended with a motion
modality by Shic & Scassellati (2007, sec. 2.3 and appendix A); no colour
(black-and-white input). The model's base maps are the normalised conspicuity maps
N(I), N(O), N(M); their mean is its untuned saliency map
S = (N(I) + N(O) + N(M)) / 3, the paper's S = 1/4 (...) without the colour term.

Departures from Itti et al. (1998), forced by running on the 40x30 grid rather than
a 640x480 input (the paper computes the Itti model at full size, whose output is
40x30): the dyadic pyramid has ``levels`` (5) levels down to 3x2 cells; centres
c in {0, 1, 2} and surrounds s = c + {2, 3} capped at the coarsest level; all maps
are summed at level 0 (the grid) instead of level 4.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from psybench.registry import register

__all__ = ["ORIENTATIONS_DEG", "itti_normalize", "itti_maps"]

ORIENTATIONS_DEG = (0.0, 45.0, 90.0, 135.0)
_ITTI_HISTORY = 3  # frames t-1..t-3 for the causal [1, 2, 1]/4 temporal filter and its difference


# --- Itti's N() ---------------------------------------------------------------------
def itti_normalize(
    maps: np.ndarray,
    *,
    peak: float = 1.0,
    threshold: float = 0.1,
    exclude_global_max: bool = True,
    neighbourhood: int = 3,
) -> np.ndarray:
    """Itti's map normalisation operator N() (Itti, Koch & Niebur 1998, section II).

    For each map (the last two axes; leading axes are independent maps):

    1. clamp at 0 and rescale to [0, ``peak``] (M in the paper; an all-zero map stays 0);
    2. find the local maxima: cells equal to the maximum of their
       ``neighbourhood`` x ``neighbourhood`` window and above ``threshold * peak``;
    3. multiply the map by ``(peak - mbar)^2``, ``mbar`` the mean of the local maxima.

    ``exclude_global_max`` chooses between Itti's text ("the average of all its
    *other* local maxima": one instance of the global maximum left out, and a map
    with a single peak is kept as is) and SaliencyToolbox's ``maxNormalizeLocalMax``
    (global maximum included: a single peak gives mbar = M and the map becomes 0).

    Parameters
    ----------
    maps : ndarray, shape (..., H, W)

    Returns
    -------
    ndarray, same shape, float32
    """
    from scipy import ndimage  # here: the registry imports this module at planning
    m = np.maximum(np.asarray(maps, np.float32), 0.0)
    lead = m.shape[:-2]
    flat = m.reshape((-1,) + m.shape[-2:])
    mx = flat.max(axis=(1, 2))
    scale = np.where(mx > 0, peak / np.where(mx > 0, mx, 1.0), 0.0).astype(np.float32)
    flat = flat * scale[:, None, None]
    local = ndimage.maximum_filter(flat, size=(1, neighbourhood, neighbourhood), mode="nearest")
    is_max = (flat == local) & (flat > threshold * peak)
    total = np.where(is_max, flat, 0.0).sum(axis=(1, 2))
    count = is_max.sum(axis=(1, 2)).astype(np.float64)
    if exclude_global_max:
        has = (count > 0) & (mx > 0)
        total = total - np.where(has, peak, 0.0)
        count = count - has
    mbar = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    out = flat * ((peak - mbar) ** 2).astype(np.float32)[:, None, None]
    return out.reshape(lead + m.shape[-2:]).astype(np.float32)


# --- helpers on (t, h, w) stacks ------------------------------------------------------
_BINOMIAL5 = np.array([1, 4, 6, 4, 1], np.float32) / 16.0


def _pyr_down(stack: np.ndarray) -> np.ndarray:
    """Burt & Adelson REDUCE: 5-tap binomial blur then keep every other row/column."""
    from scipy import ndimage  # here: the registry imports this module at planning
    b = ndimage.convolve1d(stack, _BINOMIAL5, axis=-1, mode="reflect")
    b = ndimage.convolve1d(b, _BINOMIAL5, axis=-2, mode="reflect")
    return b[..., ::2, ::2]


def _resize(stack: np.ndarray, shape: tuple[int, int], step: int) -> np.ndarray:
    """Bilinear upsampling of a pyramid level to a finer level ``step`` = 2^(s - c) times denser.

    REDUCE keeps every other sample, so sample ``j`` of the coarse level sits at
    fine coordinate ``j * step``; fine cell ``i`` reads coarse coordinate ``i / step``
    (clipped at the last sample).
    """
    t, h, w = stack.shape
    H, W = shape
    if (h, w) == (H, W):
        return stack
    ys = np.clip(np.arange(H) / step, 0, h - 1)
    xs = np.clip(np.arange(W) / step, 0, w - 1)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    fy = (ys - y0).astype(np.float32)[None, :, None]
    fx = (xs - x0).astype(np.float32)[None, None, :]
    top = stack[:, y0][:, :, x0] * (1 - fx) + stack[:, y0][:, :, x1] * fx
    bot = stack[:, y1][:, :, x0] * (1 - fx) + stack[:, y1][:, :, x1] * fx
    return (top * (1 - fy) + bot * fy).astype(np.float32)


def _gabor_pair(theta_deg: float, *, wavelength: float = 4.0, sigma: float = 1.5, size: int = 7):
    """Even (zero-mean cosine) and odd (sine) Gabor kernels; the odd one is Im{}."""
    r = size // 2
    y, x = np.mgrid[-r : r + 1, -r : r + 1].astype(np.float64)
    th = np.deg2rad(theta_deg)
    # theta is the orientation of the carrier's wave vector, visual y up
    u = x * np.cos(th) - y * np.sin(th)
    env = np.exp(-(x**2 + y**2) / (2 * sigma**2))
    even = env * np.cos(2 * np.pi * u / wavelength)
    even -= env * even.sum() / env.sum()  # zero DC: a uniform field gives no response
    odd = env * np.sin(2 * np.pi * u / wavelength)
    return even.astype(np.float32), odd.astype(np.float32)


def _correlate(stack: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    from scipy import ndimage  # here: the registry imports this module at planning
    return ndimage.correlate(stack, kernel[None], mode="reflect")


@register("itti", track="attention", kind="saliency",
          reference="Itti, Koch & Niebur 1998; Shic & Scassellati 2007, sec. 2.3 and appendix A",
          bounds={"levels": (0, 16)})
def itti_maps(
    frames: np.ndarray,
    history: np.ndarray | None = None,
    *,
    levels: int = 5,
    centres: tuple[int, ...] = (0, 1, 2),
    deltas: tuple[int, ...] = (2, 3),
    exclude_global_max: bool = True,
    threshold: float = 0.1,
) -> np.ndarray:
    """Extended Itti model base maps N(I), N(O), N(M), shape (T, H, W, 3).

    Intensity and orientation follow Itti et al. (1998): dyadic pyramid I(sigma);
    ``I(c, s) = |I(c) - I(s)|`` and ``O(c, s, theta) = |O(c, theta) - O(s, theta)|`` with
    O the Gabor energy; ``Ibar = (+)_{c,s} N(I(c, s))``,
    ``Obar = sum_theta N((+)_{c,s} N(O(c, s, theta)))``.

    Motion (appendix A): ``M_t(t, sigma)`` = difference of successive frames after a
    causal [1, 2, 1]/4 temporal filter; ``M_s = Im{O(t, sigma, theta)}`` (odd Gabor);
    ``M = M_s * M_t``; ``M+ = sqrt(max(M, 0))``, ``M- = sqrt(max(-M, 0))``;
    ``M_d = N(M+) + N(M-)``; ``M_o(theta) = (+)_sigma N(M_d(sigma, theta))``;
    ``Mbar = sum_theta N(M_o(theta))``, theta in {0, 45, 90, 135} deg.

    The three conspicuity maps are returned after a final N(), so their mean is the
    untuned saliency map.

    Parameters
    ----------
    frames : ndarray, shape (T, H, W)
    history : ndarray, shape (K, H, W), optional
        The K (>= 3 for exact motion) frames preceding ``frames``; missing history
        repeats the first frame.
    levels : int
        Pyramid levels (0 = the grid).
    centres, deltas : tuple of int
        Centre scales c and surround offsets s - c.
    exclude_global_max, threshold
        Passed to :func:`itti_normalize`.
    """
    frames = np.asarray(frames, np.float32)
    T, H, W = frames.shape
    hist = np.zeros((0, H, W), np.float32) if history is None else np.asarray(history, np.float32)
    hist = hist[-_ITTI_HISTORY:]
    if len(hist) < _ITTI_HISTORY:
        first = hist[:1] if len(hist) else frames[:1]
        hist = np.concatenate([np.repeat(first, _ITTI_HISTORY - len(hist), axis=0), hist])
    full = np.concatenate([hist, frames])  # (K + T, H, W)
    N = partial(itti_normalize, exclude_global_max=exclude_global_max, threshold=threshold)

    pyr = [full]
    for _ in range(levels - 1):
        pyr.append(_pyr_down(pyr[-1]))
    K = _ITTI_HISTORY
    cur = [p[K:] for p in pyr]  # frames of this block, per level
    pairs = [(c, c + d) for c in centres for d in deltas if c + d < levels and c < levels]
    if not pairs:
        raise ValueError(f"itti: no centre-surround pair fits {levels} levels (centres {centres}, deltas {deltas})")

    def across(stacks, lev):
        """Cross-scale addition at level 0 of maps living at levels ``lev``."""
        return sum(_resize(s, (H, W), 2**level) for s, level in zip(stacks, lev))

    centre_levels = [c for c, _ in pairs]

    # intensity
    ibar = across(
        [N(np.abs(cur[c] - _resize(cur[s], cur[c].shape[1:], 2 ** (s - c)))) for c, s in pairs], centre_levels
    )
    # orientation and motion share the Gabor responses
    gabors = [_gabor_pair(th) for th in ORIENTATIONS_DEG]
    obar = np.zeros((T, H, W), np.float32)
    mbar = np.zeros((T, H, W), np.float32)
    for even_k, odd_k in gabors:
        energy = []
        md = []
        for p in pyr:
            re = _correlate(p[K:], even_k)
            im = _correlate(p[K:], odd_k)
            energy.append(np.hypot(re, im))
            # causal temporal smoothing then difference: M_t(t) = f(t) - f(t-1)
            # f_c(i) = (p[i] + 2 p[i-1] + p[i-2]) / 4 = f[i-2]; M_t(i) = f_c(i) - f_c(i-1), i = K..K+T-1
            f = (p[2:] + 2 * p[1:-1] + p[:-2]) / 4.0
            mt = f[K - 2 :] - f[K - 3 : -1]
            m = im * mt
            mplus = np.sqrt(np.maximum(m, 0.0))
            mminus = np.sqrt(np.maximum(-m, 0.0))
            md.append(N(N(mplus) + N(mminus)))
        obar += N(
            across(
                [N(np.abs(energy[c] - _resize(energy[s], energy[c].shape[1:], 2 ** (s - c)))) for c, s in pairs],
                centre_levels,
            )
        )
        mbar += N(across(md, range(len(md))))
    out = np.stack([N(ibar), N(obar), N(mbar)], axis=-1)
    return out.astype(np.float32)


# The motion modality's temporal filter reads the 3 frames before each block.
itti_maps.history_frames = _ITTI_HISTORY
itti_maps.channels = ("N(I)", "N(O)", "N(M)")
