"""Checkpoint files of trained IntPhys models: written atomically, refused by name when damaged.

Checkpoint file: ``PSYBENCH-CHECKPOINT-1\\n``, the xxh3_128 hex digest of the
payload, ``\\n``, then the payload (``torch.save`` of a dict of tensors and plain
values, read back with ``weights_only=True``): the entries of :data:`TENSOR_KEYS` as torch
objects, every other entry in one JSON text (sorted keys), so equal payloads give equal bytes
whichever process writes them. A truncated or altered file fails
its digest and is refused with a :class:`~psybench.registry.ModelError` naming it.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from psybench.registry import ModelError

__all__ = ["read_checkpoint", "write_checkpoint"]

_MAGIC = b"PSYBENCH-CHECKPOINT-1\n"
#: Payload entries saved as torch objects (tensors inside); every other entry is JSON.
TENSOR_KEYS = ("state_dict", "optimizer", "scaler")


def write_checkpoint(path: str | os.PathLike, payload: Mapping[str, Any]) -> Path:
    """Write ``payload`` as a checkpoint file atomically (temporary file, fsync, ``os.replace``)."""
    import torch
    import xxhash

    # torch.save pickles: an equal string reached through two objects (a config value and torch's own
    # 'cpu') is written once and referenced, or twice, depending on object identity in the writing
    # process. The plain values go in as one canonical JSON text, so equal payloads are equal bytes.
    tensors = {k: v for k, v in payload.items() if k in TENSOR_KEYS}
    plain = {k: v for k, v in payload.items() if k not in TENSOR_KEYS}
    buf = io.BytesIO()
    torch.save({"json": json.dumps(plain, sort_keys=True), **tensors}, buf)
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
        out = torch.load(io.BytesIO(rest), map_location="cpu", weights_only=True)
        plain = json.loads(out.pop("json"))
    except Exception as exc:
        raise ModelError(f"checkpoint {os.fspath(path)!r} cannot be loaded: {exc}") from None
    return {**plain, **out}
