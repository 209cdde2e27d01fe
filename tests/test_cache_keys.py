"""Every file a result depends on is part of its key.

* a user callable's code hash covers the modules of its own package that it imports
  (:func:`psybench.provenance.callable_modules`), so editing a helper module reruns
  the model (and misses the output cache);
* every requested leaderboard is a target of ``all``;
* a table's reader reads the declared CSV unless its Parquet sibling still holds it.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import pytest

from psybench.io.filecheck import table_manifest
from psybench.io.tables import read_table, write_table
from psybench.provenance import callable_modules, code_hash

PACKAGE = {
    "__init__.py": "",
    "models.py": "import numpy as np\nfrom . import helpers\nfrom .sub.deep import K\n"
                 "from userpkg_ck.sub import other\n\ndef flow(a, b):\n    return helpers.GAIN\n",
    "helpers.py": "GAIN = 1.0\n",
    "unused.py": "X = 1\n",
    "sub/__init__.py": "",
    "sub/deep.py": "from ..helpers import GAIN\nK = GAIN\n",
    "sub/other.py": "Y = 2\n",
}


@pytest.fixture
def userpkg(tmp_path, monkeypatch):
    for rel, src in PACKAGE.items():
        (tmp_path / "userpkg_ck" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "userpkg_ck" / rel).write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / "userpkg_ck"
    for name in [m for m in sys.modules if m.startswith("userpkg_ck")]:
        del sys.modules[name]


class TestCallableModules:
    def test_imports_of_own_package_are_followed_transitively(self, userpkg):
        assert callable_modules("userpkg_ck.models") == [
            "userpkg_ck.__init__", "userpkg_ck.helpers", "userpkg_ck.models",
            "userpkg_ck.sub.__init__", "userpkg_ck.sub.deep", "userpkg_ck.sub.other",
        ]  # numpy (environment) and the unused module are not part of it

    def test_editing_a_helper_changes_the_hash_an_unused_module_does_not(self, userpkg):
        before = code_hash(callable_modules("userpkg_ck.models"))
        (userpkg / "unused.py").write_text("X = 2\n")
        assert code_hash(callable_modules("userpkg_ck.models")) == before
        (userpkg / "helpers.py").write_text("GAIN = 2.0\n")
        assert code_hash(callable_modules("userpkg_ck.models")) != before

    def test_a_psybench_model_brings_the_modules_it_imports_in_its_functions(self):
        """v1mt imports its Numba kernels inside a function (planning does not load them)."""
        found = callable_modules("psybench.motion.models.v1mt")
        assert {"psybench.motion.models.v1mt", "psybench.motion.models.v1mt_kernels",
                "psybench.motion.models.motion_energy", "psybench.motion.models.filters"} <= set(found)
        assert not [m for m in found if m.startswith(("psybench.attention", "psybench.intphys"))]


class TestReadTableReadsWhatIsDeclared:
    def test_parquet_sibling_read_while_it_matches_the_csv(self, tmp_path):
        df = pd.DataFrame({"a": np.array([1, 2], np.int16), "b": ["x", "y"]})
        write_table(df, tmp_path / "t.csv")
        assert read_table(tmp_path / "t.csv")["a"].dtype == np.int16  # typed: from the Parquet

    def test_edited_csv_is_read_not_the_stale_parquet(self, tmp_path):
        """A table without a file manifest (else refused: test_integrity_damage.py): the declared CSV wins."""
        write_table(pd.DataFrame({"a": [1.0, 2.0]}), tmp_path / "t.csv")
        table_manifest(tmp_path / "t.csv").unlink()
        (tmp_path / "t.csv").write_text("a\n5.0\n7.0\n")
        assert read_table(tmp_path / "t.csv")["a"].tolist() == [5.0, 7.0]

    def test_garbage_parquet_falls_back_to_the_declared_csv(self, tmp_path):
        write_table(pd.DataFrame({"a": [1.0]}), tmp_path / "t.csv")
        table_manifest(tmp_path / "t.csv").unlink()
        (tmp_path / "t.parquet").write_bytes(b"not parquet")
        assert read_table(tmp_path / "t.csv")["a"].tolist() == [1.0]


HELPED = '''"""A user model whose value comes from a helper module of its own package."""
import numpy as np

from usermodels.helpers import GAIN


def estimate(frame0, frame1):
    out = np.zeros(frame0.shape + (2,), np.float32)
    out[..., 0] = GAIN
    return out
'''


@pytest.mark.workflow
def test_editing_a_user_models_helper_reruns_it_and_misses_the_cache(harness, tmp_path):
    """The measured failure: after the helper changed, the cache returned flow 1.0 instead of 2.0."""
    from psybench.io.store import open_store

    cfg = harness.tiny_config(models=[{"name": "user", "callable": "usermodels.helped:estimate", "kind": "pair"}])
    work = harness.copy(tmp_path / "w", cfg, modules={"usermodels/helped.py": HELPED,
                                                      "usermodels/helpers.py": "GAIN = 1.0\n"})
    plan = harness.run(work, "-n", harness.table)
    target = sorted(p for p in harness.planned_outputs(plan) if p.startswith("results/motion/responses/user/"))[0]
    cache = tmp_path / "cache"
    cache.mkdir()
    env = harness.env(work, SNAKEMAKE_OUTPUT_CACHE=str(cache))
    harness.run(work, "--cache", "--cores", "1", target, env=env)
    assert float(np.asarray(open_store(work / target)["flow"])[..., 0].max()) == 1.0  # (frame 0: no motion yet)
    (work / "usermodels" / "helpers.py").write_text("GAIN = 2.0\n")
    plan = harness.run(work, "-n", target)
    assert harness.job_counts(plan).get("motion_responses") == 1, harness.output(plan)
    harness.run(work, "--cache", "--cores", "1", target, env=env)
    assert float(np.asarray(open_store(work / target)["flow"])[..., 0].max()) == 2.0


@pytest.mark.workflow
def test_every_requested_leaderboard_is_a_target_of_all(harness, tmp_path):
    cfg = harness.tiny_config()
    cfg["aggregate"] = {"leaderboards": [{"name": "overall"}, {"name": "motion_only", "track": "motion"}]}
    work = harness.copy(tmp_path / "w", cfg)
    dag = harness.run(work, "-n", "--dag").stdout
    nodes = dict(re.findall(r'^\s*(\d+)\[label = "([^"\\]+)', dag, flags=re.M))  # id -> rule (first line)
    edges = set(re.findall(r"^\s*(\d+) -> (\d+)", dag, flags=re.M))
    to_all = {nodes[a] for a, b in edges if nodes[b] == "all"}
    # the leaderboard tables are inputs of all itself, not only of the report
    assert "aggregate_leaderboards" in to_all, dag
