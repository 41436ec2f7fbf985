"""Kinematic (holonomic) constraints: OpenSim's ``ConstraintSet`` for moco_lab models.

A constraint is a set of ``m`` position-level equations ``φ(q) = 0`` of the
generalized coordinates ``q`` (shape ``(nq,)``, in :attr:`Model.coordinates`
order). Differentiating once and twice in time gives the velocity and
acceleration levels used by the equations of motion (Sherman, Seth & Delp 2013, Eqs. 9-10)::

    φ̇ = G(q) u = 0,        φ̈ = G(q) u̇ + Ġ(q, u) u = 0,

with ``G = ∂φ/∂q`` the *constraint Jacobian*, shape ``(m, nv)``. moco_lab
models have ``nq == nv`` and ``q̇ = u`` (pin and slider joints), so
``G = ∂φ/∂q`` exactly; functions that need this check it and raise otherwise.

Every constraint's :meth:`~KinematicConstraint.phi` works on a float array, on
an array of pydrake ``AutoDiffXd`` and on an array of pydrake
``symbolic.Expression`` (it only uses numpy ufuncs, which dispatch to the
element type, and Drake's plant scalar conversion for body kinematics). So the
same φ gives exact Jacobians (AutoDiff), exact bias terms (symbolic) and can be
placed in a ``MathematicalProgram``.

Constraint types
----------------
:class:`HolonomicConstraint`
    Any user-written ``φ(q)``.
:class:`CoordinateCouplerConstraint`
    OpenSim's ``CoordinateCouplerConstraint``: ``φ = q_dep − f(q_indep)``.
:class:`PointOnCurveConstraint`
    A point in the plane, given by two coordinates or by a point fixed on a
    body, lies on the curve ``y = g(x)``: ``φ = y − g(x)``.
:class:`FixedDistanceConstraint`
    Two body points stay ``distance`` apart (Simbody's ``Constraint::Rod``).

Multipliers are named ``/constraintset/<name>/lambda_<i>`` (one per equation);
see :meth:`Model.multiplier_names`. Sign convention: the constraint force on
the generalized coordinates is ``Gᵀ λ`` (Sherman, Seth & Delp 2013, Eq. 9).

Functions (numpy, float ``q``): :func:`constraint_values`,
:func:`constraint_jacobian`, :func:`constraint_bias`,
:func:`project_positions`, :func:`project_speeds`, :func:`coupling_vector`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np

from ..util.describe import describe
from ..util.names import did_you_mean

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "ConstraintModel", "KinematicConstraint", "HolonomicConstraint", "CoordinateCouplerConstraint", "PointOnCurveConstraint",
    "FixedDistanceConstraint", "constraint_values", "constraint_jacobian", "constraint_bias",
    "project_positions", "project_speeds", "coupling_vector", "body_point_positions",
]


class ConstraintModel(Protocol):
    """What kinematic constraints use of a model; :class:`~moco_lab.modeling.model.Model` is one.

    Written as a protocol so that this module does not import the model module, which imports this one (the
    model holds its constraints, a constraint is bound to its model).
    """

    nq: int
    coordinates: list
    body_paths: list
    constraints: list
    plant: Any

    def coordinate(self, name: str) -> Any:
        """The coordinate named ``name`` (or by path)."""

    def require_drake_kinematics(self, what: str) -> None:
        """Raise if the model's kinematics are not Drake's own (``what`` names the caller)."""

    def derived(self, name: str) -> dict:
        """A dictionary kept with the model for what is derived from it (emptied when the model changes)."""


# ---------------------------------------------------------------------------- helpers
def _scalar_kind(q) -> str:
    """``"float"``, ``"autodiff"`` or ``"symbolic"``: the element type of ``q``."""
    a = np.asarray(q)
    if a.dtype != object:
        return "float"
    from pydrake.autodiffutils import AutoDiffXd
    from pydrake.symbolic import Expression, Variable

    for e in a.ravel():
        if isinstance(e, AutoDiffXd):
            return "autodiff"
        if isinstance(e, (Expression, Variable)):
            return "symbolic"
    return "float"


def _as_vector(q) -> np.ndarray:
    a = np.asarray(q)
    if a.dtype == object:
        from pydrake.symbolic import Expression, Variable

        a = np.array([Expression(e) if isinstance(e, Variable) else e for e in a.ravel()], dtype=object)
    return a.ravel()


def _resolve_coordinate(names_paths: Sequence[tuple[str, str]], name: str, owner: str) -> int:
    """Index of coordinate ``name`` (short name or Moco-style path) in ``names_paths``."""
    for k, (short, path) in enumerate(names_paths):
        if name in (short, path, f"{path}/value"):
            return k
    options = [p for _, p in names_paths] + [n for n, _ in names_paths]
    raise KeyError(f"{owner}: " + did_you_mean(name, options, "coordinate"))


def _stack(values) -> np.ndarray:
    """Stack scalars of any Drake scalar type into a 1-D array (float if possible)."""
    out = np.empty(len(values), dtype=object)
    for k, v in enumerate(values):
        out[k] = v
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in out):
        return out.astype(float)
    return out


# ------------------------------------------------------------------------ base class
class KinematicConstraint:
    """Base class of holonomic constraints ``φ(q) = 0`` (OpenSim ``Constraint``).

    Subclasses set :attr:`name` and :attr:`num_equations` and implement
    :meth:`_phi`. A constraint is *bound* to a model (it learns the indices of
    the coordinates it names) by :meth:`ModelBuilder.add_constraint` /
    :meth:`Model.add_constraint`.

    Attributes
    ----------
    name : str
        Constraint name; its path is ``/constraintset/<name>``.
    num_equations : int
        Number ``m`` of scalar equations.
    """

    name: str
    num_equations: int

    def __init__(self, name: str, num_equations: int):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"A constraint name must be a non-empty string without '/'; got {name!r}")
        if int(num_equations) < 1:
            raise ValueError(f"Constraint {name!r}: num_equations must be >= 1, got {num_equations}")
        self.name = name
        self.num_equations = int(num_equations)
        self._model = None

    # -- names
    @property
    def path(self) -> str:
        """``/constraintset/<name>``."""
        return f"/constraintset/{self.name}"

    def multiplier_names(self) -> list[str]:
        """``["/constraintset/<name>/lambda_0", ...]``, one per equation."""
        return [f"{self.path}/lambda_{i}" for i in range(self.num_equations)]

    # -- binding
    def coordinate_names(self) -> list[str]:
        """Coordinates this constraint names explicitly (checked when it is added to a model)."""
        return []

    def body_names(self) -> list[str]:
        """Bodies this constraint names (checked when it is added to a model)."""
        return []

    def validate_names(self, coordinates: Sequence[tuple[str, str]], bodies: Sequence[str] | None = None) -> None:
        """Raise ``KeyError`` (with suggestions) if a named coordinate or body does not exist.

        Parameters
        ----------
        coordinates : sequence of (short name, path)
        bodies : sequence of str, optional
            Known body names (``"ground"`` is always valid).
        """
        for c in self.coordinate_names():
            _resolve_coordinate(coordinates, c, self.path)
        if bodies is not None:
            for b in self.body_names():
                if b not in ("ground", "world") and b not in bodies:
                    raise KeyError(f"{self.path}: " + did_you_mean(b, ["ground", *bodies], "body"))

    def bind(self, model: ConstraintModel) -> None:
        """Resolve names against ``model`` (called by :meth:`Model.add_constraint`)."""
        coords = [(c.name, c.path) for c in model.coordinates]
        bodies = list(model.body_paths)
        self.validate_names(coords, bodies)
        self._model = model
        self._index = {c: model.coordinates[_resolve_coordinate(coords, c, self.path)].q_index
                       for c in self.coordinate_names()}

    @property
    def model(self) -> ConstraintModel | None:
        """The model the constraint belongs to (RuntimeError before it is added to one)."""
        if self._model is None:
            raise RuntimeError(f"Constraint {self.path} is not part of a model yet "
                               "(add it with ModelBuilder.add_constraint or Model.add_constraint).")
        return self._model

    # -- evaluation
    def phi(self, q: ArrayLike) -> np.ndarray:
        """Constraint violation ``φ(q)``, shape ``(m,)``.

        Parameters
        ----------
        q : array, shape (nq,)
            Generalized positions in the model's coordinate order; floats,
            pydrake ``AutoDiffXd`` or pydrake ``symbolic.Expression``.
        """
        q = _as_vector(q)
        if q.shape[0] != self.model.nq:
            raise ValueError(f"{self.path}: q has {q.shape[0]} entries, the model has nq = {self.model.nq}")
        points = lambda pts: body_point_positions(self.model, q, pts)  # noqa: E731
        if q.dtype == object:  # numpy flags spurious "invalid value" warnings on Drake scalar objects
            with np.errstate(all="ignore"):
                out = _stack(list(np.atleast_1d(self._phi(q, points))))
        else:
            out = _stack(list(np.atleast_1d(self._phi(q, points))))
        if out.shape != (self.num_equations,):
            raise ValueError(f"{self.path}: φ(q) has shape {out.shape}, expected ({self.num_equations},)")
        return out

    def phi_expr(self, q: Sequence, point_position: Callable) -> list:
        """``φ`` as expressions of the engine's symbolic ``q`` (used to derive the equations of motion).

        Parameters
        ----------
        q : sequence (nq,)
            Symbolic coordinates (:mod:`moco_lab.symbolic` expressions).
        point_position : callable ``(body, location) -> 3 expressions``
            World positions of body points, from the engine's kinematics.
        """
        q = np.array(list(q), dtype=object)
        out = list(np.atleast_1d(self._phi(q, lambda pts: [point_position(b, loc) for b, loc in pts])))
        if len(out) != self.num_equations:
            raise ValueError(f"{self.path}: φ(q) has {len(out)} entries, expected {self.num_equations}")
        return out

    def description(self) -> dict:
        """The constraint as plain data (type, name and settings; functions by their qualified names)."""
        out = {"type": type(self).__name__, "name": self.name, "num_equations": self.num_equations}
        for key, value in vars(self).items():
            if not key.startswith("_") and key not in out:
                out[key] = describe(value)
        if hasattr(self, "_user_phi"):
            out["phi"] = describe(self._user_phi)
        return out

    def _phi(self, q: np.ndarray, points: Callable):
        """φ(q); ``points([(body, location), ...])`` gives world positions of body points for ``q``'s scalar type."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}: {self.num_equations} equation(s)>"


