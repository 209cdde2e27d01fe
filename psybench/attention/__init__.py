"""Attention track (Shic & Scassellati 2007, IJCV 73(2)): saliency models scored on gaze.

Stages, one module each:

* :mod:`~psybench.attention.stimuli` -- the motion pop-out scene of the paper's
  Fig. 12 rendered with a planted target; :mod:`~psybench.attention.ingest` -- real
  movies through OpenCV with the container's frame timing;
* :mod:`~psybench.attention.gaze` -- gaze loaders (CSV, CRCNS eye-1, DIEM, GazeCom
  ``.coord`` and ARFF, any table through a column mapping), screen geometry,
  resampling to frames, I-VT filtering, synthetic observers and the random
  controls' scanpaths (a package, one module per job);
* :mod:`~psybench.attention.responses` -- the saliency-model interface and the
  feature maps of any model, streamed over time into a feature store;
  :mod:`~psybench.attention.families` (raw patches, Gaussian pyramid) and
  :mod:`~psybench.attention.itti` (extended Itti model: intensity, orientation,
  motion; appendix A) are the built-in models;
* :mod:`~psybench.attention.models` -- configured models: Table 1 rows and shared
  feature stores;
* :mod:`~psybench.attention.movies` -- a movie's feature maps and gaze, read back;
* :mod:`~psybench.attention.tuning` -- feature vectors, training points, the
  train/test frame split and Fisher's discriminant (sec. 4.2, 5.2);
* :mod:`~psybench.attention.controls` -- the rf/rs/rp random controls (sec. 5.1);
* :mod:`~psybench.attention.evaluate` -- saliency rank percentiles, curves and the
  groups of Table 1; :mod:`~psybench.attention.table1` writes them;
* :mod:`~psybench.attention.figures` -- the response-percentile curves (Fig. 8);
* :mod:`~psybench.attention.metrics` -- standard saliency metrics (AUC-Judd, AUC-Borji,
  sAUC, NSS, CC, KL, SIM, information gain) with the MIT benchmark's definitions
  (:mod:`~psybench.attention.map_metrics`), and the leave-one-observer-out ceiling;
* :mod:`~psybench.attention.defaults` -- the track's default settings.
* :mod:`~psybench.attention.pipeline` -- the chain: each stage's function, as the
  workflow's scripts call it and ``psybench.score(model, "attention")`` chains it.
"""

from psybench.tracks import Metric

BIBTEX = """@article{shic2007behavioral,
  title   = {A Behavioral Analysis of Computational Models of Visual Attention},
  author  = {Shic, Frederick and Scassellati, Brian},
  journal = {International Journal of Computer Vision},
  volume  = {73}, number = {2}, pages = {159--177}, year = {2007}}"""

#: How pages name the track.
TITLE = "Attention"
#: Identifier of the benchmark, and the paper it comes from (Brain-Score style provenance).
BENCHMARK = "gaze_attention"
PAPER = (
    "Shic & Scassellati (2007) A behavioral analysis of computational models of visual "
    "attention, IJCV 73(2):159-177"
)
#: What the track scores: the paper's Table 1 and the standard saliency metrics.
EXPERIMENTS: tuple[str, ...] = ("table1", "saliency_metrics")
#: The metrics its score rows write (psybench.attention.score_rows), as written: Table 1's
#: median rank percentile per group, ``median_rp_<group>`` (sec. 5.2), and the saliency
#: metrics of psybench.attention.metrics in the order it writes them (MIT saliency
#: benchmark definitions, Bylinskii et al. 2019).
METRICS: tuple[Metric, ...] = (
    Metric("median_rp_", "median rank percentile", "%", "higher", prefix=True),
    Metric("AUC-Judd", "AUC-Judd", "fraction", "higher"),
    Metric("AUC-Borji", "AUC-Borji", "fraction", "higher"),
    Metric("sAUC", "shuffled AUC", "fraction", "higher"),
    Metric("NSS", "NSS", "SD", "higher"),
    Metric("CC", "CC", "r", "higher"),
    Metric("KL", "KL divergence", "nats", "lower"),
    Metric("SIM", "SIM", "fraction", "higher"),
    Metric("IG", "information gain", "bits/fixation", "higher"),
)
#: What a leaderboard ranks by default (psybench.tracks.headline_metrics): Table 1's ``n un``
#: group, a model's filter trained on one observer and tested on the others (sec. 5.2), per
#: train/test pair. ``n ma`` (tested on the observer it was trained on) rewards fitting one
#: observer; the chance controls (rf/n, rs/n, rp/n, n/iid) are scored with the same model and
#: say how far above chance it is, not which model is better; the map metrics of tuned and
#: untuned maps stay in metrics.csv and the long table. A map-output model (scored untuned,
#: no filter) is ranked on its ``rank_percentile``, the same statistic over its own map.
HEADLINE_METRICS: tuple[str, ...] = ("median_rp_n_un", "rank_percentile")

__all__ = ["TITLE", "BENCHMARK", "PAPER", "BIBTEX", "EXPERIMENTS", "METRICS", "HEADLINE_METRICS"]
