"""Plausibility models for IntPhys: P(movie) in [0, 1], higher = more plausible.

Every model is a function ``model(observation, **params) -> pandas.Series``
(movie id -> P) registered in the shared registry (:mod:`psybench.registry`,
track ``"intphys"``, kind ``"plausibility"``) or named ``package.module:function``
in ``intphys.models``. ``observation`` is an
:class:`~psybench.intphys.models.observation.Observation`: frames, depth, masks,
mask names and movie ids of one shard, never its labels or conditions.

Modules
-------
observation
    The observation a model receives, and helpers to stream its movies.
controls
    ``constant`` and ``random``: chance level by construction.
future
    ``cnn_future``: the paper's encoder-decoder future-prediction baseline (trained by
    :mod:`psybench.intphys.train`).
flow
    ``flow``: surprise of an optical-flow extrapolation of the next frame.
nextframe
    ``nextframe``: a streamed per-pixel next-frame regression and its surprise.
stream
    The streamed interface (kind ``"stream"``): one movie at a time, in batches of frames.
surprise
    ``representation_surprise``: windowed representation-prediction error of a user's encoder.
tracking
    ``tracking``: object permanence, shape constancy and continuity of tracked masks.
"""

from psybench.intphys.models.controls import constant, random_control
from psybench.intphys.models.flow import flow_surprise
from psybench.intphys.models.future import cnn_future_surprise
from psybench.intphys.models.nextframe import nextframe_surprise, train_nextframe, train_nextframe_stores
from psybench.intphys.models.observation import Movies, Observation, observe
from psybench.intphys.models.stream import MovieStream, movie_streams
from psybench.intphys.models.surprise import representation_surprise
from psybench.intphys.models.tracking import tracking_permanence

__all__ = [
    "Observation",
    "Movies",
    "observe",
    "constant",
    "random_control",
    "flow_surprise",
    "cnn_future_surprise",
    "train_nextframe",
    "nextframe_surprise",
    "tracking_permanence",
    "train_nextframe_stores",
    "MovieStream",
    "movie_streams",
    "representation_surprise",
]
