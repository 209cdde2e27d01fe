"""psybench: benchmark computational vision models against human behaviour.

Three tracks share one chain of stages (stimuli -> model responses -> readouts ->
fits and scores -> aggregate): motion integration (Motion Psychobench, RR-7317),
visual attention (Shic & Scassellati 2007) and intuitive physics (IntPhys).
The library is usable on its own; the Snakemake workflow orchestrates it.
"""

__version__ = "0.1.0"

from psybench.motion.display import Display  # noqa: E402

__all__ = ["Display", "score", "__version__"]


def __getattr__(name: str):
    """``psybench.score`` (:func:`psybench.api.score`), imported on first use: ``import psybench`` stays light."""
    if name == "score":
        from psybench.api import score

        return score
    raise AttributeError(f"module 'psybench' has no attribute {name!r}")
