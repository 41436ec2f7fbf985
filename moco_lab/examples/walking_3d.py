"""Moco's ``exampleMocoInverse``: the muscle activity of 3-D walking, estimated from motion capture (the Moco paper's
first result), on the full-body model ``subject_walk_scaled.osim``.

Posed as OpenSim Moco 4.6's example poses it
(``Bindings/Python/examples/Moco/example3DWalking/exampleMocoInverse.py``)::

    ModelProcessor("subject_walk_scaled.osim")
        | ModOpAddExternalLoads("grf_walk.xml") | ModOpReplaceJointsWithWelds(["mtp_r", "mtp_l"])
        | ModOpAddResiduals(250, 50, 1) | ModOpIgnoreTendonCompliance()
        | ModOpReplaceMusclesWithDeGrooteFregly2016() | ModOpIgnorePassiveFiberForcesDGF()
        | ModOpScaleActiveFiberForceCurveWidthDGF(1.5)
        | ModOpReplacePathsWithFunctionBasedPaths("subject_walk_scaled_FunctionBasedPathSet.xml")
        | ModOpAddReserves(1.0)
    MocoInverse: kinematics "coordinates.sto" (extra columns allowed), t in [0.48, 1.61], mesh interval 0.02 s
    (57 Hermite-Simpson intervals), MocoInverse's defaults otherwise (excitation effort with reserves weight 1,
    initial activation equal to initial excitation, tolerances 1e-3, limited-memory Hessian). moco_lab solves it with
    IPOPT + MUMPS (Moco's linear solver too).

The model: Rajagopal et al. (2016)'s full-body model as modified by Uhlrich et al. (2022) and Lai et al. (2017) and
fitted to the subject with AddBiomechanics (Werling et al. 2023): 31 coordinates once the toes are welded, 80 muscles
whose lengths are polynomials of the coordinates they cross, 13 torque actuators on the back and arms, 6 residual
actuators on the pelvis (bounded: the pelvis is not free to be pushed around) and 10 reserves (hips, knees, ankles;
optimal force 1 N·m, so that using them is expensive). The kinematics prescribe every coordinate; the optimizer
chooses the 80 muscle excitations (and activations), the reserves and residuals that reproduce the motion under the
measured ground forces with the least summed squared excitation.

Two things about the data, handled as Moco handles them: the file's header says ``nColumns=40`` where rows have 32
values (read by label), and its ``knee_angle_*_beta`` columns are in degrees although the header says radians — Moco
assembles the kinematics, so a coordinate a coupler constraint makes dependent follows the constraint (here
``knee_angle_*_beta = knee_angle_*``) and those columns are not used.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..modeling.model import Model
from ..modeling.operators import (
    add_external_loads,
    ignore_passive_fiber_forces,
    replace_paths_with_function_based_paths,
    scale_active_fiber_force_curve_width,
    set_tendon_compliance,
)
from ..modeling.osim import read_osim
from ..ocp.goals import ControlTrackingGoal, JointReactionGoal
from ..results.ik_tasks import read_ik_tasks
from ..results.trc import read_trc
from ..tools.inverse import Inverse, add_reserves, add_residuals
from ..tools.marker_ik import IKResult, ik_inputs, inverse_kinematics
from ..util.data import opensim_file

__all__ = ["walking_3d_model", "walking_3d_inverse", "walking_3d_emg", "walking_3d_ik", "walking_3d_markers",
           "walking_3d_knee_load_results", "KneeLoadResult", "WALKING_3D_INVERSE_SETTINGS", "WALKING_3D_EMG",
           "WALKING_3D_KNEE_LOAD"]

#: exampleMocoInverse's settings, by the names :class:`~moco_lab.tools.inverse.Inverse` takes.
WALKING_3D_INVERSE_SETTINGS = {"initial_time": 0.48, "final_time": 1.61, "mesh_interval": 0.02,
                               "kinematics_allow_extra_columns": True, "convergence_tolerance": 1e-3,
                               "constraint_tolerance": 1e-3}


def walking_3d_model(function_based_paths: bool = True, osim: str | Path | None = None) -> Model:
    """``subject_walk_scaled.osim`` processed by exampleMocoInverse's model operators, in Moco's order (see the
    module docstring). ``function_based_paths=False`` keeps the muscles' geometry paths, wrapping over their 44
    cylinders by OpenSim's own construction (``read_osim(..., wrap_method="opensim")``: lengths, moment arms and
    the forces on the bones as OpenSim computes them); compiling the equations then takes minutes. ``osim``:
    another model file (an edited copy of the subject's, say) processed the same way."""
    model = read_osim(opensim_file("subject_walk_scaled.osim") if osim is None else osim, replace_millard=True,
                      weld=["mtp_r", "mtp_l"],
                      wrap_method="shortest" if function_based_paths else "opensim")
    add_external_loads(model, opensim_file("grf_walk.xml"))
    model = add_residuals(model, 250.0, 50.0, 1.0)
    set_tendon_compliance(model, "rigid")
    ignore_passive_fiber_forces(model)
    scale_active_fiber_force_curve_width(model, 1.5)
    if function_based_paths:
        replace_paths_with_function_based_paths(model, opensim_file("subject_walk_scaled_FunctionBasedPathSet.xml"))
    return add_reserves(model, 1.0, skip_coordinates_with_actuators=True)


#: exampleMocoInverse's EMG scaling (peak levels from Perry and Burnfield 2010) and the controls each envelope guides.
WALKING_3D_EMG = {"weight": 50.0, "scale": {"soleus": 0.77, "gastrocnemius": 0.87, "tibialis_anterior": 0.37},
                  "labels": {"/forceset/soleus_r": "soleus", "/forceset/gasmed_r": "gastrocnemius",
                             "/forceset/gaslat_r": "gastrocnemius", "/forceset/tibant_r": "tibialis_anterior"}}


def walking_3d_emg() -> tuple:
    """The trial's electromyography (``electromyography.sto``: 10 envelopes, each normalized to a peak of 1) with
    exampleMocoInverse's scaling applied: ``(time (n,), {muscle group: envelope (n,)})``."""
    from ..results.sto import read_table

    time, columns, _ = read_table(opensim_file("electromyography.sto"))
    scale = WALKING_3D_EMG["scale"]
    return time, {name: values * scale.get(name, 1.0) for name, values in columns.items()}


#: The Moco paper's knee-load goals (MODELS3D): a JointReactionGoal on each walker knee, weight 0.005, the forces
#: along x and y of the load on the parent (the femur's joint frame), expressed in that frame.
WALKING_3D_KNEE_LOAD = {"weight": 0.005, "joints": ("/jointset/walker_knee_r", "/jointset/walker_knee_l"),
                        "reaction_measures": ("force-x", "force-y"), "loads_frame": "parent"}


def walking_3d_inverse(model: Model | None = None, *, emg: bool = False, knee_load: bool = False,
                       **settings: Any) -> Inverse:
    """Moco's exampleMocoInverse as an :class:`~moco_lab.tools.inverse.Inverse` (solve it with ``.solve()``).

    Parameters
    ----------
    model : Model, optional
        Default :func:`walking_3d_model`.
    emg : bool
        Add the example's ``solveMocoInverseWithEMG`` goal: a :class:`~moco_lab.ocp.goals.ControlTrackingGoal`
        ``"emg_tracking"`` of weight 50 that makes the right soleus, both gastrocnemius heads and tibialis anterior
        follow the scaled envelopes of :func:`walking_3d_emg`.
    knee_load : bool
        Add the Moco paper's knee-load goals (:data:`WALKING_3D_KNEE_LOAD`): a
        :class:`~moco_lab.ocp.goals.JointReactionGoal` ``"knee_load_r"`` / ``"knee_load_l"`` on each walker knee.
        On function-based paths (the default model) the muscles do not load the knee and the goals cannot change
        the solution (Moco 4.6 measures the same; a warning says so): use ``walking_3d_model(function_based_paths=
        False)``, the geometry paths the paper's model used.
    **settings
        Override :data:`WALKING_3D_INVERSE_SETTINGS` or pass any other ``Inverse`` option (e.g.
        ``convergence_tolerance=1e-6``).
    """
    options = {**WALKING_3D_INVERSE_SETTINGS, **settings}
    with warnings.catch_warnings():  # the two data quirks the module docstring explains
        warnings.filterwarnings("ignore", message=r".*coordinates\.sto: the header says nColumns=40")
        warnings.filterwarnings("ignore", message=r"Kinematics: the column /jointset/patellofemoral_[rl]/knee_angle_"
                                r"[rl]_beta/value differs from what the coupler constraint")
        inverse = Inverse(model if model is not None else walking_3d_model(), str(opensim_file("coordinates.sto")),
                          **options)
    # IPOPT + MUMPS, the limited-memory Hessian's factors inside the factorized system ("extended"): measured on
    # this problem, 22 iterations in 4.0 s, against 4.9 s with IPOPT's default Sherman-Morrison solves and 9.9 s
    # with Drake's IPOPT (SPRAL); the same iterates and objective (benchmarks/walking_3d_inverse.md)
    inverse.settings.optim_linear_solver = "mumps"
    inverse.settings.optim_solver_options["limited_memory_aug_solver"] = "extended"
    if emg:
        inverse.add_goal(ControlTrackingGoal("emg_tracking", WALKING_3D_EMG["weight"], reference=walking_3d_emg(),
                                             reference_labels=WALKING_3D_EMG["labels"]))
    if knee_load:
        if not any(m.geometry.points for m in inverse.model.muscles):
            warnings.warn("walking_3d_inverse(knee_load=True) on function-based paths: their muscles act through "
                          "generalized forces only and do not load the knee, so the knee-load goals add a constant "
                          "and change nothing (as in Moco 4.6); pass walking_3d_model(function_based_paths=False)",
                          stacklevel=2)
        spec = WALKING_3D_KNEE_LOAD
        for joint in spec["joints"]:
            inverse.add_goal(JointReactionGoal(f"knee_load_{joint[-1]}", spec["weight"], joint_path=joint,
                                               loads_frame=spec["loads_frame"],
                                               reaction_measures=list(spec["reaction_measures"])))
    return inverse


@dataclass
class KneeLoadResult:
    """One stored solve of the knee-load study (:func:`walking_3d_knee_load_results`).

    Attributes
    ----------
    time : ndarray (n,)
        s.
    activations : dict of str -> ndarray (n,)
        By muscle path (``/forceset/soleus_r``).
    knee_force : dict of str -> ndarray (n, 3)
        By joint path (``/jointset/walker_knee_r``): the reaction of the knee on the femur, ground axes (N).
    body_weight : float
        N.
    provenance : dict
        The file's header: how and when it was made, IPOPT's status, iterations and objective.
    """

    time: np.ndarray
    activations: dict
    knee_force: dict
    body_weight: float
    provenance: dict

    def peak_knee_force(self, joint: str) -> float:
        """The largest magnitude of the knee's reaction over the trial, in body weights."""
        return float(np.linalg.norm(self.knee_force[joint], axis=1).max() / self.body_weight)


def walking_3d_knee_load_results() -> dict[str, KneeLoadResult]:
    """The Moco paper's knee-load study on exampleMocoInverse, as solved by moco_lab and shipped with it:
    ``{"basic": ..., "knee": ...}`` — the inverse on the model's geometry paths
    (``walking_3d_inverse(walking_3d_model(function_based_paths=False))``) without and with the knee-load goals
    (``knee_load=True``), each solution's activations and knee reactions. Solving them takes minutes (the wrapped
    paths' equations are large); ``benchmarks/walking_3d_knee_load.py`` made these (provenance in each
    :attr:`KneeLoadResult.provenance` and in ``moco_lab/data/walking_3d/knee_load.md``)."""
    from ..results.sto import read_table
    from ..util.data import WALKING_3D_KNEE_LOAD as files

    out = {}
    for key, path in files.items():
        time, columns, meta = read_table(path)
        activations = {name[:-len("/activation")]: v for name, v in columns.items() if name.endswith("/activation")}
        force = {j: np.column_stack([columns[f"{j}/reaction_on_parent_in_ground_force_{a}"] for a in "xyz"])
                 for j in WALKING_3D_KNEE_LOAD["joints"]}
        out[key] = KneeLoadResult(time, activations, force, float(meta["body_weight"]), dict(meta))
    return out


def walking_3d_markers(model: Model, *, start: float = 0.0, end: float | None = None,
                       task_weights: bool = True) -> tuple[list, dict, dict, np.ndarray]:
    """The trial's markers (``markers_walk.trc``) paired with ``model`` and the trial's task file
    (``ik_tasks_walk.xml``) as OpenSim's ``InverseKinematicsTool`` pairs them (the 24 markers the file weights and
    the trial holds): ``(markers, {name: (T, 3) m}, {name: weight}, time (T,) s)``, the frames in ``[start, end]``
    s; ``task_weights=False`` gives each of the same markers weight 1."""
    table = read_trc(opensim_file("markers_walk.trc"))
    with warnings.catch_warnings():  # six weighted tasks name the trial's absent *Ground markers, as OpenSim warns
        warnings.filterwarnings("ignore", message="ik_inputs: the trial has no data")
        markers, data, weights, time = ik_inputs(model, table, read_ik_tasks(opensim_file("ik_tasks_walk.xml")),
                                                 start=start, end=end)
    if not task_weights:
        weights = {n: 1.0 for n in weights}
    return markers, data, weights, time


def walking_3d_ik(model: Model | None = None, *, start: float = 0.0, end: float | None = None,
                  task_weights: bool = True, **options: Any) -> tuple[IKResult, np.ndarray]:
    """Inverse kinematics of the trial's markers (``markers_walk.trc``, 100 Hz) on ``subject_walk_scaled.osim`` with
    the trial's task file (``ik_tasks_walk.xml``), as OpenSim's ``InverseKinematicsTool`` runs it: the markers
    both the file weights and the trial holds (24, :func:`walking_3d_markers`), their weights, couplers held,
    clamped coordinates in range.

    Parameters
    ----------
    model : Model, optional
        Default: the file read as is (33 coordinates: the toes free; muscles as DeGrooteFregly2016, unused here).
    start, end : float, s
        The frames to solve (default: the whole trial, 0–2.37 s).
    task_weights : bool
        The task file's marker weights (default), or weight 1 for each of the same markers.
    **options
        Passed to :func:`~moco_lab.tools.marker_ik.inverse_kinematics` (``tolerance``, ``solver``, ...).

    Returns
    -------
    (IKResult, time (T,) array)
    """
    if model is None:
        model = read_osim(opensim_file("subject_walk_scaled.osim"), replace_millard=True)
    markers, data, weights, time = walking_3d_markers(model, start=start, end=end, task_weights=task_weights)
    return inverse_kinematics(model, markers, data, weights=weights, **options), time
