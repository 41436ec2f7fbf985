"""Compiled dynamics: a model's equations and their exact Jacobians, evaluated at many nodes per call.

:func:`kernel_for` gives the :class:`Kernel` of a model (and a list of
optimized properties). The kernel derives the model's
:class:`~moco_lab.engine.system.SymbolicSystem` (an expression graph, cheap:
linear in the number of bodies and force elements) every time it is asked
for, hashes it, and reuses compiled functions whose hash matches — in memory,
or from the disk cache of :mod:`moco_lab.symbolic.codegen`. So compiled
dynamics are keyed on everything that determines them (bodies, joints, masses,
force elements and all their properties, paths, constraints, parameters,
moco_lab's version), never stale: edit a model after a solve and the next
solve derives, differentiates and compiles the new equations; a second process
loads the compiled functions from disk without differentiating.

Array conventions: ``Q, U, A`` have shape ``(n, nq)``, ``Z`` ``(n, nz)``,
``W`` ``(n, nw)``, ``X`` ``(n, nx)``, ``L`` ``(n, nl)``, ``P`` ``(np,)``;
``E`` ``(n, ne)`` the force elements' time-dependent inputs at the nodes'
times (:meth:`Kernel.inputs_at`; needed only by models that have some, such
as applied external loads); Jacobians have shape ``(n, rows, cols)``.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..modeling.model import Model
from ..symbolic import batched, codegen
from ..symbolic.expr import Expr, ancestors, derivatives, second_derivatives, structural_hash
from ..util.memory import paused_gc
from ..util.version import __version__
from .system import SymbolicSystem

__all__ = ["Kernel", "kernel_for", "clear_kernel_cache", "CompiledBlock", "HessianBlock",
           "build_statistics"]


@dataclass
class CompiledBlock:
    """A compiled function of node variables: values and a sparse Jacobian.

    Attributes
    ----------
    function : moco_lab.symbolic.codegen.CompiledFunction
        ``f(X, P) -> (n, num_values + nnz)``: values first, then Jacobian entries.
    num_values : int
    rows, cols : ndarray of int (nnz,)
        Jacobian entry ``k`` is ``∂ value[rows[k]] / ∂ input[cols[k]]``; input
        ``j < num_inputs`` is node input ``j``, input ``num_inputs + k`` is
        parameter ``k``.
    num_inputs, num_shared : int
    """

    function: object
    num_values: int
    rows: np.ndarray
    cols: np.ndarray
    num_inputs: int
    num_shared: int

    def __call__(self, X: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(values (n, num_values), entries (n, nnz))``."""
        Y = self.function(X, P)
        return Y[:, :self.num_values], Y[:, self.num_values:]

    def full(self, entries: np.ndarray) -> np.ndarray:
        """The whole Jacobian as a dense ``(n, num_values, num_inputs + num_shared)`` array (one scatter)."""
        n = entries.shape[0]
        width = self.num_inputs + self.num_shared
        flat = self.__dict__.get("_flat")
        if flat is None:
            flat = self._flat = self.rows * width + self.cols
        out = np.zeros((n, self.num_values * width))
        out[:, flat] = entries
        return out.reshape(n, self.num_values, width)


@dataclass
class HessianBlock:
    """A compiled weighted Hessian: the lower triangle of ``∇²(Σ_k w_k v_k)`` for per-node weights ``w``.

    Attributes
    ----------
    function : moco_lab.symbolic.codegen.CompiledFunction
        ``f([X, Wt], P) -> (n, nnz)``: node inputs, then the weights, one row per node.
    rows, cols : ndarray of int (nnz,)
        Entry ``k`` is ``∂² / ∂ input[rows[k]] ∂ input[cols[k]]`` with ``rows >= cols``; input
        ``j < num_inputs`` is node input ``j``, input ``num_inputs + k`` is parameter ``k``.
    num_inputs, num_shared, num_weights : int
    """

    function: object
    rows: np.ndarray
    cols: np.ndarray
    num_inputs: int
    num_shared: int
    num_weights: int

    def __call__(self, X: np.ndarray, Wt: np.ndarray, P: np.ndarray) -> np.ndarray:
        """The Hessian entries ``(n, nnz)`` at node inputs ``X`` (n, num_inputs) with weights ``Wt`` (n, num_weights)."""
        return self.function(np.hstack([X, Wt]), P)

    def dense(self, entries: np.ndarray) -> np.ndarray:
        """The whole symmetric Hessian ``(n, width, width)`` (``width = num_inputs + num_shared``)."""
        n = entries.shape[0]
        width = self.num_inputs + self.num_shared
        out = np.zeros((n, width, width))
        out[:, self.rows, self.cols] = entries
        off = self.rows != self.cols
        out[:, self.cols[off], self.rows[off]] = entries[:, off]
        return out


