"""psybench.progress: the estimate of the time left, throttling, and where the lines go."""

from __future__ import annotations

import io
import sys

import pytest

from psybench.progress import Progress, format_duration, progress


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_estimate_is_the_rate_extrapolation_and_lines_are_throttled():
    clock, out = Clock(), io.StringIO()
    p = Progress(10, "work", every_s=10.0, stream=out, clock=clock)
    clock.t += 6.0
    p.update()  # first step: always shown; 6 s for 1 step -> 54 s for the 9 left
    assert p.lines[-1] == "work: 1/10 (10 %), 6 s elapsed, about 54 s left"
    clock.t += 6.0
    p.update()  # 6 s since the last line < 10 s: not shown
    assert len(p.lines) == 1
    clock.t += 18.0
    p.update(2, note="b")  # 30 s for 4 steps -> 45 s for 6
    assert p.lines[-1] == "work: 4/10 (40 %), 30 s elapsed, about 45 s left [b]"
    clock.t += 1.0
    p.update(6)  # the last step is always shown
    assert p.lines[-1] == "work: 10/10 (100 %), 31 s elapsed, done"
    assert out.getvalue().splitlines() == p.lines


def test_lines_reach_the_log_and_the_console(monkeypatch):
    """A workflow script sends sys.stderr to its log: the line must reach the console (sys.__stderr__) too."""
    log, console = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setattr(sys, "__stderr__", console)
    assert list(progress(["a", "b"], "items")) == ["a", "b"]
    assert log.getvalue() == console.getvalue() != ""
    assert log.getvalue().splitlines()[-1].startswith("items: 2/2 (100 %)")


def test_durations_and_bad_total():
    assert [format_duration(s) for s in (0.4, 59.6, 185, 3725)] == ["0 s", "1 min 00 s", "3 min 05 s", "1 h 02 min"]
    with pytest.raises(ValueError, match="'x': total must be >= 0"):
        Progress(-1, "x")


def test_silenced_progress_prints_nothing_but_keeps_its_lines(monkeypatch):
    """Inside silenced() (psybench.score(progress=False)) the default stream prints nothing;
    an explicit stream is still honoured, and outside the block printing resumes."""
    from psybench.progress import silenced

    log, console, own = io.StringIO(), io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setattr(sys, "__stderr__", console)
    with silenced():
        quiet = Progress(2, "quiet", every_s=0.0)
        told = Progress(1, "told", every_s=0.0, stream=own)
        assert list(progress(["a"], "loop")) == ["a"]
    quiet.update(2)
    told.update()
    assert log.getvalue() == console.getvalue() == ""
    assert len(quiet.lines) == 1 and quiet.lines[0].startswith("quiet: 2/2 (100 %)")
    assert own.getvalue().startswith("told: 1/1 (100 %)")
    assert list(progress(["b"], "after")) == ["b"]
    assert log.getvalue().startswith("after: 1/1 (100 %)")