class HolonomicConstraint(KinematicConstraint):
    """A user-written holonomic constraint ``φ(q) = 0``.

    Parameters
    ----------
    name : str
    phi : callable
        ``phi(q) -> sequence of length num_equations``, ``q`` of shape
        ``(nq,)`` in the model's coordinate order. Write it with numpy ufuncs
        (``np.sin``, ``np.sqrt``, ...) so it works for floats, ``AutoDiffXd``
        and ``symbolic.Expression``.
    num_equations : int

    Examples
    --------
    >>> circle = HolonomicConstraint("circle", lambda q: [q[0]**2 + q[1]**2 - 1.0], 1)
    """

    def __init__(self, name: str, phi: Callable, num_equations: int = 1):
        super().__init__(name, num_equations)
        if not callable(phi):
            raise TypeError(f"HolonomicConstraint {name!r}: phi must be callable")
        self._user_phi = phi

    def _phi(self, q, points):
        return self._user_phi(q)


class CoordinateCouplerConstraint(KinematicConstraint):
    """OpenSim's ``CoordinateCouplerConstraint``: ``φ = q_dep − f(q_indep)``.

    Parameters
    ----------
    name : str
    dependent : str
        Dependent coordinate (short name, e.g. ``"patella_angle"``, or path
        ``"/jointset/patellofemoral/patella_angle"``).
    independent : str or list of str
        Independent coordinate(s).
    function : callable, optional
        ``f(q_indep_1, ..., q_indep_N)``; numpy ufuncs only (must accept
        AutoDiffXd and symbolic scalars). Default: linear
        ``sum(ratio_k * q_k) + offset``.
    ratio : float or sequence of float
        Slope(s) of the default linear function.
    offset : float

    Notes
    -----
    OpenSim writes the same constraint as ``0 = f(q_indep) − q_dep``; the
    sign of φ (and so of its multiplier) is opposite.
    """

    def __init__(self, name: str, dependent: str, independent: str | list[str], function: Callable | None = None,
                 ratio: float | Sequence[float] = 1.0, offset: float = 0.0):
        super().__init__(name, 1)
        self.dependent = dependent
        self.independent = [independent] if isinstance(independent, str) else list(independent)
        if not self.independent:
            raise ValueError(f"CoordinateCouplerConstraint {name!r}: needs at least one independent coordinate")
        if dependent in self.independent:
            raise ValueError(f"CoordinateCouplerConstraint {name!r}: {dependent!r} cannot depend on itself")
        ratios = np.broadcast_to(np.asarray(ratio, dtype=float), (len(self.independent),))
        self.ratio = [float(r) for r in ratios]
        self.offset = float(offset)
        self.function = function

    def coordinate_names(self) -> list[str]:
        return [self.dependent, *self.independent]

    def f(self, *q_indep: Any) -> Any:
        """The coupler function ``f(q_indep)`` (user function or ``Σ ratio_k q_k + offset``)."""
        if self.function is not None:
            return self.function(*q_indep)
        total = self.offset
        for r, qk in zip(self.ratio, q_indep):
            total = total + r * qk
        return total

    def _phi(self, q, points):
        qi = [q[self._index[c]] for c in self.independent]
        return [q[self._index[self.dependent]] - self.f(*qi)]


