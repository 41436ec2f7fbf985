"""IPOPT with MUMPS and OpenBLAS on a Drake ``MathematicalProgram``, through IPOPT's C interface.

Drake's own IPOPT factorizes its KKT systems with SPRAL on a reference
(untuned) BLAS, single-threaded. At musculoskeletal scale the factorization is
most of a solve (``benchmarks/engine_scale.md``, ``benchmarks/walking_2d.md``).
This module runs the same program with a second build of IPOPT 3.14: the one
the ``casadi`` wheel ships (IPOPT with MUMPS, METIS and OpenBLAS), loaded with
``ctypes``. It is selected by ``SolverSettings(optim_linear_solver="mumps")``
(Moco's setting of the same name); nothing else changes: same program, same
IPOPT algorithm and options, same limited-memory Hessian.

The program is read from its bindings: bounding boxes become IPOPT's variable
bounds; linear (equality) constraints keep their constant sparse matrices;
every other constraint and cost is evaluated through its Drake evaluator. For
the callbacks moco_lab builds itself (:func:`moco_lab.engine.callbacks.drake_callable`)
the exact sparse Jacobian is read directly (``exact``), without Drake's
``AutoDiffXd`` round trip; any other Python constraint gets its Jacobian from
Drake's ``AutoDiffXd`` evaluation (correct, slower).

With ``hessian_approximation="exact"`` the driver also gives IPOPT the Hessian of its Lagrangian: every
binding's part from its exact callable's Hessian (``exact[id(evaluator)][2]``: moco_lab's chunks and endpoint
goals, :mod:`moco_lab.engine.hessian`), quadratic costs' ``Q``, nothing for linear terms; a binding with none
of these is refused by name. The parts are summed into one lower-triangular structure declared once.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np
import scipy.sparse as sp

from ..engine.callbacks import variable_indices
from ..results.duals import Duals
from ..symbolic.batched import matmul
from ..util.memory import paused_gc

if TYPE_CHECKING:
    from pydrake.solvers import MathematicalProgram

__all__ = ["library_path", "available", "IPOPT_C_STATUS", "IpoptCResult", "kkt_structure", "solve_with_mumps",
           "WARM_START_OPTIONS"]

#: IPOPT's options for a solve that starts from a solution's multipliers (``solve_with_mumps(duals=...)``, set by
#: ``SolverSettings.optim_warm_start``): ``warm_start_init_point`` takes ``λ``, ``z_L``, ``z_U`` from the caller
#: instead of IPOPT's estimates, and each variable (slack) is moved at most 10⁻⁶ inside its bounds (absolute,
#: times max(1, |bound|), or as a fraction of the bounds' range, the smaller), each bound multiplier at least
#: 10⁻⁶ above 0 — instead of 10⁻³ (the ``warm_start_*`` defaults), which moves a converged solution's
#: activations and excitations that sit at a bound away from it. Measured (``benchmarks/warm_starts.md``): Moco's
#: 2-D walker at N = 15, the exact Hessian, re-predicted from its solution at normal strength after ten changes of
#: one muscle group's strength: 10–43 iterations with these values; 13–41 with IPOPT's warm-start defaults (in an
#: earlier run, from a first solution that was not quite an optimum, 11–43 against 9–49 and one stop at the
#: 1,500-iteration limit); 30–710 and three stops from the solution's ``x`` alone.
WARM_START_OPTIONS = {"warm_start_init_point": "yes", "warm_start_bound_push": 1e-6, "warm_start_bound_frac": 1e-6,
                      "warm_start_slack_bound_push": 1e-6, "warm_start_slack_bound_frac": 1e-6,
                      "warm_start_mult_bound_push": 1e-6}

#: IPOPT 3.14's ``ApplicationReturnStatus`` (its C interface's return value) -> status name.
IPOPT_C_STATUS = {
    0: "Solve_Succeeded", 1: "Solved_To_Acceptable_Level", 2: "Infeasible_Problem_Detected",
    3: "Search_Direction_Becomes_Too_Small", 4: "Diverging_Iterates", 5: "User_Requested_Stop",
    6: "Feasible_Point_Found", -1: "Maximum_Iterations_Exceeded", -2: "Restoration_Failed",
    -3: "Error_In_Step_Computation", -4: "Maximum_CpuTime_Exceeded", -5: "Maximum_WallTime_Exceeded",
    -10: "Not_Enough_Degrees_Of_Freedom", -11: "Invalid_Problem_Definition", -12: "Invalid_Option",
    -13: "Invalid_Number_Detected", -100: "Unrecoverable_Exception", -101: "NonIpopt_Exception_Thrown",
    -102: "Insufficient_Memory", -199: "Internal_Error",
}

_INF = 1e20  # IPOPT: |bound| >= nlp_upper_bound_inf (1e19) is no bound

_n, _d, _b = ctypes.c_int, ctypes.c_double, ctypes.c_bool
_pd, _pi = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int)
_EVAL_F = ctypes.CFUNCTYPE(_b, _n, _pd, _b, _pd, ctypes.c_void_p)
_EVAL_GRAD_F = ctypes.CFUNCTYPE(_b, _n, _pd, _b, _pd, ctypes.c_void_p)
_EVAL_G = ctypes.CFUNCTYPE(_b, _n, _pd, _b, _n, _pd, ctypes.c_void_p)
_EVAL_JAC_G = ctypes.CFUNCTYPE(_b, _n, _pd, _b, _n, _n, _pi, _pi, _pd, ctypes.c_void_p)
_EVAL_H = ctypes.CFUNCTYPE(_b, _n, _pd, _b, _d, _n, _pd, _b, _n, _pi, _pi, _pd, ctypes.c_void_p)
_INTERMEDIATE = ctypes.CFUNCTYPE(_b, _n, _n, _d, _d, _d, _d, _d, _d, _d, _d, _n, ctypes.c_void_p)

_LIBS: dict = {}


def library_path() -> str | None:
    """Path of the ``libipopt.so`` this module loads (the ``casadi`` wheel's), or None if not installed.

    ``MOCO_LAB_IPOPT_LIBRARY`` names another IPOPT 3.14 shared library (C interface, 32-bit indices,
    double precision).
    """
    env = os.environ.get("MOCO_LAB_IPOPT_LIBRARY")
    if env:
        return env
    try:
        import importlib.util

        spec = importlib.util.find_spec("casadi")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "libipopt.so")
        if os.path.exists(path):
            return path
    return None


def available() -> bool:
    """True if an IPOPT with MUMPS can be loaded (``pip install casadi``, or ``MOCO_LAB_IPOPT_LIBRARY``)."""
    try:
        _library()
    except (OSError, RuntimeError):
        return False
    return True


def _load_isolated(path: str) -> int:
    """``dlopen`` the library in a link-map namespace of its own (glibc's ``dlmopen``), so that its dependencies
    are its own even when a library of the same name is already in the process.

    The dynamic linker reuses a loaded library whose SONAME matches: after OpenSim has solved (its package ships
    another ``libipopt.so.3`` and ``libcoinmumps.so.3``), a plain ``dlopen`` of the casadi wheel's IPOPT returned
    OpenSim's, and every MUMPS solve ended in ``Restoration_Failed`` at its first iteration.
    """
    libc = ctypes.CDLL(None)
    dlmopen = getattr(libc, "dlmopen", None)
    if dlmopen is None:   # not glibc: a plain dlopen
        return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)._handle
    dlmopen.restype = ctypes.c_void_p
    dlmopen.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_int]
    libc.dlerror.restype = ctypes.c_char_p
    handle = dlmopen(-1, os.fsencode(path), os.RTLD_NOW | os.RTLD_LOCAL)   # -1: LM_ID_NEWLM
    if not handle:
        raise OSError((libc.dlerror() or b"dlmopen failed").decode(errors="replace"))
    return handle


def _library():
    path = library_path()
    if path is None:
        raise RuntimeError("optim_linear_solver='mumps' needs IPOPT built with MUMPS: `pip install casadi` "
                           "(its wheel ships one), or set MOCO_LAB_IPOPT_LIBRARY to an IPOPT 3.14 library; "
                           "optim_linear_solver='spral' uses Drake's own IPOPT.")
    if path in _LIBS:
        return _LIBS[path]
    try:
        lib = ctypes.CDLL(path, handle=_load_isolated(path))
    except OSError as err:
        source = "MOCO_LAB_IPOPT_LIBRARY" if os.environ.get("MOCO_LAB_IPOPT_LIBRARY") else "the casadi wheel"
        raise RuntimeError(f"Cannot load IPOPT from {path} ({source}): {err}") from err
    lib.CreateIpoptProblem.restype = ctypes.c_void_p
    lib.CreateIpoptProblem.argtypes = [_n, _pd, _pd, _n, _pd, _pd, _n, _n, _n,
                                       _EVAL_F, _EVAL_G, _EVAL_GRAD_F, _EVAL_JAC_G, _EVAL_H]
    lib.FreeIpoptProblem.argtypes = [ctypes.c_void_p]
    for name, kind in (("AddIpoptStrOption", ctypes.c_char_p), ("AddIpoptNumOption", _d),
                       ("AddIpoptIntOption", _n)):
        fn = getattr(lib, name)
        fn.restype = _b
        fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, kind]
    lib.SetIntermediateCallback.restype = _b
    lib.SetIntermediateCallback.argtypes = [ctypes.c_void_p, _INTERMEDIATE]
    lib.IpoptSolve.restype = ctypes.c_int
    lib.IpoptSolve.argtypes = [ctypes.c_void_p, _pd, _pd, _pd, _pd, _pd, _pd, ctypes.c_void_p]
    _LIBS[path] = lib
    return lib


@dataclass
class IpoptCResult:
    """What one run of IPOPT's C interface returned."""

    x: np.ndarray
    cost: float
    code: int
    status: str
    success: bool
    nit: int
    #: The largest violation of any constraint or bound at ``x`` (NaN if a constraint is NaN there), from the
    #: driver's own evaluation (as :func:`moco_lab.solve.optimizer.max_constraint_violation` measures it).
    constraint_violation: float = float("nan")
    #: IPOPT's multipliers at the end (for the next solve's warm start).
    duals: Duals | None = None
    #: Whether the run started from the ``duals`` it was given: None if it was given none, False if they did not
    #: fit the program (another structure).
    warm_started: bool | None = None


def structure_digest(n: int, m: int, jac_rows: np.ndarray, jac_cols: np.ndarray, xl: np.ndarray, xu: np.ndarray,
                     gl: np.ndarray, gu: np.ndarray) -> str:
    """A digest of a program's structure as IPOPT sees it: its sizes, its constraint Jacobian's sparsity (in
    IPOPT's order), which variable bounds are finite and which constraint rows are equalities; the values of
    bounds and constraints left out (a changed muscle strength, speed or bound keeps the digest)."""
    h = hashlib.sha1()
    for part in (np.array([n, m], np.int64), np.asarray(jac_rows, np.int32), np.asarray(jac_cols, np.int32),
                 np.isfinite(xl), np.isfinite(xu), np.isfinite(gl), np.isfinite(gu), np.asarray(gl) == np.asarray(gu)):
        h.update(np.ascontiguousarray(part).tobytes())
        h.update(b"|")
    return h.hexdigest()


class _Term:
    """One binding: where its variables sit, how to evaluate it, and its Jacobian's non-zeros (``constant``: the
    values of a linear constraint's, in the order of ``rows``, ``cols``)."""

    __slots__ = ("idx", "fun", "evaluator", "rows", "cols", "row0", "jac_slice", "m", "constant", "hessian")

    def __init__(self, idx, fun, evaluator, rows, cols, m, constant=None, hessian=None):
        self.idx, self.fun, self.evaluator = idx, fun, evaluator
        self.rows, self.cols, self.m, self.constant = rows, cols, m, constant
        self.row0 = 0
        self.jac_slice = slice(0, 0)
        self.hessian = hessian


def _binding_indices(prog: MathematicalProgram, bindings: tuple, known: dict) -> list[np.ndarray]:
    """Each binding's variables' indices: from ``known`` (``id(evaluator) -> (evaluator, indices)``) where given for
    that very evaluator, the others looked up at once."""
    given = [known.get(id(b.evaluator()), (None, None)) for b in bindings]
    mine = [entry[1] if entry[0] is b.evaluator() else None for b, entry in zip(bindings, given)]
    found = iter(variable_indices(prog, [b.variables() for b, idx in zip(bindings, mine) if idx is None]))
    return [next(found) if idx is None else idx for idx in mine]


def _autodiff_eval(evaluator, z, jac):
    """Value and (if ``jac``) dense Jacobian of a Drake evaluator at ``z`` through ``AutoDiffXd``."""
    from pydrake.autodiffutils import ExtractGradient, ExtractValue, InitializeAutoDiff

    if not jac:
        return np.atleast_1d(np.asarray(evaluator.Eval(z), float)).reshape(-1), None
    out = np.atleast_1d(evaluator.Eval(InitializeAutoDiff(z).reshape(-1)))
    return ExtractValue(out).reshape(-1), np.atleast_2d(ExtractGradient(out)).reshape(out.size, z.size)


class _Program:
    """The program as IPOPT's C interface sees it: bounds, rows, Jacobian structure and evaluations."""

    @paused_gc()   # many small objects at once (moco_lab.util.memory): 0.47 s -> 0.1 s beside a new model's graph
    def __init__(self, prog: MathematicalProgram, exact: dict | None, hessian: bool = False):
        # Hessians that replace several bindings' in one evaluation (moco_lab.engine.callbacks.ExactCallbacks)
        self._grouped = list(getattr(exact, "grouped", ()))
        self._grouped_rows: list = []
        grouped_jacobians = list(getattr(exact, "grouped_jacobians", ()))
        exact = exact or {}
        n = self.n = prog.num_vars()
        self.xl, self.xu = np.full(n, -np.inf), np.full(n, np.inf)
        boxes, bindings, costs = prog.bounding_box_constraints(), prog.GetAllConstraints(), prog.GetAllCosts()
        visualization = prog.visualization_callbacks()
        found = iter(_binding_indices(prog, (*boxes, *bindings, *costs, *visualization),
                                      getattr(exact, "indices", None) or {}))
        for b in boxes:
            idx = next(found)
            ev = b.evaluator()
            np.maximum.at(self.xl, idx, ev.lower_bound())
            np.minimum.at(self.xu, idx, ev.upper_bound())
        self.constraints: list[_Term] = []
        lo, hi = [], []
        row = 0
        known = {"BoundingBoxConstraint", "LinearConstraint", "LinearEqualityConstraint"}
        for b in bindings:
            ev = b.evaluator()
            kind = type(ev).__name__
            idx = next(found)
            if kind == "BoundingBoxConstraint":
                continue
            m = ev.num_constraints()
            if kind in known:   # Drake's A is a CSC matrix: its entries column by column, as tocoo() lists them
                A = ev.get_sparse_A()   # (read directly: scipy's conversion cost 0.3 s for a walker's 989 bindings)
                A = A if A.format == "csc" else sp.csc_matrix(A)
                rows = np.asarray(A.indices, np.int64)
                cols = np.repeat(np.arange(A.shape[1], dtype=np.int64), np.diff(A.indptr))
                term = _Term(idx, None, ev, rows, cols, m, constant=np.array(A.data, float))
            else:
                fun = exact.get(id(ev), (None,))[0]
                pattern = ev.gradient_sparsity_pattern()
                if pattern is None:
                    rows, cols = np.divmod(np.arange(m * idx.size), idx.size)
                else:
                    rows, cols = (np.array(v, dtype=np.int64) for v in zip(*pattern)) if pattern else (
                        np.zeros(0, np.int64), np.zeros(0, np.int64))
                term = _Term(idx, fun, ev, rows, cols, m, hessian=_exact_hessian(exact, ev))
            term.row0 = row
            row += m
            lo.append(ev.lower_bound())
            hi.append(ev.upper_bound())
            self.constraints.append(term)
        self.m = row
        self.gl = np.concatenate(lo) if lo else np.zeros(0)
        self.gu = np.concatenate(hi) if hi else np.zeros(0)
        offset = 0
        jr, jc = [], []
        for t in self.constraints:
            k = t.rows.size
            t.jac_slice = slice(offset, offset + k)
            offset += k
            jr.append(t.row0 + t.rows)
            jc.append(t.idx[t.cols])
        self.nnz = offset
        self.jac_rows = np.concatenate(jr).astype(np.int32) if jr else np.zeros(0, np.int32)
        self.jac_cols = np.concatenate(jc).astype(np.int32) if jc else np.zeros(0, np.int32)
        # all linear constraints as one sparse matrix over x (their rows of g) and their constant Jacobian entries:
        # one product per evaluation instead of one per binding (programs have hundreds of small ones)
        linear = [t for t in self.constraints if t.constant is not None]
        self.nonlinear = [t for t in self.constraints if t.constant is None]
        self._group_jacobians(grouped_jacobians)
        if linear:
            g_rows = np.concatenate([t.row0 + np.arange(t.m) for t in linear])
            jac_pos = np.concatenate([np.arange(t.jac_slice.start, t.jac_slice.stop) for t in linear])
            self.linear_rows = g_rows
            self.linear_matrix = sp.csr_matrix((np.concatenate([t.constant for t in linear]),
                                                (np.concatenate([np.searchsorted(g_rows, t.row0) + t.rows
                                                                 for t in linear]),
                                                 np.concatenate([t.idx[t.cols] for t in linear]))),
                                               shape=(g_rows.size, n))
            self.linear_jac_positions = jac_pos
            self.linear_jac_values = np.concatenate([t.constant for t in linear])
        else:
            self.linear_rows = np.zeros(0, int)
            self.linear_matrix = sp.csr_matrix((0, n))
            self.linear_jac_positions = np.zeros(0, int)
            self.linear_jac_values = np.zeros(0)
        # costs: linear and quadratic ones as matrices, others through their evaluators
        self.costs = []
        for b in costs:
            ev = b.evaluator()
            idx = next(found)
            kind = type(ev).__name__
            if kind == "LinearCost":
                self.costs.append(("linear", idx, (np.asarray(ev.a(), float), float(ev.b()))))
            elif kind == "QuadraticCost":
                self.costs.append(("quadratic", idx, (np.asarray(ev.Q(), float), np.asarray(ev.b(), float),
                                                      float(ev.c()))))
            else:
                self.costs.append(("generic", idx, (exact.get(id(ev), (None,))[0], ev, _exact_hessian(exact, ev))))
        self.visualization = [(next(found), b.evaluator()) for b in visualization]
        self._x_seen = None
        # every cost's value from an exact callable (or a matrix): computed with its gradient, the same number
        self._gradient_with_value = all(kind != "generic" or data[0] is not None for kind, _, data in self.costs)
        self._gradient_at = None
        if hessian:
            self._hessian_structure()

    def _group_jacobians(self, groups: list) -> None:
        """Where each grouped Jacobian's values go among the declared entries (its bindings' own ones, matched
        entry by entry); the bindings it covers are not evaluated one by one."""
        by_id = {id(t.evaluator): t for t in self.nonlinear}
        self.jacobian_groups = []
        covered = set()
        for grp in groups:
            if not all(i in by_id for i in grp.evaluators):
                continue  # bindings removed from the program: evaluate them one by one
            positions = []
            for i, (r, c) in zip(grp.evaluators, grp.entries):
                t = by_id[i]
                width = t.idx.size
                declared = t.rows * width + t.cols
                order = np.argsort(declared, kind="stable")
                keys = np.asarray(r, np.int64) * width + np.asarray(c, np.int64)
                at = np.minimum(np.searchsorted(declared[order], keys), max(declared.size - 1, 0))
                if keys.size != declared.size or not np.array_equal(declared[order][at], keys):
                    raise AssertionError(f"{type(grp).__name__}: its entries differ from those {_describe(t.evaluator)}"
                                         " declares")
                positions.append(t.jac_slice.start + order[at])
            rows = [np.arange(by_id[i].row0, by_id[i].row0 + by_id[i].m) for i in grp.evaluators]
            rows = np.concatenate(rows) if rows else np.zeros(0, int)
            if rows.size != grp.num_rows:
                raise AssertionError(f"{type(grp).__name__}: {grp.num_rows} rows for bindings of {rows.size}")
            self.jacobian_groups.append((grp, np.concatenate(positions) if positions else np.zeros(0, int), rows))
            covered.update(grp.evaluators)
        #: the nonlinear bindings evaluated one by one
        self.jacobian_terms = [t for t in self.nonlinear if id(t.evaluator) not in covered]

    # -- the Hessian of the Lagrangian (exact second derivatives)
    def _hessian_structure(self) -> None:
        """Every binding's Hessian entries mapped to the program's lower triangle, summed into one structure."""
        parts = []   # (kind, term, global rows, global cols)
        missing = []
        replaced = {i for grp in self._grouped for i in grp.evaluators}
        for grp in self._grouped:
            parts.append(("grouped", grp, np.asarray(grp.rows, int), np.asarray(grp.cols, int)))
        #: (evaluator id, first row, rows) of the constraint bindings a grouped Hessian replaces: their multipliers
        self._grouped_rows = [(id(t.evaluator), t.row0, t.m) for t in self.nonlinear if id(t.evaluator) in replaced]
        for t in self.nonlinear:
            if id(t.evaluator) in replaced:
                continue
            if t.hessian is None:
                missing.append(_describe(t.evaluator))
                continue
            rows, cols, _ = t.hessian
            parts.append(("constraint", t, t.idx[rows], t.idx[cols]))
        for kind, idx, data in self.costs:
            if kind == "quadratic":  # ½ zᵀQz: the Hessian ½(Q + Qᵀ), constant
                Qs = data[0] + data[0].T
                r, c = np.nonzero(np.tril(Qs))
                parts.append(("quadratic", 0.5 * Qs[r, c], idx[r], idx[c]))
            elif kind == "generic":
                if id(data[1]) in replaced:
                    continue
                if data[2] is None:
                    missing.append(_describe(data[1]))
                    continue
                rows, cols, _ = data[2]
                parts.append(("cost", (idx, data), idx[rows], idx[cols]))
        if missing:
            raise ValueError("optim_hessian_approximation='exact': these terms of the program have no exact second "
                             f"derivatives: {'; '.join(missing)}. Use optim_hessian_approximation='limited-memory'.")
        gr = np.concatenate([np.maximum(r, c) for _, _, r, c in parts]) if parts else np.zeros(0, int)
        gc = np.concatenate([np.minimum(r, c) for _, _, r, c in parts]) if parts else np.zeros(0, int)
        keys = gr.astype(np.int64) * self.n + gc
        unique, position = np.unique(keys, return_inverse=True)
        self.hess_rows = (unique // self.n).astype(np.int32)
        self.hess_cols = (unique % self.n).astype(np.int32)
        self.hess_nnz = unique.size
        self.hess_parts = []
        offset = 0
        for kind, obj, r, _ in parts:
            self.hess_parts.append((kind, obj, position[offset:offset + r.size]))
            offset += r.size

    def hessian_at(self, x: np.ndarray, sigma: float, lam: np.ndarray, out: np.ndarray) -> None:
        """The lower triangle of ``∇²(σ f + λᵀ g)`` at ``x`` on the declared structure."""
        values = []
        positions = []
        multipliers = {i: lam[r0:r0 + m] for i, r0, m in self._grouped_rows}
        for kind, obj, pos in self.hess_parts:
            if kind == "constraint":
                t = obj
                v = t.hessian[2](x[t.idx], lam[t.row0:t.row0 + t.m])
            elif kind == "cost":
                idx, data = obj
                v = data[2][2](x[idx], sigma) if sigma != 0 else np.zeros(pos.size)
            elif kind == "grouped":
                v = obj.values(x, sigma, multipliers)
            else:
                v = sigma * obj
            values.append(np.asarray(v, float))
            positions.append(pos)
        out[:] = np.bincount(np.concatenate(positions), weights=np.concatenate(values),
                             minlength=self.hess_nnz) if positions else 0.0

    def violation(self, x: np.ndarray) -> float:
        """The largest violation of a constraint row or a bound at ``x``; NaN if ``x`` or a row is NaN."""
        if np.any(np.isnan(x)):
            return float("nan")
        g = np.zeros(self.m)
        self.new_point(x)
        self.constraints_at(x, g)
        if np.any(np.isnan(g)):
            return float("nan")
        with np.errstate(invalid="ignore"):   # inf - inf at unbounded sides
            gaps = np.concatenate([self.gl - g, g - self.gu, self.xl - x, x - self.xu])
        return float(np.max(gaps[~np.isnan(gaps)], initial=0.0))

    # -- evaluations
    def new_point(self, x: np.ndarray) -> None:
        """Run the program's visualization callbacks once per new point (moco_lab's node cache is one)."""
        if self._x_seen is not None and np.array_equal(self._x_seen, x):
            return
        self._x_seen = x.copy()
        for idx, ev in self.visualization:
            ev.Eval(x[idx])

    def objective(self, x: np.ndarray, grad: bool) -> tuple[float, np.ndarray | None]:
        f = 0.0
        g = np.zeros(self.n) if grad else None
        for kind, idx, data in self.costs:
            z = x[idx]
            if kind == "linear":
                a, b = data
                f += float(matmul(a, z) + b)
                if grad:
                    np.add.at(g, idx, a)
            elif kind == "quadratic":
                Q, b, c = data
                f += float(matmul(0.5 * z, matmul(Q, z)) + matmul(b, z) + c)
                if grad:
                    np.add.at(g, idx, matmul(0.5 * (Q + Q.T), z) + b)
            else:
                fun, ev = data[0], data[1]
                if fun is not None:
                    val, J = fun(z, grad)
                    f += float(val)
                    if grad:
                        np.add.at(g, idx, np.asarray(J, float).reshape(-1))
                else:
                    val, J = _autodiff_eval(ev, z, grad)
                    f += float(val[0])
                    if grad:
                        np.add.at(g, idx, J[0])
        return f, g

    def objective_value(self, x: np.ndarray) -> float:
        """The objective at ``x``. Where every cost is one of the transcription's exact callables or a Drake linear
        or quadratic cost (whose value does not depend on whether its gradient is asked for), the gradient is
        computed with the value and kept for :meth:`objective_gradient` at the same point: IPOPT asks for the
        gradient at nearly every point where it evaluated the objective (the squat: 60 values, 58 gradients), and
        the shared work (the node data, the integrands) is done once. The value is the same number either way."""
        if not self._gradient_with_value:
            return self.objective(x, False)[0]
        f, g = self.objective(x, True)
        self._gradient_at = (x.copy(), g)
        return f

    def objective_gradient(self, x: np.ndarray) -> np.ndarray:
        """The objective's gradient at ``x`` (kept from :meth:`objective_value` at the same point, else computed)."""
        kept = self._gradient_at
        if kept is not None and np.array_equal(kept[0], x):
            return kept[1]
        return self.objective(x, True)[1]

    def constraints_at(self, x: np.ndarray, out: np.ndarray) -> None:
        out[self.linear_rows] = self.linear_matrix @ x
        for grp, _, rows in self.jacobian_groups:
            out[rows] = grp.constraints(x)
        for t in self.jacobian_terms:
            z = x[t.idx]
            if t.fun is not None:
                out[t.row0:t.row0 + t.m] = np.asarray(t.fun(z, False)[0], float).reshape(-1)
            else:
                out[t.row0:t.row0 + t.m] = _autodiff_eval(t.evaluator, z, False)[0]

    def jacobian_at(self, x: np.ndarray, out: np.ndarray) -> None:
        out[self.linear_jac_positions] = self.linear_jac_values
        for t in self.jacobian_terms:
            z = x[t.idx]
            J = np.asarray(t.fun(z, True)[1], float) if t.fun is not None else _autodiff_eval(t.evaluator, z, True)[1]
            J = J.reshape(t.m, t.idx.size)
            out[t.jac_slice] = J[t.rows, t.cols]
        for grp, positions, _ in self.jacobian_groups:
            out[positions] = grp.values(x)


def _exact_hessian(exact: dict, ev):
    """The ``(rows, cols, h)`` Hessian recorded with an exact callable, or None."""
    entry = exact.get(id(ev))
    return entry[2] if entry is not None and len(entry) > 2 else None


def _describe(ev) -> str:
    name = ev.get_description() if hasattr(ev, "get_description") else ""
    return f"{type(ev).__name__} {name!r}" if name else f"a {type(ev).__name__} without a description"


@dataclass
class KKTStructure:
    """The sparsity IPOPT is given for a program: the constraint Jacobian and the Hessian of the Lagrangian.

    Attributes
    ----------
    num_variables, num_constraints : int
        n (bounds are not constraints) and m (rows of g, linear ones included).
    jacobian_rows, jacobian_cols : ndarray of int, shape (nnz_jac,)
        Row (constraint) and column (variable) of each declared Jacobian entry.
    hessian_rows, hessian_cols : ndarray of int, shape (nnz_h,)
        Lower triangle (row >= col) of ∇²(σ f + Σ λᵢ gᵢ), each entry once; empty arrays unless the Hessian is exact.
    """

    num_variables: int
    num_constraints: int
    jacobian_rows: np.ndarray
    jacobian_cols: np.ndarray
    hessian_rows: np.ndarray
    hessian_cols: np.ndarray


def kkt_structure(prog: MathematicalProgram, exact: dict | None = None, hessian: bool = True) -> KKTStructure:
    """What IPOPT's C interface is told about ``prog``'s sparsity (as :func:`solve_with_mumps` declares it).

    Parameters
    ----------
    prog : pydrake.solvers.MathematicalProgram
    exact : dict, optional
        The transcription's exact callables (``Transcription.exact_callbacks``, filled when the study's
        ``optim_hessian_approximation`` is ``"exact"``).
    hessian : bool
        Also the Hessian's structure; a ``ValueError`` names any binding without exact second derivatives.

    Returns
    -------
    KKTStructure
        Variables are numbered in ``prog.decision_variables()`` order.
    """
    P = _Program(prog, exact, hessian=hessian)
    empty = np.zeros(0, np.int32)
    return KKTStructure(P.n, P.m, P.jac_rows.copy(), P.jac_cols.copy(), P.hess_rows.copy() if hessian else empty,
                        P.hess_cols.copy() if hessian else empty)


#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_HEAP_KEEP = 512 * 1024 * 1024      # bytes of freed memory the heap may keep during a solve
_MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest allowed (and its dynamic threshold's ceiling)


@contextlib.contextmanager
def _reused_heap():
    """During a solve, let glibc's heap reuse freed blocks instead of handing them back to the system.

    Every evaluation allocates the same temporaries (node-by-node Hessians and Jacobians of a few MB); by default
    glibc maps blocks that large afresh each time and unmaps them when freed, so each evaluation pays the kernel
    for zeroed pages again (measured on the 2-D walking tracking with the exact Hessian: 0.6 s of system time in
    1.5 s of Hessian evaluations). Here blocks up to 32 MB come from the heap and up to 512 MB of freed memory stay
    in it while IPOPT runs; afterwards the heap is trimmed at glibc's default threshold again and what is free is
    returned to the system, by a thread (blocks up to 32 MB keep coming from the heap: glibc's own ceiling for the threshold it
    otherwise adapts). Numbers are unaffected. Outside glibc (or if ``mallopt`` is missing) nothing changes.
    """
    libc = _glibc()
    if libc is None:
        yield
        return
    libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    libc.mallopt(_M_TRIM_THRESHOLD, _HEAP_KEEP)
    try:
        yield
    finally:
        libc.mallopt(_M_TRIM_THRESHOLD, 128 * 1024)   # glibc's default
        # returning the free pages walks the whole heap: 0.3 s beside a large new model's expression graph; a
        # thread does it (ctypes lets go of the interpreter lock) while the solution is put together
        threading.Thread(target=libc.malloc_trim, args=(0,), daemon=True).start()


def _glibc():
    """The C library if it is glibc (it has ``mallopt`` and ``malloc_trim``), else None."""
    global _GLIBC
    if _GLIBC is None:
        try:
            lib = ctypes.CDLL(None)
            lib.mallopt.argtypes, lib.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            lib.malloc_trim.argtypes, lib.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
            _GLIBC = lib
        except (OSError, AttributeError, TypeError):   # not glibc (macOS has no mallopt; Windows no CDLL(None))
            _GLIBC = False
    return _GLIBC or None


_GLIBC = None


def solve_with_mumps(prog: MathematicalProgram, x0: np.ndarray, options: dict, exact: dict | None = None,
                     iteration: Callable[[int, float, float], bool] | None = None,
                     duals: Duals | None = None) -> IpoptCResult:
    """Solve ``prog`` from ``x0`` with IPOPT + MUMPS; ``options`` are IPOPT options (name -> value).

    Parameters
    ----------
    prog : pydrake.solvers.MathematicalProgram
    x0 : ndarray, shape (prog.num_vars(),)
        Initial guess in ``prog``'s variable order.
    options : dict
        IPOPT options; ``hessian_approximation`` is ``limited-memory`` unless given; ``"exact"`` gives IPOPT the
        exact Hessian of the Lagrangian (module docstring).
    exact : dict, optional
        ``id(evaluator) -> (fun, scalar)`` for evaluators whose exact Jacobian ``fun(z, jac) -> (value,
        Jacobian)`` can be called directly.
    iteration : callable, optional
        ``iteration(k, objective, inf_pr)`` after every IPOPT iteration; returning False stops the solve
        (status ``User_Requested_Stop``).
    duals : Duals, optional
        Multipliers to start from (an earlier result's ``duals``): used, with :data:`WARM_START_OPTIONS` under
        ``options``, if their ``structure`` is this program's (``IpoptCResult.warm_started`` says whether).
    """
    lib = _library()
    exact_hessian = options.get("hessian_approximation") == "exact"
    P = _Program(prog, exact, hessian=exact_hessian)
    n, m = P.n, P.m
    failure: list[BaseException] = []

    def arr(ptr, size):
        return np.ctypeslib.as_array(ptr, shape=(size,))

    def guarded(fn):
        def call(*args):
            if failure:
                return False
            try:
                return bool(fn(*args))
            except BaseException as err:  # reported after IPOPT returns
                failure.append(err)
                return False
        return call

    @guarded
    def eval_f(n_, x, new_x, obj, _):
        xv = arr(x, n_).copy()
        P.new_point(xv)
        obj[0] = P.objective_value(xv)
        return np.isfinite(obj[0])

    @guarded
    def eval_grad_f(n_, x, new_x, grad, _):
        xv = arr(x, n_).copy()
        P.new_point(xv)
        arr(grad, n_)[:] = P.objective_gradient(xv)
        return True

    @guarded
    def eval_g(n_, x, new_x, m_, g, _):
        if m_ == 0:
            return True
        xv = arr(x, n_).copy()
        P.new_point(xv)
        P.constraints_at(xv, arr(g, m_))
        return True

    @guarded
    def eval_jac_g(n_, x, new_x, m_, nele, irow, jcol, values, _):
        if nele == 0:
            return True
        if not values:
            arr(irow, nele)[:] = P.jac_rows
            arr(jcol, nele)[:] = P.jac_cols
            return True
        xv = arr(x, n_).copy()
        P.new_point(xv)
        P.jacobian_at(xv, arr(values, nele))
        return True

    @guarded
    def eval_h(n_, x, new_x, obj_factor, m_, lam, new_lam, nele, irow, jcol, values, _):
        if not exact_hessian:
            return False
        if not values:
            arr(irow, nele)[:] = P.hess_rows
            arr(jcol, nele)[:] = P.hess_cols
            return True
        xv = arr(x, n_).copy()
        P.new_point(xv)
        P.hessian_at(xv, float(obj_factor), arr(lam, m_).copy() if m_ else np.zeros(0), arr(values, nele))
        return True

    count = [0]

    @guarded
    def intermediate(alg_mod, k, obj, inf_pr, inf_du, mu, d_norm, reg, alpha_du, alpha_pr, ls, _):
        count[0] = k
        return True if iteration is None else iteration(int(k), float(obj), float(inf_pr)) is not False

    callbacks = (_EVAL_F(eval_f), _EVAL_G(eval_g), _EVAL_GRAD_F(eval_grad_f), _EVAL_JAC_G(eval_jac_g),
                 _EVAL_H(eval_h), _INTERMEDIATE(intermediate))
    xl = np.clip(P.xl, -_INF, _INF)
    xu = np.clip(P.xu, -_INF, _INF)
    gl = np.clip(P.gl, -_INF, _INF)
    gu = np.clip(P.gu, -_INF, _INF)
    dp = lambda a: a.ctypes.data_as(_pd)  # noqa: E731
    handle = lib.CreateIpoptProblem(n, dp(xl), dp(xu), m, dp(gl), dp(gu), P.nnz,
                                    P.hess_nnz if exact_hessian else 0, 0, *callbacks[:5])
    if not handle:
        raise RuntimeError("IPOPT (MUMPS) refused the problem (inconsistent bounds?).")
    structure = structure_digest(n, m, P.jac_rows, P.jac_cols, P.xl, P.xu, P.gl, P.gu)
    warm = None if duals is None else (duals.structure == structure and duals.constraints.size == m
                                       and duals.lower.size == n)
    try:
        opts = {"hessian_approximation": "limited-memory", "linear_solver": "mumps",
                **(WARM_START_OPTIONS if warm else {}), **options}
        for key, value in opts.items():
            if isinstance(value, str):
                ok = lib.AddIpoptStrOption(handle, key.encode(), value.encode())
            elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                # an integer for a numeric option is promoted, as Drake does
                ok = (lib.AddIpoptIntOption(handle, key.encode(), int(value))
                      or lib.AddIpoptNumOption(handle, key.encode(), float(value)))
            else:
                ok = lib.AddIpoptNumOption(handle, key.encode(), float(value))
            if not ok:
                raise ValueError(f"Invalid IPOPT option {key}={value!r}")
        lib.SetIntermediateCallback(handle, callbacks[5])
        x = np.array(x0, dtype=float, copy=True)
        g = np.zeros(max(m, 1))
        obj = np.zeros(1)
        mult_g, zl, zu = np.zeros(max(m, 1)), np.zeros(n), np.zeros(n)
        if warm:
            mult_g[:m], zl[:], zu[:] = duals.constraints, duals.lower, duals.upper
        with _reused_heap():
            code = lib.IpoptSolve(handle, dp(x), dp(g), dp(obj), dp(mult_g), dp(zl), dp(zu), None)
    finally:
        lib.FreeIpoptProblem(handle)
    if failure and not isinstance(failure[0], StopIteration):
        raise failure[0]
    status = IPOPT_C_STATUS.get(code, f"IPOPT_Return_Code_{code}")
    finite = np.isfinite(mult_g[:m]).all() and np.isfinite(zl).all() and np.isfinite(zu).all()
    return IpoptCResult(x=x, cost=float(obj[0]), code=int(code), status=status, success=code in (0, 1),
                        nit=int(count[0]), constraint_violation=P.violation(x),
                        duals=Duals(mult_g[:m], zl, zu, structure) if finite else None, warm_started=warm)
