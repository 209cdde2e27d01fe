"""Gaze data of the attention track, one module per job.

* :mod:`~psybench.attention.gaze.columns` -- the raw-sample and per-frame tables;
* :mod:`~psybench.attention.gaze.loaders` -- CSV, CRCNS eye-1, DIEM and GazeCom files;
* :mod:`~psybench.attention.gaze.eyelink` -- EyeLink ASCII (``.asc``) recordings, through pymovements;
* :mod:`~psybench.attention.gaze.tables` -- any CSV/TSV export through a column mapping (SMI's too);
* :mod:`~psybench.attention.gaze.datasets` -- pymovements' published datasets (GazeBase, JuDo1000, HBN, ...),
  read with pymovements' own definitions;
* :mod:`~psybench.attention.gaze.formats` -- any file by its format's name or by what it looks like;
* :mod:`~psybench.attention.gaze.frames` -- I-VT saccade filtering and resampling to frames;
* :mod:`~psybench.attention.gaze.synthetic` -- synthetic observers and the random
  controls' scanpaths (Shic & Scassellati 2007, sec. 5.1);
* :mod:`~psybench.attention.gaze.geometry` -- screen pixels to the movie's pixels, for every format;
* :mod:`~psybench.attention.gaze.validity` -- off-screen, time-less and out-of-movie samples
  marked invalid and counted, recordings without a valid sample in the movie refused;
* :mod:`~psybench.attention.gaze.movie_table` -- the gaze stage of a configured movie.

The public names of these modules are importable from this package.
"""

from psybench.attention.gaze.columns import FRAME_COLUMNS, SAMPLE_COLUMNS
from psybench.attention.gaze.datasets import detect_dataset, load_pymovements
from psybench.attention.gaze.eyelink import load_eyelink
from psybench.attention.gaze.formats import load_gaze
from psybench.attention.gaze.frames import ivt_filter, resample_to_frames
from psybench.attention.gaze.geometry import recording_screen, to_movie_pixels
from psybench.attention.gaze.loaders import GazeFormatError, load_crcns, load_csv, load_diem, load_gazecom
from psybench.attention.gaze.movie_table import write_gaze_table
from psybench.attention.gaze.synthetic import (
    random_physiological_scanpaths,
    random_saccade_scanpaths,
    synthetic_observers,
)
from psybench.attention.gaze.validity import clean_recording, lost_share, mark_invalid, screen_bounds

__all__ = [
    "GazeFormatError",
    "SAMPLE_COLUMNS",
    "FRAME_COLUMNS",
    "load_csv",
    "load_crcns",
    "load_diem",
    "load_gazecom",
    "load_eyelink",
    "load_gaze",
    "load_pymovements",
    "detect_dataset",
    "ivt_filter",
    "resample_to_frames",
    "synthetic_observers",
    "random_saccade_scanpaths",
    "random_physiological_scanpaths",
    "write_gaze_table",
    "mark_invalid",
    "screen_bounds",
    "clean_recording",
    "lost_share",
    "recording_screen",
    "to_movie_pixels",
]
