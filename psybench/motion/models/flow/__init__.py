"""Classic optical flow: Horn-Schunck, Lucas-Kanade, Farneback and DIS.

Every function of this package is a ``kind="pair"`` algorithm of the ``motion`` track
(see :mod:`psybench.registry`)::

    flow = f(frame0, frame1, *, knobs...)

with ``frame0`` and ``frame1`` of shape ``(H, W)``, luminance in [0, 1], and
``flow`` of shape ``(H, W, 2)`` float32 holding ``(u, v)`` in px/frame, ``u``
rightward and ``v`` downward, such that ``frame0(x) ~ frame1(x + flow(x))``
(the convention of OpenCV and, with axes swapped to ``(row, col)``, of
``skimage.registration``).

Brightness constancy ``I(x, t) = I(x + w, t + 1)`` linearised gives the optical
flow constraint ``I_x u + I_y v + I_t = 0`` (Horn & Schunck 1981, section 3)
with ``I_t = frame1 - frame0``; Horn-Schunck adds a global smoothness term,
Lucas-Kanade a local least-squares fit, both implemented here in NumPy/SciPy and Numba
(their two fixed linear filters, the 3x3 Horn-Schunck average and the
Lucas-Kanade Gaussian window, run through ``cv2.filter2D``/``cv2.sepFilter2D``
for speed; the tests check them against ``scipy.ndimage``). Farneback and DIS
call OpenCV.

RR-7317 (Motion Psychobench, footnote 2 of section 4.4) took its Horn-Schunck
and Lucas-Kanade from OpenCV's legacy single-scale implementations
(``cvCalcOpticalFlowHS`` / ``cvCalcOpticalFlowLK``, since removed from OpenCV);
hence the single-scale defaults (``levels=1``) below.

One module per method: :mod:`~psybench.motion.models.flow.hornschunck`,
:mod:`~psybench.motion.models.flow.lucaskanade`, :mod:`~psybench.motion.models.flow.opencv`
(Farneback, DIS), sharing :mod:`~psybench.motion.models.flow.common`; Horn-Schunck's
multigrid preconditioner is in :mod:`~psybench.motion.models.flow.hs_multigrid`. The
element-wise steps of both gradient methods run as compiled loops that keep NumPy's (and,
for the 3x3 average, OpenCV's) bits: :mod:`~psybench.motion.models.flow.hs_kernels`,
:mod:`~psybench.motion.models.flow.lk_kernels`, compiled by
:mod:`~psybench.motion.models.flow.exact_jit` (Numba, imported at their first use).

References
----------
.. [HS81] Horn, B. K. P. & Schunck, B. G. (1981). Determining optical flow.
   Artificial Intelligence 17, 185-203.
.. [LK81] Lucas, B. D. & Kanade, T. (1981). An iterative image registration
   technique with an application to stereo vision. Proc. IJCAI, 674-679.
.. [F03] Farneback, G. (2003). Two-frame motion estimation based on polynomial
   expansion. Proc. SCIA, LNCS 2749, 363-370.
.. [K16] Kroeger, T., Timofte, R., Dai, D. & Van Gool, L. (2016). Fast optical
   flow using dense inverse search. Proc. ECCV, LNCS 9908, 471-488.
"""

from psybench.motion.models.flow.common import (  # noqa: F401
    _check_frames,
    _coarse_to_fine,
    _number,
    _warp,
)
from psybench.motion.models.flow.hornschunck import (  # noqa: F401
    HS_AVERAGE_KERNEL,
    _hs_average,
    _hs_derivatives,
    horn_schunck,
)
from psybench.motion.models.flow.lucaskanade import (  # noqa: F401
    _gaussian_window,
    _lk_solve,
    lucas_kanade,
)
from psybench.motion.models.flow.opencv import DIS_PRESETS, dis, farneback

__all__ = ["horn_schunck", "lucas_kanade", "farneback", "dis", "DIS_PRESETS", "HS_AVERAGE_KERNEL"]
