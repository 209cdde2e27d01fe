"""Horn-Schunck optical flow (Horn & Schunck 1981), single scale by default (Tlapale et al. 2010,
RR-7317 sec. 4.4, footnote 2)."""

from __future__ import annotations

from functools import partial

import numpy as np

from psybench._opencv import cv2
from psybench.motion.models.flow.common import (
    _check_frames,
    _coarse_to_fine,
    _number,
    _warp,
)
from psybench.motion.models.flow.hs_multigrid import _HSLevel, _prolong, _restrict  # noqa: F401  (tests use them)
from psybench.registry import register

__all__ = ["horn_schunck", "HS_AVERAGE_KERNEL"]

HS_REFERENCE = "Horn & Schunck (1981), Artificial Intelligence 17:185-203"

# Horn & Schunck (1981), section 8: the local average u_bar weights the four
# edge neighbours by 1/6 and the four corner neighbours by 1/12 (centre 0).
HS_AVERAGE_KERNEL = np.array([[1, 2, 1], [2, 0, 2], [1, 2, 1]], dtype=float) / 12.0
_HS_KERNEL32 = HS_AVERAGE_KERNEL.astype(np.float32)


# -------------------------------------------------------------------- Horn-Schunck
def _hs_derivatives(i0: np.ndarray, i1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E_x, E_y, E_t of Horn & Schunck (1981), section 7: first differences averaged over the 2x2x2 cube.

    With ``E[i, j, k]`` (row i, column j, frame k)::

        E_x ~ 1/4 sum over (di, dk) in {0,1}^2 of E[i+di, j+1, k+dk] - E[i+di, j, k+dk]

    and likewise E_y (rows) and E_t (frames). The estimates refer to the cube's
    centre (i + 1/2, j + 1/2, k + 1/2) and, as in the paper, are indexed by its
    corner (i, j): the flow field is therefore staggered by half a pixel right and
    down. The last row and column are replicated so the output keeps shape (H, W).
    """
    p0 = np.pad(i0, ((0, 1), (0, 1)), mode="edge")
    p1 = np.pad(i1, ((0, 1), (0, 1)), mode="edge")
    s = p0 + p1  # sum over the two frames
    d = p1 - p0  # difference over the two frames
    ex = 0.25 * (s[:-1, 1:] - s[:-1, :-1] + s[1:, 1:] - s[1:, :-1])
    ey = 0.25 * (s[1:, :-1] - s[:-1, :-1] + s[1:, 1:] - s[:-1, 1:])
    et = 0.25 * (d[:-1, :-1] + d[:-1, 1:] + d[1:, :-1] + d[1:, 1:])
    return ex, ey, et


def _hs_average(field: np.ndarray) -> np.ndarray:
    """The paper's weighted neighbourhood average ``u_bar`` (HS_AVERAGE_KERNEL) of a float32 (H, W) field.

    Borders replicate the flow (zero normal derivative, the natural boundary
    condition of the variational problem). The 3x3 stencil is applied with
    ``cv2.filter2D``: the same numbers as
    ``scipy.ndimage.correlate(field, HS_AVERAGE_KERNEL, mode="nearest")`` (to float32
    rounding; tested) at about 1/15 of the cost, which dominates the iterations.
    """
    kernel = _HS_KERNEL32 if field.dtype == np.float32 else HS_AVERAGE_KERNEL
    return cv2.filter2D(field, -1, kernel, borderType=cv2.BORDER_REPLICATE)


def _dot(a: np.ndarray, b: np.ndarray, buffer: np.ndarray | None = None) -> float:
    """``sum a b`` by numpy's pairwise summation: the same digits at any BLAS thread count, and no thread start-up.

    ``buffer`` (C-contiguous, the shape of ``a``) receives the products, so the sum runs over the same
    layout, hence in the same order, as without it.
    """
    return float(np.multiply(a, b, out=buffer).sum())


def _hs_pcg(jxx: np.ndarray, jxy: np.ndarray, jyy: np.ndarray, b: np.ndarray, a2: float, x: np.ndarray, *,
            n_iter: int, tol: float, b_norm: float, multigrid: bool = True) -> tuple[np.ndarray, int, float]:
    """Solve ``J w + a2 (w - w_bar) = b`` (Horn & Schunck 1981, sec. 11) by preconditioned conjugate gradients.

    ``J = [[jxx, jxy], [jxy, jyy]]`` (each (H, W)) is the data term, ``b`` (2, H, W)
    the right-hand side and ``x`` (2, H, W) the start (updated in place). The
    preconditioner is a multigrid V-cycle (Braess 1986; Tatebe 1993, "MGCG"):
    damped block-Jacobi smoothing with the operator's exact 2 x 2 diagonal block
    at each pixel (which equalises the data term, orders of magnitude larger on
    edges than in uniform regions) and Galerkin coarse grids of 2 x 2 cells,
    which carry the slowly converging fill-in of uniform regions; with
    ``multigrid=False`` the block Jacobi step alone. Stops when
    ``|b - A x| <= tol b_norm`` or after ``n_iter`` iterations.

    Returns
    -------
    x : ndarray, shape (2, H, W)
    iterations : int
    relative_residual : float
        ``|b - A x| / b_norm`` at return (recomputed, not the recursive estimate).
    """
    from psybench.motion.models.flow import hs_kernels  # compiled (cached) on first use, not at planning

    level = _HSLevel(jxx, jxy, jyy, a2, HS_AVERAGE_KERNEL, coarsen=False)  # the operator itself, in float64
    dot = hs_kernels.dot  # = _dot (NumPy's pairwise sum of the products), without writing the products
    # work arrays, reused every iteration (each (2, H, W), C-contiguous like the vectors they stand for);
    # cg_update rounds the residual to float32 into r32 as it updates it, for the preconditioner
    z, ad, r32 = np.empty_like(b), np.empty_like(b), np.empty(b.shape, np.float32)

    def precondition(r: np.ndarray) -> np.ndarray:
        return level.block_solve(r, out=z)

    if multigrid:  # the preconditioner in float32 (twice as fast): it sets the path, not the solution
        f32 = _HSLevel(*(a.astype(np.float32) for a in (jxx, jxy, jyy)), a2, _HS_KERNEL32)

        def precondition(r: np.ndarray) -> np.ndarray:  # float32, read as float64 by dot and cg_direction
            return f32.v_cycle(r32)  # r32 = r.astype(np.float32), kept so by cg_update

    res = b - level.apply(x)
    np.copyto(r32, res, casting="same_kind")
    done = 0
    if np.sqrt(dot(res, res)) > tol * b_norm:
        z = precondition(res)
        rz = dot(res, z)
        direction = z.astype(np.float64)
        while done < n_iter:
            done += 1
            level.apply(direction, out=ad)
            step = rz / dot(direction, ad)
            # x += step d, res -= step A d, r32 = float32(res) in one pass, and sum res * res
            if np.sqrt(hs_kernels.cg_update(x, res, direction, ad, step, r32)) <= tol * b_norm:
                break
            z = precondition(res)
            rz_new = dot(res, z)
            hs_kernels.cg_direction(direction, z, rz_new / rz)  # d = d (rz_new / rz) + z
            rz = rz_new
    final = b - level.apply(x)
    return x, done, np.sqrt(_dot(final, final)) / b_norm


def _hs_level(i0: np.ndarray, i1: np.ndarray, flow0: np.ndarray, *, alpha: float, n_iter: int,
              tol: float, multigrid: bool = True, stats: list | None = None) -> np.ndarray:
    """Horn-Schunck flow at one scale, linearised about ``flow0``: the paper's equations solved to ``tol``.

    The paper (section 12) iterates, Jacobi style::

        u^{n+1} = u_bar^n - E_x (E_x u_bar^n + E_y v_bar^n + E_t) / (alpha^2 + E_x^2 + E_y^2)

    (and likewise ``v``), whose fixed point solves the linear equations of its
    section 11 (the paper absorbs the factor kappa = 3 of its Laplacian estimate
    ``lap u ~ kappa (u_bar - u)`` into alpha^2; we keep its equations as printed)::

        E_x (E_x u + E_y v) + alpha^2 (u - u_bar) = -E_x E_t
        E_y (E_x u + E_y v) + alpha^2 (v - v_bar) = -E_y E_t

    The operator on the left is symmetric positive definite (``u_bar`` is a
    symmetric average whose replicated borders only add to its diagonal), so we
    solve the same equations by conjugate gradients preconditioned by a
    multigrid V-cycle (:func:`_hs_pcg`; block Jacobi alone if ``multigrid`` is False). The iterations stop at the
    relative residual ``tol`` (``|b - A w| / |b|``) or after ``n_iter``. ``alpha``
    is relative to the luminance range ``max - min`` of the pair at this level (0
    range: no motion, the flow stays ``flow0``). For ``flow0 != 0`` (coarse to
    fine) ``frame1`` is first warped by ``flow0`` and the constraint becomes
    ``E_x (u - u0) + E_y (v - v0) + E_t = 0``, while the smoothness term acts on
    the total flow ``u``; ``flow0`` is also where the iterations start. ``stats``,
    if given, receives ``(iterations, relative residual)`` of the level.
    """
    x = np.array(flow0, np.float64)
    span = float(max(i0.max(), i1.max()) - min(i0.min(), i1.min()))
    if span <= 0.0:
        return x
    ex, ey, et = _hs_derivatives(i0, _warp(i1, flow0))
    if flow0.any():
        et = et - ex * flow0[..., 0] - ey * flow0[..., 1]
    a2 = (alpha * span) ** 2
    b = -np.stack([ex, ey]) * et
    b_norm = float(np.sqrt(_dot(b, b)))
    x = np.ascontiguousarray(np.moveaxis(x, -1, 0))
    if b_norm == 0.0:
        return np.moveaxis(x, 0, -1)
    x, iterations, residual = _hs_pcg(ex * ex, ex * ey, ey * ey, b, a2, x, n_iter=n_iter, tol=tol, b_norm=b_norm,
                                      multigrid=multigrid)
    if stats is not None:
        stats.append((iterations, residual))
    return np.moveaxis(x, 0, -1)


@register("horn_schunck", track="motion", kind="pair", reference=HS_REFERENCE,
          bounds={"n_iter": (0, 100_000), "levels": (0, 16)})
def horn_schunck(
    frame0: np.ndarray,
    frame1: np.ndarray,
    *,
    alpha: float = 0.04,
    n_iter: int = 200,
    tol: float = 1e-6,
    sigma: float = 1.0,
    levels: int = 1,
    multigrid: bool = True,
) -> np.ndarray:
    """Horn-Schunck optical flow: brightness constancy plus global smoothness (Horn & Schunck 1981).

    Minimises ``sum (E_x u + E_y v + E_t)^2 + alpha^2 (|grad u|^2 + |grad v|^2)``
    ([HS81]_, up to the paper's discretisation) by the paper's Jacobi
    iterations (section 12) starting from zero flow, with derivatives averaged
    over the 2x2x2 cube (section 7) and the 1/6, 1/12 neighbourhood average
    (section 8), solved to convergence (multigrid-preconditioned conjugate
    gradients on the paper's equations, see :func:`_hs_level`).

    Parameters
    ----------
    frame0, frame1 : ndarray, shape (H, W)
        Consecutive frames, luminance in [0, 1].
    alpha : float
        Smoothness weight alpha of [HS81]_ *relative to the stimulus contrast*: the
        iterations use ``alpha * (L_max - L_min)``, the luminance range of the
        (pre-smoothed) pair. The paper's estimates E_x, E_y, E_t all scale with
        contrast, so a fixed alpha weighs smoothness more on a faint stimulus
        than on a strong one; relative to the range, the solution is the same at
        every contrast (``alpha * k`` for frames ``L0 + k (I - L0)``). 0.04 equals the
        former absolute 0.02 at the range 0.5 of a contrast-1 line stimulus on
        the 0.5 background, i.e. the old calibration at the reference contrast.
    n_iter : int
        Largest number of (conjugate-gradient) iterations per pyramid level.
    tol : float
        Convergence tolerance: the iterations stop when the residual of the
        paper's equations falls below ``tol`` times its value at zero flow. A
        fixed count of the paper's Jacobi iterations (100 here before) left the
        interior of large apertures unfilled, because information spreads about
        one pixel per Jacobi iteration; so did a relative residual of 1e-2 (up to
        0.8 px/frame from the solution on a 256 x 256 diamond). At 1e-6 the flow is
        within 3e-4 px/frame of the solution there (measured against a solve to
        1e-11; tests/test_motion_models_hs_solver.py checks it against a direct
        sparse solve), reached in about 23 multigrid-preconditioned iterations.
    multigrid : bool
        Precondition the conjugate gradients by a multigrid V-cycle (default);
        False uses the per-pixel block Jacobi step alone (same solution, about
        20x more iterations). Only the iterations' path depends on it.
    sigma : float
        Standard deviation (px of each pyramid level) of the Gaussian pre-smoothing
        of both frames; 0 disables it. [HS81]_ (sections 3 and 13) assume a brightness
        pattern that varies smoothly, whose derivatives the 2x2x2 first differences
        estimate well; on a sharp line of 2 px they are aliased, and the error then
        depends on the line's orientation relative to the pixel grid. Barron, Fleet &
        Beauchemin (1994, IJCV 12:43, sec. 4) pre-smooth with a Gaussian of
        sigma 1.5 for the same reason; 1 px keeps 2-px lines.
    levels : int
        Maximum number of coarse-to-fine pyramid levels (factor 2, warping between
        levels). 1 (default) is the paper's single-scale method, as in the OpenCV
        implementation RR-7317 used.

    Returns
    -------
    flow : ndarray, shape (H, W, 2), float32
        ``(u, v)`` px/frame, ``frame0(x) ~ frame1(x + flow(x))``. Exactly zero
        when the frames are identical.

    Notes
    -----
    The cube-averaged derivatives refer to points half a pixel right and below
    each pixel (see :func:`_hs_derivatives`); the flow is reported on the pixel
    grid like the paper does, i.e. staggered by (+1/2, +1/2) px.

    References
    ----------
    .. [HS81] Horn & Schunck (1981), Artificial Intelligence 17:185-203.
    """
    name = "horn_schunck"
    f0, f1 = _check_frames(name, frame0, frame1)
    alpha = _number(name, "alpha", alpha)
    n_iter = _number(name, "n_iter", n_iter, integer=True, strict=False)
    tol = _number(name, "tol", tol)
    sigma = _number(name, "sigma", sigma, strict=False)
    levels = _number(name, "levels", levels, integer=True)
    if not isinstance(multigrid, bool):
        raise ValueError(f"{name}: parameter 'multigrid' must be true or false, got {multigrid!r}")
    solver = partial(_hs_level, alpha=alpha, n_iter=n_iter, tol=tol, multigrid=multigrid)
    return _coarse_to_fine(f0, f1, solver, levels, sigma=sigma).astype(np.float32)
