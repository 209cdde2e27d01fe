"""The attention jobs' start-up: freed heap memory reused (keep_freed_memory), feature maps read without Dask."""

import subprocess
import sys

import numpy as np
import pytest

CODE = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from psybench._malloc import keep_freed_memory
    assert keep_freed_memory()
def step():  # two 20 MB temporaries allocated, written and freed, as in a loop over blocks
    a = np.ones((20 << 20) // 8)
    b = np.ones((20 << 20) // 8)
    return a[0] + b[0]
for _ in range(3):  # warm up the allocator
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_blocks_are_reused_without_page_faults():
    faults = {mode: int(subprocess.run([sys.executable, "-c", CODE, mode], capture_output=True, text=True,
                                       check=True).stdout) for mode in ("default", "keep")}
    # by default the freed 40 MB goes back to the system and 20 x 10240 pages fault in again; kept, hardly any
    assert faults["keep"] < 1000 < faults["default"], faults


LOAD = """
import sys
import numpy as np
from psybench.attention.movies import load_movie
m = load_movie("M", sys.argv[1], sys.argv[2])
header = load_movie("M", sys.argv[1], sys.argv[2], decode=False)
print(type(m.maps).__name__, float(np.asarray(m.maps).sum()), header.shape, "dask" in sys.modules)
"""


def test_feature_maps_load_without_dask(tmp_path):
    """The attention jobs read their maps with Zarr: the same values, and no Dask (with xarray) imported."""
    from psybench.attention.gaze.columns import frame_tables
    from psybench.io.store import ArraySpec, write_store
    from psybench.io.tables import write_table

    maps = np.arange(5 * 3 * 4 * 2, dtype=np.float32).reshape(5, 3, 4, 2)
    write_store(tmp_path / "f.zarr", {"maps": ArraySpec(maps, ("t", "y", "x", "feature"))},
                attrs={"frames_per_s": 10.0, "source_size": [40, 30]})
    write_table(frame_tables(["s0"], "M", np.ones((1, 5, 2)), 10.0), tmp_path / "g.csv")
    out = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path / "f.zarr"), str(tmp_path / "g.csv")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["ndarray", str(float(maps.sum())), "(5,", "3,", "4,", "2)", "False"]