class PointOnCurveConstraint(KinematicConstraint):
    """A point of the plane stays on the curve ``y = g(x)``: ``φ = y − g(x)``.

    The point is either given by two coordinates (``x`` and ``y``, e.g. the two
    slider joints of Moco's parabola bead, ``g(x) = x²``) or by a point fixed
    on a body (``body``, ``point``), whose ground-frame x and y are used.

    Parameters
    ----------
    name : str
    curve : callable
        ``g(x)``; numpy ufuncs only (AutoDiffXd and symbolic scalars).
    x, y : str, optional
        Coordinates giving the point's x and y.
    body : str, optional
        Body name (instead of ``x``, ``y``).
    point : (3,) array
        Location of the point in the body frame (m).
    """

    def __init__(self, name: str, curve: Callable, x: str | None = None, y: str | None = None,
                 body: str | None = None, point: tuple[str, ArrayLike] = (0.0, 0.0, 0.0)):
        super().__init__(name, 1)
        if not callable(curve):
            raise TypeError(f"PointOnCurveConstraint {name!r}: curve must be callable")
        if body is None and (x is None or y is None):
            raise ValueError(f"PointOnCurveConstraint {name!r}: give coordinates x and y, or a body point")
        if body is not None and (x is not None or y is not None):
            raise ValueError(f"PointOnCurveConstraint {name!r}: give either coordinates x, y or a body, not both")
        self.curve = curve
        self.x, self.y, self.body = x, y, body
        self.point = tuple(float(v) for v in point)

    def coordinate_names(self) -> list[str]:
        return [self.x, self.y] if self.body is None else []

    def body_names(self) -> list[str]:
        return [self.body] if self.body is not None else []

    def _phi(self, q, points):
        if self.body is None:
            x, y = q[self._index[self.x]], q[self._index[self.y]]
        else:
            p = points([(self.body, self.point)])[0]
            x, y = p[0], p[1]
        return [y - self.curve(x)]


