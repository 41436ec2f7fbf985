"""Model description: a Drake ``MultibodyPlant`` with OpenSim names, force elements, muscles, paths, constraints.

Submodules: :mod:`.model` (``Model``, ``ModelBuilder``), :mod:`.tree` (the
plant's kinematic tree as data), :mod:`.forces` (the force-element protocol,
actuators, springs, muscles on paths), :mod:`.contact`, :mod:`.passive`,
:mod:`.muscle`, :mod:`.path`, :mod:`.constraints`, :mod:`.units`,
:mod:`.library` (model factories, ``ml.models``) and :mod:`.coupled` (the
moment-arm models).
"""
from . import constraints, coupled, library, muscle
from .constraints import (
                          CoordinateCouplerConstraint,
                          FixedDistanceConstraint,
                          HolonomicConstraint,
                          KinematicConstraint,
                          PointOnCurveConstraint,
)
from .contact import Gait2dContactPoint, SmoothSphereHalfSpaceForce
from .forces import (
                          CoordinateActuator,
                          ExpressionCoordinateForce,
                          ForceElement,
                          PathMuscle,
                          PointToPointSpringDamper,
                          SpringGeneralizedForce,
)
from .metabolics import Bhargava2004SmoothedMuscleMetabolics, MetabolicsMuscleParameters
from .model import GRAVITY, Coordinate, Model, ModelBuilder, Property
from .muscle import DeGrooteFregly2016Muscle
from .passive import PassiveJointMoment
from .path import GeometryPath, PathPoint

__all__ = ["constraints", "coupled", "library", "muscle", "CoordinateCouplerConstraint", "FixedDistanceConstraint",
           "HolonomicConstraint", "KinematicConstraint", "PointOnCurveConstraint", "CoordinateActuator",
           "SpringGeneralizedForce", "GRAVITY", "Coordinate", "Model", "ModelBuilder", "PathMuscle", "Property",
           "DeGrooteFregly2016Muscle", "GeometryPath", "PathPoint", "ForceElement", "ExpressionCoordinateForce",
           "PointToPointSpringDamper", "Gait2dContactPoint", "SmoothSphereHalfSpaceForce", "PassiveJointMoment",
           "Bhargava2004SmoothedMuscleMetabolics", "MetabolicsMuscleParameters"]
