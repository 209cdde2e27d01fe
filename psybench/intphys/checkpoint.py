"""Checkpoint files of trained IntPhys models: written atomically, refused by name when damaged.

Checkpoint file: ``PSYBENCH-CHECKPOINT-1\\n``, the xxh3_128 hex digest of the
payload, ``\\n``, then the payload (``torch.save`` of a dict of tensors and plain
values, read back with ``weights_only=True``). A truncated or altered file fails
its digest and is refused with a :class:`~psybench.registry.ModelError` naming it.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from psybench.registry import ModelError

__all__ = ["read_checkpoint", "write_checkpoint"]

_MAGIC = b"PSYBENCH-CHECKPOINT-1\n"


def write_checkpoint(path: str | os.PathLike, payload: Mapping[str, Any]) -> Path:
    """Write ``payload`` as a checkpoint file atomically (temporary file, fsync, ``os.replace``)."""
    import torch
    import xxhash

    buf = io.BytesIO()
    torch.save(dict(payload), buf)
    data = buf.getvalue()
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(_MAGIC + xxhash.xxh3_128_hexdigest(data).encode() + b"\n" + data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def read_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """The payload of a checkpoint file; :class:`ModelError` naming the file if it is missing or damaged."""
    import torch
    import xxhash

    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"checkpoint {os.fspath(path)!r} cannot be read: {exc}") from None
    head, _, rest = raw[len(_MAGIC):].partition(b"\n")
    if not raw.startswith(_MAGIC) or len(head) != 32:
        raise ModelError(f"checkpoint {os.fspath(path)!r} is not a psybench checkpoint (damaged or another "
                         "format); delete it and rerun")
    if xxhash.xxh3_128_hexdigest(rest).encode() != head:
        raise ModelError(f"checkpoint {os.fspath(path)!r} is damaged (its content digest does not match: "
                         "truncated or altered); delete it and rerun")
    try:
        return torch.load(io.BytesIO(rest), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ModelError(f"checkpoint {os.fspath(path)!r} cannot be loaded: {exc}") from None