class FixedDistanceConstraint(KinematicConstraint):
    """Two points on two bodies stay a fixed distance apart: ``φ = ‖p₂ − p₁‖ − distance``.

    The point positions come from the model's ``MultibodyPlant`` through its
    AutoDiffXd / symbolic scalar conversions, so φ is exact for all scalar
    types (Simbody's ``Constraint::Rod``).

    Parameters
    ----------
    name : str
    body1, body2 : str
        Body names (``"ground"`` for the world).
    point1, point2 : (3,) array
        Locations in the body frames (m).
    distance : float
        Required distance (m), > 0.
    """

    def __init__(self, name: str, body1: str, point1: tuple[str, ArrayLike], body2: str, point2: tuple[str, ArrayLike],
                 distance: float):
        super().__init__(name, 1)
        if not distance > 0:
            raise ValueError(f"FixedDistanceConstraint {name!r}: distance must be > 0, got {distance}")
        self.body1, self.body2 = body1, body2
        self.point1 = tuple(float(v) for v in point1)
        self.point2 = tuple(float(v) for v in point2)
        self.distance = float(distance)

    def body_names(self) -> list[str]:
        return [self.body1, self.body2]

    def _phi(self, q, points):
        p1, p2 = points([(self.body1, self.point1), (self.body2, self.point2)])
        d = p2 - p1
        return [np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - self.distance]


