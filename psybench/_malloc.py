"""Process set-up of a job: keep freed heap memory for reuse instead of returning it to the system.

A job that allocates and frees the same large temporaries over and over (the attention
evaluation's saliency blocks, gathered feature vectors and rank arrays: 4-32 MB each,
thousands of times) pays, with glibc's defaults, a fresh ``mmap`` or heap growth and a
page fault per 4 kB page every time: the freed memory went back to the system (blocks
above the dynamic mmap threshold, and the heap's top beyond the trim threshold). Raising
both thresholds keeps it in the process. It changes where arrays live, never their
values; the peak memory stays the job's largest working set.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory(*, trim_bytes: int = 1 << 30, mmap_bytes: int = 32 << 20) -> bool:
    """Set glibc's malloc to keep up to ``trim_bytes`` of freed heap and to serve blocks up to
    ``mmap_bytes`` (glibc's largest allowed, 32 MB) from the heap.

    Returns
    -------
    bool
        Whether both settings took effect (False off Linux or without glibc's ``mallopt``).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_TRIM_THRESHOLD, int(trim_bytes))) and bool(mallopt(_M_MMAP_THRESHOLD, int(mmap_bytes)))
