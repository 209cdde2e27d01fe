"""Pass/fail criteria and continuous errors of the four motion experiments (Tlapale et al. 2010, RR-7317 Table 1).

One module per experiment (:mod:`.diamonds`, :mod:`.dashed_bars`, :mod:`.barberpole`,
:mod:`.grating_size`), each holding its rule and its continuous error; the thresholds
and their sources are in :mod:`.thresholds`, what the rules share in :mod:`.common`.

Each experiment's criterion is an explicit rule, stated in its function's
docstring with its source and every threshold. The thresholds live in
:data:`CRITERIA_DEFAULTS` and can be overridden from the config
(``motion.criteria``), but the rules are the same for every model: nothing here
knows a model's name, and the thresholds come from the literature, not from any
model's result.

Every criterion returns one row::

    {"experiment", "model", "passed": bool, "error": float (continuous, lower is better),
     "details": dict of the measured quantities and fit parameters}

Inputs are *readouts* (see :mod:`psybench.motion.readouts`): a mapping stimulus
name -> readout data, either a readout-store path or a dict with

``t_ms`` (T,), ``direction_deg`` (T,), ``direction_error_deg`` (T,),
``speed_deg_s`` (T,), ``stimulus`` (the stimulus attributes, with ``truth``).

Conventions shared by all rules
-------------------------------
* Nuisance invariance (:mod:`.directions`): each experiment is scored separately at
  every motion direction of the run and passes only if it passes at each; its
  error is the worst direction's. The thresholds are written here, with their
  sources, before any model is run on new stimuli; none is tuned on the
  generalisation runs (:mod:`psybench.motion.generalisation`).
* Response onset ``t_on``: the first sample at which the direction of ``w`` is
  defined (:func:`psybench.motion.readouts.direction_error` gives NaN before).
  Fits use time since onset, so ``A`` is the bias at the response onset.
* Late window: samples at least ``late_ms`` (300 ms) after onset. Wallace, Stone
  & Masson (2005) report that human pursuit of the diamonds converges to the true
  direction in under 300 ms. If the response is shorter, the last
  ``final_window_ms`` are used.
* Perceived direction: direction of the mean of ``w`` over the last
  ``final_window_ms`` (RR-7317 sec. 4.1: the steady state of the pursuit).
* Fits: :func:`psybench.motion.fits.fit_exponential` (RR-7317 eq. 4), one vs two
  exponentials by BIC (Born et al. 2006), the scale-invariant variant (sec.
  4.2.1), and the Gaussian score (eq. 1) against ``config/literature.yaml``.
"""

from psybench.motion.criteria.barberpole import score_barberpole
from psybench.motion.criteria.dashed_bars import score_dashed_bars
from psybench.motion.criteria.diamonds import score_diamonds
from psybench.motion.criteria.grating_size import score_grating_size
from psybench.motion.criteria.thresholds import CRITERIA_DEFAULTS, merge_criteria

#: Criterion of each experiment (:data:`psybench.motion.EXPERIMENTS`).
SCORERS = {
    "barberpole": score_barberpole,
    "diamonds": score_diamonds,
    "dashed_bars": score_dashed_bars,
    "grating_size": score_grating_size,
}

__all__ = [
    "CRITERIA_DEFAULTS",
    "SCORERS",
    "merge_criteria",
    "score_barberpole",
    "score_dashed_bars",
    "score_diamonds",
    "score_grating_size",
]