# --------------------------------------------------------- plant kinematics by scalar
def _plant_for(model, kind: str):
    """(plant, context) of the model for scalar ``kind``, cached on the model."""
    if hasattr(model, "require_drake_kinematics"):
        model.require_drake_kinematics("A point-based kinematic constraint")
    cache = model.derived("constraint_plants")
    if kind not in cache:
        if kind == "float":
            plant = model.plant
        elif kind == "autodiff":
            plant = model.plant.ToAutoDiffXd()
        else:
            plant = model.plant.ToSymbolic()
        cache[kind] = (plant, plant.CreateDefaultContext())
    return cache[kind]


def body_point_positions(model: ConstraintModel, q: ArrayLike, points: Sequence[tuple[str, ArrayLike]]) -> list[np.ndarray]:
    """Ground-frame positions of points fixed on bodies, at ``q``, for any Drake scalar type.

    Parameters
    ----------
    model : Model
    q : array (nq,)
        Floats, ``AutoDiffXd`` or ``symbolic.Expression`` (the plant is
        converted to the matching scalar type once and cached on the model).
    points : list of (body name or "ground", (x, y, z))

    Returns
    -------
    list of ndarray (3,)
    """
    kind = _scalar_kind(q)
    plant, context = _plant_for(model, kind)
    if kind == "float":
        plant.SetPositions(context, np.asarray(q, dtype=float))
    else:
        plant.SetPositions(context, np.asarray(q, dtype=object))
    world = plant.world_frame()
    out = []
    for body, loc in points:
        frame = world if body in ("ground", "world") else plant.GetBodyByName(body).body_frame()
        if kind == "symbolic":
            from pydrake.symbolic import Expression

            p = np.array([[Expression(v)] for v in loc], dtype=object)
        else:
            p = np.asarray(loc, dtype=float).reshape(3, 1)
        out.append(plant.CalcPointsPositions(context, frame, p, world)[:, 0])
    return out


# ------------------------------------------------------------------ model functions
def _constraints(model) -> list[KinematicConstraint]:
    return list(getattr(model, "constraints", []) or [])


def _num_equations(model) -> int:
    return sum(c.num_equations for c in _constraints(model))


def _check_qdot_is_u(model, q) -> None:
    plant = model.plant
    if plant.num_positions() != plant.num_velocities():
        raise ValueError("constraint functions need nq == nv (q̇ = u); this plant has "
                         f"nq = {plant.num_positions()}, nv = {plant.num_velocities()}")
    cache = model.derived("constraint_qdot")
    if "context" not in cache:
        cache["context"] = plant.CreateDefaultContext()
    context = cache["context"]
    plant.SetPositions(context, q)
    N = plant.MakeVelocityToQDotMap(context)
    N = N.toarray() if hasattr(N, "toarray") else np.asarray(N)
    if not np.allclose(N, np.eye(plant.num_velocities()), atol=1e-12):
        raise ValueError("constraint functions assume q̇ = u (pin and slider joints); "
                         "this plant's velocity-to-q̇ map N(q) is not the identity")


