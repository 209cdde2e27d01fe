"""Numba compilation that keeps a NumPy computation's bits (used by :mod:`.hs_kernels` and :mod:`.lk_kernels`).

``jit`` compiles without ``fastmath`` (so LLVM neither reorders nor contracts a separate
multiply and add into a fused one), with NumPy's division semantics (``error_model="numpy"``:
x / 0 is inf or nan, not an exception), releasing the GIL, and caches the machine code
(``cache=True``: in ``NUMBA_CACHE_DIR`` if set, else beside the module, else, when the
package's directory is read-only, in the user's cache directory, ``~/.cache/numba``), so
that a job loads it instead of compiling. :func:`fma` is the single-rounding ``a * b + c`` where the code
reproduced fuses it.

Numba keys a cached function on its own file only: after changing :func:`fma` here, delete
the ``hs_kernels.*`` and ``lk_kernels.*`` cache files (``__pycache__/*.nbi, *.nbc``), or they
keep the former machine code.
"""

from __future__ import annotations

from numba import njit
from numba.extending import intrinsic


def _cached(**options):
    """``njit(cache=True, **options)``; without a writable cache directory, ``cache=False`` (compiled per process).

    Numba refuses ``cache=True`` (RuntimeError "no locator available") when neither the
    package's ``__pycache__``, ``NUMBA_CACHE_DIR`` nor the user's cache directory is writable:
    the loops then still run, at the cost of compiling them in each process.
    """
    def decorate(func):
        try:
            return njit(cache=True, **options)(func)
        except RuntimeError:
            return njit(cache=False, **options)(func)
    return decorate


jit = _cached(nogil=True, error_model="numpy")
jit_inline = _cached(nogil=True, error_model="numpy", inline="always")


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma``), as OpenCV's vector ``v_muladd`` on a CPU with FMA."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return a(a, b, c), codegen
