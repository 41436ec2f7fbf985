"""Plain-data descriptions of values, for telling models and elements apart (fingerprints, study files)."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["describe"]


def describe(value: Any) -> Any:
    """``value`` as JSON-like data: numbers, strings, lists and dicts; dataclasses field by field.

    Arrays become lists, functions their qualified names (``"<function f>"``),
    anything else its ``repr``. Two values that describe alike define the same
    physics (used in :meth:`Model.description`).
    """
    if isinstance(value, (str, bool, int, float, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if dataclasses.is_dataclass(value):
        return {f.name: describe(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(value):
        return f"<function {getattr(value, '__qualname__', repr(value))}>"
    return repr(value)
