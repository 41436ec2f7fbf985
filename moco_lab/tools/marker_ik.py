"""Inverse kinematics from marker trajectories, frame by frame.

A gait lab records markers, points stuck on the skin over bony landmarks (anatomical markers) or on segments
(tracking markers). Inverse kinematics finds, at each frame, the model's coordinates whose markers are closest to
the measured ones: ``min_q Σ_m w_m |p_m(q) − y_m|² (+ Σ_c w_c (q_c − v_c)²)``, with ``p_m(q)`` the model marker's
world position, the model's kinematic constraints held and clamped coordinates in range (OpenSim's
``InverseKinematicsTool``), each frame started from the previous frame's answer. Two solvers:

* Drake's ``InverseKinematics`` (one ``AddPositionCost`` per marker, SNOPT or IPOPT), for models whose kinematics
  Drake's plant holds (gait2d, the planar models);
* moco_lab's Gauss–Newton on the engine's compiled marker positions and their exact Jacobian, for any model —
  OpenSim ``CustomJoint``s such as the full-body model's walker knee, coupler constraints.

Markers are :class:`Marker` (a name, a body of the model, a location in that body's frame, in metres); data are
``{marker name: (T, 2) or (T, 3) array}`` of world positions (planar data: x forward, y up; z = 0).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..engine.multibody import SymbolicMultibody
from ..modeling.markers import Marker
from ..modeling.model import Model, require_model
from ..results.ik_tasks import CoordinateTask, IKTasks
from ..results.trc import MarkerTable
from ..util.checks import finite_number
from ..util.names import did_you_mean

__all__ = ["Marker", "IKResult", "ik_result", "marker_list", "marker_frames", "marker_positions", "marker_trajectories",
           "marker_arrays", "clamped_bounds", "MarkerKinematics", "inverse_kinematics", "ik_inputs"]


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


def marker_arrays(markers: list[Marker], data: Mapping[str, ArrayLike], weights: Mapping[str, float] | None,
                  who: str) -> tuple[np.ndarray, np.ndarray]:
    """The measured positions ``Y`` (T, M, 3) of ``markers`` (planar data get z = 0; NaN: missing) and their
    weights ``w`` (M,) (default 1), checked: every marker has data of one length, no data or weight for a marker
    not in the list, weights finite and >= 0, and every frame sees a weighted marker — each failure names the
    culprit (``KeyError`` / ``ValueError``), prefixed by ``who``."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{who}: data must be a dict of marker name -> (T, 2) or (T, 3) array, got "
                        f"{type(data).__name__}")
    names = [m.name for m in markers]
    missing = [n for n in names if n not in data]
    if missing:
        raise KeyError(f"{who}: no data for marker {missing[0]!r}; data has {sorted(data)}")
    extra = sorted(set(data) - set(names))
    if extra:
        raise KeyError(f"{who}: data for an unknown marker: " + did_you_mean(extra[0], names, "marker"))
    Y = []
    for n in names:
        y = np.asarray(data[n], float)
        if y.ndim != 2 or y.shape[1] not in (2, 3):
            raise ValueError(f"{who}: data of {n!r} must be (T, 2) or (T, 3), got {y.shape}")
        Y.append(np.c_[y, np.zeros(len(y))] if y.shape[1] == 2 else y)
    T = Y[0].shape[0]
    if any(y.shape[0] != T for y in Y):
        raise ValueError(f"{who}: every marker needs the same number of frames; got "
                         f"{ {n: y.shape[0] for n, y in zip(names, Y)} }")
    Y = np.stack(Y, axis=1)  # (T, M, 3)
    unknown = sorted(set(weights or {}) - set(names))
    if unknown:
        raise KeyError(f"{who}: a weight for an unknown marker: " + did_you_mean(unknown[0], names, "marker"))
    w = np.array([float((weights or {}).get(n, 1.0)) for n in names])
    if not np.all(np.isfinite(w) & (w >= 0)):
        bad = names[int(np.flatnonzero(~(np.isfinite(w) & (w >= 0)))[0])]
        raise ValueError(f"{who}: the weight of marker {bad!r} must be a finite number >= 0, got "
                         f"{weights[bad]!r}")
    blind = np.flatnonzero(~(np.isfinite(Y).all(axis=2) & (w > 0)).any(axis=1))
    if blind.size:
        raise ValueError(f"{who}: no marker (with a weight > 0) is seen in {blind.size} frame(s), the "
                         f"first {blind[:5].tolist()} (all NaN): cut those frames, or fill the gaps first")
    return Y, w


