"""Local jobs have a time limit (config key job_time_limit_min) that names the job when it fires."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from psybench.io import timelimit
from psybench.provenance import PACKAGE_ROOT


def _script(tmp_path, body):
    path = tmp_path / "tmpab12cd.slow_job.py"  # how Snakemake names its copy of scripts/slow_job.py
    path.write_text(body)
    return str(path)


def test_hanging_job_is_stopped_and_named(tmp_path, capfd):
    start = time.monotonic()
    status = timelimit.main(["--seconds", "0.5", "--grace", "1", "--", sys.executable,
                             _script(tmp_path, "import time\ntime.sleep(60)\n")])
    assert status == timelimit.TIMEOUT_STATUS and time.monotonic() - start < 10
    err = capfd.readouterr().err
    assert "job slow_job.py exceeded its time limit of 0.5 s (config key job_time_limit_min)" in err


def test_job_ignoring_sigterm_is_killed_after_the_grace(tmp_path):
    body = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
    start = time.monotonic()
    assert timelimit.main(["--seconds", "0.3", "--grace", "0.5", "--", sys.executable, _script(tmp_path, body)]) == 124
    assert time.monotonic() - start < 10


def test_exit_status_and_output_pass_through(tmp_path):
    """Run as Snakemake runs it: a script file, by path, before the job's command."""
    proc = subprocess.run(
        [sys.executable, str(PACKAGE_ROOT / "io" / "timelimit.py"), "--seconds", "30", "--", sys.executable,
         _script(tmp_path, "import sys\nprint('done')\nsys.exit(3)\n")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 3 and proc.stdout == "done\n" and "time limit" not in proc.stderr


@pytest.mark.workflow
def test_hanging_user_model_stopped_at_the_configured_limit(harness, tmp_path):
    cfg = harness.tiny_config(models=[{"name": "hang", "callable": "usermodels.flow:slow", "params": {"delay_s": 600}}])
    cfg["job_time_limit_min"] = 0.1  # 6 s
    work = harness.copy(tmp_path / "w", cfg)
    plan = harness.run(work, "-n", harness.table)
    target = sorted(p for p in harness.planned_outputs(plan) if p.startswith("results/motion/responses/hang/"))[0]
    stimulus = target.replace("responses/hang", "stimuli")
    harness.run(work, "--cores", "1", stimulus, "--config", "job_time_limit_min=600")  # a loaded machine is slow
    start = time.monotonic()
    proc = harness.run(work, "--cores", "1", target, check=False)
    out = harness.output(proc)
    assert proc.returncode != 0 and time.monotonic() - start < 300, out
    assert "psybench: job motion_responses.py exceeded its time limit of 6 s (config key job_time_limit_min)" in out
    assert "Error in rule motion_responses" in out and not (work / target).exists()