_BLOCKS: dict[str, CompiledBlock] = {}
_KERNELS: dict[tuple, "Kernel"] = {}
#: Wall times of the last builds (for benchmarks): ``derive``, ``differentiate``, ``compile``, ``load``.
build_statistics: dict[str, float] = {}


def clear_kernel_cache(disk: bool = False) -> None:
    """Forget compiled dynamics held in memory (and, with ``disk=True``, the disk cache)."""
    _BLOCKS.clear()
    _KERNELS.clear()
    if disk:
        import shutil

        shutil.rmtree(codegen.cache_dir(), ignore_errors=True)


def _cached_block(name: str, key: str, backend: str, node_inputs: Sequence, shared: Sequence, derive: Callable,
                  wrap: Callable):
    """The compiled block stored under ``key``: from memory, from the disk cache, or derived and compiled now.

    ``derive() -> (outputs, meta)`` gives the expressions to compile and the data (JSON) to keep beside them;
    ``wrap(fn, meta)`` makes the block of the compiled function.
    """
    cached = _BLOCKS.get(key)
    if cached is not None:
        return cached
    meta_path = codegen.cache_dir() / f"{name}-{key}.json"
    t0 = time.perf_counter()
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            fn = codegen.load_function(name, key, len(node_inputs), len(shared), meta["num_outputs"], backend)
        except (OSError, ValueError, KeyError):
            fn = None
        if fn is not None:
            block = _BLOCKS[key] = wrap(fn, meta)
            build_statistics["load"] = build_statistics.get("load", 0.0) + time.perf_counter() - t0
            return block
    outputs, meta = derive()
    meta["num_outputs"] = len(outputs)
    t1 = time.perf_counter()
    fn = codegen.compile_function(outputs, node_inputs, shared, name=name, backend=backend, key=key)
    t2 = time.perf_counter()
    codegen.write_atomic(meta_path, json.dumps(meta))
    build_statistics["differentiate"] = build_statistics.get("differentiate", 0.0) + t1 - t0
    build_statistics["compile"] = build_statistics.get("compile", 0.0) + t2 - t1
    block = _BLOCKS[key] = wrap(fn, meta)
    return block


def _dynamics_values(system: SymbolicSystem) -> list:
    """The values of the ``"dynamics"`` block, ``[R, ż, Rw, τ_applied, τ_passive]``: the other dynamics blocks'
    values are their first ``nq + nz + nw``, and all hash this one list (one walk of the equations per model:
    :func:`~moco_lab.symbolic.expr.structural_hash` keeps it per graph and outputs)."""
    s = system
    return s.residual + s.state_derivatives + s.implicit_residuals + s.applied + s.applied_passive


@paused_gc()
def _block(name: str, values: Sequence, system: SymbolicSystem, wrt: Sequence | None,
           backend: str | None = None, hashed: Sequence | None = None) -> CompiledBlock:
    """Compile ``values`` and their Jacobian w.r.t. ``wrt`` (node inputs and parameters), cached by hash;
    ``hashed``: a list the values are the first ones of, hashed instead (with their number)."""
    backend = backend or codegen.default_backend()
    inputs = list(system.node_inputs) + list(system.p)
    nx, npar = len(system.node_inputs), len(system.p)
    wrt_ids = None if wrt is None else [inputs.index(v) for v in wrt]
    key = structural_hash(values if hashed is None else hashed, inputs, extra="|".join(
        [__version__, codegen.CODEGEN_VERSION, backend, name, str(nx), str(npar), repr(wrt_ids),
         f"values={len(values)}"]))[:40]

    def derive():
        rows, cols, entries = [], [], []
        if wrt:
            D = derivatives(values, list(wrt))
            for r, d in enumerate(D):
                for k in sorted(d):
                    rows.append(r)
                    cols.append(wrt_ids[k])
                    entries.append(d[k])
        return list(values) + entries, {"num_values": len(values), "rows": rows, "cols": cols}

    def wrap(fn, meta):
        return CompiledBlock(fn, meta["num_values"], np.array(meta["rows"], int), np.array(meta["cols"], int), nx,
                             npar)

    return _cached_block(name, key, backend, system.node_inputs, system.p, derive, wrap)


