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

from numba.extending import intrinsic

from psybench._numba import cached_njit as _cached

jit = _cached(nogil=True, error_model="numpy")
jit_inline = _cached(nogil=True, error_model="numpy", inline="always")


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma``), as OpenCV's vector ``v_muladd`` on a CPU with FMA."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return a(a, b, c), codegen
