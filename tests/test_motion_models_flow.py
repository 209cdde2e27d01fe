"""Tests of psybench.motion.models.flow against analytic ground truth and scikit-image's optical_flow_ilk.

Stimuli are rendered exactly (no interpolation): a smooth periodic random texture
translated by a Fourier phase shift, a sinusoid or a sum of sinusoids evaluated
analytically under an affine motion. Convention under test everywhere:
``frame0(x) ~ frame1(x + flow(x))``, flow ``(u, v)`` = (rightward, downward) px/frame.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from scipy import ndimage as ndi
from skimage.registration import optical_flow_ilk

from psybench.motion.models import flow
from psybench.registry import get_algorithm

SIZE = 96
MARGIN = 16  # "away from the borders"
MODELS = {
    "horn_schunck": flow.horn_schunck,
    "lucas_kanade": flow.lucas_kanade,
    "farneback": flow.farneback,
    "dis": flow.dis,
}


def translating_texture(velocity, *, size=SIZE, sigma=3.0, seed=0, contrast=0.1):
    """Periodic Gaussian-filtered noise and its exact Fourier shift: frame1(x) = frame0(x - velocity)."""
    rng = np.random.default_rng(seed)
    ky = np.fft.fftfreq(size)[:, None]
    kx = np.fft.fftfreq(size)[None, :]
    spec = np.fft.fft2(rng.standard_normal((size, size))) * np.exp(-2 * np.pi**2 * sigma**2 * (kx**2 + ky**2))
    t0 = np.fft.ifft2(spec).real
    t1 = np.fft.ifft2(spec * np.exp(-2j * np.pi * (kx * velocity[0] + ky * velocity[1]))).real
    scale = contrast / t0.std()
    return ((t0 - t0.mean()) * scale + 0.5).astype(np.float32), ((t1 - t0.mean()) * scale + 0.5).astype(np.float32)


def affine_pair(*, size=SIZE, seed=0, matrix=((0.004, -0.006), (0.006, 0.004)), shift=(0.3, -0.2), n_waves=40):
    """A sum of random plane waves under the affine flow w(x) = M x + c (x from the centre), evaluated exactly.

    Returns frame0, frame1 and the true flow (H, W, 2) with frame0(x) = frame1(x + w(x)).
    """
    rng = np.random.default_rng(seed)
    wavelength = rng.uniform(8, 20, n_waves)
    theta = rng.uniform(0, 2 * np.pi, n_waves)
    phase = rng.uniform(0, 2 * np.pi, n_waves)
    kx, ky = np.cos(theta) / wavelength, np.sin(theta) / wavelength

    def texture(x, y):
        arg = 2 * np.pi * (kx * x[..., None] + ky * y[..., None]) + phase
        return 0.5 + 0.15 * np.sqrt(2 / n_waves) * np.cos(arg).sum(-1)

    rows, cols = np.mgrid[0:size, 0:size].astype(float)
    x, y = cols - size / 2, rows - size / 2
    m, c = np.asarray(matrix), np.asarray(shift)
    back = np.stack([x - c[0], y - c[1]], -1) @ np.linalg.inv(np.eye(2) + m).T  # x with x + w(x) = y
    truth = np.stack([x, y], -1) @ m.T + c
    return texture(x, y).astype(np.float32), texture(back[..., 0], back[..., 1]).astype(np.float32), truth


def epe(estimate, truth, margin=MARGIN):
    """Mean end-point error (px/frame) away from the borders."""
    diff = np.asarray(estimate, float) - np.asarray(truth, float)
    return float(np.hypot(diff[..., 0], diff[..., 1])[margin:-margin, margin:-margin].mean())


# ------------------------------------------------------------------- acceptance
@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("velocity", [(0.4, -0.3), (-0.25, 0.45)])
def test_translating_texture_mean_epe_below_0_1(name, velocity):
    f0, f1 = translating_texture(velocity)
    out = MODELS[name](f0, f1)
    assert out.shape == (SIZE, SIZE, 2) and out.dtype == np.float32
    assert epe(out, velocity) <= 0.1
    # the sign convention: the mean flow points the way the texture moves
    mean = out[MARGIN:-MARGIN, MARGIN:-MARGIN].reshape(-1, 2).mean(0)
    np.testing.assert_allclose(mean, velocity, atol=0.05)


@pytest.mark.parametrize("name,params", [
    ("horn_schunck", {}), ("horn_schunck", {"levels": 3, "sigma": 1.0}),
    ("lucas_kanade", {}), ("lucas_kanade", {"levels": 3}),
])
def test_zero_motion_gives_exactly_zero_flow(name, params):
    f0, _ = translating_texture((0.0, 0.0))
    out = MODELS[name](f0, f0.copy(), **params)
    assert np.all(out == 0)


def test_zero_motion_farneback_below_1e_3_away_from_borders():
    # OpenCV's Farneback returns up to ~0.1 px/frame within winsize/2 px of the image
    # border even for identical frames (its border handling); tolerance 1e-3 px/frame
    # at least `winsize` px from the borders.
    f0, _ = translating_texture((0.0, 0.0))
    out = flow.farneback(f0, f0.copy(), winsize=15)
    assert np.abs(out[15:-15, 15:-15]).max() < 1e-3


def test_zero_motion_dis_below_1e_3():
    f0, _ = translating_texture((0.0, 0.0))
    assert np.abs(flow.dis(f0, f0.copy())).max() < 1e-3


def test_lucas_kanade_agrees_with_skimage_optical_flow_ilk():
    """Independent oracle on a spatially varying (affine) flow, which also pins axes and signs.

    skimage returns (row, col) = (v, u) components with reference(x) ~ moving(x + flow).
    Tolerance: mean |difference| <= 0.05 px/frame away from the borders; the
    difference is dominated by skimage's bilinear warp (its own EPE here is ~0.025,
    ours with cubic-spline warping ~0.005).
    """
    f0, f1, truth = affine_pair()
    radius = 4
    ref = optical_flow_ilk(f0, f1, radius=radius, num_warp=10, gaussian=True)
    ref = np.stack([ref[1], ref[0]], axis=-1)
    ours = flow.lucas_kanade(f0, f1, window_sigma=(2 * radius + 1) / 4, n_warps=10)
    assert epe(ours, ref) <= 0.05
    assert epe(ref, truth) <= 0.05  # the oracle itself is right here
    assert epe(ours, truth) <= epe(ref, truth)


def test_horn_schunck_converges_to_true_velocity():
    velocity = (0.4, -0.3)
    f0, f1 = translating_texture(velocity)
    # the iterations' path without the multigrid preconditioner (block Jacobi conjugate gradients)
    errors = [epe(flow.horn_schunck(f0, f1, n_iter=n, tol=1e-8, multigrid=False), velocity) for n in (1, 3, 10, 300)]
    assert all(a > b for a, b in zip(errors[:-1], errors[1:])), errors
    assert errors[-1] < 0.02 and errors[0] > 0.1
    # a fixed point: more iterations no longer change the answer
    np.testing.assert_allclose(flow.horn_schunck(f0, f1, n_iter=300, tol=1e-8),
                               flow.horn_schunck(f0, f1, n_iter=1000, tol=1e-8), atol=1e-4)
    # the default (multigrid preconditioner, relative residual 1e-6) reaches the same fixed point
    np.testing.assert_allclose(flow.horn_schunck(f0, f1), flow.horn_schunck(f0, f1, n_iter=1000, tol=1e-8),
                               atol=1e-4)


def test_horn_schunck_alpha_is_relative_to_contrast():
    """alpha scales with the luminance range, so the flow of L0 + k (I - L0) does not depend on k."""
    f0, f1 = translating_texture((0.4, -0.3))
    full = flow.horn_schunck(f0, f1, tol=1e-8, n_iter=300)
    for k in (0.3, 0.1):
        faint = flow.horn_schunck(0.5 + k * (f0 - 0.5), 0.5 + k * (f1 - 0.5), tol=1e-8, n_iter=300)
        np.testing.assert_allclose(faint, full, atol=2e-3)
    # the former absolute alpha did not: a fixed alpha weighs smoothness more on a faint texture
    assert flow.horn_schunck(f0, f1).dtype == np.float32


def test_horn_schunck_matches_the_papers_derivative_estimator_exactly():
    """On a sinusoid of angular frequency w moving by u, the cube-averaged derivatives of
    Horn & Schunck (1981, section 7) give -E_t / E_x = tan(w u / 2) / tan(w / 2) at every
    pixel, so the iterations converge to that value (not exactly u)."""
    n, wavelength, u = SIZE, 12.0, 0.4
    w = 2 * np.pi / wavelength
    x = np.broadcast_to(np.arange(n, dtype=float), (n, n))
    f0 = (0.5 + 0.2 * np.cos(w * x)).astype(np.float32)
    f1 = (0.5 + 0.2 * np.cos(w * (x - u))).astype(np.float32)
    out = flow.horn_schunck(f0, f1, alpha=0.02, n_iter=200, tol=1e-10, sigma=0.0)
    expected = np.tan(w * u / 2) / np.tan(w / 2)
    np.testing.assert_allclose(out[MARGIN:-MARGIN, MARGIN:-MARGIN, 0], expected, atol=1e-5)
    assert np.all(out[..., 1] == 0)  # E_y = 0: nothing drives v


def test_hs_derivatives_are_exact_on_a_linear_ramp():
    rows, cols = np.mgrid[0:10, 0:12].astype(float)
    i0 = 0.3 * cols - 0.2 * rows
    ex, ey, et = flow._hs_derivatives(i0, i0 + 0.05)
    np.testing.assert_allclose(ex[:-1, :-1], 0.3)
    np.testing.assert_allclose(ey[:-1, :-1], -0.2)
    np.testing.assert_allclose(et, 0.05)


def test_hs_average_is_the_papers_kernel():
    field = np.random.default_rng(3).random((20, 17)).astype(np.float32)
    kernel = np.array([[1 / 12, 1 / 6, 1 / 12], [1 / 6, 0, 1 / 6], [1 / 12, 1 / 6, 1 / 12]])
    np.testing.assert_allclose(flow.HS_AVERAGE_KERNEL, kernel)
    np.testing.assert_allclose(flow._hs_average(field), ndi.correlate(field.astype(float), kernel, mode="nearest"),
                               atol=1e-6)


@pytest.mark.parametrize("sigma", [0.7, 2.0, 3.3])
def test_lk_window_is_scipys_gaussian_filter(sigma):
    maps = np.random.default_rng(4).random((3, 21, 30))
    np.testing.assert_allclose(flow._gaussian_window(maps, sigma=sigma),
                               ndi.gaussian_filter(maps, (0, sigma, sigma), mode="nearest"), atol=1e-12)


def test_warp_with_precomputed_coefficients_is_map_coordinates_bit_for_bit():
    """Lucas-Kanade prefilters the warped frame once per level: the same bits as map_coordinates' own prefilter.

    Oracle: ``scipy.ndimage.map_coordinates(order=3, mode="nearest")`` on the image itself, for flows
    from sub-pixel to far outside the image (its 12-px padding and the clamp beyond it).
    """
    from psybench.motion.models.flow.common import _spline_coefficients, _warp

    rng = np.random.default_rng(3)
    image = ndi.gaussian_filter(rng.random((40, 56)), 1.5)
    coefficients = _spline_coefficients(image)
    rows, cols = np.mgrid[0:40, 0:56].astype(np.float64)
    for scale in (0.3, 4.0, 15.0, 60.0):
        motion = rng.normal(0.0, scale, (40, 56, 2))
        expected = ndi.map_coordinates(image, [rows + motion[..., 1], cols + motion[..., 0]], order=3, mode="nearest")
        assert np.array_equal(_warp(image, motion, coefficients), expected)
        assert np.array_equal(_warp(image, motion), expected)
    assert _warp(image, np.zeros((40, 56, 2)), coefficients) is image


def test_one_dimensional_pattern_gives_normal_flow_only():
    """Aperture problem: for stripes (no vertical structure) LK's regularised solve and HS
    recover only the normal (horizontal) component; the tangential one stays 0."""
    rng = np.random.default_rng(1)
    profile = ndi.gaussian_filter1d(rng.standard_normal(SIZE), 3.0, mode="wrap")
    spec, k = np.fft.fft(profile / profile.std() * 0.1), np.fft.fftfreq(SIZE)
    r0 = np.fft.ifft(spec).real + 0.5
    r1 = np.fft.ifft(spec * np.exp(-2j * np.pi * k * 0.4)).real + 0.5
    f0, f1 = (np.tile(r, (SIZE, 1)).astype(np.float32) for r in (r0, r1))
    # HS to a tight tolerance: its fixed point, not the default stopping rule, is under test
    for func in (flow.lucas_kanade, partial(flow.horn_schunck, tol=1e-4)):
        out = func(f0, f1)
        assert np.abs(out[..., 1]).max() < 1e-6, func
        assert np.abs(out[MARGIN:-MARGIN, MARGIN:-MARGIN, 0] - 0.4).mean() < 0.01, func


def rendered_line(shift, angle_deg, *, size=SIZE, width=2.0, supersample=4):
    """Antialiased (box-filtered) line of ``width`` px through the centre, at ``angle_deg``
    (image axes), luminance 1 on 0.5, shifted right by ``shift`` px: the kind of edge the
    motion stimuli render, with its pixel-scale staircase."""
    rows, cols = np.mgrid[0:size, 0:size].astype(float)
    offsets = (np.arange(supersample) + 0.5) / supersample - 0.5
    theta = np.deg2rad(angle_deg)
    nx, ny = -np.sin(theta), np.cos(theta)
    cover = sum(np.abs((cols + dx - size / 2 - shift) * nx + (rows + dy - size / 2) * ny) < width / 2
                for dy in offsets for dx in offsets)
    return (0.5 + 0.5 * cover / supersample**2).astype(np.float32)


@pytest.mark.parametrize("levels", [1, 3])
@pytest.mark.parametrize("angle", [15.0, 45.0, 70.0])
def test_lucas_kanade_gives_normal_flow_on_a_rendered_line(angle, levels):
    """Aperture problem on real rendering: a straight line moving right by 0.8 px has only
    its normal flow (v . n) n in the data; the tangential component must not be invented."""
    f0, f1 = rendered_line(0.0, angle), rendered_line(0.8, angle)
    theta = np.deg2rad(angle)
    normal = np.array([-np.sin(theta), np.cos(theta)])
    truth = 0.8 * normal[0] * normal
    out = flow.lucas_kanade(f0, f1, levels=levels)
    centre = (slice(SIZE // 2 - 8, SIZE // 2 + 8),) * 2
    on_line = np.abs(f0[centre] - 0.5) > 0.02
    err = np.hypot(*(out[centre][on_line] - truth).T)
    assert err.mean() < 0.06
    assert np.abs(out[MARGIN:-MARGIN, MARGIN:-MARGIN]).max() < 0.8  # nowhere faster than the line itself


def test_lk_solve_eigenvalue_rule():
    one = np.ones(3)
    a11, a12, a22 = np.array([1.0, 1.0, 1e-8]), np.zeros(3), np.array([0.5, 1e-4, 1e-8])
    b1, b2 = np.array([-0.2, -0.2, -0.2]), np.array([-0.3, -0.3, -0.3])
    du, dv = flow._lk_solve(a11 * one, a12, a22, b1, b2, min_eigenvalue=1e-6, min_eigen_ratio=0.01)
    np.testing.assert_allclose(du, [0.2, 0.2, 0.0], atol=1e-12)  # full solve; normal flow along x; nothing
    np.testing.assert_allclose(dv, [0.6, 0.0, 0.0], atol=1e-12)
    # a rotated rank-one tensor: the increment lies along its eigenvector e1 = (1, 1) / sqrt 2
    du, dv = flow._lk_solve(np.array([0.5]), np.array([0.5]), np.array([0.5]), np.array([-0.1]), np.array([-0.3]),
                            min_eigenvalue=1e-6, min_eigen_ratio=0.01)
    np.testing.assert_allclose([du[0], dv[0]], [0.2, 0.2])


@pytest.mark.parametrize("func", [flow.horn_schunck, flow.lucas_kanade], ids=lambda f: f.__name__)
def test_coarse_to_fine_recovers_large_motion(func):
    velocity = (2.2, -1.6)
    f0, f1 = translating_texture(velocity)
    assert epe(func(f0, f1, levels=3), velocity) <= 0.1
    if func is flow.horn_schunck:  # single scale cannot linearise a 2.7 px motion
        assert epe(func(f0, f1, levels=1), velocity) > 0.2


def test_dis_knobs_override_the_preset():
    f0, f1 = translating_texture((0.4, -0.3))
    base = flow.dis(f0, f1)
    np.testing.assert_array_equal(base, flow.dis(f0, f1, preset="medium", finest_scale=None))
    assert not np.array_equal(base, flow.dis(f0, f1, finest_scale=0, variational_refinement_iterations=0))


# ------------------------------------------------------------------- registry and validation
@pytest.mark.parametrize("name", sorted(MODELS))
def test_registered_as_motion_pair_algorithms(name):
    algo = get_algorithm(name)
    assert algo.function is MODELS[name]
    assert (algo.track, algo.kind) == ("motion", "pair")
    assert algo.reference and algo.description
    assert "frame0" not in algo.defaults and algo.defaults  # keyword-only knobs only


@pytest.mark.parametrize("name,params,key", [
    ("horn_schunck", {"alpha": -1.0}, "alpha"),
    ("horn_schunck", {"n_iter": 2.5}, "n_iter"),
    ("horn_schunck", {"levels": 0}, "levels"),
    ("lucas_kanade", {"n_warps": 0}, "n_warps"),
    ("lucas_kanade", {"window_sigma": float("nan")}, "window_sigma"),
    ("lucas_kanade", {"min_eigenvalue": 0.0}, "min_eigenvalue"),
    ("lucas_kanade", {"min_eigen_ratio": 1.5}, "min_eigen_ratio"),
    ("lucas_kanade", {"sigma": -1.0}, "sigma"),
    ("farneback", {"poly_n": 6}, "poly_n"),
    ("farneback", {"pyr_scale": 1.0}, "pyr_scale"),
    ("farneback", {"gaussian_window": "yes"}, "gaussian_window"),
    ("dis", {"preset": "slow"}, "preset"),
    ("dis", {"patch_size": 4, "patch_stride": 6}, "patch_stride"),
    ("dis", {"use_spatial_propagation": 1}, "use_spatial_propagation"),
])
def test_bad_parameters_name_the_parameter(name, params, key):
    f0, f1 = translating_texture((0.4, -0.3), size=32)
    with pytest.raises(ValueError, match=rf"{name}.*'{key}'"):
        MODELS[name](f0, f1, **params)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bad_frames_rejected(name):
    f0 = np.full((16, 16), 0.5, np.float32)
    with pytest.raises(ValueError, match=rf"{name}: frames differ in shape"):
        MODELS[name](f0, f0[:8])
    bad = f0.copy()
    bad[3, 3] = np.nan
    with pytest.raises(ValueError, match=rf"{name}: frames contain non-finite"):
        MODELS[name](f0, bad)


def test_dis_presets_are_opencvs_and_opencv_runs_on_one_thread():
    """The presets are written out (planning imports no OpenCV); the first OpenCV use sets one thread."""
    import subprocess
    import sys

    import cv2

    assert flow.DIS_PRESETS == {"ultrafast": cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST,
                                "fast": cv2.DISOPTICAL_FLOW_PRESET_FAST, "medium": cv2.DISOPTICAL_FLOW_PRESET_MEDIUM}
    code = ("import sys; from psybench.registry import resolve_model; "
            "m = resolve_model({'name': 'hs', 'algorithm': 'horn_schunck'}, track='motion'); "
            "assert 'cv2' not in sys.modules, 'the model registry imported OpenCV'; "
            "from psybench._opencv import cv2; print(cv2.getNumThreads())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1"
