"""Attention track (Shic & Scassellati 2007, IJCV 74(1)): saliency models scored on gaze.

Stages, one module each:

* :mod:`~psybench.attention.stimuli` -- movies ingested to the model grid, and the
  motion pop-out scene of the paper's Fig. 12 rendered with a planted target;
* :mod:`~psybench.attention.gaze` -- gaze loaders (CSV, CRCNS eye-1, DIEM, GazeCom),
  resampling to frames, I-VT filtering, synthetic observers and random controls;
* :mod:`~psybench.attention.features` -- raw patches, Gaussian pyramid and the
  extended Itti model (intensity, orientation, motion; appendix A), streamed over time;
* :mod:`~psybench.attention.evaluate` -- per-individual Fisher tuning, saliency rank
  percentiles, curves and the groups of Table 1;
* :mod:`~psybench.attention.metrics` -- standard saliency metrics (AUC-Judd, AUC-Borji,
  sAUC, NSS, CC, KL, SIM, information gain).
"""

BIBTEX = """@article{shic2007behavioral,
  title   = {A Behavioral Analysis of Computational Models of Visual Attention},
  author  = {Shic, Frederick and Scassellati, Brian},
  journal = {International Journal of Computer Vision},
  volume  = {73}, number = {2}, pages = {159--177}, year = {2007}}"""

__all__ = ["BIBTEX"]
