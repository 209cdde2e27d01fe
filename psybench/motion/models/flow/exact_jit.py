"""Numba compilation that keeps a NumPy computation's bits (used by :mod:`.hs_kernels` and :mod:`.lk_kernels`).

``jit`` compiles without ``fastmath`` (so LLVM neither reorders nor contracts a separate
multiply and add into a fused one), with NumPy's division semantics (``error_model="numpy"``:
x / 0 is inf or nan, not an exception), releasing the GIL, and caches the machine code
(``cache=True``: beside the module, or in Numba's user-wide cache directory,
``NUMBA_CACHE_DIR``, when the package's directory is read-only), so that a job loads it
instead of compiling. :func:`fma` is the single-rounding ``a * b + c`` where the code
reproduced fuses it.
"""

from __future__ import annotations

from numba import njit
from numba.extending import intrinsic

jit = njit(cache=True, nogil=True, error_model="numpy")
jit_inline = njit(cache=True, nogil=True, error_model="numpy", inline="always")


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma``), as OpenCV's vector ``v_muladd`` on a CPU with FMA."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return a(a, b, c), codegen
