"""Results: trajectories, solutions and OpenSim ``.sto`` files (pure data, no pydrake)."""
from . import sto
from .tables import reference_columns
from .trajectory import Solution, Trajectory, read_trajectory

__all__ = ["Solution", "Trajectory", "read_trajectory", "reference_columns", "sto"]
