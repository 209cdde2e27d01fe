"""Motion models: classic optical flow and the bio-inspired models.

Submodules (imported on demand, never here, so that importing
:mod:`psybench.motion.models` stays cheap and free of OpenCV):

``psybench.motion.models.flow``
    Classic optical flow: Horn-Schunck, Lucas-Kanade, Farneback, DIS
    (registered as ``kind="pair"`` algorithms of the ``motion`` track).
``psybench.motion.models.motion_energy``, ``psybench.motion.models.v1mt``
    The bio-inspired models (``kind="stream"``).

:func:`psybench.motion.responses.run_motion_model` streams a stimulus store
through any of them; models are looked up through :mod:`psybench.registry`.
"""
