"""Markers: points fixed on a model's bodies where a gait lab sticks its reflective markers.

OpenSim's ``MarkerSet``: each marker has a name, the frame it is fixed to (a body, or an offset frame on one)
and a location in that frame. Here a :class:`Marker` is always given on a body of the plant (a location in an
offset frame is carried into its body's frame when a file is read), so that every tool places it the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Marker"]


@dataclass(frozen=True)
class Marker:
    """A marker on a model: ``name``, the ``body`` it is fixed to, its ``location`` (x, y, z) in the body frame (m)."""

    name: str
    body: str
    location: tuple

    def __post_init__(self):
        try:
            loc = tuple(float(v) for v in self.location)
        except (TypeError, ValueError):
            raise TypeError(f"marker {self.name!r}: location must be 2 or 3 numbers (x, y[, z]) in m, got "
                            f"{self.location!r}") from None
        if len(loc) == 2:
            loc = (*loc, 0.0)
        if len(loc) != 3 or not all(np.isfinite(loc)):
            raise ValueError(f"marker {self.name!r}: location must be 2 or 3 finite numbers, got {self.location}")
        object.__setattr__(self, "location", loc)
