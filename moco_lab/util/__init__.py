"""Utilities shared by every layer: names, bounds, environment switches (no pydrake)."""
from .bounds import Bounds
from .config import fast_mode, mesh
from .names import NamedValues, did_you_mean

__all__ = ["Bounds", "NamedValues", "did_you_mean", "fast_mode", "mesh"]
