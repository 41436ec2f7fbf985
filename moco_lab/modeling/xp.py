"""Helpers for code written once for numbers, numpy arrays and the engine's expressions (the ``xp`` argument).

Force elements and path geometry compute with ``xp``: ``numpy`` for numbers and arrays, or the expression module
the engine hands out while deriving a model's equations (:mod:`moco_lab.symbolic`), whose ``where(c, a, b)``
means ``a if c > 0 else b``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["where_positive"]


def where_positive(xp: Any, condition: Any, a: Any, b: Any) -> Any:
    """``a`` where ``condition > 0``, else ``b`` (numbers, arrays, or the engine's expressions)."""
    if xp is np:
        return np.where(np.asarray(condition) > 0, a, b)
    return xp.where(condition, a, b)
