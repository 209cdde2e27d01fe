"""keep_freed_memory (the attention jobs' process set-up): freed heap memory is reused, not faulted in again."""

import subprocess
import sys

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