@paused_gc()
def _hessian_block(name: str, values: Sequence, system: SymbolicSystem, wrt: Sequence,
                   backend: str | None = None, hashed: Sequence | None = None) -> HessianBlock:
    """Compile the weighted Hessian of ``values`` w.r.t. ``wrt`` (node inputs and parameters), cached by hash;
    ``hashed`` as for :func:`_block`."""
    backend = backend or codegen.default_backend()
    weights = system.graph.vars([f"hessian_weight_{k}" for k in range(len(values))])
    inputs = list(system.node_inputs) + list(system.p)
    nx, npar = len(system.node_inputs), len(system.p)
    wrt_ids = [inputs.index(v) for v in wrt]
    key = structural_hash(values if hashed is None else hashed, inputs + weights, extra="|".join(
        [__version__, codegen.CODEGEN_VERSION, backend, name, "hessian", str(nx), str(npar), repr(wrt_ids),
         f"values={len(values)}"]))[:40]

    def derive():
        entries = second_derivatives(values, weights, list(wrt))
        order = sorted(entries)
        # in input numbering, rows >= cols (wrt may list the inputs in another order)
        pairs = [(wrt_ids[i], wrt_ids[j]) for i, j in order]
        return [entries[k] for k in order], {"rows": [max(p) for p in pairs], "cols": [min(p) for p in pairs]}

    def wrap(fn, meta):
        return HessianBlock(fn, np.array(meta["rows"], int), np.array(meta["cols"], int), nx, npar, len(values))

    return _cached_block(name, key, backend, list(system.node_inputs) + weights, system.p, derive, wrap)


