"""Training the future-prediction baseline (``cnn_future``) on the train split, resumably.

:func:`train_future_stores` streams clips of the train split's ingest stores
(:class:`psybench.intphys.clips.ClipLoader`), trains the encoder-decoder of
:mod:`psybench.intphys.models.future` and writes one checkpoint: the weights,
the training config, the data digest (the stores' content digests and mask names)
and the code hash. While it trains it writes a resume checkpoint beside the output
every ``checkpoint_every`` steps (written to a temporary file, then
``os.replace``d: a kill at any moment leaves the previous one or the new one,
whole); a rerun with the same config, data and code starts from it. On the CPU a
run killed and resumed ends with the same bytes as one that never stopped: the
data order is a function of (seed, epoch, batch) alone, the optimiser's and batch
norms' state are saved, and torch runs single-threaded with deterministic
algorithms.

Checkpoint files: :mod:`psybench.intphys.checkpoint`.
"""

from __future__ import annotations

import glob
import inspect
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psybench.intphys.checkpoint import read_checkpoint, write_checkpoint
from psybench.intphys.models.future import cnn_future_surprise, network_of

__all__ = ["TRAIN_DEFAULTS", "data_digest", "train_future_stores"]

#: The training parameters of a ``cnn_future`` model and their defaults: its registered signature's
#: keywords, less those of the scoring alone.
TRAIN_DEFAULTS = {name: p.default for name, p in inspect.signature(cnn_future_surprise).parameters.items()
                  if p.kind is p.KEYWORD_ONLY and name not in ("weights", "scale", "threads")}


def data_digest(stores: Sequence[tuple[str | os.PathLike, str | os.PathLike]], channel: str) -> str:
    """Digest of what training reads: each store's recorded digest of its ``channel`` array and its mask names."""
    import xxhash

    from psybench.intphys.models.observation import observe
    from psybench.io.integrity import MANIFEST_KEY, array_digest, open_group

    parts = []
    for store, table in stores:
        manifest = dict(open_group(Path(store)).attrs).get(MANIFEST_KEY) or {}
        array = "masks" if channel == "masks" else "scene"
        parts.append(array_digest((manifest.get("arrays") or {}).get(array) or {}))
        obs = observe(store, table)
        parts.append([list(obs.movies), None if obs.masks_grayscale is None else [list(map(list, m or ()))
                                                                                for m in obs.masks_grayscale]])
    return xxhash.xxh3_128_hexdigest(json.dumps(parts, sort_keys=True).encode())


def _config(params: Mapping[str, Any]) -> dict[str, Any]:
    cfg = dict(TRAIN_DEFAULTS)
    cfg.update({k: v for k, v in params.items() if k in TRAIN_DEFAULTS})
    return cfg


def train_future_stores(stores: Sequence[str | os.PathLike], tables: Sequence[str | os.PathLike],
                        out_path: str | os.PathLike, *, params: Mapping[str, Any] | None = None,
                        code_hash: str = "", threads: int = 1, model: str = "cnn_future") -> Path:
    """Train ``cnn_future`` on the train split's stores and write its checkpoint.

    Parameters
    ----------
    stores, tables : sequences of path-like
        The train split's ingest stores and their metadata tables, in shard order.
    out_path : path-like
        The checkpoint to write (the resume checkpoint is ``<out_path>.resume``).
    params : mapping
        The model entry's params; the keys of :data:`TRAIN_DEFAULTS` are read
        (others, such as the scoring ``scale``, are ignored here).
    code_hash : str
        Recorded in the checkpoint (and required to match to resume).
    threads : int
        Torch threads (1 for byte-reproducible CPU weights).
    """
    from psybench.deep import require_torch, resolve_device

    if len(stores) != len(tables):
        raise ValueError(f"train_future_stores: {len(stores)} stores but {len(tables)} tables")
    torch = require_torch(model)
    cfg = _config(params or {})
    device = resolve_device(cfg["device"], model=model)
    amp = bool(cfg["amp"]) and device.type == "cuda"  # mixed precision only when asked, and on a GPU
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    saved = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads(), torch.backends.cudnn.benchmark)
    try:  # the process's torch settings are restored after (psybench.score runs other models next)
        return _train(torch, stores, tables, out_path, cfg, device, amp, code_hash=code_hash, threads=threads,
                      model=model)
    finally:
        torch.use_deterministic_algorithms(saved[0])
        torch.set_num_threads(saved[1])
        torch.backends.cudnn.benchmark = saved[2]


def _train(torch: Any, stores, tables, out_path, cfg: dict[str, Any], device: Any, amp: bool, *, code_hash: str,
           threads: int, model: str) -> Path:
    from psybench.deep import environment_attrs
    from psybench.intphys.clips import ClipLoader

    pairs = list(zip(stores, tables))
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(int(threads))
    torch.backends.cudnn.benchmark = False
    loader = ClipLoader(pairs, horizon=cfg["horizon"], n_input=cfg["n_input"], channel=cfg["channel"],
                        size=cfg["size"], batch_size=cfg["batch_size"], seed=cfg["seed"], window=cfg["window"])
    identity = {"config": cfg, "data_digest": data_digest(pairs, cfg["channel"]), "code_hash": str(code_hash),
                "amp": amp, "n_clips": loader.n_clips}
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    resume = out.with_name(out.name + ".resume")
    for stale in out.parent.glob(f"{glob.escape(resume.name)}.tmp-*"):  # left by a process killed mid-write
        stale.unlink(missing_ok=True)
    torch.manual_seed(cfg["seed"])
    net = network_of(cfg).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"], betas=(cfg["beta1"], 0.999))
    scaler = torch.amp.GradScaler("cuda") if amp else None
    step = 0
    if resume.exists():
        state = read_checkpoint(resume)  # a damaged one is refused by name
        if json.dumps(state.get("identity"), sort_keys=True) == json.dumps(identity, sort_keys=True):
            net.load_state_dict(state["state_dict"])
            opt.load_state_dict(state["optimizer"])
            if scaler is not None and "scaler" in state:
                scaler.load_state_dict(state["scaler"])
            step = int(state["step"])
            print(f"{model}: resuming from {resume} at step {step}", flush=True)
        else:
            print(f"{model}: {resume} was written for another config, data or code: starting afresh", flush=True)
    per_epoch = len(loader)
    total = cfg["epochs"] * per_epoch

    def save_resume() -> None:
        state = {"identity": identity, "state_dict": net.state_dict(), "optimizer": opt.state_dict(),
                 "step": step}
        if scaler is not None:
            state["scaler"] = scaler.state_dict()
        write_checkpoint(resume, state)

    net.train()
    losses = []
    while step < total:
        epoch, start = divmod(step, per_epoch)
        for batch in loader.batches(epoch, start):
            x = torch.from_numpy(batch.inputs).to(device)
            y = torch.from_numpy(batch.targets).to(device)
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device.type, enabled=amp):
                loss = torch.nn.functional.mse_loss(net(x).float(), y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            losses.append(float(loss.detach()))
            step += 1
            if step % cfg["checkpoint_every"] == 0 or step == total:
                save_resume()
        print(f"{model}: epoch {epoch + 1}/{cfg['epochs']}, mean loss of its last steps "
              f"{np.mean(losses[-per_epoch:]):.6f}", flush=True)
    env = environment_attrs(device)
    final = {**identity, "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()},
             "steps": step, "device": device.type, "determinism": env["determinism"], "torch": str(env["torch"])}
    write_checkpoint(out, final)
    resume.unlink(missing_ok=True)
    return out