def _float_q(model, q) -> np.ndarray:
    q = np.asarray(q, dtype=float).ravel()
    if q.shape[0] != model.nq:
        raise ValueError(f"q must have nq = {model.nq} entries, got {q.shape[0]}")
    return q


def constraint_values(model: ConstraintModel, q: ArrayLike) -> np.ndarray:
    """All constraint violations ``φ(q)`` stacked in :attr:`Model.constraints` order.

    Parameters
    ----------
    model : Model
    q : array, shape (nq,)

    Returns
    -------
    ndarray, shape (m,)
        ``m = Σ num_equations`` (0 for a model without constraints).
    """
    q = _float_q(model, q)
    parts = [c.phi(q).astype(float) for c in _constraints(model)]
    return np.concatenate(parts) if parts else np.zeros(0)


def constraint_jacobian(model: ConstraintModel, q: ArrayLike) -> np.ndarray:
    """Constraint Jacobian ``G = ∂φ/∂q`` by forward-mode AutoDiff (``AutoDiffXd``).

    Returns
    -------
    ndarray, shape (m, nv)
        With ``q̇ = u`` this is also the velocity-level matrix: ``φ̇ = G u``.
    """
    from pydrake.autodiffutils import InitializeAutoDiff

    q = _float_q(model, q)
    _check_qdot_is_u(model, q)
    m = _num_equations(model)
    if m == 0:
        return np.zeros((0, model.nq))
    q_ad = InitializeAutoDiff(q).ravel()
    phi = np.concatenate([np.asarray(c.phi(q_ad), dtype=object) for c in _constraints(model)])
    from pydrake.autodiffutils import AutoDiffXd

    rows = []
    for e in phi:
        if isinstance(e, AutoDiffXd):
            g = np.asarray(e.derivatives(), dtype=float)
            rows.append(g if g.size else np.zeros(model.nq))
        else:  # a constant (φ did not depend on q)
            rows.append(np.zeros(model.nq))
    return np.vstack(rows).reshape(m, model.nq)


def _symbolic_bias(model):
    """Cached symbolic ``(q_vars, u_vars, Ġu expression)``, or ``None`` if φ is not symbolic-friendly."""
    cache = model.derived("constraint_bias")
    if "expr" not in cache:
        try:
            from pydrake.symbolic import Expression, Jacobian, Variable

            qv = [Variable(f"q{k}") for k in range(model.nq)]
            uv = [Variable(f"u{k}") for k in range(model.nq)]
            qe = np.array([Expression(v) for v in qv], dtype=object)
            phi = np.concatenate([np.asarray(c.phi(qe), dtype=object) for c in _constraints(model)])
            phi = np.array([e if isinstance(e, Expression) else Expression(float(e)) for e in phi], dtype=object)
            with np.errstate(all="ignore"):
                G = Jacobian(phi, qv)
                Gu = G @ np.array([Expression(v) for v in uv], dtype=object)
                Gu = np.array([e if isinstance(e, Expression) else Expression(float(e)) for e in np.atleast_1d(Gu)])
                bias = Jacobian(Gu, qv) @ np.array([Expression(v) for v in uv], dtype=object)
            cache["expr"] = (qv, uv, np.atleast_1d(bias))
        except Exception:
            cache["expr"] = None
    return cache["expr"]


