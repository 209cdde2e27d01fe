"""A time limit for local jobs: run a command, stop it when it exceeds its limit, naming it.

Snakemake enforces ``resources: runtime`` only on cluster executors; a local job
(a hanging user model, a config asking for 1e9 iterations) runs until killed. The
workflow puts this watchdog in front of every job command it runs locally
(``shell.prefix`` in ``rules/common.smk``, config key ``job_time_limit_min``)::

    python .../psybench/io/timelimit.py --seconds 14400 -- python .snakemake/scripts/tmpab12.motion_responses.py

When the limit passes, the command gets SIGTERM, then SIGKILL ``--grace`` seconds
later, a message naming the job's script and the limit goes to stderr (Snakemake's
output, followed by its "Error in rule ..." block with the wildcards) and the exit
status is 124, as for coreutils' ``timeout``. The command stays in the caller's
process group, so killing the workflow's group still kills the job. SIGTERM and
SIGINT sent to the watchdog are passed on.

This file is run as a script (no package imports: it starts in milliseconds).
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
from pathlib import Path

TIMEOUT_STATUS = 124


def job_name(cmd: list[str]) -> str:
    """The job's script name from its command (Snakemake's ``tmpXXXX.<script>.py`` copy), else the command."""
    for arg in reversed(cmd):
        m = re.fullmatch(r"tmp[^.]+\.(.+)", Path(arg).name)
        if m:
            return m.group(1)
    return " ".join(cmd)


def run(cmd: list[str], seconds: float, *, grace: float = 10.0, key: str = "job_time_limit_min") -> int:
    """Run ``cmd``; return its exit status, or 124 after stopping it at the time limit.

    Parameters
    ----------
    cmd : list of str
        The command and its arguments.
    seconds : float
        Time limit (wall clock).
    grace : float
        Seconds between SIGTERM and SIGKILL.
    key : str
        The config key named in the message.
    """
    proc = subprocess.Popen(cmd)

    def forward(signum, frame):
        proc.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass
    print(f"psybench: job {job_name(cmd)} exceeded its time limit of {seconds:g} s (config key {key}); "
          "stopping it", file=sys.stderr, flush=True)
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return TIMEOUT_STATUS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--grace", type=float, default=10.0)
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd or args.seconds <= 0:
        parser.error("give --seconds > 0 and a command after --")
    return run(cmd, args.seconds, grace=args.grace)


if __name__ == "__main__":
    sys.exit(main())
