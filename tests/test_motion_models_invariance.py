"""Acceptance tests for the models: verdicts that do not depend on a nuisance.

* Horn-Schunck and Lucas-Kanade are isotropic methods, so they must give the same
  verdict at every motion direction, off-cardinal ones included (on the diamonds
  and on the tilted and dashed bars).
* A model whose parameters are in physical units (deg, deg/s, ms) must give the
  same verdict on the same physical stimulus rendered at 50, 100 and 200 frames/s.

Verdicts come from the public scorers (:data:`psybench.motion.criteria.SCORERS`)
with the default criteria, through the same readout as the workflow (RR-7317
eq. 3, lambda 50 ms; ``tests/motion_model_runs.py``). Stimuli are small (64 x 64
px at 4 px/deg, 500 ms) to keep the suite fast.
"""

import pytest
from motion_model_runs import model_spec, verdict

from psybench.motion.display import Display
from psybench.motion.stimuli import render_bar, render_dashed_bar, render_diamond

SMALL = dict(px_per_deg=4, width_px=64, height_px=64, supersample=2)
# the bio models' internal grids are 4 display px (0.5 deg at their design resolution of 8 px/deg)
BIO = dict(px_per_deg=8, width_px=96, height_px=96, supersample=2)
DIRECTIONS = (0.0, 15.0, 45.0, 90.0, 195.0)


def diamonds(display, direction, size_deg=5.0, speed_deg_s=10.0):
    return {f"diamond_{h}": render_diamond(display, handedness=h, direction_deg=direction, size_deg=size_deg,
                                           speed_deg_s=speed_deg_s, line_width_deg=0.5, duration_ms=500.0)
            for h in ("cw", "ccw")}


def bars(display, direction):
    kw = dict(direction_deg=direction, width_deg=0.5, tilt_deg=45.0, speed_deg_s=8.0, duration_ms=500.0)
    out = {f"bar_len{n}": render_bar(display, length_deg=n, **kw) for n in (2.0, 4.0, 8.0)}
    out.update({f"dashed_n{n}": render_dashed_bar(display, length_deg=8.0, n_tiles=n, **kw) for n in (1, 4)})
    return out


EXPERIMENTS = {"diamonds": diamonds, "dashed_bars": bars}


@pytest.mark.parametrize("experiment", sorted(EXPERIMENTS))
def test_horn_schunck_and_lucas_kanade_agree_at_every_direction(experiment):
    display = Display(frames_per_s=50, **SMALL)
    rows = {}
    for name in ("horn_schunck", "lucas_kanade"):
        spec = model_spec(name)
        rows[name] = [verdict(experiment, spec, EXPERIMENTS[experiment](display, a), display) for a in DIRECTIONS]
    passed = {name: [r["passed"] for r in rs] for name, rs in rows.items()}
    errors = {name: [round(r["error"], 1) for r in rs] for name, rs in rows.items()}
    # isotropic: each model's verdict is the same at every direction ...
    assert all(len(set(p)) == 1 for p in passed.values()), (passed, errors)
    # ... and the two gradient methods agree with each other (the paper's Table 1 row)
    assert passed["horn_schunck"] == passed["lucas_kanade"], (passed, errors)
    # Horn-Schunck's continuous error depends little on the direction (pre-smoothing,
    # tolerance, relative alpha). Spread in earlier versions: 15.3 (bars) and 23.0 deg (diamonds); 2.1 and 1.0
    # for the iterate stopped at a relative residual of 1e-2; 5.3 and 6.5 for the converged solution
    # (solved to 1e-6; the remaining spread is the anisotropy of the paper's 2x2x2 derivative
    # and 3x3 average stencils, which the loose stop had hidden). Bound 8 deg, a third of the issue-12 spread.
    hs = errors["horn_schunck"]
    assert max(hs) - min(hs) < 8.0, errors


@pytest.mark.parametrize("model", ["horn_schunck", "lucas_kanade", "simoncelli_heeger", "tlapale_v1mt"])
def test_verdicts_agree_at_50_100_and_200_frames_per_s(model):
    spec = model_spec(model)
    rows = []
    for fps in (50.0, 100.0, 200.0):
        display = Display(frames_per_s=fps, **BIO)
        rows.append(verdict("diamonds", spec, diamonds(display, 15.0, size_deg=4.0, speed_deg_s=6.0), display))
    passed = [r["passed"] for r in rows]
    assert len(set(passed)) == 1, [(r["passed"], round(r["error"], 1), r["details"].get("A"),
                                    r["details"].get("tau_ms"), r["details"].get("B")) for r in rows]


def test_tlapale_frame_rate_invariance_on_the_larger_diamond():
    """Was a strict xfail: without MT's direction pooling the 5-deg diamond at 15 deg snapped to the 0-deg grid
    direction at 50 frames/s (B = 14 deg, fail) and passed at 100. With the pooling (now the default,
    chosen on rigid textures, docs/models.md) the verdicts agree: both fail (figures in docs/models.md)."""
    spec = model_spec("tlapale_v1mt")
    rows = []
    for fps in (50.0, 100.0):
        display = Display(frames_per_s=fps, px_per_deg=8, width_px=128, height_px=128, supersample=2)
        rows.append(verdict("diamonds", spec, diamonds(display, 15.0), display))
    assert rows[0]["passed"] == rows[1]["passed"], [(r["passed"], round(r["error"], 1), r["details"].get("A"),
                                                     r["details"].get("B")) for r in rows]
