"""Moco's ``testMocoTrack`` "MocoTrack gait10dof18musc": track a measured walking trial with a torque-driven model.

The first problem lesson 07b solves on a model read from a file, posed as OpenSim Moco 4.6's test poses it
(``OpenSim/Moco/Test/testMocoTrack.cpp``)::

    ModelProcessor("walk_gait1018_subject01.osim") | ModOpRemoveMuscles() | ModOpAddReserves(100)
        | ModOpAddExternalLoads("walk_gait1018_subject01_grf.xml")
    TableProcessor("walk_gait1018_state_reference.mot") | TabOpLowPassFilter(6)
    states_global_tracking_weight 10, track_reference_position_derivatives, t in [0.5, 1.0],
    MocoTrack's defaults otherwise (mesh interval 0.02 s: 25 Hermite-Simpson intervals, explicit dynamics,
    control effort weight 0.001), constraint and convergence tolerances 1e-4.

The model is OpenSim's 3.x gait10dof18musc file (planar pelvis, hips, knees with spline-driven translations,
ankles, lumbar) with its 18 muscles removed, a reserve actuator of optimal force 100 on every coordinate, and the
subject's measured ground reaction forces applied to the calcanei: the motion is driven by joint torques that
must reproduce the recorded kinematics under the recorded ground forces.
"""
from __future__ import annotations

from typing import Any

from ..modeling.model import Model
from ..modeling.operators import add_external_loads, remove_muscles
from ..modeling.osim import read_osim
from ..tools.inverse import add_reserves
from ..tools.track import Track
from ..util.data import opensim_file
from ._reference import rounded_times_resampled

__all__ = ["gait10dof_torque_model", "gait10dof_track", "GAIT10DOF_TRACK_SETTINGS"]

#: The settings of Moco's test (see the module docstring), by the names :class:`~moco_lab.tools.track.Track` takes.
GAIT10DOF_TRACK_SETTINGS = {"states_global_tracking_weight": 10.0, "track_reference_position_derivatives": True,
                            "lowpass_cutoff_frequency": 6.0, "initial_time": 0.5, "final_time": 1.0,
                            "mesh_interval": 0.02, "control_effort_weight": 0.001, "optim_tolerance": 1e-4}


def gait10dof_torque_model(reserve_optimal_force: float = 100.0, external_loads: bool = True) -> Model:
    """``walk_gait1018_subject01.osim`` without muscles, with reserves on every coordinate and the trial's ground
    reaction forces (Moco's ``ModOpRemoveMuscles() | ModOpAddReserves(100) | ModOpAddExternalLoads(...)``).

    Parameters
    ----------
    reserve_optimal_force : float, N·m or N
        Optimal force of each reserve :class:`~moco_lab.modeling.forces.CoordinateActuator` (controls unbounded).
    external_loads : bool
        Apply ``walk_gait1018_subject01_grf.xml`` (two ``ExternalForce`` s at
        ``/componentset/externalloads/right`` and ``left``). Without them the reserves must hold the body up.
    """
    model = remove_muscles(read_osim(opensim_file("walk_gait1018_subject01.osim"), replace_millard=True))
    model = add_reserves(model, reserve_optimal_force)
    if external_loads:
        add_external_loads(model, opensim_file("walk_gait1018_subject01_grf.xml"))
    return model


def gait10dof_track(model: Model | None = None, **settings: Any) -> Track:
    """Moco's ``testMocoTrack`` "MocoTrack gait10dof18musc" as a :class:`~moco_lab.tools.track.Track`.

    Parameters
    ----------
    model : Model, optional
        Default :func:`gait10dof_torque_model`.
    **settings
        Override any of :data:`GAIT10DOF_TRACK_SETTINGS` (e.g. ``optim_tolerance=1e-6``), or pass any other
        :class:`~moco_lab.tools.track.Track` argument.

    Returns
    -------
    Track
        ``.solve()`` solves it; ``.initialize()`` gives the study to edit first.

    Notes
    -----
    The reference file's times are written with 8 decimals (steps of 1/60 s), so they are not uniform to
    OpenSim's tolerance and the low-pass filter resamples them first, as OpenSim does; the warning
    :func:`~moco_lab.results.tables.filter_lowpass` gives about it is silenced here.
    """
    options = {**GAIT10DOF_TRACK_SETTINGS, **settings}
    with rounded_times_resampled():
        return Track(gait10dof_torque_model() if model is None else model,
                     opensim_file("walk_gait1018_state_reference.mot"), **options)
