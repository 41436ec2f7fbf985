"""The real walking trial of Moco's 3-D example in one call (lesson 17 and the motion-capture dashboard's second tab):
inverse kinematics with the trial's task file, inverse dynamics with its ground reaction forces, the pelvis residual
on the force plates, the total mass the plates weigh, the segment masses that reduce the residual, and the masses and
kinematics adjusted together."""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..examples.walking_3d import walking_3d_markers
from ..modeling.model import Model
from ..modeling.operators import add_external_loads
from ..modeling.osim import read_osim
from ..results.external_loads import net_ground_force
from ..tools.inverse_dynamics import IDResult, inverse_dynamics
from ..tools.marker_ik import IKResult, inverse_kinematics
from ..tools.mass_fit import MassFit, com_positions, fit_mass
from ..tools.root_residual import (
    KinematicsMassFit,
    SegmentMassFit,
    fit_segment_masses_to_residual,
    reduce_root_residual,
)
from ..util.checks import finite_number
from ..util.data import opensim_file

__all__ = ["RealTrialSettings", "RealTrialRun", "run_real_trial", "PLATES", "residual_percent_on_plates"]

#: s: the frames on which both feet's forces are measured (the span of the trial's own ``id_walk.sto``).
PLATES = (0.45, 1.8)
GRAVITY = (0.0, -9.80665, 0.0)


@dataclass
class RealTrialSettings:
    """What a learner can change.

    Attributes
    ----------
    lowpass_cutoff : float or None, Hz
        The coordinates' low-pass filter before inverse dynamics (None: none).
    equal_weights : bool
        Every marker weight 1 instead of the task file's.
    """

    lowpass_cutoff: float | None = 6.0
    equal_weights: bool = False


@dataclass
class RealTrialRun:
    """One run: the settings, the model, IK (with the frames' times and the measured markers), inverse dynamics,
    the pelvis residual on the plates (% of body weight: RMS, largest), the mass fit, the segment masses fitted to
    the residual on the plates (``segments``: its residual wrench before and after), the masses and every frame's
    coordinates adjusted together from the filtered motion (``together``) and wall times (s)."""

    settings: RealTrialSettings
    model: Model
    ik: IKResult
    time: np.ndarray
    measured: dict
    dynamics: IDResult
    residual_rms: float
    residual_max: float
    mass: MassFit
    segments: SegmentMassFit
    together: KinematicsMassFit
    seconds: dict


def residual_percent_on_plates(result: IDResult, body_weight: float, root: tuple = ("pelvis_tx", "pelvis_ty",
                                                                                    "pelvis_tz")) -> np.ndarray:
    """The root's residual force magnitude in % of ``body_weight`` at the frames within :data:`PLATES`."""
    inside = (result.time >= PLATES[0]) & (result.time <= PLATES[1])
    force = np.linalg.norm(np.column_stack([result.forces[n][inside] for n in root]), axis=1)
    return 100.0 * force / float(body_weight)


def run_real_trial(settings: RealTrialSettings | None = None) -> RealTrialRun:
    """IK, inverse dynamics, the mass fits and residual reduction of the trial with ``settings`` (module
    docstring)."""
    s = settings or RealTrialSettings()
    if s.lowpass_cutoff is not None:
        finite_number(s.lowpass_cutoff, "lowpass_cutoff", 0, False, "a positive frequency in Hz (or None)")
    seconds = {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file's Millard muscles read as DeGrooteFregly2016 (unused here)
        model = read_osim(opensim_file("subject_walk_scaled.osim"), replace_millard=True)
    markers, measured, weights, frames = walking_3d_markers(model, task_weights=not s.equal_weights)
    ik = inverse_kinematics(model, markers, measured, weights=weights)
    seconds["inverse kinematics"] = time.perf_counter() - start
    t0 = time.perf_counter()
    loaded = add_external_loads(model.skeleton(), opensim_file("grf_walk.xml"))  # markers and couplers kept
    dynamics = inverse_dynamics(loaded, frames, ik.q, lowpass_cutoff=s.lowpass_cutoff)
    seconds["inverse dynamics"] = time.perf_counter() - t0
    percent = residual_percent_on_plates(dynamics, model.body_weight())
    t_grf, grf = net_ground_force(opensim_file("grf_walk.xml"))
    plates = (frames >= PLATES[0]) & (frames <= PLATES[1])
    F = np.column_stack([np.interp(frames[plates], t_grf, grf[:, k]) for k in range(3)])
    mass = fit_mass(com_positions(model, ik.q[plates]), F, float(np.median(np.diff(frames))), GRAVITY)
    t0 = time.perf_counter()
    segments = fit_segment_masses_to_residual(loaded, dynamics, window=PLATES)
    seconds["segment masses"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    together = reduce_root_residual(loaded, markers, measured, frames, dynamics.q, weights=weights,
                                    window=PLATES)
    seconds["masses and kinematics"] = time.perf_counter() - t0
    seconds["total"] = time.perf_counter() - start
    return RealTrialRun(s, model, ik, frames, measured, dynamics, float(np.sqrt(np.mean(percent ** 2))),
                        float(percent.max()), mass, segments, together, seconds)
