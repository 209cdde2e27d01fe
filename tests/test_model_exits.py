"""A model that ends the interpreter (``sys.exit``, ``os._exit``) fails its own job, naming the model.

Before, ``sys.exit(0)`` or ``os._exit(0)`` inside a user model ended the job's process
with status 0 and no output, and Snakemake reported missing output files
("filesystem latency"). :func:`psybench.model_checks.exits_are_errors` turns either
into a :class:`~psybench.model_checks.ModelExit` naming the model and the stimulus,
movie or shard it ran on, in the job's log and on the console.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

EXIT_MODELS = '''
"""User models that try to end the process (imported as exitmodels)."""
import os
import sys


def flow_sys_exit(frame0, frame1):
    sys.exit(0)


def flow_os_exit(frame0, frame1):
    os._exit(0)


def maps_sys_exit(frames):
    sys.exit(0)


def maps_os_exit(frames):
    os._exit(0)


def p_sys_exit(observation):
    sys.exit(0)


def p_os_exit(observation):
    os._exit(0)
'''

CALLS = {"sys": "sys.exit(0)", "os": "os._exit(0)"}


def test_exits_become_model_errors_in_every_thread():
    """In a fresh interpreter (a failure here must not end the test process): each way out becomes a
    ModelExit naming the model; a forked child still exits; os._exit is restored afterwards."""
    script = textwrap.dedent('''
        import os, posix, sys
        from concurrent.futures import ThreadPoolExecutor
        from psybench.model_checks import ModelExit, exits_are_errors
        real = os._exit

        def attempt(label, fn):
            try:
                with exits_are_errors("m", "stimulus s.zarr"):
                    fn()
            except ModelExit as e:
                print(label, "->", e)

        def swallowed():
            try:
                os._exit(0)
            except Exception:
                pass

        def fork():
            pid = os.fork()
            if pid == 0:
                os._exit(7)
            print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))

        attempt("sys", lambda: sys.exit(3))
        attempt("os", lambda: os._exit(0))
        attempt("posix", lambda: posix._exit(1))
        attempt("swallowed", swallowed)
        attempt("threads", lambda: list(ThreadPoolExecutor(2).map(os._exit, [0, 0])))
        attempt("threads_sys", lambda: list(ThreadPoolExecutor(2).map(sys.exit, [2, 2])))
        attempt("fork", fork)
        print("restored", os._exit is real and posix._exit is real)
    ''')
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    tail = "on stimulus s.zarr: a model must return its result (or raise), not end the process"
    for label, call in [("sys", "sys.exit(3)"), ("os", "os._exit(0)"), ("posix", "os._exit(1)"),
                        ("swallowed", "os._exit(0)"), ("threads", "os._exit(0)"), ("threads_sys", "sys.exit(2)")]:
        assert f"{label} -> model 'm' called {call} {tail}" in r.stdout, r.stdout
    assert "child 7" in r.stdout and "fork ->" not in r.stdout
    assert "restored True" in r.stdout


def _check_failure(proc, log, model, call, where):
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    expected = rf"{model}'? called {re.escape(call)} on {where}: a model must return its result"
    assert re.search(expected, log), log
    assert "ModelExit" in log
    assert re.search(rf"psybench: .*{expected}", out), out[-3000:]  # on the console too
    assert "filesystem latency" not in out and "MissingOutputException" not in out


@pytest.mark.workflow
def test_motion_model_exits_fail_their_jobs(harness, tmp_path):
    cfg = harness.tiny_config(models=[{"name": f"exit_{k}", "callable": f"exitmodels:flow_{k}_exit", "kind": "pair"}
                                      for k in CALLS])
    harness.copy(tmp_path, cfg, modules={"exitmodels.py": EXIT_MODELS})
    proc = harness.run(tmp_path, "--cores", "2", "--keep-going", "--until", "motion_responses", harness.table,
                       check=False, timeout=600)
    for k, call in CALLS.items():
        log = (tmp_path / "logs/motion/responses" / f"exit_{k}" / "batch.log").read_text()
        _check_failure(proc, log, f"model 'exit_{k}", call, r"stimulus [\w.-]+\.zarr")
        assert not list((tmp_path / "results/motion/responses" / f"exit_{k}").glob("*.zarr*"))


@pytest.mark.workflow
@pytest.mark.parametrize("kind", list(CALLS))
def test_attention_model_exits_fail_their_jobs(harness, tmp_path, kind):
    cfg = harness.tiny_attention_config(models=[{"name": "bad", "callable": f"exitmodels:maps_{kind}_exit", "L": 1}])
    harness.copy(tmp_path, cfg, modules={"exitmodels.py": EXIT_MODELS})
    proc = harness.run(tmp_path, "--cores", "1", "--until", "attention_responses", "attention_all", check=False,
                       timeout=600)
    # one job per feature family, over every movie: the failure names the movie it was on
    log = next(text for p in (tmp_path / "logs/attention/responses").glob("*/batch.log")
               if "ModelExit" in (text := p.read_text()))
    movie = re.search(r"movie (\w+)\.zarr", log).group(1)
    _check_failure(proc, log, f"saliency model 'exitmodels:maps_{kind}_exit", CALLS[kind], f"movie {movie}\\.zarr")


@pytest.mark.workflow
def test_intphys_model_exits_fail_their_jobs(harness, tmp_path):
    intphys = {
        "generator": {"seed": 0, "blocks": ["O1"], "per_condition": 1, "n_train": 0, "height": 32, "width": 32,
                      "n_frames": 8},
        "shard_size": 100, "n_boot": 0,
        "models": [{"name": f"exit_{k}", "callable": f"exitmodels:p_{k}_exit"} for k in CALLS],
    }
    harness.copy(tmp_path, {"tracks": ["intphys"], "intphys": intphys}, modules={"exitmodels.py": EXIT_MODELS})
    proc = harness.run(tmp_path, "--cores", "2", "--keep-going", "intphys_all", check=False, timeout=600)
    for k, call in CALLS.items():
        log = (tmp_path / "logs/intphys/responses" / f"exit_{k}.log").read_text()
        _check_failure(proc, log, f"model 'exit_{k}", call, r"shard shard_0000\.zarr \(movies O1/0001/1 to \S+\)")
