"""The human reference of every track, with its source: what each leaderboard page and figure puts next to the models.

Data only (no computation beyond looking up): one :class:`HumanReference` per track.

* **Motion** (Tlapale et al. 2010, Motion Psychobench, INRIA RR-7317, Table 1 and
  sec. 3): each criterion is a qualitative behaviour of human observers, and each
  error is the distance of a model from it, so people sit at 0 by construction.
  The literature values with their dispersion, where known, are in the run's
  literature file (``config/literature.yaml``) and drawn on the motion figures.
* **IntPhys** (Riochet et al. 2018, IntPhys: A Framework and Benchmark for Visual
  Intuitive Physics Reasoning, arXiv:1803.07616; the IntPhys V1.0 benchmark
  description, section "Human performance"): 71 Amazon Mechanical Turk workers
  judged the test movies.  Their error rates per block and visibility are printed
  in a figure of that section (``humans.png``), not as text; the values are not
  transcribed here (:data:`INTPHYS_HUMAN_ERROR` holds ``None`` for each cell rather
  than a number read off a picture), so the page states the published qualitative
  result: far below the baselines' error, higher on occluded than on visible movies.
* **Attention** (Shic & Scassellati 2007, A Behavioral Analysis of Computational
  Models of Visual Attention, IJCV 73(2), sec. 5): the inter-observer ceiling, how
  well one person's gaze predicts another's, is computed per run (column
  ``ceiling`` of the attention ``metrics.csv`` / ``table1.csv``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["HumanReference", "HUMAN_REFERENCES", "INTPHYS_HUMAN_ERROR", "MOTION_TARGETS", "PAPER_TABLE1",
           "human_reference", "attention_ceilings"]


@dataclass(frozen=True)
class HumanReference:
    """What people do on one track, and where that comes from.

    Attributes
    ----------
    track : str
    summary : str
        One sentence a page prints next to the models.
    citation : str
        Author(s), year, venue and section/table.
    per_criterion : mapping {experiment: str}
        The human behaviour behind each experiment's criterion.
    synthetic_default : str
        What the default run uses in place of human data ("" if real data).
    """

    track: str
    summary: str
    citation: str
    per_criterion: Mapping[str, str] = field(default_factory=dict)
    synthetic_default: str = ""


#: The source paper's own verdicts: RR-7317 (Tlapale et al. 2010), Table 1: algorithm -> experiment -> passed.
PAPER_TABLE1: dict[str, dict[str, bool]] = {
    "horn_schunck": {"barberpole": True, "diamonds": False, "dashed_bars": False, "grating_size": False},
    "lucas_kanade": {"barberpole": True, "diamonds": False, "dashed_bars": False, "grating_size": False},
    "simoncelli_heeger": {"barberpole": True, "diamonds": False, "dashed_bars": False, "grating_size": False},
    "tlapale_v1mt": {"barberpole": True, "diamonds": True, "dashed_bars": True, "grating_size": False},
}


#: Motion: the human behaviour each criterion encodes (RR-7317 Table 1, sec. 3; sources per experiment).
MOTION_TARGETS = {
    "barberpole": "perceived direction biased from the grating normal toward the long axis of the aperture, "
                  "growing with aspect ratio (Masson, Rybarczyk, Castet & Mestre 2000)",
    "diamonds": "pursuit starts biased toward the vector average (44 deg off) and converges to the true "
                "direction within about 300 ms (Masson & Stone 2002; Wallace, Stone & Masson 2005)",
    "dashed_bars": "tilted bars are first seen moving along their normal, then along the true direction; the "
                   "bias grows with bar length and shrinks when the bar is dashed (Lorenceau et al. 1993)",
    "grating_size": "the early ocular-following response grows with grating diameter, then saturates or "
                    "slightly decreases (Barthelemy, Vanzetta & Masson 2006)",
}

#: IntPhys human error rate per (block, visibility): published as a figure only (see module docstring).
INTPHYS_HUMAN_ERROR: dict[tuple[str, str], float | None] = {
    (b, v): None for b in ("O1", "O2", "O3") for v in ("visible", "occluded")
}

HUMAN_REFERENCES = {
    "motion": HumanReference(
        track="motion",
        summary="People: each criterion encodes what human observers see, and each motion error measures "
                "how far a model's percept is from it; people's row of Table 1 on the motion page shows the run's "
                "reference observer where it was scored, else the findings below with their sources. The "
                "human time courses the literature gives are drawn next to each model's on its direction-error figure.",
        citation="Tlapale, Kornprobst, Masson, Chavane & Vieville 2010, Motion Psychobench, INRIA RR-7317, "
                 "Table 1 and sec. 3",
        per_criterion=MOTION_TARGETS,
    ),
    "intphys": HumanReference(
        track="intphys",
        summary="People: 71 online observers made far fewer errors than the future-prediction baselines, and "
                "more on occluded than on visible movies. The per-block, per-visibility human error rates are "
                "published in a figure (not transcribed here): compare a model's L_R and L_A with that figure.",
        citation="Riochet et al. 2018, IntPhys: A Framework and Benchmark for Visual Intuitive Physics "
                 "Reasoning, arXiv:1803.07616; IntPhys V1.0 benchmark description, 'Human performance'",
        synthetic_default="the default run scores a small generated IntPhys-format tree, not the released "
                          "test movies the human data come from. Its trained models (nextframe, cnn_future) learn "
                          "from the generated train split (config/config.yaml: 32 movies of 20 frames at 64 x 64 "
                          "px), about 0.002% of the pixels of the 15,000 movies of 100 frames at 288 x 288 px "
                          "the paper's baselines saw, and cnn_future trains for 4 CPU epochs: their scores show "
                          "the training stage working end to end, not the error rates a baseline trained at the "
                          "paper's scale reaches",
    ),
    "attention": HumanReference(
        track="attention",
        summary="People: the inter-observer ceiling, how well the other observers' gaze predicts each "
                "observer's, is the best a model can be expected to reach (column ceiling of the attention "
                "metrics.csv and table1.csv).",
        citation="Shic & Scassellati 2007, A Behavioral Analysis of Computational Models of Visual Attention, "
                 "IJCV 73(2), sec. 5",
        synthetic_default="the default run's observers are synthetic (seeded gaze that prefers the odd target "
                          "with a set probability), not recorded people",
    ),
}


def human_reference(track: str) -> HumanReference | None:
    """The human reference of ``track`` (None for a track without one)."""
    return HUMAN_REFERENCES.get(track)


def attention_ceilings(table) -> dict[str, float]:
    """Mean inter-observer ceiling (%) per ``<train>_on_<test>`` pair of an attention evaluation table.

    Parameters
    ----------
    table : pandas.DataFrame
        The attention ``table1.csv`` (columns ``train``, ``test``, ``ceiling``;
        :func:`psybench.attention.evaluate.evaluate`).  Without a ``ceiling``
        column (older runs), an empty dict.

    Returns
    -------
    dict {str: float}
    """
    if not {"train", "test", "ceiling"} <= set(table.columns):
        return {}
    means = table.groupby(["train", "test"], sort=True)["ceiling"].mean()
    return {f"{tr}_on_{te}": float(v) for (tr, te), v in means.items() if v == v}
