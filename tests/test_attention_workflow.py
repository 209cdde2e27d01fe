"""rules/attention.smk end to end on a tiny config, through `python -m snakemake` in a subprocess.

The run on the harness's tiny attention config is the session fixture
``completed_attention_workflow`` (tests/conftest.py), shared with tests/test_api_attention.py.
"""

import pandas as pd
import pytest

# A user's saliency model, outside psybench: the interface of psybench.attention.responses.
USER_MODEL = '''
import numpy as np
from scipy import ndimage


def contrast(frames, *, sigma=1.0):
    """Luminance and its local contrast |I - I * G_sigma|, shape (t, H, W, 2)."""
    f = np.asarray(frames, np.float32)
    blur = ndimage.gaussian_filter(f, sigma=(0, sigma, sigma), mode="nearest")
    return np.stack([f, np.abs(f - blur)], axis=-1)
'''


def _workdir(harness, tmp_path, config, **modules):
    """The whole workflow in ``tmp_path``, running the attention track only (with user ``modules``)."""
    harness.copy(tmp_path, config, modules=modules)


def _snakemake(harness, cwd, *args):
    # the workflow copy is on PYTHONPATH: the user's module is importable, as an installed one would be
    return harness.run(cwd, "--cores", "2", "attention_all", *args, check=False, timeout=300)


@pytest.mark.workflow
def test_attention_rules_run_and_are_up_to_date(harness, completed_attention_workflow, tmp_path):
    tmp_path = harness.clone(completed_attention_workflow, tmp_path / "wf")
    table = pd.read_csv(tmp_path / "results/attention/table1.csv")
    assert list(table.columns[:8]) == ["train", "test", "features", "L", "ND", "group", "median", "sd"]
    assert len(table) == 2 * 7  # n ma, n un, rf/n, rs/n, rp/n and the chance controls n/iid, n/shift
    assert set(table["group"]) >= {"n/iid", "n/shift"} and table["ceiling"].notna().all()
    assert set(table["data"]) == {"synthetic"}  # the tiny config's observers are synthetic
    metrics = pd.read_csv(tmp_path / "results/attention/metrics.csv")
    assert {"model", "metric", "value", "direction", "ceiling"} <= set(metrics.columns)
    assert set(metrics["data"]) == {"synthetic"}
    # one leave-one-observer-out ceiling per test movie (and frames) and metric, next to every model's value
    assert (metrics.groupby(["train", "test", "metric"])["ceiling"].nunique() == 1).all()
    assert set(metrics["direction"]) == {"higher", "lower"}
    assert (tmp_path / "results/attention/curves.png").stat().st_size > 0
    for rule in ("stimuli", "gaze", "responses", "controls", "evaluate"):
        assert any((tmp_path / "logs/attention" / rule).rglob("*.log")), rule
    # Table 1 in parts, one per model row and training movie, joined by the cheap attention_evaluate
    parts = sorted(p.relative_to(tmp_path / "results/attention/evaluate").as_posix()
                   for p in (tmp_path / "results/attention/evaluate").rglob("*.csv"))
    assert parts == ["raw/L1/A/curves.csv", "raw/L1/A/table.csv"], parts
    assert pd.read_csv(tmp_path / "results/attention/evaluate/raw/L1/A/table.csv").equals(table.drop(columns="data"))
    # one job per training movie writes the parts of every model row
    assert (tmp_path / "logs/benchmarks/attention_evaluate_part/A.tsv").is_file()
    # the metrics too, one part per training movie, joined by attention_metrics
    assert pd.read_csv(tmp_path / "results/attention/metrics/A.csv").equals(metrics.drop(columns="data"))
    assert (tmp_path / "logs/benchmarks/attention_metrics_part/A.tsv").is_file()
    dry = _snakemake(harness, tmp_path, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr


@pytest.mark.workflow
def test_user_saliency_model_runs_without_editing_psybench(harness, tmp_path):
    config = harness.tiny_attention_config(pairs=[["A", "B"]])
    config["attention"]["models"] = [
        {"name": "mine", "callable": "usersaliency:contrast", "params": {"sigma": 2.0}, "L": [1, 3]},
        {"name": "mine_again", "callable": "usersaliency:contrast", "params": {"sigma": 2.0}, "L": 1},
    ]
    _workdir(harness, tmp_path, config, **{"usersaliency.py": USER_MODEL})
    run = _snakemake(harness, tmp_path, "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    table = pd.read_csv(tmp_path / "results/attention/table1.csv")
    assert table.drop_duplicates(["features", "L"])[["features", "L"]].values.tolist() == [
        ["mine", 1], ["mine", 3], ["mine_again", 1]]
    assert set(table.loc[table["features"] == "mine", "ND"]) == {2 * 1 * 2, 2 * 9 * 2}  # K = 2 channels, 2 lags
    metrics = pd.read_csv(tmp_path / "results/attention/metrics.csv")
    assert "mine L=3 tuned" in set(metrics["model"])
    # both models share one feature store per movie (same function and parameters)
    stores = sorted(p.name for p in (tmp_path / "results/attention/responses").iterdir())
    assert len(stores) == 1 and stores[0].startswith("usersaliency.contrast-"), stores


@pytest.mark.workflow
def test_old_model_shape_fails_before_any_job_naming_the_key(harness, tmp_path):
    config = harness.tiny_attention_config(models=[{"features": "raw", "L": 1}])
    _workdir(harness, tmp_path, config)
    run = _snakemake(harness, tmp_path, "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert "attention.models[0]" in out and "name: NAME, algorithm:" in out, out[-2000:]
    assert not (tmp_path / "results").exists()
