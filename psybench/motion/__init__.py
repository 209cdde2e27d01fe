"""Motion track: Motion Psychobench (Tlapale, Kornprobst, Masson et al. 2010, INRIA RR-7317).

Models of motion integration are shown the stimuli psychophysicists use
(diamonds, tilted and dashed bars, barber-poles, gratings in apertures) and judged
by the pursuit readout people would produce, experiment by experiment (RR-7317
Table 1). The stages, each a module or subpackage of this package:

``stimuli/``       render the stimulus set from physical units (:class:`~psybench.motion.display.Display`)
``models/``        classic optical flow and the bio-inspired models (registered in :mod:`psybench.registry`)
``responses``      stream a stimulus store through one model
``readouts``       pursuit ``w(t)`` and direction errors (RR-7317 eqs. 2-3)
``fits``           exponential fits of the time courses (RR-7317 sec. 4.2)
``literature``     literature values and the Gaussian score (RR-7317 eq. 1)
``criteria/``      one pass/fail rule and continuous error per experiment
``scores``         per-model scoring that routes readouts to the criteria
``table1``         the paper's Table 1 and the Pareto view of it
``figures``        the motion figures of the report

This module holds the track's metadata only (no heavy imports): the experiments,
defined once here, and the citation.
"""

from __future__ import annotations

from psybench.tracks import Metric

__all__ = ["TITLE", "BENCHMARK", "EXPERIMENTS", "EXPERIMENT_LABELS", "METRICS", "PAPER", "BIBTEX"]

#: How pages name the track.
TITLE = "Motion"
#: Identifier of the benchmark (Brain-Score style provenance).
BENCHMARK = "motion_psychobench"

#: The four experiments of RR-7317 Table 1, in the table's order.
EXPERIMENTS: tuple[str, ...] = ("barberpole", "diamonds", "dashed_bars", "grating_size")

#: What each experiment's score rows hold (psybench.motion.score_rows): the verdict
#: (RR-7317 Table 1), the continuous error of psybench.motion.criteria (directions in
#: deg; the grating-size error graded and dimensionless) and the Gaussian score (eq. 1).
METRICS: tuple[Metric, ...] = (
    Metric("passed", "passed (1 = yes)", "0/1", "higher"),
    Metric("error", "error", "", "lower",
           units={"barberpole": "deg", "diamonds": "deg", "dashed_bars": "deg", "grating_size": "a.u."}),
    Metric("gaussian_score", "Gaussian score", "0-1", "higher"),
)

#: Row labels of RR-7317 Table 1.
EXPERIMENT_LABELS: dict[str, str] = {
    "barberpole": "Barberpole",
    "diamonds": "Translating diamonds",
    "dashed_bars": "Translating dashed bars",
    "grating_size": "Grating size",
}

PAPER = (
    "Tlapale, Kornprobst, Masson et al. (2010) Towards a bio-inspired evaluation methodology "
    "for motion estimation models, INRIA RR-7317"
)
BIBTEX = (
    "@techreport{tlapale2010motionpsychobench, title={Towards a bio-inspired evaluation "
    "methodology for motion estimation models}, author={Tlapale, E. and Kornprobst, P. and "
    "Bouecke, J. D. and Neumann, H. and Masson, G. S.}, institution={INRIA}, number={RR-7317}, year={2010}}"
)
