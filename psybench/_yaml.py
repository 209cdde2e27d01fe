"""YAML parsing with libyaml's C parser when PyYAML was built with it.

``yaml.load(text, Loader=CSafeLoader)`` builds the same Python values as
``yaml.safe_load`` (the constructor and resolver are the same; only the scanner and
parser are C) at about a tenth of the CPU time: the workflow parses the config, the
schema and the literature file at every start, no-op reruns included (issue 15).
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, with the C parser when available."""
    return yaml.load(text, Loader=_LOADER)
