"""Results: trajectories, solutions and OpenSim ``.sto`` files (pure data, no pydrake)."""
from . import sto
from .duals import Duals, read_duals
from .periodic import create_periodic_trajectory
from .tables import reference_columns
from .trajectory import Quantity, Solution, Trajectory, read_trajectory

__all__ = ["create_periodic_trajectory", "Duals", "Quantity", "Solution", "Trajectory", "read_trajectory", "read_duals",
           "reference_columns", "sto"]