def constraint_bias(model: ConstraintModel, q: ArrayLike, u: ArrayLike) -> np.ndarray:
    """Velocity-dependent part of the constraint acceleration, ``Ġ(q, u) u``.

    ``φ̈ = G u̇ + Ġ u``. Computed exactly from the symbolic second derivative of
    φ (``Σ_jk ∂²φ/∂q_j∂q_k u_j u_k``); if φ cannot be evaluated symbolically,
    by a central difference of ``G(q + h u) u`` (relative accuracy ~1e-8).

    Parameters
    ----------
    q, u : array, shape (nq,)

    Returns
    -------
    ndarray, shape (m,)
    """
    q = _float_q(model, q)
    u = np.asarray(u, dtype=float).ravel()
    if u.shape != q.shape:
        raise ValueError(f"u must have nv = {model.nq} entries, got {u.shape[0]}")
    _check_qdot_is_u(model, q)
    if _num_equations(model) == 0:
        return np.zeros(0)
    sym = _symbolic_bias(model)
    if sym is not None:
        from pydrake.symbolic import Evaluate

        qv, uv, bias = sym
        env = {**dict(zip(qv, q)), **dict(zip(uv, u))}
        return np.asarray(Evaluate(bias.reshape(-1, 1), env), dtype=float).ravel()
    norm = float(np.linalg.norm(u))
    if norm == 0:
        return np.zeros(_num_equations(model))
    h = 1e-5 / norm
    return (constraint_jacobian(model, q + h * u) @ u - constraint_jacobian(model, q - h * u) @ u) / (2 * h)


def _free_columns(model, fixed) -> np.ndarray:
    """Boolean mask (nq,) of the coordinates not listed in ``fixed`` (names or paths)."""
    coords = [(c.name, c.path) for c in model.coordinates]
    if isinstance(fixed, str):
        fixed = (fixed,)
    mask = np.ones(model.nq, dtype=bool)
    for name in fixed or ():
        mask[model.coordinates[_resolve_coordinate(coords, name, "fixed")].q_index] = False
    return mask


def project_positions(model: ConstraintModel, q: ArrayLike, fixed: str | Sequence[str] | None = (), tolerance: float = 1e-12,
                      max_iterations: int = 50) -> np.ndarray:
    """Assemble: change the free coordinates minimally so that ``φ(q) = 0``.

    Gauss-Newton with minimum-norm steps ``Δq_free = −G_free⁺ φ`` (Simbody's
    ``projectQ`` / OpenSim's assembler, without weights).

    Parameters
    ----------
    model : Model
    q : array, shape (nq,)
        Starting positions.
    fixed : sequence of str
        Coordinates (names or paths) that must not change.
    tolerance : float
        Required ``max |φ|``.
    max_iterations : int

    Returns
    -------
    ndarray, shape (nq,)

    Raises
    ------
    RuntimeError
        If the constraints cannot be satisfied (e.g. the fixed values make
        them inconsistent).
    """
    q = _float_q(model, q).copy()
    if _num_equations(model) == 0:
        return q
    free = _free_columns(model, fixed)
    for _ in range(max_iterations):
        phi = constraint_values(model, q)
        if np.max(np.abs(phi)) <= tolerance:
            return q
        G = constraint_jacobian(model, q)[:, free]
        q[free] -= np.linalg.lstsq(G, phi, rcond=None)[0]
    phi = constraint_values(model, q)
    if np.max(np.abs(phi)) <= max(tolerance, 1e-10):
        return q
    names = [n for c in _constraints(model) for n in [c.path] * c.num_equations]
    worst = int(np.argmax(np.abs(phi)))
    raise RuntimeError(f"project_positions did not converge: |φ| = {abs(phi[worst]):.3g} on {names[worst]} "
                       f"after {max_iterations} iterations (fixed: {list(fixed) if not isinstance(fixed, str) else [fixed]})")


def project_speeds(model: ConstraintModel, q: ArrayLike, u: ArrayLike, fixed: str | Sequence[str] | None = ()) -> np.ndarray:
    """Minimal change of the free speeds so that ``G(q) u = 0`` (Simbody's ``projectU``).

    ``u_free ← u_free − G_free⁺ (G u)`` (least squares, minimum norm).

    Parameters
    ----------
    q, u : array, shape (nq,)
    fixed : sequence of str
        Coordinates whose speeds must not change.

    Returns
    -------
    ndarray, shape (nv,)
    """
    q = _float_q(model, q)
    u = np.asarray(u, dtype=float).ravel().copy()
    if u.shape != q.shape:
        raise ValueError(f"u must have nv = {model.nq} entries, got {u.shape[0]}")
    if _num_equations(model) == 0:
        return u
    free = _free_columns(model, fixed)
    G = constraint_jacobian(model, q)
    u[free] -= np.linalg.lstsq(G[:, free], G @ u, rcond=None)[0]
    return u


