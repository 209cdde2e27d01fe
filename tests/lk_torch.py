"""Lucas-Kanade in PyTorch as convolutions: a user's batched pair model (kind ``pairs``, a factory).

One Gauss-Newton step of psybench's :func:`~psybench.motion.models.flow.lucas_kanade`
(``n_warps=1, levels=1, sigma=0``: Lucas & Kanade 1981 without warping) written independently
of it: the gradients are central differences as a ``conv2d`` with the kernel
``[-1/2, 0, 1/2]`` (``numpy.gradient`` inside the frame) averaged over both frames, the
windowed sums of the five products a separable Gaussian ``conv2d`` (truncated at 4 sigma,
edges replicated, as ``scipy.ndimage.gaussian_filter``), and the 2x2 systems solved per pixel
with the same eigenvalue tests (Barron, Fleet & Beauchemin 1994). The gradients at the
frame's outermost pixel differ (one-sided in NumPy), so the two agree in the interior only.

Its flow equals psybench's numpy model through the deep path only if the batched pair stage
keeps the frames' axes, the flow's sign and its units: the end-to-end check of that path.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _gaussian(sigma: float) -> np.ndarray:
    radius = int(4.0 * sigma + 0.5)
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    return kernel / kernel.sum()


class TorchLucasKanade:
    """``model(frames0, frames1) -> flows (B, H, W, 2)`` px/frame, ``frames0(x) ~ frames1(x + flow(x))``."""

    def __init__(self, device: Any, *, window_sigma: float, min_eigenvalue: float, min_eigen_ratio: float) -> None:
        import torch

        self.torch = torch
        self.device = device
        self.window = torch.tensor(_gaussian(window_sigma), dtype=torch.float64, device=device)
        self.min_eigenvalue = min_eigenvalue
        self.min_eigen_ratio = min_eigen_ratio

    def _conv(self, x: Any, kernel: Any, axis: str) -> Any:
        """Correlate each channel of ``x`` (B, C, H, W) with a 1-D kernel along ``axis``, edges replicated."""
        f = self.torch.nn.functional
        channels, r = x.shape[1], (len(kernel) - 1) // 2
        if axis == "x":
            weight, pad = kernel.view(1, 1, 1, -1), (r, r, 0, 0)
        else:
            weight, pad = kernel.view(1, 1, -1, 1), (0, 0, r, r)
        return f.conv2d(f.pad(x, pad, mode="replicate"), weight.expand(channels, 1, -1, -1), groups=channels)

    def __call__(self, frames0: np.ndarray, frames1: np.ndarray) -> np.ndarray:
        torch = self.torch
        i0 = torch.tensor(frames0, dtype=torch.float64, device=self.device)[:, None]
        i1 = torch.tensor(frames1, dtype=torch.float64, device=self.device)[:, None]
        diff = torch.tensor([-0.5, 0.0, 0.5], dtype=torch.float64, device=self.device)
        gx = 0.5 * (self._conv(i0, diff, "x") + self._conv(i1, diff, "x"))
        gy = 0.5 * (self._conv(i0, diff, "y") + self._conv(i1, diff, "y"))
        it = i1 - i0
        products = torch.cat([gx * gx, gx * gy, gy * gy, gx * it, gy * it], dim=1)
        a11, a12, a22, b1, b2 = self._conv(self._conv(products, self.window, "x"), self.window, "y").unbind(1)
        half_trace = 0.5 * (a11 + a22)
        disc = torch.hypot(0.5 * (a11 - a22), a12)
        lam1, lam2 = half_trace + disc, half_trace - disc
        full = lam2 >= torch.clamp(lam1 * self.min_eigen_ratio, min=self.min_eigenvalue)
        normal = (lam1 >= self.min_eigenvalue) & ~full
        det = a11 * a22 - a12 * a12
        inv_det = torch.where(full, 1.0 / torch.where(full, det, 1.0), 0.0)
        proj = 2.0 * lam1 * disc  # e1 e1^T / lambda1 = (A - lambda2 I) / (lambda1 (lambda1 - lambda2))
        inv_proj = torch.where(normal, 1.0 / torch.where(normal, proj, 1.0), 0.0)
        m11 = a22 * inv_det + (a11 - lam2) * inv_proj
        m22 = a11 * inv_det + (a22 - lam2) * inv_proj
        m12 = (inv_proj - inv_det) * a12
        u = -(m11 * b1 + m12 * b2)
        v = -(m12 * b1 + m22 * b2)
        return torch.stack([u, v], dim=-1).to(torch.float32).cpu().numpy()


def build_lucas_kanade(*, weights: str | None, device: Any, window_sigma: float = 2.0,
                       min_eigenvalue: float = 1e-6, min_eigen_ratio: float = 0.01) -> TorchLucasKanade:
    """The factory psybench calls once per job (no weights: the model has none to learn)."""
    if weights is not None:
        raise ValueError("build_lucas_kanade takes no weights")
    return TorchLucasKanade(device, window_sigma=window_sigma, min_eigenvalue=min_eigenvalue,
                            min_eigen_ratio=min_eigen_ratio)
