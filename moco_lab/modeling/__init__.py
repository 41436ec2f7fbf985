"""Model description: a Drake ``MultibodyPlant`` with OpenSim names, force elements, muscles, paths, constraints.

Submodules: :mod:`.model` (``Model``, ``ModelBuilder``), :mod:`.forces`,
:mod:`.muscle`, :mod:`.path`, :mod:`.constraints`, :mod:`.library` (model
factories, ``ml.models``) and :mod:`.coupled` (the moment-arm models).
"""
from . import constraints, coupled, library, muscle
from .constraints import (CoordinateCouplerConstraint, FixedDistanceConstraint, HolonomicConstraint,
                          KinematicConstraint, PointOnCurveConstraint)
from .forces import CoordinateActuator, SpringGeneralizedForce
from .forces import ForceElement, PathMuscle
from .model import GRAVITY, Coordinate, Model, ModelBuilder, Property
from .muscle import DeGrooteFregly2016Muscle
from .path import GeometryPath, PathPoint

__all__ = ["constraints", "coupled", "library", "muscle", "CoordinateCouplerConstraint", "FixedDistanceConstraint",
           "HolonomicConstraint", "KinematicConstraint", "PointOnCurveConstraint", "CoordinateActuator",
           "SpringGeneralizedForce", "GRAVITY", "Coordinate", "Model", "ModelBuilder", "PathMuscle", "Property",
           "DeGrooteFregly2016Muscle", "GeometryPath", "PathPoint"]
