"""rules/attention.smk end to end on a tiny config, through `python -m snakemake` in a subprocess."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

RULES = Path(__file__).resolve().parents[1] / "rules" / "attention.smk"

CONFIG = {
    "attention": {
        "grid": [40, 30],
        "chunk_frames": 16,
        "lags_ms": [100, 300],
        "movies": {
            "A": {"popout": {"seed": 1, "n_frames": 45}, "observers": {"seed": 1, "p_target": [0.9, 0.1]}},
            "B": {"popout": {"seed": 2, "n_frames": 45}, "observers": {"seed": 2, "p_target": [0.1, 0.9]}},
        },
        "features": {"raw": {}},
        "models": [{"features": "raw", "L": 1}],
        "pairs": [["A", "A"], ["A", "B"]],
        "evaluation": {"n_sets": 1, "n_per_set": 2},
        "metrics": {"n_splits": 5},
    }
}


@pytest.mark.workflow
def test_attention_rules_run_and_are_up_to_date(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    (tmp_path / "Snakefile").write_text(
        f'configfile: "config.yaml"\ninclude: "{RULES}"\n\nrule all:\n    input: attention_targets()\n'
    )
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--quiet", "all"]
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    table = pd.read_csv(tmp_path / "results/attention/table1.csv")
    assert list(table.columns[:8]) == ["train", "test", "features", "L", "ND", "group", "median", "sd"]
    assert len(table) == 2 * 5
    metrics = pd.read_csv(tmp_path / "results/attention/metrics.csv")
    assert {"model", "metric", "value", "direction"} <= set(metrics.columns)
    assert set(metrics["direction"]) == {"higher", "lower"}
    assert (tmp_path / "results/attention/curves.png").stat().st_size > 0
    for rule in ("stimulus", "gaze", "features"):
        assert any((tmp_path / "logs/attention" / rule).rglob("*.log")), rule
    dry = subprocess.run([sys.executable, "-m", "snakemake", "-n", "all"], cwd=tmp_path, capture_output=True, text=True)
    assert "Nothing to be done" in dry.stdout + dry.stderr
