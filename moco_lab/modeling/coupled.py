"""Planar models for muscle moment arms, with coupler constraints (lesson 06).

==========================  ==================================================================
factory                     what it shows
==========================  ==================================================================
``single_pin``              the textbook case: a two-point path across one pin joint; the
                            moment arm is the distance from the line of action to the joint
                            centre, ``r = a b sin θ / l`` (Sherman, Seth & Delp 2013)
``patella_knee``            hip + knee + a patella hanging off the femur on its own pin,
                            whose angle is a nonlinear function of the knee angle
                            (``CoordinateCouplerConstraint``), as OpenSim's
                            ``3DGaitModel_prescribedPatella``; quadriceps run over the
                            patella, hamstrings behind the knee
``composite_joint``         a spine (or wrist) whose flexion is split across ``n`` pin joints
                            by couplers ``q_k = (s_k / s_1) q_1`` (Gonzalez et al.'s wrist,
                            Sherman, Seth & Delp 2013 Figure 4)
==========================  ==================================================================

All models are planar (x anterior, y up, rotations about +z), with OpenSim's
sign conventions: hip flexion, knee extension (knee flexion is negative) and
ankle dorsiflexion are positive, like gait2d (the gait2d manual). Bone outlines for
drawing them live in :mod:`moco_lab.viz.sketches`.

:data:`GAIT2D_MOMENT_ARMS` holds the constant moment arms that gait2d assumes
(the gait2d manual's parameter table, gait2d_par.xls) for the muscles of :func:`patella_knee`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .constraints import CoordinateCouplerConstraint
from .model import GRAVITY, Model, ModelBuilder
from .muscle import DeGrooteFregly2016Muscle

if TYPE_CHECKING:
    from .muscle import ArrayOrExpr

__all__ = ["single_pin", "patella_knee", "composite_joint", "patella_function", "GAIT2D_MOMENT_ARMS",
           "GAIT2D_MUSCLES", "KNEE_RANGE"]

#: Knee range of OpenSim's gait models and of testMomentArms.cpp (rad).
KNEE_RANGE = (-2.0 * math.pi / 3.0, math.pi / 18.0)

#: gait2d's constant moment arms (m), by muscle and joint (the gait2d manual's parameter table gait2d_par.xls, right side).
GAIT2D_MOMENT_ARMS = {
    "vasti": {"knee_angle": 0.042},
    "rectus_femoris": {"hip_flexion": 0.034, "knee_angle": 0.050},
    "hamstrings": {"hip_flexion": -0.072, "knee_angle": -0.034},
}

#: gait2d's muscle constants used to express length errors: (L0 [m], Lceopt [m], SEEslack [m]).
GAIT2D_MUSCLES = {
    "vasti": (0.271, 0.093, 0.223),
    "rectus_femoris": (0.474, 0.081, 0.398),
    "hamstrings": (0.383, 0.104, 0.334),
}


def _muscle(name: str, fmax: float, lopt: float, lslack: float):
    return DeGrooteFregly2016Muscle(name=name, max_isometric_force=fmax, optimal_fiber_length=lopt,
                                    tendon_slack_length=lslack, ignore_tendon_compliance=True)




def single_pin(a: float = 0.25, b: float = 0.05, mass: float = 1.5) -> Model:
    """A forearm on an elbow pin, one straight (two-point) muscle: the textbook moment arm.

    The upper arm is ground; the elbow pin ``/jointset/elbow`` (coordinate
    ``elbow_flexion``, range [0, 2.6] rad) sits at the origin. The muscle
    ``brachialis`` runs from ``(0, a, 0)`` on the upper arm (a above the elbow)
    to ``(0, -b, 0)`` on the forearm (b along the forearm, which hangs along
    −y at θ = 0). The angle between the two attachment vectors is ``π − θ``,
    so

    ``l(θ)² = a² + b² + 2 a b cos θ``, ``r(θ) = −dl/dθ = a b sin θ / l(θ)``,

    which is also the distance from the line of action to the elbow centre.

    Parameters
    ----------
    a, b : float
        Distances (m) of origin and insertion from the joint centre.
    mass : float
        Forearm mass (kg), centre of mass 0.15 m from the elbow.
    """
    builder = ModelBuilder("single_pin", gravity=(0, -GRAVITY, 0))
    builder.add_body("forearm", mass, com=(0, -0.15, 0), inertia=(0.01, 0.002, 0.01))
    builder.add_pin_joint("elbow", "ground", "forearm", axis=(0, 0, 1), coordinate="elbow_flexion",
                          range=(0.0, 2.6))
    builder.add_muscle(_muscle("brachialis", 1000.0, 0.09, 0.12), [("ground", (0, a, 0)), ("forearm", (0, -b, 0))])
    builder.spec = {"factory": "single_pin", "kwargs": {"a": a, "b": b, "mass": mass}}
    return builder.build()


def patella_function(knee_angle: ArrayOrExpr, ratio: float = 0.75, curvature: float = 0.06) -> ArrayOrExpr:
    """Patella angle relative to the femur as a function of the knee angle (rad).

    ``f(θ) = ratio θ + curvature θ²``: slope ``ratio + 2 curvature θ`` (0.5 at
    θ = −2.09, 0.77 at θ = 0.17), like the patella of OpenSim's gait models,
    which turns by about two thirds of the knee flexion. Works for floats,
    arrays, ``AutoDiffXd`` and symbolic scalars.
    """
    return ratio * knee_angle + curvature * knee_angle * knee_angle


def patella_knee(ratio: float = 0.75, curvature: float = 0.06, with_hip: bool = True) -> Model:
    """Thigh, shank and a patella whose rotation is coupled to the knee angle.

    Pelvis = ground. ``/jointset/hip/hip_flexion`` (pin at the origin) carries
    the femur (9.3 kg); ``/jointset/knee/knee_angle`` (pin 0.40 m below the hip,
    range [−2π/3, π/18]) the tibia (3.7 kg). The patella (0.1 kg) hangs off the
    **femur** on its own pin ``/jointset/patellofemoral/patella_angle`` at the
    knee centre, and the ``CoordinateCouplerConstraint`` ``patella_coupler``
    makes ``patella_angle = f(knee_angle)`` (:func:`patella_function`), as in
    OpenSim's ``testMomentArmsConstraintB.osim``. Muscles (rigid tendons):

    * ``vasti``: femur shaft → patella (2 points) → tibial tuberosity;
    * ``rectus_femoris``: pelvis → patella (2 points) → tibial tuberosity;
    * ``hamstrings``: pelvis (ischium) → tibia, behind the knee.

    Because the quadriceps pull on the patella, which belongs to the femur's
    branch of the tree, the knee entry of ``f = Jᵀ F`` holds only the pull of
    the patellar ligament; the rest of the knee moment arm lives in the
    patella coordinate's entry and is collected by the coupling vector.

    Parameters
    ----------
    ratio, curvature : float
        Coupler function parameters (:func:`patella_function`).
    with_hip : bool
        False welds the femur to the pelvis (no hip coordinate).
    """
    b = ModelBuilder("patella_knee", gravity=(0, -GRAVITY, 0))
    b.add_body("femur", 9.3, com=(0, -0.17, 0), inertia=(0.13, 0.03, 0.13))
    b.add_body("tibia", 3.7, com=(0, -0.19, 0), inertia=(0.05, 0.005, 0.05))
    b.add_body("patella", 0.1, com=(0.05, 0, 0), inertia=(1e-4, 1e-4, 1e-4))
    if with_hip:
        b.add_pin_joint("hip", "ground", "femur", axis=(0, 0, 1), coordinate="hip_flexion", range=(-0.5, 1.9))
    else:
        b.plant.WeldFrames(b.plant.world_frame(), b.plant.GetBodyByName("femur").body_frame())
    knee = (0.0, -0.40, 0.0)
    b.add_pin_joint("knee", "femur", "tibia", axis=(0, 0, 1), coordinate="knee_angle", parent_offset=knee,
                    range=KNEE_RANGE)
    b.add_pin_joint("patellofemoral", "femur", "patella", axis=(0, 0, 1), coordinate="patella_angle",
                    parent_offset=knee, range=(-3.0, 1.0))
    b.add_constraint(CoordinateCouplerConstraint(
        "patella_coupler", dependent="patella_angle", independent="knee_angle",
        function=lambda th: patella_function(th, ratio, curvature)))
    patella_top, patella_bottom = (0.052, 0.022, 0.0), (0.050, -0.018, 0.0)
    tuberosity = ("tibia", (0.038, -0.075, 0.0))
    b.add_muscle(_muscle("vasti", 7000.0, 0.093, 0.223),
                 [("femur", (0.030, -0.200, 0.0)), ("femur", (0.038, -0.330, 0.0)),
                  ("patella", patella_top), ("patella", patella_bottom), tuberosity])
    b.add_muscle(_muscle("rectus_femoris", 1200.0, 0.081, 0.398),
                 [("ground", (0.035, -0.005, 0.0)), ("patella", patella_top), ("patella", patella_bottom),
                  tuberosity])
    b.add_muscle(_muscle("hamstrings", 3000.0, 0.104, 0.334),
                 [("ground", (-0.070, -0.050, 0.0)), ("tibia", (-0.035, -0.030, 0.0)),
                  ("tibia", (-0.030, -0.060, 0.0))])
    b.spec = {"factory": "patella_knee", "kwargs": {"ratio": ratio, "curvature": curvature, "with_hip": with_hip}}
    return b.build()


def composite_joint(shares: Sequence[float] = (0.40, 0.35, 0.25), segment: float = 0.08,
                    name: str = "spine") -> Model:
    """A flexion split across ``n = len(shares)`` pin joints by coupler constraints.

    Ground is the base (pelvis, or forearm for a wrist). Bodies ``seg1`` …
    ``segn`` are stacked along +y, ``segment`` m apart; pin ``/jointset/j<k>``
    (coordinate ``flex<k>``, axis −z so that positive flexion bends forward,
    towards +x) joins ``seg<k>`` to the one below. Couplers
    ``flex<k> = (s_k / s_1) flex1`` (k ≥ 2) share the total flexion
    ``Θ = Σ flex<k> = flex1 / s_1`` (shares normalized to sum 1), as Gonzalez
    et al.'s wrist (two equal shares) or a lumbar spine. ``flex1`` is the
    independent coordinate. Muscles:

    * ``extensor``: posterior, from the base through a via point on every
      segment to the top one;
    * ``flexor``: anterior, straight from the base to the top segment;
    * ``short_extensor``: posterior, from the base to ``seg2`` (crosses only
      two joints; it inserts on an intermediate body as in Sherman, Seth & Delp 2013 Figure 4).

    Parameters
    ----------
    shares : sequence of float, length n >= 2
    segment : float
        Distance between consecutive joints (m).
    name : str
        Model name (``"spine"``, ``"wrist"``).
    """
    shares = np.asarray(shares, dtype=float)
    if shares.ndim != 1 or len(shares) < 2 or np.any(shares <= 0):
        raise ValueError(f"shares must be >= 2 positive numbers, got {shares}")
    shares = shares / shares.sum()
    n = len(shares)
    b = ModelBuilder(name, gravity=(0, -GRAVITY, 0))
    parent = "ground"
    for k in range(1, n + 1):
        b.add_body(f"seg{k}", 1.0, com=(0, segment / 2, 0), inertia=(0.002, 0.002, 0.002))
        b.add_pin_joint(f"j{k}", parent, f"seg{k}", axis=(0, 0, -1), coordinate=f"flex{k}",
                        parent_offset=(0, segment if parent != "ground" else 0.0, 0),
                        range=(-0.6 * shares[k - 1] / shares[0], 0.6 * shares[k - 1] / shares[0]))
        parent = f"seg{k}"
    for k in range(2, n + 1):
        b.add_constraint(CoordinateCouplerConstraint(f"coupler{k}", dependent=f"flex{k}", independent="flex1",
                                                     ratio=float(shares[k - 1] / shares[0])))
    top = f"seg{n}"
    ext = [("ground", (-0.045, -0.04, 0.0))] + [(f"seg{k}", (-0.045, 0.05, 0.0)) for k in range(1, n + 1)]
    b.add_muscle(_muscle("extensor", 2000.0, 0.10, 0.05 + 0.08 * n), ext)
    b.add_muscle(_muscle("flexor", 1000.0, 0.10, 0.05 + 0.08 * n),
                 [("ground", (0.06, -0.02, 0.0)), (top, (0.06, 0.06, 0.0))])
    b.add_muscle(_muscle("short_extensor", 500.0, 0.08, 0.08),
                 [("ground", (-0.03, -0.03, 0.0)), ("seg2", (-0.03, 0.04, 0.0))])
    b.spec = {"factory": "composite_joint", "kwargs": {"shares": [float(s) for s in shares], "segment": segment,
                                                        "name": name}}
    return b.build()