class MarkerKinematics:
    """A model's markers and coupler constraints by the engine's compiled kinematics of its skeleton: one compiled
    block, shared by inverse kinematics, marker registration and residual reduction.

    ``kinematics(Q)`` with ``Q`` (T, nq) gives the marker positions ``P`` (T, M, 3), their Jacobians ``JP``
    (T, M, 3, nq), the constraints ``φ`` (T, nl) and their Jacobians (T, nl, nq) (nl = 0 without couplers).
    """

    def __init__(self, model: Model, markers: Sequence[Marker]):
        from ..engine.kernel import kernel_for

        # the model's kinematics alone: no force element (deriving 80 muscles' path gradients would take seconds)
        self.kernel = kernel_for(model.skeleton())
        system = self.kernel.system
        self.names = [system.add_point_output(f"/markerset/{m.name}", m.body, m.location)[0] for m in markers]
        self.nl = len(system.phi)
        if self.nl:
            system.outputs["/constraints/phi"] = list(system.phi)
            self.names.append("/constraints/phi")
        self.M, self.nq = len(markers), len(model.coordinates)

    def __call__(self, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        out = self.kernel.outputs(self.names, Q, np.zeros_like(Q), jac=True)
        M = self.M
        P = np.stack([out[n] for n in self.names[:M]], axis=1)
        JP = np.stack([out["J"][n]["dq"] for n in self.names[:M]], axis=1)
        if self.nl:
            return P, JP, out["/constraints/phi"], out["J"]["/constraints/phi"]["dq"]
        T = Q.shape[0]
        return P, JP, np.zeros((T, 0)), np.zeros((T, 0, self.nq))


def clamped_bounds(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds (nq,) of the coordinates, ``model.coordinates`` order: each clamped coordinate's range
    (``Coordinate.clamped``, read from OpenSim's files), ±inf for the others."""
    lower = np.array([c.range[0] if c.clamped else -np.inf for c in model.coordinates])
    upper = np.array([c.range[1] if c.clamped else np.inf for c in model.coordinates])
    return lower, upper


def inverse_kinematics(model: Model, markers: Sequence[Marker], data: Mapping[str, ArrayLike], *,
                       weights: Mapping[str, float] | None = None, initial_guess: ArrayLike | None = None,
                       tolerance: float = 1e-10, solver: str | None = None,
                       coordinate_tasks: Mapping[str, CoordinateTask] | None = None) -> IKResult:
    """Frame-by-frame inverse kinematics (module docstring).

    Minimizes ``Σ_m w_m |p_m(q) − y_m|² + Σ_c w_c (q_c − v_c)²`` at every frame, with the model's kinematic
    constraints (coordinate couplers) held exactly and every clamped coordinate (``Coordinate.clamped``) within its
    range, as OpenSim's ``InverseKinematicsTool`` does.

    Parameters
    ----------
    model : Model
    markers : sequence of Marker
        The model's markers; each must have data.
    data : dict of str -> (T, 2) or (T, 3) array, m
        Measured world positions by marker name (NaN: the marker is missing in that frame and is left out).
    weights : dict of str -> float, optional
        Per-marker weights (default 1); ``read_ik_tasks(file).markers`` gives a task file's.
    initial_guess : (nq,) array, optional
        Coordinates to start the first frame from (default: the model's default positions); each later frame
        starts from the one before.
    tolerance : float
        SNOPT's major optimality tolerance, IPOPT's ``tol``; Gauss–Newton stops when no coordinate moves by more
        than ``tolerance`` (rad or m) in an iteration.
    solver : {"gauss-newton", "snopt", "ipopt"}, optional
        ``"gauss-newton"``: moco_lab's own (the engine's compiled marker positions and their exact Jacobian, a
        damped Gauss–Newton step with the constraints linearized and the bounds held by an active set); any model,
        the default for models with OpenSim ``CustomJoint``s or kinematic constraints. ``"snopt"`` / ``"ipopt"``:
        Drake's ``InverseKinematics`` (models with Drake kinematics and no constraints); the default elsewhere,
        SNOPT where Drake has it (about 2 ms per frame here against IPOPT's 45 ms).
    coordinate_tasks : dict of str -> CoordinateTask, optional
        Coordinates pulled towards a value (``read_ik_tasks(file).coordinates``): their default value
        (``default_value``) or ``value`` (``manual_value``), with ``weight``.

    Raises
    ------
    KeyError
        A marker without data, data for an unknown marker, a task for an unknown coordinate.
    ValueError
        Data of different lengths or shapes; a frame where no weighted marker is seen.
    NotImplementedError
        A coordinate task of ``value_type`` ``from_file``; Drake's solvers on a model they cannot represent.
    """
    from pydrake.solvers import IpoptSolver, SnoptSolver, SolverOptions

    require_model(model, "inverse_kinematics")
    markers = marker_list(markers, "inverse_kinematics")
    names = [m.name for m in markers]
    Y, w = marker_arrays(markers, data, weights, "inverse_kinematics")
    T = Y.shape[0]
    tolerance = finite_number(tolerance, "inverse_kinematics: tolerance", 0, False)
    plant = model.plant
    nq = plant.num_positions()
    default = plant.GetPositions(plant.CreateDefaultContext())
    targets = _coordinate_targets(model, coordinate_tasks, default)
    lower, upper = clamped_bounds(model)
    q = np.asarray(initial_guess, float) if initial_guess is not None else default
    if q.shape != (nq,) or not np.all(np.isfinite(q)):
        raise ValueError(f"inverse_kinematics: initial_guess must be {nq} finite coordinates (the "
                         f"model's order, model.coordinates), got shape {q.shape}")
    if solver is None:
        if model.custom_joints or model.constraints:
            solver = "gauss-newton"
        else:
            solver = "snopt" if SnoptSolver().available() and SnoptSolver().enabled() else "ipopt"
    if solver not in ("gauss-newton", "snopt", "ipopt"):
        raise ValueError(f"inverse_kinematics: solver must be 'gauss-newton', 'snopt' or 'ipopt', got {solver!r}")
    if solver == "gauss-newton":
        Q, P, success = _gauss_newton(model, markers, Y, w, q, targets, lower, upper, tolerance)
        return ik_result(model, Q, np.linalg.norm(P - Y, axis=2), names, success)
    from pydrake.multibody.inverse_kinematics import InverseKinematics

    model.require_drake_kinematics("inverse_kinematics")
    if model.constraints:
        raise NotImplementedError(f"inverse_kinematics: Drake's InverseKinematics does not hold the model's "
                                  f"constraint {model.constraints[0].name!r}; use solver='gauss-newton'")
    frames = _frames(model, markers)
    world = plant.world_frame()
    options = SolverOptions()
    if solver == "snopt":
        optimizer = SnoptSolver()
        options.SetOption(SnoptSolver.id(), "Major optimality tolerance", tolerance)
    else:
        optimizer = IpoptSolver()
        options.SetOption(IpoptSolver.id(), "tol", tolerance)
        options.SetOption(IpoptSolver.id(), "print_level", 0)
    bounded = np.flatnonzero(np.isfinite(lower) | np.isfinite(upper))
    q = np.clip(q, lower, upper)
    Q = np.zeros((T, nq))
    success = True
    for t in range(T):
        ik = InverseKinematics(plant, with_joint_limits=False)
        for k, (m, f) in enumerate(zip(markers, frames)):
            if np.all(np.isfinite(Y[t, k])) and w[k] > 0:
                ik.AddPositionCost(world, Y[t, k], f, np.asarray(m.location), w[k] * np.eye(3))
        prog = ik.get_mutable_prog()
        for i, (weight, value) in targets.items():
            prog.AddQuadraticErrorCost(np.array([[weight]]), np.array([value]), ik.q()[i:i + 1])
        if bounded.size:
            prog.AddBoundingBoxConstraint(lower[bounded], upper[bounded], ik.q()[bounded])
        prog.SetInitialGuess(ik.q(), q)
        result = optimizer.Solve(prog, q, options)
        success &= result.is_success()
        q = result.GetSolution(ik.q())
        Q[t] = q
    return ik_result(model, Q, np.linalg.norm(marker_trajectories(model, markers, Q) - Y, axis=2), names, success)


def ik_inputs(model: Model, table: MarkerTable, tasks: IKTasks | None = None, *, start: float | None = None,
              end: float | None = None) -> tuple[list[Marker], dict[str, np.ndarray], dict[str, float], np.ndarray]:
    """The markers, data and weights :func:`inverse_kinematics` takes, from a trial and a task file, as OpenSim's
    ``InverseKinematicsTool`` pairs them: the markers the tasks weight (> 0) that the trial holds (or, without
    tasks, every marker both the model and the trial hold, weight 1), over the frames in ``[start, end]`` s.

    A weighted task whose marker the trial lacks is left out with a ``UserWarning`` naming it (OpenSim warns too);
    one whose marker the model lacks is a ``KeyError`` naming it.

    Returns ``(markers, {name: (T, 3) array, m}, {name: weight}, time (T,) s)``.
    """
    import warnings

    require_model(model, "ik_inputs")
    if not isinstance(table, MarkerTable):
        raise TypeError(f"ik_inputs: table must be a MarkerTable (read_trc(path)), got {type(table).__name__}")
    if tasks is None:
        weights = {n: 1.0 for n in table.markers if n in model.markers}
    else:
        weights = {n: float(w) for n, w in tasks.markers.items() if w > 0}
        unknown = [n for n in weights if n not in model.markers]
        if unknown:
            raise KeyError(f"ik_inputs: the task file weights the marker {unknown[0]!r}, which the model does not have "
                           f"({did_you_mean(unknown[0], list(model.markers), 'marker')})")
        absent = [n for n in weights if n not in table.markers]
        if absent:
            warnings.warn(f"ik_inputs: the trial has no data for the weighted marker(s) {absent}; left out",
                          UserWarning, stacklevel=2)
        weights = {n: w for n, w in weights.items() if n in table.markers}
    if not weights:
        raise ValueError("ik_inputs: no marker is both in the model and in the trial (with a weight > 0)")
    lo = table.time[0] if start is None else float(start)
    hi = table.time[-1] if end is None else float(end)
    keep = (table.time >= lo - 1e-9) & (table.time <= hi + 1e-9)
    if not keep.any():
        raise ValueError(f"ik_inputs: no frame in [{lo:g}, {hi:g}] s; the trial spans {table.time[0]:g}–"
                         f"{table.time[-1]:g} s")
    return ([model.markers[n] for n in weights], {n: table.markers[n][keep] for n in weights}, weights,
            table.time[keep])


def _coordinate_targets(model: Model, tasks: Mapping[str, CoordinateTask] | None,
                        default: np.ndarray) -> dict[int, tuple[float, float]]:
    """``{coordinate index: (weight, target)}`` of the coordinate tasks with a weight > 0."""
    if tasks is None:
        return {}
    if not isinstance(tasks, Mapping):
        raise TypeError(f"inverse_kinematics: coordinate_tasks must be a dict of coordinate name -> CoordinateTask "
                        f"(read_ik_tasks(file).coordinates), got {type(tasks).__name__}")
    index = {c.name: c.q_index for c in model.coordinates}
    out = {}
    for name, task in tasks.items():
        if name not in index:
            raise KeyError("inverse_kinematics: a coordinate task for " + did_you_mean(name, list(index),
                                                                                       "coordinate"))
        if not isinstance(task, CoordinateTask):
            raise TypeError(f"inverse_kinematics: the task of coordinate {name!r} must be a CoordinateTask, got "
                            f"{type(task).__name__}")
        if task.value_type == "from_file":
            raise NotImplementedError(f"inverse_kinematics: the task of coordinate {name!r} takes its values "
                                      "from a file (value_type from_file); give them as manual values per frame, "
                                      "or drop the task")
        weight = finite_number(task.weight, f"inverse_kinematics: the weight of coordinate task {name!r}", 0, True)
        value = float(default[index[name]]) if task.value_type == "default_value" else float(task.value)
        if weight > 0:
            out[index[name]] = (weight, value)
    return out


def _bounded_step(H: np.ndarray, g: np.ndarray, phi: np.ndarray, G: np.ndarray, q: np.ndarray, lower: np.ndarray,
                  upper: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The step ``Δq`` of ``min ½ Δqᵀ H Δq + gᵀ Δq`` subject to ``G Δq = −φ`` and ``lower ≤ q + Δq ≤ upper``, by an
    active set: coordinates at a bound whose gradient pushes out are held, a coordinate whose step would cross its
    bound is fixed at it, and the rest re-solved (at most ``nq`` times). Returns ``(Δq, multipliers of G)``, or
    None if the system is singular."""
    nq, nl = len(q), len(phi)
    fixed = np.zeros(nq)  # step of the fixed coordinates
    held = ((q <= lower) & (g > 0)) | ((q >= upper) & (g < 0))
    for _ in range(nq + 1):
        free = np.flatnonzero(~held)
        hold = np.flatnonzero(held)
        nf = free.size
        K = np.zeros((nf + nl, nf + nl))
        K[:nf, :nf] = H[np.ix_(free, free)]
        K[:nf, nf:] = G[:, free].T
        K[nf:, :nf] = G[:, free]
        rhs = np.r_[-g[free] - H[np.ix_(free, hold)] @ fixed[hold], -phi - G[:, hold] @ fixed[hold]]
        try:
            sol = np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            return None
        step = fixed.copy()
        step[free] = sol[:nf]
        target = q + step
        out = np.zeros(nq, bool)
        out[free] = (target[free] < lower[free]) | (target[free] > upper[free])
        if not out.any():
            return step, sol[nf:]
        fixed[out] = np.clip(target[out], lower[out], upper[out]) - q[out]
        held |= out
    return step, sol[nf:]


def _gauss_newton(model: Model, markers: list[Marker], Y: np.ndarray, w: np.ndarray, q: np.ndarray,
                  targets: dict[int, tuple[float, float]], lower: np.ndarray, upper: np.ndarray,
                  tolerance: float, max_iterations: int = 200) -> tuple[np.ndarray, np.ndarray, bool]:
    """Inverse kinematics by damped Gauss–Newton on the engine's compiled marker positions.

    Each frame minimizes ``f = ½ |r|²``, ``r`` the weighted marker (and coordinate-task) residuals, subject to
    ``φ(q) = 0`` and the bounds. A step solves ``[[JᵀJ + μI, Gᵀ], [G, 0]] [Δq, ν] = [−Jᵀr, −φ]`` over the
    coordinates not held at a bound (held: at the bound with the gradient pushing out), is projected onto the
    bounds and kept if it lowers ``f + ρ|φ|₁``; else ``μ`` grows tenfold (Levenberg–Marquardt).

    Returns ``(Q (T, nq), marker positions (T, M, 3) at Q, success)``.
    """
    kinematics = MarkerKinematics(model, markers)
    nq, M = len(q), len(markers)

    def evaluate(q):
        P, J, phi, G = kinematics(q[None])
        return P[0], J[0], phi[0], G[0]

    task_rows = np.array(sorted(targets), int)
    task_w = np.sqrt([targets[i][0] for i in task_rows])
    task_v = np.array([targets[i][1] for i in task_rows])
    free_bounds = np.full(nq, -np.inf), np.full(nq, np.inf)

    def solve_frame(q, Y_t, lower, upper):
        seen = np.isfinite(Y_t).all(axis=1) & (w > 0)
        sw = np.sqrt(w[seen])

        def residuals(q, P, J):
            r = (sw[:, None] * (P[seen] - Y_t[seen])).ravel()
            Jr = (sw[:, None, None] * J[seen]).reshape(-1, nq)
            if task_rows.size:
                r = np.r_[r, task_w * (q[task_rows] - task_v)]
                Jr = np.r_[Jr, task_w[:, None] * np.eye(nq)[task_rows]]
            return r, Jr

        q = np.clip(q, lower, upper)
        P, J, phi, G = evaluate(q)
        r, Jr = residuals(q, P, J)
        mu = 1e-9
        for _ in range(max_iterations):
            g = Jr.T @ r
            H = Jr.T @ Jr
            H = H + mu * max(1.0, float(np.max(np.diag(H)))) * np.eye(nq)
            step = _bounded_step(H, g, phi, G, q, lower, upper)
            if step is None:
                mu *= 10.0
                if mu > 1e12:
                    break
                continue
            step, nu = step
            rho = 10.0 * (1.0 + float(np.max(np.abs(nu), initial=0.0)))
            merit = 0.5 * r @ r + rho * np.sum(np.abs(phi))
            trial = np.clip(q + step, lower, upper)
            moved = float(np.max(np.abs(trial - q)))
            P1, J1, phi1, G1 = evaluate(trial)
            r1, Jr1 = residuals(trial, P1, J1)
            if 0.5 * r1 @ r1 + rho * np.sum(np.abs(phi1)) <= merit or moved <= tolerance:
                q, P, phi, G, r, Jr = trial, P1, phi1, G1, r1, Jr1
                # converged: a (nearly) undamped Gauss-Newton step that no longer moves, constraints met
                if moved <= tolerance and mu <= 1e-6 and np.max(np.abs(phi), initial=0.0) <= 1e-10:
                    return q, P, True
                mu = max(mu / 10.0, 1e-12)
            else:
                predicted = -(g @ step + 0.5 * step @ H @ step)  # the decrease the linearized model promises
                if predicted <= 1e-13 * merit and np.max(np.abs(phi), initial=0.0) <= 1e-10:
                    return q, P, True  # at the floor of round-off: no step can lower f further
                mu *= 10.0
                if mu > 1e12:
                    break
        return q, P, False

    T = Y.shape[0]
    Q = np.zeros((T, nq))
    PP = np.zeros((T, M, 3))
    success = True
    q = np.asarray(q, float)
    for t in range(T):
        if t == 0 and np.any(np.isfinite(lower) | np.isfinite(upper)):
            # the first frame from the default pose: a bound there (an elbow straight at 0) can hold a coordinate
            # while the others settle in a poor local minimum; reach the unbounded optimum first, then bound it
            q = solve_frame(q, Y[0], *free_bounds)[0]
        q, PP[t], ok = solve_frame(q, Y[t], lower, upper)
        Q[t] = q
        success &= ok
    return Q, PP, success
