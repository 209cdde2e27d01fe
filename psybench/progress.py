"""Progress a person can follow: done/total, elapsed time and an estimate of the time left.

Long loops (attention evaluation, IntPhys training and prediction, motion responses)
report through :class:`Progress`.  A workflow script sends ``sys.stderr`` to its log
file, so a line written there alone never reaches the console; each line goes to the
log (``sys.stderr``) *and* to the console (``sys.__stderr__``, the process's own
stderr, which Snakemake shows) when those differ.  Lines are throttled (at most one
every ``every_s`` seconds, plus the first and the last), so a log stays short.

The estimate is the plain rate extrapolation ``left = elapsed / done * (total - done)``:
honest for loops of similar steps, which the loops above are.  Timing goes to the
console and logs only, never into an artifact.

Inside ``with silenced():`` every :class:`Progress` created with the default stream
prints nothing (its lines are still kept): ``psybench.score(..., progress=False)``
runs its stages so, down to the loops of each stage.

Examples
--------
>>> for item in progress(range(3), "demo", stream=None):
...     pass
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO, TypeVar

__all__ = ["Progress", "progress", "format_duration", "silenced"]

T = TypeVar("T")
_CONSOLE = object()  # default stream: the log and the console
_SILENT: contextvars.ContextVar[bool] = contextvars.ContextVar("psybench_progress_silent", default=False)


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Within the block, a :class:`Progress` on the default stream prints nothing.

    The choice is made when the :class:`Progress` is created, in the creating thread
    or context; one given an explicit stream still writes to it.
    """
    token = _SILENT.set(True)
    try:
        yield
    finally:
        _SILENT.reset(token)


def format_duration(seconds: float) -> str:
    """``"45 s"``, ``"3 min 05 s"``, ``"1 h 02 min"`` (rounded to whole seconds)."""
    s = int(round(max(0.0, float(seconds))))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


class Progress:
    """Count steps of a loop and print ``what: done/total (pct %), elapsed, about N left``.

    Parameters
    ----------
    total : int
        Number of steps (> 0; 0 prints nothing).
    what : str
        What is being done, e.g. ``"attention evaluation"`` (starts every line).
    every_s : float
        Minimum seconds between two lines (the first and last step always print).
    stream : file-like, None or default
        Default: ``sys.stderr`` (the log in a workflow script) and, if different,
        ``sys.__stderr__`` (the console); none inside :func:`silenced`.  A file-like
        object: only that one.  None: silent (lines are still kept in :attr:`lines`).
    clock : callable
        Seconds, monotonic (``time.monotonic``); injectable for tests.

    Attributes
    ----------
    lines : list of str
        Every line printed, in order.
    """

    def __init__(self, total: int, what: str, *, every_s: float = 10.0, stream: Any = _CONSOLE,
                 clock: Callable[[], float] = time.monotonic):
        if int(total) < 0:
            raise ValueError(f"progress of {what!r}: total must be >= 0, got {total}")
        self.total, self.what, self.every_s, self.clock = int(total), str(what), float(every_s), clock
        self.stream = None if stream is _CONSOLE and _SILENT.get() else stream
        self.done = 0
        self.t0 = clock()
        self._last: float | None = None
        self.lines: list[str] = []

    def _streams(self) -> list[TextIO]:
        if self.stream is None:
            return []
        if self.stream is not _CONSOLE:
            return [self.stream]
        out = [sys.stderr]
        if sys.__stderr__ is not None and sys.__stderr__ is not sys.stderr:
            out.append(sys.__stderr__)
        return out

    def line(self) -> str:
        """The current progress line."""
        elapsed = self.clock() - self.t0
        text = f"{self.what}: {self.done}/{self.total}"
        if self.total:
            text += f" ({100.0 * self.done / self.total:.0f} %)"
        text += f", {format_duration(elapsed)} elapsed"
        if 0 < self.done < self.total:
            text += f", about {format_duration(elapsed / self.done * (self.total - self.done))} left"
        elif self.done >= self.total:
            text += ", done"
        return text

    def update(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` more steps done; print a line if due (``note`` is appended to it)."""
        self.done += int(n)
        now = self.clock()
        due = self._last is None or self.done == self.total or now - self._last >= self.every_s
        if not due or self.total == 0:
            return
        self._last = now
        text = self.line() + (f" [{note}]" if note else "")
        self.lines.append(text)
        for s in self._streams():
            print(text, file=s, flush=True)


def progress(iterable: Iterable[T], what: str, *, total: int | None = None, every_s: float = 10.0,
             stream: Any = _CONSOLE) -> Iterator[T]:
    """Yield from ``iterable``, reporting each finished step through a :class:`Progress`.

    ``total`` defaults to ``len(iterable)``.  A step counts as done when the loop
    asks for the next item, so the estimate covers the loop body's work.
    """
    if total is None:
        total = len(iterable)  # type: ignore[arg-type]
    p = Progress(total, what, every_s=every_s, stream=stream)
    for item in iterable:
        yield item
        p.update()
