"""The motion-capture pipeline of lessons 12–14 in one call, on the synthetic subject: markers → scaled model and
poses → residuals of four reconstructions (raw inverse kinematics, smoothing alone, masses alone, masses +
kinematics together). The motion-capture dashboard runs it with the settings of its sliders."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..examples.synthetic import (
    GAIT2D_MARKER_SET,
    MarkerTrial,
    SyntheticWalk,
    gait2d_markers,
    synthetic_markers,
    synthetic_walk,
)
from ..modeling.gait2d import gait2d
from ..solve.optimizer import Progress
from ..tools import residual_reduction as rr
from ..tools.scaling import ScaleResult, scale_and_track

__all__ = ["MotionCaptureSettings", "MotionCaptureRun", "SUBJECT_SCALES", "SUBJECT_MASS_SCALES",
           "run_motion_capture"]

#: The subject of lessons 12–14: proportions and mass distribution unlike the generic model's.
SUBJECT_SCALES = {"trunk": 0.97, "thigh": 0.95, "shank": 1.03, "foot": 0.98}
SUBJECT_MASS_SCALES = {"trunk": 1.1, "thigh": 0.85, "shank": 1.1, "foot": 1.2}


@dataclass
class MotionCaptureSettings:
    """The knobs of :func:`run_motion_capture` (lesson 14's values by default).

    Attributes
    ----------
    marker_noise : float, m
        Measurement noise of each marker coordinate at each frame (the fits weigh markers by at least 1 mm: with
        exact data a smaller weight only slows them down).
    placement_error : float, m
        Standard deviation of where anatomical markers really sit; tracking markers 3× as much.
    offset_prior : float, m
        Prior width of the anatomical markers' offsets in the scaling fit; tracking markers 3× as much.
    mass_prior : float
        Prior width of each segment's mass factor in the joint fit (0.2 = 20 %).
    acceleration_sd : float or None, rad/s²
        The joint fit's smoothing prior (smaller = smoother; None = none).
    cutoff : float, Hz
        The low-pass filter of "smoothing alone" (and the joint fit's starting point).
    force_noise : float, N
    cop_noise : float, m
        Force-plate noise.
    strides : int
    seed : int
    """

    marker_noise: float = 0.005
    placement_error: float = 0.005
    offset_prior: float = 0.005
    mass_prior: float = 0.2
    acceleration_sd: float | None = 100.0
    cutoff: float = 6.0
    force_noise: float = 2.0
    cop_noise: float = 0.002
    strides: int = 1
    seed: int = 3


@dataclass
class MotionCaptureRun:
    """What :func:`run_motion_capture` computed.

    Attributes
    ----------
    settings : MotionCaptureSettings
    walk : SyntheticWalk
    trial : MarkerTrial
    scaling : ScaleResult
        The scaling / registration / IK fit (lesson 12).
    smoothed : (T, nq) array
        Its poses low-pass filtered.
    masses_alone : MassFitResult or None
        None if the linear fit gave a segment a non-positive mass (see ``notes``).
    joint : ResidualReduction
    residuals : dict of str -> (T, 3) array
        Residual wrenches of each reconstruction (``"raw IK"``, ``"smoothed"``, ``"masses alone"``,
        ``"masses + kinematics"``).
    percents : dict of str -> (force %, moment %)
    true_q : (T, nq) array
        The subject's true coordinates.
    true_masses, model_masses : dict of str -> float, kg
        Segment-group masses of the subject and of the scaled model before the fit.
    angle_rms : dict of str -> float, degrees
        RMS difference of each reconstruction's trunk and joint angles from the truth.
    seconds : dict of str -> float
        Wall time of each step.
    notes : list of str
        What went wrong on the way without stopping the comparison.
    """

    settings: MotionCaptureSettings
    walk: SyntheticWalk
    trial: MarkerTrial
    scaling: ScaleResult
    smoothed: np.ndarray
    masses_alone: rr.MassFitResult | None
    joint: rr.ResidualReduction
    residuals: dict
    percents: dict
    true_q: np.ndarray
    true_masses: dict
    model_masses: dict
    angle_rms: dict
    seconds: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def run_motion_capture(settings: MotionCaptureSettings | None = None,
                       progress: Callable[[Progress], None] | None = None) -> MotionCaptureRun:
    """Lessons 12–14 on the synthetic subject with ``settings``: synthetic data, :func:`scale_and_track`, the four
    reconstructions and their residuals. ``progress`` gets the joint fit's iterations (by default Gauss–Newton's,
    from its start, iteration 0)."""
    s = settings or MotionCaptureSettings()
    if s.placement_error < 0 or s.marker_noise < 0:
        raise ValueError("placement error and marker noise must be >= 0")
    if s.offset_prior <= 0 or s.mass_prior <= 0:
        raise ValueError("prior widths must be positive")
    seconds = {}
    t0 = time.perf_counter()
    walk = synthetic_walk(68.0, 1.75, segment_scales=SUBJECT_SCALES, segment_mass_scales=SUBJECT_MASS_SCALES,
                          strides=s.strides, force_noise=s.force_noise, cop_noise=s.cop_noise, seed=s.seed)
    trial = synthetic_markers(walk, anatomical_error=s.placement_error, tracking_error=3 * s.placement_error,
                              noise=s.marker_noise, seed=s.seed)
    offset_sd = {n: s.offset_prior * (1 if GAIT2D_MARKER_SET[n][2] == "anatomical" else 3) for n in trial.data}
    t1 = time.perf_counter()
    scaling = scale_and_track(lambda sc: gait2d(68.0, 1.75, muscles=False, segment_scales=sc), gait2d_markers,
                              trial.data, list(SUBJECT_SCALES), noise=max(s.marker_noise, 1e-3), offset_sd=offset_sd)
    seconds["scaling"] = time.perf_counter() - t1
    model = scaling.model
    groups = rr.segment_groups(model)
    h = float(walk.com[:, 1].mean())
    smoothed = rr.lowpass(scaling.ik.q, walk.dt, s.cutoff)
    t1 = time.perf_counter()
    notes = []
    try:
        alone = rr.fit_segment_masses(model, smoothed, walk.dt, walk.forces, walk.cop, groups=groups, moment_arm=h)
    except ValueError as err:  # a non-positive mass: the comparison goes on without that reconstruction
        alone = None
        notes.append(f"masses alone: {err}")
    t2 = time.perf_counter()
    joint = rr.reduce_residuals(model, scaling.markers, trial.data, smoothed, walk.dt, walk.forces, walk.cop,
                                groups=groups, noise=max(s.marker_noise, 1e-3), mass_sd=s.mass_prior,
                                acceleration_sd=s.acceleration_sd, progress=progress)
    seconds["masses alone"], seconds["joint fit"] = t2 - t1, time.perf_counter() - t2
    residuals = {
        "raw IK": rr.residual_wrenches(model, scaling.ik.q, walk.dt, walk.forces, walk.cop),
        "smoothed": rr.residual_wrenches(model, smoothed, walk.dt, walk.forces, walk.cop),
        **({"masses alone": alone.residuals} if alone is not None else {}),
        "masses + kinematics": joint.residuals,
    }
    percents = {k: rr.residual_percent(v, walk.forces, h) for k, v in residuals.items()}
    true_q = walk.q
    poses = {"raw IK": scaling.ik.q, "smoothed": smoothed, "masses alone": smoothed, "masses + kinematics": joint.q}
    angle_rms = {k: float(np.degrees(np.sqrt(np.mean((q[:, 2:] - true_q[:, 2:]) ** 2)))) for k, q in poses.items()}

    seconds["total"] = time.perf_counter() - t0
    return MotionCaptureRun(s, walk, trial, scaling, smoothed, alone, joint, residuals, percents, true_q,
                            rr.group_masses(walk.model, groups), rr.group_masses(model, groups), angle_rms, seconds,
                            notes)