def _held_coordinates(model, q, theta_index: int) -> list[int]:
    """Coordinates (q indices) to hold at zero speed when θ moves, as Sherman, Seth & Delp 2013 prescribes.

    Greedy: try to hold every other coordinate, coupler-independent ones
    first, then unconstrained ones, coupler-dependent ones last; keep a
    coordinate held only if ``G u = 0`` can still be satisfied with ``θ̇ = 1``.
    When θ leaves a single degree of freedom to the coupled set this holds
    exactly the coordinates that the constraints leave free anyway.
    """
    dependents, independents = set(), set()
    for c in _constraints(model):
        if isinstance(c, CoordinateCouplerConstraint):
            dependents.add(c._index[c.dependent])
            independents.update(c._index[n] for n in c.independent)
    order = sorted((k for k in range(model.nq) if k != theta_index),
                   key=lambda k: (0 if k in independents and k not in dependents else 2 if k in dependents else 1, k))
    G = constraint_jacobian(model, q)
    held: list[int] = []
    for k in order:
        trial = held + [k]
        A = np.vstack([G, np.eye(model.nq)[[theta_index, *trial]]])
        b = np.concatenate([np.zeros(G.shape[0]), [1.0], np.zeros(len(trial))])
        x = np.linalg.lstsq(A, b, rcond=None)[0]
        if np.linalg.norm(A @ x - b) < 1e-9:
            held = trial
    return held


def coupling_vector(model: ConstraintModel, q: ArrayLike, coordinate: str, hold_independent: bool = True) -> np.ndarray:
    """Coupling vector ``C_θ``: the generalized speeds produced by ``θ̇ = 1`` (Sherman, Seth & Delp 2013, Eq. 13).

    As OpenSim's ``MomentArmSolver``: set ``u = 0`` and ``θ̇ = 1``, project
    the speeds onto the velocity constraints (:func:`project_speeds`) and
    divide by the projected ``θ̇``. Coordinates that are not coupled to θ get
    0, θ gets 1, a coupled coordinate gets its slope ``dq_k/dθ`` along the
    constraint manifold.

    If the constraints leave more than one degree of freedom to the
    coordinates coupled with θ (e.g. a coupler with two independent
    coordinates), the paper holds the others ("coupling factor 0"); with
    ``hold_independent=True`` (default) those are kept fixed during the
    projection (see :func:`_held_coordinates`). ``False`` projects over all
    speeds, literally as OpenSim's ``projectU``; both agree whenever θ alone
    determines the coupled coordinates.

    Parameters
    ----------
    model : Model
    q : array, shape (nq,)
        Positions (should satisfy the constraints, see :func:`project_positions`).
    coordinate : str
        θ, a coordinate name or path.
    hold_independent : bool

    Returns
    -------
    ndarray, shape (nv,)

    Raises
    ------
    ValueError
        If the constraints lock θ (its projected speed is 0).
    """
    c = model.coordinate(coordinate)
    q = _float_q(model, q)
    u = np.zeros(model.nq)
    u[c.v_index] = 1.0
    fixed = ()
    if hold_independent and _num_equations(model):
        fixed = tuple(model.coordinates[k].path for k in _held_coordinates(model, q, c.q_index))
    u = project_speeds(model, q, u, fixed=fixed)
    if abs(u[c.v_index]) < 1e-10 or np.linalg.norm(constraint_jacobian(model, q) @ u) > 1e-8 * max(1.0, np.linalg.norm(u)):
        raise ValueError(f"The constraints lock {c.path}: it cannot move, so it has no coupling vector")
    return u / u[c.v_index]
