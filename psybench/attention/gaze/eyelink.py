"""EyeLink ASCII recordings (``.asc``, converted from EDF by SR Research's ``edf2asc``), to raw samples.

Parsing is pymovements' (``pymovements.gaze.from_asc``; Krakowczyk et al. 2023,
ETRA '23, "pymovements: A Python Package for Eye Movement Data Processing"), a
maintained reader of the EyeLink ASC format (SR Research EyeLink 1000 User
Manual, sec. 4.9 "ASC file format"): sample lines ``<time> <x> <y> <pupil>``
(monocular) or ``<time> <xl> <yl> <pl> <xr> <yr> <pr>`` (binocular), followed by
optional flag fields (``...``, ``.C...``), with ``.`` for a missing value (lost
track, blink); ``MSG``, ``START``/``END``, ``SFIX``/``EFIX`` ... lines around them;
the screen size from ``DISPLAY_COORDS`` and the sampling rate from ``SAMPLES ...
RATE``. Before handing the file to pymovements, every sample line is checked here
(time an integer, every value a number or ``.``) so that a broken row gives an
error naming the file and line rather than being skipped.

Timestamps are the tracker clock (ms), kept as recorded, unless ``onset_message``
names the message (a regular expression, e.g. ``SYNCTIME``) whose first
occurrence marks the movie onset: times are then counted from it.

Validity: a sample of one eye is valid when its position is present (not ``.``)
and its pupil size is positive (EyeLink writes 0 in a blink); the gaze is the mean
of the valid eyes, as for DIEM's binocular files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from psybench.attention.gaze.columns import GazeFormatError, sample_table

__all__ = ["load_eyelink", "is_eyelink_asc"]

_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_FLAGS = re.compile(r"^[.A-Z]{2,}$")  # e.g. "...", ".C...", "I...": interpolation, CR missing, ...
_MSG = re.compile(r"^MSG\s+(\d+)\s+(?:-?\d+\s+)?(.*)$")


def is_eyelink_asc(path: str | os.PathLike) -> bool:
    """True when the file starts like an ``edf2asc`` output (``** CONVERTED FROM ... edf``)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = next((ln.strip() for ln in fh if ln.strip()), "")
    return first.startswith("** CONVERTED FROM")


def _check_samples(path: Path, onset_message: str | None) -> float | None:
    """Check every sample line (GazeFormatError naming file and line); the onset message's time."""
    onset_re = re.compile(onset_message) if onset_message else None
    onset = None
    n = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw[:1].isdigit():
                m = _MSG.match(raw.strip()) if onset_re is not None and onset is None else None
                if m and onset_re.search(m.group(2)):
                    onset = float(m.group(1))
                continue
            toks = raw.split()
            if not toks[0].isdigit():
                raise GazeFormatError(path, lineno, f"sample time {toks[0]!r} is not an integer (ms)")
            values = toks[1:]
            while values and _FLAGS.match(values[-1]):
                values = values[:-1]
            if len(values) < 3:
                raise GazeFormatError(path, lineno, f"sample has {len(values)} values; EyeLink samples are "
                                                    "'<time> <x> <y> <pupil> ...' (SR Research ASC format)")
            for tok in values:
                if tok != "." and not _NUMBER.match(tok):
                    raise GazeFormatError(path, lineno, f"sample value {tok!r} is neither a number nor '.'")
            n += 1
    if not n:
        raise GazeFormatError(path, None, "no sample lines ('<time> <x> <y> <pupil> ...'): not an EyeLink "
                                          "ASC recording with samples (edf2asc without -e?)")
    if onset_re is not None and onset is None:
        raise GazeFormatError(path, None, f"no MSG line matches onset_message {onset_message!r}")
    return onset


def load_eyelink(
    path: str | os.PathLike, *, subject: str | None = None, movie: str | None = None,
    onset_message: str | None = None,
) -> pd.DataFrame:
    """Load an EyeLink ``.asc`` recording (monocular or binocular) as raw samples.

    Parameters
    ----------
    path : path-like
    subject, movie : str, optional
        Default: the file stem.
    onset_message : str, optional
        Regular expression of the ``MSG`` text marking movie onset (times are then
        ms from it); default: the tracker clock as recorded.

    Returns
    -------
    pandas.DataFrame
        :data:`~psybench.attention.gaze.columns.SAMPLE_COLUMNS`, positions in screen
        pixels; ``attrs``: ``screen_px`` (from ``DISPLAY_COORDS``),
        ``sampling_rate_hz``, ``eyes`` ("L", "R" or "LR").

    Raises
    ------
    GazeFormatError
        Naming the file (and line) of a malformed sample or a file without samples.
    """
    import pymovements as pm

    path = Path(path)
    onset = _check_samples(path, onset_message)
    try:
        gaze = pm.gaze.from_asc(path, encoding="utf-8")
    except Exception as exc:  # pymovements raises several types for files it cannot read
        raise GazeFormatError(path, None, f"not readable as EyeLink ASC ({type(exc).__name__}: {exc})") from None
    s = gaze.samples
    t = s["time"].to_numpy().astype(float)
    pixel = np.array(s["pixel"].to_list(), dtype=float).reshape(len(s), -1)
    pupil = np.array(s["pupil"].to_list(), dtype=float).reshape(len(s), -1)
    n_eyes = pixel.shape[1] // 2
    if n_eyes not in (1, 2) or pupil.shape[1] != n_eyes:
        raise GazeFormatError(path, None, f"{pixel.shape[1]} position and {pupil.shape[1]} pupil columns; "
                                          "expected one eye (x y pupil) or two (xl yl pl xr yr pr)")
    xy = pixel.reshape(len(s), n_eyes, 2)
    ok = np.isfinite(xy).all(axis=2) & (np.nan_to_num(pupil) > 0)
    w = ok.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (np.nan_to_num(xy) * w[..., None]).sum(axis=1) / w.sum(axis=1)[:, None]
    if onset is not None:
        t = t - onset
    df = sample_table(subject or path.stem, movie or path.stem, t, mean[:, 0], mean[:, 1], ok.any(axis=1))
    tracker = gaze.experiment.eyetracker if gaze.experiment is not None else None
    screen = gaze.experiment.screen if gaze.experiment is not None else None
    if screen is not None and screen.resolution is not None:
        df.attrs["screen_px"] = [float(v) for v in screen.resolution]
    if tracker is not None:
        df.attrs["sampling_rate_hz"] = tracker.sampling_rate
        df.attrs["eyes"] = ("L" if tracker.left else "") + ("R" if tracker.right else "")
    return df
