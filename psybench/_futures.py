"""An executor that runs each call at once, for code written against ``concurrent.futures``."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

__all__ = ["InlineExecutor"]


class InlineExecutor:
    """``submit`` runs the call in the caller's thread and returns its finished future.

    For :func:`psybench.io.store.write_store_stream` when its blocks are already in memory:
    there is nothing for writer threads to overlap, so none are started. An exception is
    raised again by ``result()``, as from a worker thread.
    """

    def __enter__(self) -> InlineExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001  (handed to the caller through result())
            future.set_exception(exc)
        return future
