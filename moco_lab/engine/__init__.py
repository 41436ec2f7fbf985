"""The engine: compiled dynamics, collocation and the transcription into a Drake ``MathematicalProgram``."""
from .collocation import MODES, SCHEMES, Grid, collocation_defects, quadrature_weights
from .transcription import Transcription

__all__ = ["MODES", "SCHEMES", "Grid", "collocation_defects", "quadrature_weights", "Transcription"]
