"""Motion models and the runner that applies them to stimulus stores.

Submodules (imported on demand, never here, so that importing
:mod:`psybench.models` stays cheap and free of OpenCV):

``psybench.models.flow``
    Classic optical flow: Horn-Schunck, Lucas-Kanade, Farneback, DIS
    (registered as ``kind="pair"`` algorithms of the ``motion`` track).
``psybench.models.run``
    :func:`~psybench.models.run.run_motion_model`, which streams a stimulus
    store through a model and writes its response store.

Models are looked up through :mod:`psybench.registry`.
"""
