"""Literature values with their citations (config/literature.yaml) and the Gaussian score against them.

The Gaussian score is Tlapale et al. 2010, RR-7317 sec. 4.2, eq. 1 (:func:`gaussian_score`).

File structure::

    version: 1
    parameters:                 # fit parameters scored by RR-7317 eq. 1
      <experiment>:             # diamonds, dashed_bars, barberpole, grating_size
        <curve>:                # e.g. half_differential, bar, dashed_bar
          <parameter>:          # A, tau_ms, B (names of FitResult.params())
            <entry>
    facts:                      # other numbers from the literature (bounds, stimulus facts)
      <experiment>:
        <name>: <entry>

An entry is a mapping with

``value``     number or list of numbers (required)
``citation``  author(s), year and journal (required, non-empty)
``measured``  what exactly was measured, on which stimulus and subjects (required)
``unit``      optional string
``sigma``     the SD reported by the source, or null when the source gives none
``sigma_source``  required whenever ``sigma`` is set: where the SD comes from (a
              citation, or the words "psybench tolerance" if it is ours)
``verified``  bool: whether the value was checked against the source itself
``kind``      "value" (default) or "bound" (a limit, never a Gaussian target)
``note``      optional free text

A parameter without a sigma is skipped by the Gaussian score (never given an
invented SD). :func:`load_literature` validates all of this and names the
offending key in its error.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from psybench._yaml import safe_load

__all__ = [
    "GaussianScore", "LiteratureError", "gaussian_score", "load_literature", "validate_literature",
    "literature_params", "HumanReference", "human_reference",
]

_ENTRY_KEYS = {"value", "citation", "measured", "unit", "sigma", "sigma_source", "verified", "kind", "note"}
_TOP_KEYS = {"version", "parameters", "facts"}


@dataclasses.dataclass(frozen=True)
class GaussianScore:
    """RR-7317 eq. 1 summed over the ``n`` parameters that have a literature SD."""

    score: float
    n: int
    used: tuple[str, ...] = ()


class LiteratureError(ValueError):
    """The literature file is malformed; the message names the file and key."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _check_entry(entry: Any, key: str, where: str) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise LiteratureError(f"{where}: {key} must be a mapping with value/citation/measured")
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise LiteratureError(f"{where}: {key} has unknown field(s) {unknown}; allowed {sorted(_ENTRY_KEYS)}")
    for field in ("citation", "measured"):
        text = entry.get(field)
        if not isinstance(text, str) or not text.strip():
            raise LiteratureError(f"{where}: {key} lacks a non-empty '{field}' (every value needs its source)")
    if "value" not in entry:
        raise LiteratureError(f"{where}: {key} lacks 'value'")
    value = entry["value"]
    if not (_is_number(value) or (isinstance(value, list) and value and all(_is_number(v) for v in value))):
        raise LiteratureError(f"{where}: {key}.value must be a finite number or a list of them; got {value!r}")
    sigma = entry.get("sigma")
    if sigma is not None:
        if not _is_number(sigma) or sigma <= 0:
            raise LiteratureError(f"{where}: {key}.sigma must be a positive number or null; got {sigma!r}")
        src = entry.get("sigma_source")
        if not isinstance(src, str) or not src.strip():
            raise LiteratureError(
                f"{where}: {key} has a sigma but no 'sigma_source' (cite the SD, or say 'psybench tolerance')"
            )
    if "verified" in entry and not isinstance(entry["verified"], bool):
        raise LiteratureError(f"{where}: {key}.verified must be true or false")
    kind = entry.get("kind", "value")
    if kind not in ("value", "bound"):
        raise LiteratureError(f"{where}: {key}.kind must be 'value' or 'bound'; got {kind!r}")
    out = dict(entry)
    out.setdefault("sigma", None)
    out.setdefault("kind", "value")
    out.setdefault("verified", False)
    return out


def validate_literature(doc: Any, *, where: str = "literature") -> dict[str, Any]:
    """Validate a parsed literature document; return it normalised (defaults filled in)."""
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise LiteratureError(f"{where}: the top level must be a mapping with 'parameters' and/or 'facts'")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise LiteratureError(f"{where}: unknown top-level key(s) {unknown}; allowed {sorted(_TOP_KEYS)}")
    out: dict[str, Any] = {"version": doc.get("version", 1), "parameters": {}, "facts": {}}
    params = doc.get("parameters") or {}
    if not isinstance(params, Mapping):
        raise LiteratureError(f"{where}: 'parameters' must be a mapping experiment -> curve -> parameter")
    for exp, curves in params.items():
        if not isinstance(curves, Mapping):
            raise LiteratureError(f"{where}: parameters.{exp} must be a mapping curve -> parameter")
        for curve, entries in curves.items():
            if not isinstance(entries, Mapping):
                raise LiteratureError(f"{where}: parameters.{exp}.{curve} must be a mapping parameter -> entry")
            for name, entry in entries.items():
                key = f"parameters.{exp}.{curve}.{name}"
                checked = _check_entry(entry, key, where)
                if not _is_number(checked["value"]):
                    raise LiteratureError(f"{where}: {key}.value must be a single number for a fit parameter")
                out["parameters"].setdefault(str(exp), {}).setdefault(str(curve), {})[str(name)] = checked
    facts = doc.get("facts") or {}
    if not isinstance(facts, Mapping):
        raise LiteratureError(f"{where}: 'facts' must be a mapping experiment -> name -> entry")
    for exp, entries in facts.items():
        if not isinstance(entries, Mapping):
            raise LiteratureError(f"{where}: facts.{exp} must be a mapping name -> entry")
        for name, entry in entries.items():
            out["facts"].setdefault(str(exp), {})[str(name)] = _check_entry(entry, f"facts.{exp}.{name}", where)
    return out


