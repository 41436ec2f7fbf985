"""A gait2d-shaped model for measuring the engine at musculoskeletal scale.

Seven segments with Winter's 75 kg / 1.80 m anthropometrics (as gait2d's
parameter sheet; the gait2d reference manual §2.1–2.3): a planar base on the
trunk (hip x, y and trunk angle), hips, knees and ankles — 9 coordinates,
chains 4 joints deep. Optionally 16 DeGrooteFregly2016 muscles on via-point
paths (8 per leg, crossing one or two joints like gait2d's) and 4 contact
spheres (heel and toe of each foot, ``SmoothSphereHalfSpaceForce`` with Moco's
2-D walking values). This is a benchmark model, not the gait2d model of the
course (that one is ``ml.models.gait2d``).
"""
from __future__ import annotations

import moco_lab as ml
from moco_lab.modeling.contact import SmoothSphereHalfSpaceForce
from moco_lab.modeling.muscle import DeGrooteFregly2016Muscle

#: (mass kg, inertia about CM kg m², CM x, CM y) of gait2d's segments (75 kg, 1.80 m).
SEGMENTS = {
    "trunk": (50.85, 3.177718213017602, 0.0, 0.315504),
    "thigh": (7.5, 0.1521750618675001, 0.0, -0.190953),
    "shank": (3.4875, 0.062365344632567994, 0.0, -0.1917324),
    "foot": (1.0875, 0.01836744174, 0.0768, -0.0351),
}
THIGH, SHANK = 0.441, 0.4428

#: (name, Fmax N, l_opt m, l_slack m, path points [(segment, x, y)]) per leg, roughly gait2d's muscles.
MUSCLES = [
    ("iliopsoas", 1500, 0.102, 0.142, [("trunk", 0.05, 0.10), ("trunk", 0.06, 0.0), ("thigh", 0.01, -0.10)]),
    ("glutei", 3000, 0.200, 0.157, [("trunk", -0.10, 0.05), ("thigh", -0.06, -0.08)]),
    ("hamstrings", 3000, 0.104, 0.334, [("trunk", -0.07, -0.05), ("shank", -0.03, -0.05)]),
    ("rectus", 1200, 0.081, 0.398, [("trunk", 0.03, -0.03), ("thigh", 0.05, -0.40), ("shank", 0.04, -0.07)]),
    ("vasti", 7000, 0.093, 0.223, [("thigh", 0.03, -0.20), ("thigh", 0.05, -0.40), ("shank", 0.04, -0.07)]),
    ("gastroc", 3000, 0.055, 0.420, [("thigh", -0.02, -0.40), ("shank", -0.03, -0.10), ("foot", -0.06, 0.0)]),
    ("soleus", 4000, 0.055, 0.245, [("shank", -0.02, -0.20), ("foot", -0.06, 0.0)]),
    ("tibant", 2500, 0.082, 0.317, [("shank", 0.02, -0.15), ("shank", 0.03, -0.40), ("foot", 0.10, -0.02)]),
]

SPHERE = dict(stiffness=3067776.0, dissipation=2.0, static_friction=0.8, dynamic_friction=0.8, viscous_friction=0.5,
              transition_velocity=0.2, constant_contact_force=1e-5, hertz_smoothing=300.0,
              hunt_crossley_smoothing=50.0)


def gait_model(muscles: bool = True, contact: bool = True, actuators: bool = True) -> ml.Model:
    """The benchmark model: 9 coordinates; optional 16 muscles, 4 contact spheres, 9 coordinate actuators."""
    b = ml.ModelBuilder("gait_scale", gravity=(0, -9.81, 0))

    def body(name, seg):
        m, inertia, cx, cy = SEGMENTS[seg]
        b.add_body(name, m, com=(cx, cy, 0), inertia=(inertia, inertia, inertia))

    body("trunk", "trunk")
    b.add_planar_joint("pelvis", "ground", "trunk", coordinates=("hip_x", "hip_y", "trunk_angle"),
                       ranges=[(-5, 5), (0.5, 1.5), (-1, 1)])
    for side in ("r", "l"):
        body(f"thigh_{side}", "thigh")
        body(f"shank_{side}", "shank")
        body(f"foot_{side}", "foot")
        b.add_pin_joint(f"hip_{side}", "trunk", f"thigh_{side}", coordinate=f"hip_flexion_{side}", range=(-1.0, 2.0))
        b.add_pin_joint(f"knee_{side}", f"thigh_{side}", f"shank_{side}", coordinate=f"knee_angle_{side}",
                        parent_offset=(0, -THIGH, 0), range=(-2.5, 0.1))
        b.add_pin_joint(f"ankle_{side}", f"shank_{side}", f"foot_{side}", coordinate=f"ankle_angle_{side}",
                        parent_offset=(0, -SHANK, 0), range=(-1.0, 1.0))
    if muscles:
        for side in ("r", "l"):
            for name, fmax, lopt, lslack, points in MUSCLES:
                mus = DeGrooteFregly2016Muscle(name=f"{name}_{side}", max_isometric_force=fmax,
                                               optimal_fiber_length=lopt, tendon_slack_length=lslack,
                                               ignore_tendon_compliance=True)
                b.add_muscle(mus, [(seg if seg == "trunk" else f"{seg}_{side}", (x, y, 0.0)) for seg, x, y in points])
    if contact:
        for side in ("r", "l"):
            b.add_force_element(SmoothSphereHalfSpaceForce(f"/forceset/heel_{side}", f"foot_{side}",
                                                           (-0.04, -0.035, 0.0), 0.035, **SPHERE))
            b.add_force_element(SmoothSphereHalfSpaceForce(f"/forceset/toe_{side}", f"foot_{side}",
                                                           (0.15, -0.055, 0.0), 0.015, **SPHERE))
    model = b.build()
    if actuators:
        for c in model.coordinates:
            force = 100.0 if c.name.startswith(("hip_x", "hip_y", "trunk")) else 50.0
            model.add_force_element(ml.CoordinateActuator(f"/forceset/tau_{c.name}", c.name, force, -20, 20))
    return model


def standing_pose(model: ml.Model) -> dict[str, float]:
    """A pose standing on the ground (values by coordinate name)."""
    return {"hip_y": 0.95, "hip_flexion_r": 0.0, "knee_angle_r": -0.05, "ankle_angle_r": 0.0,
            "hip_flexion_l": 0.0, "knee_angle_l": -0.05, "ankle_angle_l": 0.0}


def crouch_study(model: ml.Model, mode: str = "implicit", num_mesh_intervals: int = 50) -> ml.Study:
    """From standing to a crouch in 1 s with minimum effort (the benchmark problem)."""
    study = ml.Study("gait_scale_crouch")
    p = study.problem
    p.set_model(model)
    p.set_time_bounds(0, 1.0)
    start, end = standing_pose(model), dict(standing_pose(model))
    end.update({"hip_y": 0.85, "hip_flexion_r": 0.5, "knee_angle_r": -0.9, "ankle_angle_r": 0.4,
                "hip_flexion_l": 0.5, "knee_angle_l": -0.9, "ankle_angle_l": 0.4, "trunk_angle": 0.0})
    for c in model.coordinates:
        a, b = start.get(c.name, 0.0), end.get(c.name, 0.0)
        p.set_state_info(c.value_path, c.range, a, b)
        p.set_state_info(c.speed_path, (-10, 10), 0, 0)
    p.add_goal(ml.ControlGoal("effort", 1.0))
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = num_mesh_intervals
    return study
