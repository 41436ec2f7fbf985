"""Inverse kinematics from marker trajectories, frame by frame, with Drake's ``InverseKinematics``.

A gait lab records markers, points stuck on the skin over bony landmarks (anatomical markers) or on segments
(tracking markers). Inverse kinematics finds, at each frame, the model's coordinates whose markers are closest to
the measured ones: ``min_q Σ_m w_m |p_m(q) − y_m|²``, with ``p_m(q)`` the model marker's world position. Here
each frame is one Drake ``InverseKinematics`` program (one ``AddPositionCost`` per marker, no joint limits),
solved by SNOPT (or IPOPT) from the previous frame's answer.

Markers are :class:`Marker` (a name, a body of the model, a location in that body's frame, in metres); data are
``{marker name: (T, 2) or (T, 3) array}`` of world positions (planar data: x forward, y up; z = 0). The model's
kinematics must be Drake's (no OpenSim ``CustomJoint`` carriers; gait2d qualifies).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..engine.multibody import SymbolicMultibody
from ..modeling.markers import Marker
from ..modeling.model import Model, require_model
from ..util.checks import finite_number
from ..util.names import did_you_mean

__all__ = ["Marker", "IKResult", "ik_result", "marker_list", "marker_frames", "marker_positions", "marker_trajectories",
           "inverse_kinematics"]


@dataclass
class IKResult:
    """Inverse kinematics over a trial.

    Attributes
    ----------
    q : (T, nq) array
        The model's coordinates at each frame, in ``model.coordinates`` order (rad, m).
    coordinates : dict of str -> (T,) array
        The same by coordinate name.
    errors : (T, M) array, m
        Distance between each model marker and its measurement, markers in ``names`` order.
    names : list of str
        The markers used.
    rmse, max_error : float, m
        Root mean square and largest of ``errors``.
    success : bool
        Every frame's optimization converged.
    """

    q: np.ndarray
    coordinates: dict
    errors: np.ndarray
    names: list
    rmse: float
    max_error: float
    success: bool


def ik_result(model: Model, Q: np.ndarray, errors: np.ndarray, names: Sequence[str], success: bool) -> IKResult:
    """An :class:`IKResult` from poses ``Q`` (T, nq) and marker distances ``errors`` (T, M; NaN where a marker is
    missing): the coordinates by name, the RMS and largest of the finite errors."""
    finite = errors[np.isfinite(errors)]
    return IKResult(Q, {c.name: Q[:, c.q_index] for c in model.coordinates}, errors, list(names),
                    float(np.sqrt(np.mean(finite ** 2))), float(finite.max()), bool(success))


def marker_list(markers: Sequence[Marker], who: str) -> list[Marker]:
    """``markers`` as a list of :class:`Marker`; a ``TypeError`` naming ``who`` for a string, a non-sequence or
    an item that is not a Marker, a ``ValueError`` for two markers of one name."""
    if isinstance(markers, (str, bytes, Mapping)) or not isinstance(markers, Iterable):
        raise TypeError(f"{who}: markers must be a list of Marker (name, body, location), got "
                        f"{type(markers).__name__}")
    markers = list(markers)
    wrong = [i for i, m in enumerate(markers) if not isinstance(m, Marker)]
    if wrong:
        raise TypeError(f"{who}: markers[{wrong[0]}] is a {type(markers[wrong[0]]).__name__}, not a Marker")
    names = [m.name for m in markers]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{who}: two markers are named {twice[0]!r}")
    return markers


def marker_frames(model: Model, markers: Sequence[Marker]) -> list:
    """The Drake body frame each marker is fixed to (``KeyError`` naming an unknown body)."""
    require_model(model, "marker_frames")
    return _frames(model, marker_list(markers, "marker_frames"))


def _frames(model: Model, markers: list[Marker]) -> list:
    """:func:`marker_frames` of markers already checked by :func:`marker_list`."""
    plant = model.plant
    bodies = {b: plant.GetBodyByName(b) for b in model.body_paths}
    out = []
    for m in markers:
        if m.body not in bodies:
            raise KeyError(f"marker {m.name!r}: " + did_you_mean(m.body, list(bodies), "body"))
        out.append(bodies[m.body].body_frame())
    return out


def marker_trajectories(model: Model, markers: Sequence[Marker], Q: ArrayLike) -> np.ndarray:
    """World positions (T, M, 3) of ``markers`` with the model at each row of ``Q`` (T, nq), in
    ``model.coordinates`` order.

    Drake's kinematics of the plant place them; for a model with OpenSim ``CustomJoint``s whose transforms the
    plant does not hold (the 3-D model's walker knee), the engine's kinematic recursion evaluated on numbers.
    """
    require_model(model, "marker_trajectories")
    markers = marker_list(markers, "marker_trajectories")
    plant = model.plant
    frames = _frames(model, markers)
    Q = np.atleast_2d(np.asarray(Q, float))
    if Q.ndim != 2 or Q.shape[1] != plant.num_positions() or not np.all(np.isfinite(Q)):
        raise ValueError(f"marker_trajectories: Q must be (T, {plant.num_positions()}) finite coordinates (one "
                         f"column per coordinate of the model), got shape {Q.shape}"
                         + ("" if Q.size == 0 or np.all(np.isfinite(Q)) else " with NaN or infinite values"))
    P = np.empty((Q.shape[0], len(frames), 3))
    if model.custom_joints:
        tree = model.tree()
        bodies = [tree.body_index(m.body) for m in markers]
        for t, q in enumerate(Q):  # model.coordinates are in the plant's order
            mb = SymbolicMultibody(tree, [float(v) for v in q], [0.0] * len(q))
            for k, (m, b) in enumerate(zip(markers, bodies)):
                P[t, k] = np.asarray(mb.point_position(b, list(m.location)), float)
        return P
    context = plant.CreateDefaultContext()
    world = plant.world_frame()
    for t, q in enumerate(Q):
        plant.SetPositions(context, q)
        for k, (m, f) in enumerate(zip(markers, frames)):
            P[t, k] = plant.CalcPointsPositions(context, f, np.reshape(m.location, (3, 1)), world)[:, 0]
    return P


def marker_positions(model: Model, markers: Sequence[Marker], q: ArrayLike) -> np.ndarray:
    """World positions (M, 3) of ``markers`` with the model at coordinates ``q`` (``model.coordinates`` order)."""
    q = np.asarray(q, float)
    nq = require_model(model, "marker_positions").plant.num_positions()
    if q.shape != (nq,):
        raise ValueError(f"marker_positions: q must be ({nq},) (one value per coordinate), got shape {q.shape}")
    return marker_trajectories(model, markers, q[None])[0]


def inverse_kinematics(model: Model, markers: Sequence[Marker], data: Mapping[str, ArrayLike], *,
                       weights: Mapping[str, float] | None = None, initial_guess: ArrayLike | None = None,
                       tolerance: float = 1e-10, solver: str | None = None) -> IKResult:
    """Frame-by-frame inverse kinematics (module docstring).

    Parameters
    ----------
    model : Model
    markers : sequence of Marker
        The model's markers; each must have data.
    data : dict of str -> (T, 2) or (T, 3) array, m
        Measured world positions by marker name (NaN: the marker is missing in that frame and is left out).
    weights : dict of str -> float, optional
        Per-marker weights (default 1).
    initial_guess : (nq,) array, optional
        Coordinates to start the first frame from (default: the model's default positions); each later frame
        starts from the one before.
    tolerance : float
        The optimizer's optimality tolerance (IPOPT's ``tol``, SNOPT's major optimality tolerance).
    solver : {"snopt", "ipopt"}, optional
        Default SNOPT where Drake has it (about 2 ms per frame here against IPOPT's 45 ms), else IPOPT.

    Raises
    ------
    KeyError
        A marker without data, or data for an unknown marker.
    ValueError
        Data of different lengths or shapes.
    """
    from pydrake.multibody.inverse_kinematics import InverseKinematics
    from pydrake.solvers import IpoptSolver, SnoptSolver, SolverOptions

    require_model(model, "inverse_kinematics").require_drake_kinematics("inverse_kinematics")
    markers = marker_list(markers, "inverse_kinematics")
    if not isinstance(data, Mapping):
        raise TypeError(f"inverse_kinematics: data must be a dict of marker name -> (T, 2) or (T, 3) array, got "
                        f"{type(data).__name__}")
    names = [m.name for m in markers]
    missing = [n for n in names if n not in data]
    if missing:
        raise KeyError(f"inverse_kinematics: no data for marker {missing[0]!r}; data has {sorted(data)}")
    extra = sorted(set(data) - set(names))
    if extra:
        raise KeyError("inverse_kinematics: data for an unknown marker: " + did_you_mean(extra[0], names, "marker"))
    Y = []
    for n in names:
        y = np.asarray(data[n], float)
        if y.ndim != 2 or y.shape[1] not in (2, 3):
            raise ValueError(f"inverse_kinematics: data of {n!r} must be (T, 2) or (T, 3), got {y.shape}")
        Y.append(np.c_[y, np.zeros(len(y))] if y.shape[1] == 2 else y)
    T = Y[0].shape[0]
    if any(y.shape[0] != T for y in Y):
        raise ValueError(f"inverse_kinematics: every marker needs the same number of frames; got "
                         f"{ {n: y.shape[0] for n, y in zip(names, Y)} }")
    Y = np.stack(Y, axis=1)  # (T, M, 3)
    unknown = sorted(set(weights or {}) - set(names))
    if unknown:
        raise KeyError("inverse_kinematics: a weight for an unknown marker: " + did_you_mean(unknown[0], names,
                                                                                              "marker"))
    w = np.array([float((weights or {}).get(n, 1.0)) for n in names])
    if not np.all(np.isfinite(w) & (w >= 0)):
        bad = names[int(np.flatnonzero(~(np.isfinite(w) & (w >= 0)))[0])]
        raise ValueError(f"inverse_kinematics: the weight of marker {bad!r} must be a finite number >= 0, got "
                         f"{weights[bad]!r}")
    blind = np.flatnonzero(~(np.isfinite(Y).all(axis=2) & (w > 0)).any(axis=1))
    if blind.size:
        raise ValueError(f"inverse_kinematics: no marker (with a weight > 0) is seen in {blind.size} frame(s), the "
                         f"first {blind[:5].tolist()} (all NaN): cut those frames, or fill the gaps first")
    tolerance = finite_number(tolerance, "inverse_kinematics: tolerance", 0, False)
    plant = model.plant
    frames = _frames(model, markers)
    world = plant.world_frame()
    if solver is None:
        solver = "snopt" if SnoptSolver().available() and SnoptSolver().enabled() else "ipopt"
    if solver not in ("snopt", "ipopt"):
        raise ValueError(f"inverse_kinematics: solver must be 'snopt' or 'ipopt', got {solver!r}")
    options = SolverOptions()
    if solver == "snopt":
        optimizer = SnoptSolver()
        options.SetOption(SnoptSolver.id(), "Major optimality tolerance", tolerance)
    else:
        optimizer = IpoptSolver()
        options.SetOption(IpoptSolver.id(), "tol", tolerance)
        options.SetOption(IpoptSolver.id(), "print_level", 0)
    q = np.asarray(initial_guess, float) if initial_guess is not None else plant.GetPositions(
        plant.CreateDefaultContext())
    if q.shape != (plant.num_positions(),) or not np.all(np.isfinite(q)):
        raise ValueError(f"inverse_kinematics: initial_guess must be {plant.num_positions()} finite coordinates (the "
                         f"model's order, model.coordinates), got shape {q.shape}")
    Q = np.zeros((T, plant.num_positions()))
    success = True
    for t in range(T):
        ik = InverseKinematics(plant, with_joint_limits=False)
        for k, (m, f) in enumerate(zip(markers, frames)):
            if np.all(np.isfinite(Y[t, k])) and w[k] > 0:
                ik.AddPositionCost(world, Y[t, k], f, np.asarray(m.location), w[k] * np.eye(3))
        prog = ik.get_mutable_prog()
        prog.SetInitialGuess(ik.q(), q)
        result = optimizer.Solve(prog, q, options)
        success &= result.is_success()
        q = result.GetSolution(ik.q())
        Q[t] = q
    return ik_result(model, Q, np.linalg.norm(marker_trajectories(model, markers, Q) - Y, axis=2), names, success)
