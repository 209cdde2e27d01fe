"""One line of progress on stderr: steps done, elapsed time and an estimate of the time left.

The estimate is the mean time per step so far times the steps left (steps of one
call are alike: one stimulus, one model response). On a terminal the line is
redrawn in place; elsewhere (a log, a notebook's captured stderr) each step is a
line of its own.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressLine", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """``75.2`` -> ``"1 min 15 s"``, ``8.04`` -> ``"8 s"``."""
    seconds = max(0, int(round(seconds)))
    minutes, s = divmod(seconds, 60)
    return f"{minutes} min {s} s" if minutes else f"{s} s"


class ProgressLine:
    """Progress of ``total`` steps named ``desc``; silent when ``enabled`` is false.

    Parameters
    ----------
    desc : str
        What is being done, shown first.
    enabled : bool
        False: nothing is written.
    stream : text file, optional
        Where to write (default ``sys.stderr``).
    """

    def __init__(self, desc: str, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.desc, self.enabled = desc, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.n, self.t0 = 0, 0, time.monotonic()

    def start(self, total: int) -> None:
        """Begin counting ``total`` steps."""
        self.total, self.n, self.t0 = int(total), 0, time.monotonic()

    def step(self, label: str) -> str:
        """One step done (``label`` says which); return the line written."""
        self.n += 1
        elapsed = time.monotonic() - self.t0
        left = elapsed / self.n * max(self.total - self.n, 0)
        pct = 100 * self.n // max(self.total, 1)
        line = (f"{self.desc}: {self.n}/{self.total} ({pct} %) {label}, {format_seconds(elapsed)} elapsed, "
                f"~{format_seconds(left)} left")
        if self.enabled:
            tty = getattr(self.stream, "isatty", lambda: False)()
            self.stream.write(f"\r\033[K{line}" if tty else f"{line}\n")
            self.stream.flush()
        return line

    def done(self) -> None:
        """End the line (a newline on a terminal)."""
        if self.enabled and getattr(self.stream, "isatty", lambda: False)():
            self.stream.write("\n")
            self.stream.flush()
