"""Force elements that act on coordinates: OpenSim's ``CoordinateActuator`` and ``SpringGeneralizedForce``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CoordinateActuator", "SpringGeneralizedForce"]


@dataclass
class CoordinateActuator:
    """OpenSim's ``CoordinateActuator``: generalized force ``optimal_force * control``.

    Its control is the problem variable named :attr:`path`.
    """

    path: str
    coordinate: str
    optimal_force: float = 1.0
    min_control: float = -np.inf
    max_control: float = np.inf


@dataclass
class SpringGeneralizedForce:
    """OpenSim's ``SpringGeneralizedForce`` on one coordinate.

    Generalized force ``-stiffness * (q - rest_length) - viscosity * u``.
    """

    path: str
    coordinate: str
    stiffness: float = 0.0
    rest_length: float = 0.0
    viscosity: float = 0.0
