"""The engine: compiled dynamics, collocation and the transcription into a Drake ``MathematicalProgram``."""
from .collocation import DYNAMICS_MODES, SCHEMES, Grid, collocation_defects, quadrature_weights
from .settings import SolverSettings
from .transcription import Transcription

__all__ = ["DYNAMICS_MODES", "SCHEMES", "Grid", "collocation_defects", "quadrature_weights", "SolverSettings", "Transcription"]