def load_literature(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate ``config/literature.yaml``.

    Raises
    ------
    LiteratureError
        Naming the file and the offending key (e.g. an entry without citation).
    FileNotFoundError
        If the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"literature file {path} does not exist")
    try:
        doc = safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise LiteratureError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise LiteratureError(f"{path}: not valid YAML ({exc})") from exc
    return validate_literature(doc, where=str(path))


def literature_params(literature: Mapping[str, Any] | None, experiment: str, curve: str) -> dict[str, Any]:
    """The entries of ``parameters.<experiment>.<curve>`` (empty if absent); ``kind: bound`` left out."""
    if not literature:
        return {}
    entries = literature.get("parameters", {}).get(experiment, {}).get(curve, {})
    return {k: v for k, v in entries.items() if v.get("kind", "value") == "value"}


# ------------------------------------------------------------------ Gaussian score
def gaussian_score(params: Mapping[str, float], literature: Mapping[str, Any]) -> GaussianScore:
    """RR-7317 eq. 1: ``sum_i exp(-(p_i - p_lit_i)^2 / (2 sigma_i^2))``.

    Parameters
    ----------
    params : mapping of str to float
        The model's fitted parameters, e.g. ``FitResult.params()``.
    literature : mapping of str to entry
        Literature value per parameter name: either a mapping with ``value`` and
        ``sigma`` (as :func:`psybench.motion.literature.load_literature` returns) or a pair
        ``(value, sigma)``. A parameter enters the sum only if the model gives a
        finite value and the literature gives a finite value and a finite
        ``sigma > 0``; entries without an SD are skipped, never given one.

    Returns
    -------
    GaussianScore
        ``score`` in ``[0, n]`` (each term is 1 at a perfect match), ``n`` the
        number of terms; ``score`` is NaN when ``n == 0``.
    """
    total, used = 0.0, []
    for name in sorted(literature):
        entry = literature[name]
        if isinstance(entry, Mapping):
            value, sigma = entry.get("value"), entry.get("sigma")
        else:
            value, sigma = entry
        p = params.get(name)
        try:
            value, sigma, p = float(value), float(sigma), float(p)
        except (TypeError, ValueError):
            continue
        if not (math.isfinite(value) and math.isfinite(sigma) and sigma > 0 and math.isfinite(p)):
            continue
        total += math.exp(-((p - value) ** 2) / (2.0 * sigma**2))
        used.append(name)
    return GaussianScore(total if used else float("nan"), len(used), tuple(used))


# ------------------------------------------------------------- human reference curve
@dataclasses.dataclass(frozen=True)
class HumanReference:
    """What the literature gives of the human time course of one fitted curve.

    ``params`` maps ``A``, ``tau_ms``, ``B`` to their literature entries (those
    present); ``bounds`` the ``kind: bound`` facts of the experiment (e.g.
    ``convergence_time_ms``). The curve ``A exp(-t/tau) + B`` (RR-7317 eq. 4) is
    drawable only when all three parameters are present.
    """

    experiment: str
    curve: str
    params: Mapping[str, Mapping[str, Any]]
    bounds: Mapping[str, Mapping[str, Any]]

    @property
    def complete(self) -> bool:
        return all(k in self.params for k in ("A", "tau_ms", "B"))

    def citations(self) -> str:
        """The distinct citations of the parameters, in order, joined by '; '."""
        seen: list[str] = []
        for entry in self.params.values():
            if entry["citation"] not in seen:
                seen.append(entry["citation"])
        return "; ".join(seen)

    def band(self, t) -> tuple[Any, Any, Any]:
        """Curve and envelope over ``t`` (ms since onset), each shape (N,).

        The envelope spans the curves whose parameters each lie within one
        literature SD (a parameter without SD held at its value): a picture of
        the reported spread, not a confidence band. NaN arrays when incomplete.
        """
        t = np.asarray(t, dtype=np.float64)
        if not self.complete:
            nan = np.full(t.shape, np.nan)
            return nan, nan, nan
        values, sigmas = {}, {}
        for k in ("A", "tau_ms", "B"):
            values[k] = float(self.params[k]["value"])
            sigmas[k] = float(self.params[k].get("sigma") or 0.0)

        def f(a, tau, b):
            return a * np.exp(-t / max(tau, 1e-9)) + b

        mean = f(values["A"], values["tau_ms"], values["B"])
        corners = [f(*(values[k] + s * sigmas[k] for k, s in zip(("A", "tau_ms", "B"), signs)))
                   for signs in itertools.product((-1.0, 1.0), repeat=3)]
        return mean, np.min(corners, axis=0), np.max(corners, axis=0)


def human_reference(literature: Mapping[str, Any] | None, experiment: str, curve: str) -> HumanReference:
    """The literature's human reference for ``parameters.<experiment>.<curve>`` and its bounds.

    Parameters
    ----------
    literature : mapping or None
        As :func:`load_literature` returns (None: nothing known).
    experiment, curve : str
        E.g. ``"diamonds"``, ``"half_differential"``.

    Returns
    -------
    HumanReference
    """
    params = literature_params(literature, experiment, curve)
    facts = (literature or {}).get("facts", {}).get(experiment, {})
    bounds = {k: v for k, v in facts.items() if v.get("kind") == "bound"}
    return HumanReference(experiment, curve, params, bounds)