class Kernel:
    """Vectorized dynamics of a model with exact Jacobians.

    Parameters
    ----------
    model : Model
    parameters : list of str
        Property paths (see :meth:`Model.properties`) treated as inputs ``P``
        instead of fixed values, in this order.
    system : SymbolicSystem, optional
        The model's derived equations (derived here if not given).
    """

    def __init__(self, model: Model, parameters: Sequence[str] = (), system: SymbolicSystem | None = None):
        self.model = model
        self.parameters = list(parameters)
        if system is None:
            t0 = time.perf_counter()
            system = SymbolicSystem(model, self.parameters)
            build_statistics["derive"] = build_statistics.get("derive", 0.0) + time.perf_counter() - t0
        self.system = s = system
        self.layout = s.layout
        self.nq = model.nq
        self.nz, self.nw, self.nx = len(s.z), len(s.w), len(s.x)
        self.nl = len(s.lam)
        self.ne = len(s.e)
        self.npar = len(s.p)
        self._blocks: dict[str, CompiledBlock] = {}

    # ------------------------------------------------------------ compiled blocks (lazily)
    def block(self, name: str) -> CompiledBlock:
        """One of the kernel's compiled functions (compiled, or loaded from the cache, on first use).

        ``"dynamics"``: values ``[R (nq), ż (nz), Rw (nw), τ_applied (nq), τ_passive (nq)]`` and
        ``∂R/∂u̇`` (the mass matrix). ``"dynamics_jacobian"``: values
        ``[R, ż, Rw]`` and their Jacobian w.r.t. every node variable and
        parameter. ``"dynamics_jacobian_prescribed"``: the same values, their Jacobian w.r.t. all but ``q``,
        ``u`` and ``u̇`` (prescribed kinematics: the motion is data, and the derivatives of everything that
        depends on it alone — muscle paths' lengths and moment arms — are not needed). ``"constraints"``: the constraint terms of
        :meth:`SymbolicSystem.constraint_terms` and their Jacobian.
        """
        if name not in self._blocks:
            s = self.system
            every = _dynamics_values(s)
            if name == "dynamics":
                blk = _block("dynamics", every, s, s.a)
            elif name == "dynamics_jacobian":
                values = s.residual + s.state_derivatives + s.implicit_residuals
                blk = _block("dynamics_jacobian", values, s, self._variables(), hashed=every)
            elif name == "dynamics_jacobian_prescribed":
                values = s.residual + s.state_derivatives + s.implicit_residuals
                blk = _block("dynamics_jacobian_prescribed", values, s, self._variables(motion_fixed=True),
                             hashed=every)
            elif name == "constraints":
                t = s.constraint_terms()
                values = t["phi"] + t["phid"] + t["bias"] + t["Ga"] + t["GtG"] + t["GtL"] + t["proj"]
                wrt = s.q + s.u + s.a + s.lam + s.gam + s.mu
                blk = _block("constraints", values, s, wrt)
            else:
                raise KeyError(f"unknown kernel block {name!r}")
            self._blocks[name] = blk
        return self._blocks[name]

    def _variables(self, motion_fixed: bool = False) -> list:
        """What the blocks differentiate w.r.t.: every node variable and parameter, or (``motion_fixed``:
        prescribed kinematics, where ``q``, ``u``, ``u̇`` are data) all but ``q``, ``u``, ``u̇``."""
        s = self.system
        fixed = s.z + s.w + s.x + s.lam + s.p
        return fixed if motion_fixed else s.q + s.u + s.a + fixed

    def _first_built(self, keys: Sequence) -> object | None:
        """The first of the blocks ``keys`` already built (in memory), or None: values another block already
        computes with the same arithmetic, so that asking for them compiles nothing new."""
        return next((self._blocks[k] for k in keys if k in self._blocks), None)

    def hessian_block(self, kind: str | tuple) -> HessianBlock:
        """A compiled weighted Hessian (compiled, or loaded from the cache, on first use).

        ``"dynamics"``: values ``[R (nq), ż (nz), Rw (nw)]`` (weights in that order), w.r.t. every node variable
        and parameter. ``"constraints"``: values ``[φ, φ̇, Ġu, G a (nl each), Gᵀγ (nq), F_xᵀμ (2 nq)]``.
        ``("outputs", names)``: the named outputs' values, concatenated (see :meth:`output_block`).
        ``"dynamics_prescribed"``, ``("outputs_prescribed", names)``: the same w.r.t. all but ``q``, ``u``, ``u̇``
        (prescribed kinematics, where they are data: their rows and columns would be computed and dropped).
        """
        key = ("hessian", kind)
        if key not in self._blocks:
            s = self.system
            wrt, fixed = self._variables(), self._variables(motion_fixed=True)
            if kind in ("dynamics", "dynamics_prescribed"):
                values = s.residual + s.state_derivatives + s.implicit_residuals
                blk = _hessian_block("dynamics_hessian" if kind == "dynamics" else "dynamics_hessian_prescribed",
                                     values, s, wrt if kind == "dynamics" else fixed, hashed=_dynamics_values(s))
            elif kind == "constraints":
                t = s.constraint_terms()
                values = t["phi"] + t["phid"] + t["bias"] + t["Ga"] + t["GtG"] + t["proj"]
                blk = _hessian_block("constraints_hessian", values, s, s.q + s.u + s.a + s.lam + s.gam + s.mu)
            elif isinstance(kind, tuple) and kind[0] in ("outputs", "outputs_prescribed"):
                values = [v for name in kind[1] for v in s.outputs[name]]
                blk = (_hessian_block("outputs_hessian", values, s, wrt) if kind[0] == "outputs"
                       else _hessian_block("outputs_hessian_prescribed", values, s, fixed))
            else:
                raise KeyError(f"unknown kernel Hessian {kind!r}")
            self._blocks[key] = blk
        return self._blocks[key]

    def hessian(self, kind: str | tuple, weights: np.ndarray, Q: np.ndarray, U: np.ndarray, A: np.ndarray | None = None,
                Z: np.ndarray | None = None, W: np.ndarray | None = None, X: np.ndarray | None = None,
                L: np.ndarray | None = None, P: np.ndarray | None = None, E: np.ndarray | None = None,
                C: np.ndarray | None = None, Mu: np.ndarray | None = None) -> np.ndarray:
        """The weighted Hessian ``∇²(Σ_k w_k v_k)`` of :meth:`hessian_block` ``kind`` at ``n`` nodes.

        Parameters
        ----------
        weights : (n, num_values)
            One weight per value and node (the values' order of :meth:`hessian_block`).

        Returns
        -------
        ndarray (n, K, K)
            Symmetric, over the node inputs (columns of the kernel layout, ``K0 = layout.total``) and then the
            parameters: ``K = K0 + np``.
        """
        blk, entries = self.hessian_entries(kind, weights, Q, U, A=A, Z=Z, W=W, X=X, L=L, P=P, E=E, C=C, Mu=Mu)
        return blk.dense(entries)

    def hessian_entries(self, kind: str | tuple, weights: np.ndarray, Q: np.ndarray, U: np.ndarray,
                        A: np.ndarray | None = None, Z: np.ndarray | None = None, W: np.ndarray | None = None,
                        X: np.ndarray | None = None, L: np.ndarray | None = None, P: np.ndarray | None = None,
                        E: np.ndarray | None = None, C: np.ndarray | None = None,
                        Mu: np.ndarray | None = None) -> tuple[HessianBlock, np.ndarray]:
        """:meth:`hessian` as its block and the entries ``(n, nnz)`` at the block's ``rows``/``cols`` (lower
        triangle), without the dense ``(n, K, K)`` array."""
        blk = self.hessian_block(kind)
        n = Q.shape[0]
        if kind == "constraints" or E is None:
            E = np.zeros((n, self.ne)) if self.ne else None
        XX = self._inputs(Q, U, A, Z, W, X, L, C, Mu, E=E)
        return blk, blk(XX, np.asarray(weights, float).reshape(n, blk.num_weights), self._P(P))

    def mass_matrix(self, Q: np.ndarray, U: np.ndarray, Z: np.ndarray | None, X: np.ndarray | None,
                    P: np.ndarray | None, W: np.ndarray | None = None, L: np.ndarray | None = None,
                    E: np.ndarray | None = None) -> np.ndarray:
        """The mass matrix ``M = ∂R/∂u̇`` (n, nq, nq) at ``n`` nodes."""
        _, ent = self.block("dynamics")(self._inputs(Q, U, None, Z, W, X, L, E=E), self._P(P))
        return self._mass(ent)

    def _mass(self, entries: np.ndarray) -> np.ndarray:
        """The mass matrix (n, nq, nq) from the ``"dynamics"`` block's Jacobian entries."""
        return self.block("dynamics").full(entries)[:, :self.nq, self.layout.slice("a")]

    def output_names(self) -> list[str]:
        """Names of the outputs this model offers (force elements' outputs, ``/com_position``, ...)."""
        return list(self.system.outputs)

    def output_block(self, names: Sequence[str], motion_fixed: bool = False,
                     values_only: bool = False) -> tuple[CompiledBlock, dict[str, slice]]:
        """The compiled outputs ``names`` (values and their Jacobian w.r.t. node variables and parameters;
        ``motion_fixed``: not w.r.t. ``q``, ``u``, ``u̇``, as :meth:`evaluate`; ``values_only``: no Jacobian).

        Returns the block and, per name, the slice of its values.
        """
        key = tuple(names)
        kind = "outputs_values" if values_only else "outputs_prescribed" if motion_fixed else "outputs"
        if (kind, key) not in self._blocks:
            values, rows = self._output_values(names)
            wrt = None if values_only else self._variables(motion_fixed)
            self._blocks[(kind, key)] = (_block(kind, values, self.system, wrt), rows)
        return self._blocks[(kind, key)]

    def _output_values(self, names: Sequence[str]) -> tuple[list, dict[str, slice]]:
        """The outputs' expressions, concatenated, and each name's slice of them (``KeyError`` with suggestions
        for a name the model does not offer)."""
        outputs = self.system.outputs
        values, rows = [], {}
        for name in names:
            if name not in outputs:
                from ..util.names import did_you_mean

                raise KeyError(did_you_mean(name, list(outputs), "model output"))
            rows[name] = slice(len(values), len(values) + len(outputs[name]))
            values += outputs[name]
        return values, rows

    def output_dependence(self, names: Sequence[str]) -> set[str]:
        """The node-variable blocks (``"q"``, ``"u"``, ``"a"``, ``"z"``, ``"w"``, ``"x"``, ``"lam"``, ``"e"``) and
        ``"p"`` (parameters) the outputs ``names`` depend on, read off their expressions (nothing compiled)."""
        s = self.system
        values = [v for v in self._output_values(names)[0] if isinstance(v, Expr)]
        group = {}
        for label, variables in (("q", s.q), ("u", s.u), ("a", s.a), ("z", s.z), ("w", s.w), ("x", s.x),
                                 ("lam", s.lam), ("e", s.e), ("p", s.p)):
            group.update({v.id: label for v in variables})
        return {group[n.id] for n in ancestors(values) if n.id in group}

    def outputs(self, names: Sequence[str], Q: np.ndarray, U: np.ndarray, X: np.ndarray | None = None,
                P: np.ndarray | None = None, Z: np.ndarray | None = None, A: np.ndarray | None = None,
                W: np.ndarray | None = None, L: np.ndarray | None = None,
                jac: bool = False, E: np.ndarray | None = None, motion_fixed: bool = False) -> dict:
        """Model outputs at ``n`` nodes (``motion_fixed``: the Jacobian's ``q``, ``u``, ``u̇`` columns are left
        zero, as in :meth:`evaluate`).

        Returns
        -------
        dict
            ``name -> (n, k)`` values; with ``jac`` also ``"J"``: ``name ->``
            dict of derivative blocks ``dq, du, da, dz, dw, dx, dl, dp`` (each
            ``(n, k, width)``).
        """
        if jac:
            blk, rows = self.output_block(names, motion_fixed)
        else:  # the values alone: a block of these outputs already built, or one without derivatives (a Jacobian
            # compiled for nothing can take minutes: the wrapped 3-D paths)
            key = tuple(names)
            blk, rows = (self._first_built([("outputs_prescribed", key), ("outputs", key)])
                         or self.output_block(names, values_only=True))
        vals, ent = blk(self._inputs(Q, U, A, Z, W, X, L, E=E), self._P(P))
        out = {name: vals[:, r] for name, r in rows.items()}
        if jac:
            lay = self.layout
            cols = {"dq": lay.slice("q"), "du": lay.slice("u"), "da": lay.slice("a"), "dz": lay.slice("z"),
                    "dw": lay.slice("w"), "dx": lay.slice("x"), "dl": lay.slice("lam"),
                    "dp": slice(lay.total, lay.total + self.npar)}
            full = blk.full(ent)
            out["J"] = {name: {k: full[:, r, c] for k, c in cols.items()} for name, r in rows.items()}
        return out

    def compile_all(self) -> "Kernel":
        """Compile every block now (instead of on first use); returns self."""
        self.block("dynamics")
        self.block("dynamics_jacobian")
        if self.nl:
            self.block("constraints")
        return self

    def inputs_at(self, time: np.ndarray) -> np.ndarray | None:
        """The force elements' time-dependent inputs ``E`` (n, ne) at ``time`` (n,); None if the model has none."""
        return self.model.input_values(time) if self.ne else None

    def _inputs(self, Q, U, A=None, Z=None, W=None, X=None, L=None, C=None, Mu=None, E=None) -> np.ndarray:
        lay = self.layout
        n = Q.shape[0]
        XX = np.zeros((n, lay.total))
        if self.ne and E is None:
            raise ValueError(
                f"The model's equations depend on time through the inputs {self.system.e_names[:3]}"
                f"{' ...' if self.ne > 3 else ''} (data such as applied external loads); this evaluation was "
                "given no time. Pass the inputs at the nodes' times (E=kernel.inputs_at(time)).")
        for block, val in (("q", Q), ("u", U), ("a", A), ("z", Z), ("w", W), ("x", X), ("lam", L), ("gam", C),
                           ("mu", Mu), ("e", E)):
            if val is not None and lay.sizes[block]:
                XX[:, lay.slice(block)] = val
        return XX

    def _P(self, P) -> np.ndarray:
        return np.zeros(0) if P is None else np.asarray(P, float).reshape(-1)

    # ------------------------------------------------------------ evaluation
    def evaluate(self, Q: np.ndarray, U: np.ndarray, X: np.ndarray | None, P: np.ndarray | None,
                 Z: np.ndarray | None = None, A: np.ndarray | None = None, jac: bool = False,
                 W: np.ndarray | None = None, L: np.ndarray | None = None, E: np.ndarray | None = None,
                 motion_fixed: bool = False, dense: bool = True) -> dict:
        """Dynamics at ``n`` nodes.

        Parameters
        ----------
        Q, U : (n, nq); X : (n, nx); P : (np,); Z : (n, nz) auxiliary states;
        A : (n, nq) accelerations for the implicit residual, or None for
            forward dynamics.
        W : (n, nw) implicit derivative variables (e.g. normalized tendon
            force derivatives of muscles with implicit tendon dynamics).
        L : (n, nl) Lagrange multipliers of the model's kinematic
            constraints; the residual has ``+ Gᵀλ`` (``M u̇ + f_inertial −
            f_app + Gᵀλ = 0``) and the Jacobians a ``dl`` block.
        E : (n, ne) the force elements' time-dependent inputs at the nodes'
            times (:meth:`inputs_at`); required when the model has some.
        motion_fixed : bool
            With ``jac`` and ``A`` given: ``q``, ``u``, ``u̇`` are data (prescribed kinematics), so the Jacobian
            leaves their columns zero and is computed without them (much cheaper where muscle paths are large).
        dense : bool
            With ``jac`` and ``A`` given, False returns the Jacobian as the compiled block's sparse entries
            (``"entries"``: the :class:`CompiledBlock` and its entries ``(n, nnz)``; values ``[R, Zd, Rw]``, inputs
            in :attr:`layout` order, then the parameters) instead of the dense ``"J"``, ``"JZ"``, ``"JW"``.

        Returns
        -------
        dict
            ``"A"`` (n, nq) forward-dynamics accelerations (when ``A`` is None)
            or ``"R"`` (n, nq) the residual; ``"Zd"`` (n, nz) state
            derivatives; ``"Rw"`` (n, nw) implicit residuals (the kinematic-constraint terms are
            :meth:`constraints`', computed only when asked for).
            With ``jac``: ``"J"`` = derivatives of A (or R) w.r.t. ``dq, du, dz,
            dw, dx, dp, dl`` (and ``da`` = M for R), ``"JZ"`` of Zd and ``"JW"``
            of Rw, each of shape ``(n, rows, cols)``.
        """
        n = Q.shape[0]
        P = self._P(P)
        nq, nz, nw = self.nq, self.nz, self.nw
        res = {}
        if A is None:
            vals, ent = self.block("dynamics")(self._inputs(Q, U, None, Z, W, X, L, E=E), P)
            M = self._mass(ent)
            R0 = vals[:, :nq]
            Aval = -batched.solve(M, R0) if nq else np.zeros((n, 0))
            res["A"] = Aval
            res["Zd"] = vals[:, nq:nq + nz]
            res["Rw"] = vals[:, nq + nz:nq + nz + nw]
        else:
            Aval = A
            if not jac:
                blk = self._first_built(["dynamics_jacobian_prescribed", "dynamics_jacobian"]) or self.block("dynamics")
                vals, _ = blk(self._inputs(Q, U, A, Z, W, X, L, E=E), P)
                res["R"] = vals[:, :nq]
                res["Zd"] = vals[:, nq:nq + nz]
                res["Rw"] = vals[:, nq + nz:nq + nz + nw]
        if not jac:
            return res
        blk = self.block("dynamics_jacobian_prescribed" if motion_fixed and A is not None else "dynamics_jacobian")
        vals, ent = blk(self._inputs(Q, U, Aval, Z, W, X, L, E=E), P)
        if A is not None:
            res["R"] = vals[:, :nq]
            res["Zd"] = vals[:, nq:nq + nz]
            res["Rw"] = vals[:, nq + nz:nq + nz + nw]
            if not dense:
                res["entries"] = (blk, ent)
                return res
        lay = self.layout
        npar = self.npar
        cols = {"dq": lay.slice("q"), "du": lay.slice("u"), "da": lay.slice("a"), "dz": lay.slice("z"),
                "dw": lay.slice("w"), "dx": lay.slice("x"), "dl": lay.slice("lam"),
                "dp": slice(lay.total, lay.total + npar)}
        groups = {"J": slice(0, nq), "JZ": slice(nq, nq + nz), "JW": slice(nq + nz, nq + nz + nw)}
        full = blk.full(ent)
        out = {g: {k: full[:, r, c] for k, c in cols.items()} for g, r in groups.items()}
        for g in ("JZ", "JW"):
            out[g].pop("da")
        JR = out["J"]
        if A is None:
            M = JR.pop("da")
            res["J"] = _solve_blocks(M, JR)
        else:
            res["J"] = JR
        res["JZ"], res["JW"] = out["JZ"], out["JW"]
        return res

    def constraints(self, Q: np.ndarray, U: np.ndarray, L: np.ndarray | None = None, C: np.ndarray | None = None,
                    A: np.ndarray | None = None) -> dict:
        """Kinematic-constraint terms at ``n`` nodes; empty without constraints.

        Parameters
        ----------
        Q, U : (n, nq); L : (n, nl) multipliers λ; C : (n, nl) velocity
        corrections γ; A : (n, nq) accelerations (for ``Ga_q``).

        Returns
        -------
        dict of ndarray
            ``phi, phid, bias`` (n, nl); ``G, phid_q, bias_q, bias_u`` (n, nl, nq);
            ``GtL, GtG`` (n, nq); ``GtL_q, GtG_q, Ga_q`` (n, nq or nl, nq).
        """
        if not self.nl:
            return {}
        n, nl, nq = Q.shape[0], self.nl, self.nq
        L = np.zeros((n, nl)) if L is None else L
        blk = self.block("constraints")
        # φ(q) reads no time-dependent input: zeros stand in for them
        vals, ent = blk(self._inputs(Q, U, A, None, None, None, L, C, E=np.zeros((n, self.ne))), np.zeros(self.npar))
        lay = self.layout
        rows, o = {}, 0
        out = {}
        for key, size in (("phi", nl), ("phid", nl), ("bias", nl), ("Ga", nl), ("GtG", nq), ("GtL", nq)):
            out[key] = vals[:, o:o + size]
            rows[key] = slice(o, o + size)
            o += size
        qs, us = lay.slice("q"), lay.slice("u")
        full = blk.full(ent)
        out["G"] = full[:, rows["phi"], qs]
        out["phid_q"] = full[:, rows["phid"], qs]
        out["bias_q"] = full[:, rows["bias"], qs]
        out["bias_u"] = full[:, rows["bias"], us]
        out["Ga_q"] = full[:, rows["Ga"], qs]
        out["GtG_q"] = full[:, rows["GtG"], qs]
        out["GtL_q"] = full[:, rows["GtL"], qs]
        return out

    def projection(self, Q: np.ndarray, U: np.ndarray, Mu: np.ndarray) -> dict:
        """Bordalba et al.'s state projection ``F_x(q, u)ᵀ μ`` at ``n`` nodes.

        ``F = [φ(q); φ̇(q, u)]`` (2 nl), ``x = [q; u]``. Returns ``proj`` (n, 2 nq), its Jacobian
        ``proj_x`` (n, 2 nq, 2 nq) w.r.t. x, and ``Fx`` (n, 2 nl, 2 nq).
        """
        n, nl, nq = Q.shape[0], self.nl, self.nq
        blk = self.block("constraints")
        vals, ent = blk(self._inputs(Q, U, None, None, None, None, None, None, Mu, E=np.zeros((n, self.ne))),
                        np.zeros(self.npar))
        o = 4 * nl + 2 * nq
        rows = slice(o, o + 2 * nq)
        lay = self.layout
        full = blk.full(ent)
        proj_x = np.concatenate([full[:, rows, lay.slice("q")], full[:, rows, lay.slice("u")]], axis=2)
        Fx = np.zeros((n, 2 * nl, 2 * nq))
        G = full[:, :nl, lay.slice("q")]
        Fx[:, :nl, :nq] = G
        Fx[:, nl:, :nq] = full[:, nl:2 * nl, lay.slice("q")]
        Fx[:, nl:, nq:] = G
        return {"proj": vals[:, rows], "proj_x": proj_x, "Fx": Fx}

    def forward_constrained(self, Q: np.ndarray, U: np.ndarray, X: np.ndarray | None, P: np.ndarray | None,
                            Z: np.ndarray | None = None, W: np.ndarray | None = None,
                            E: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Accelerations and multipliers of the constrained dynamics (a KKT solve per node).

        Solves ``[M Gᵀ; G 0] [u̇; λ] = [f_app − f_inertial; −Ġu]`` (so that
        ``φ̈ = G u̇ + Ġu = 0``), as a time-stepping simulator does.

        Returns
        -------
        A : (n, nq) accelerations; L : (n, nl) multipliers; GtL : (n, nq) ``Gᵀλ``.
        """
        n, nq = Q.shape
        vals, ent = self.block("dynamics")(self._inputs(Q, U, None, Z, W, X, None, E=E), self._P(P))
        M = self._mass(ent)
        R0 = vals[:, :nq]
        if not self.nl:
            return -batched.solve(M, R0), np.zeros((n, 0)), np.zeros((n, nq))
        c = self.constraints(Q, U)
        G, nl = c["G"], self.nl
        K = np.zeros((n, nq + nl, nq + nl))
        K[:, :nq, :nq] = M
        K[:, :nq, nq:] = np.transpose(G, (0, 2, 1))
        K[:, nq:, :nq] = G
        rhs = np.concatenate([-R0, -c["bias"]], axis=1)
        sol = batched.solve(K, rhs)
        L = sol[:, nq:]
        return sol[:, :nq], L, np.einsum("nlq,nl->nq", G, L)

    def applied(self, Q: np.ndarray, U: np.ndarray, Z: np.ndarray | None, X: np.ndarray | None,
                P: np.ndarray | None, E: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Generalized forces of the force elements and state derivatives (no Jacobians).

        Returns
        -------
        tau : (n, nq)
            Generalized forces of every force element (not gravity), by coordinate.
        Zd : (n, nz)
        """
        nq, nz = self.nq, self.nz
        vals, _ = self.block("dynamics")(self._inputs(Q, U, None, Z, None, X, None, E=E), self._P(P))
        o = nq + nz + self.nw
        return vals[:, o:o + nq], vals[:, nq:nq + nz]

    def passive_forces(self, Q: np.ndarray, U: np.ndarray, Z: np.ndarray | None, X: np.ndarray | None,
                       P: np.ndarray | None, E: np.ndarray | None = None) -> np.ndarray:
        """Generalized forces (n, nq) of the passive force elements (no controls, no states; applied external
        loads count as passive)."""
        vals, _ = self.block("dynamics")(self._inputs(Q, U, None, Z, None, X, None, E=E), self._P(P))
        o = 2 * self.nq + self.nz + self.nw
        return vals[:, o:o + self.nq]

    def residual(self, Q: np.ndarray, U: np.ndarray, A: np.ndarray | None, X: np.ndarray | None, P: np.ndarray | None,
                 jac: bool = False, Z: np.ndarray | None = None,
                 E: np.ndarray | None = None) -> tuple[np.ndarray, dict | None]:
        """Inverse-dynamics residual ``M A + f_inertial - f_app`` at each node (``R``, and ``J`` with ``jac``)."""
        res = self.evaluate(Q, U, X, P, Z=Z, A=A, jac=jac, E=E)
        return res["R"], res.get("J")

    def forward(self, Q: np.ndarray, U: np.ndarray, X: np.ndarray | None, P: np.ndarray | None, jac: bool = False,
                Z: np.ndarray | None = None, E: np.ndarray | None = None) -> tuple[np.ndarray, dict | None]:
        """Forward dynamics: generalized accelerations ``udot`` at each node (and ``J`` with ``jac``)."""
        res = self.evaluate(Q, U, X, P, Z=Z, jac=jac, E=E)
        return res["A"], res.get("J")


#: Former name.


def _solve_blocks(M: np.ndarray, blocks: dict) -> dict:
    """``−M⁻¹ v`` for every block ``v`` (n, nq, k) of ``blocks`` with columns, from one elimination of each node's
    ``M`` (n, nq, nq) for all their columns at once; blocks without columns as they are."""
    keys = [k for k, v in blocks.items() if v.shape[2]]
    out = dict(blocks)
    if keys:
        X = batched.solve(M, np.concatenate([blocks[k] for k in keys], axis=2))
        edges = np.cumsum([0] + [blocks[k].shape[2] for k in keys])
        for k, a, b in zip(keys, edges[:-1], edges[1:]):
            out[k] = -X[:, :, a:b]
    return out


def kernel_for(model: Model, parameters: tuple[str, ...] = ()) -> Kernel:
    """The model's compiled dynamics for the current state of the model.

    The model's equations are derived again (cheap) and hashed; compiled
    functions are reused when the hash matches (in memory or on disk), so an
    edited model never gets stale dynamics.
    """
    t0 = time.perf_counter()
    system = SymbolicSystem(model, list(parameters))
    build_statistics["derive"] = build_statistics.get("derive", 0.0) + time.perf_counter() - t0
    return Kernel(model, list(parameters), system)
