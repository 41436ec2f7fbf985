"""Tools that build and run whole studies: ``Study``, ``Track`` (MocoTrack), ``Inverse`` (MocoInverse), simulation."""
from .inverse import Inverse, InverseSolution, add_reserves, add_residuals, reserve_path
from .simulate import simulate, simulate_solution
from .study import Study
from .track import Track

__all__ = ["Inverse", "InverseSolution", "add_reserves", "add_residuals", "reserve_path", "simulate", "simulate_solution",
           "Study", "Track"]
