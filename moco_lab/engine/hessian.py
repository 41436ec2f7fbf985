"""Exact second derivatives of a transcription: each binding's part of the Hessian of IPOPT's Lagrangian.

With ``SolverSettings(optim_hessian_approximation="exact")`` IPOPT asks for ``∇²(σ f(x) + Σ_i λ_i c_i(x))``
instead of building a limited-memory approximation. Every nonlinear binding the transcription adds gives its
part here, as the lower triangle over its own variables, with a structure declared once:

* a **chunk's constraint rows** (:class:`ChunkHessian`): the collocation defects are linear in the states and in
  the state derivatives ``F`` times the interval's duration, so they contribute the node Hessians of ``F``
  weighted by their multipliers and the duration, and the cross terms of the duration with ``∂F``; residual and
  kinematic rows contribute their node Hessians; the partial integrals ``I_c − (t_f − t_0) Σ_k q_k s_k`` the
  second derivatives of the goals' integrands ``s`` (their own ``BoundGoal.hessian``, chained through the model
  outputs they read) with the time of each node ``t_k = t_0 + τ_k (t_f − t_0)``;
* a **chunk's plain integral costs**: the same integrand terms, weighted by ``σ`` and the goals' weights;
* a **goal's endpoint function** (:class:`EndpointHessian`): the goal's ``endpoint_generic`` (and the divisions
  by mass, duration or the centre of mass' displacement) evaluated on :class:`~moco_lab.symbolic.jet.Jet`
  numbers, chained through the model outputs of the first and last grid points.

The node Hessians of the model's equations come from the kernel (:meth:`~moco_lab.engine.kernel.Kernel.hessian`:
the weighted second derivatives of the residual, state derivatives and implicit residuals, and of the
kinematic-constraint terms, derived as an expression graph and compiled). In explicit mode the accelerations
``u̇ = A(x)`` solve ``R(x, u̇) = 0``; their weighted Hessian is that of ``w·u̇ + ν·R`` with the adjoint
``ν = −M⁻ᵀ w``, reduced by ``u̇``'s first derivatives: ``[I; A′]ᵀ ∇²(ν·R) [I; A′]`` (``R`` is linear in ``u̇``).

The declared structure is the assembly run once on structural patterns (random positive values wherever a
second derivative can be non-zero: the compiled Hessians' entries, the goals' listed pairs, the patterns of the
first derivatives), as for the Jacobians.

The optimizer sums the bindings' Hessians, so it does not evaluate the chunks one by one: :class:`DynamicsHessian`
and :class:`IntegralCostsHessian` give the sums over all chunks of their constraint rows' and of their plain
integral costs' Hessians in one pass over the grid points (a point two chunks share once, with their weights
summed), on the union of the chunks' declared entries. The chunk-by-chunk forms stay the reference they are
tested against.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..ocp.goals import EndpointData, NodeData
from ..symbolic import batched
from ..symbolic.jet import Jet, jet_sqrt
from .patterns import kernel_to_block, node_patterns, patterned

if TYPE_CHECKING:
    from ..ocp.goals import BoundGoal

__all__ = ["ChunkHessian", "DynamicsHessian", "EndpointHessian", "IntegralCostsHessian", "unsupported_for_exact_hessian",
           "lower_entries"]


def unsupported_for_exact_hessian(tr: Any) -> list[str]:
    """What in a transcription has no exact second derivatives (empty: everything has)."""
    out = []
    for pc in tr.problem.path_constraints:
        out.append(f"path constraint {pc.name!r} (a Python function)")
    for b in tr.bound_goals:
        if b.native is not None:
            continue  # Drake's linear and quadratic bindings are checked by the optimizer
        if b.integrand is not None and b.hessian is None:
            out.append(f"goal {b.name!r} (its integrand has no second derivatives)")
        if b.endpoint is not None and b.endpoint_generic is None:
            out.append(f"goal {b.name!r} (its endpoint function has no generic form)")
    return out


def lower_entries(H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the non-zero lower triangle (row >= col) of a square pattern."""
    rows, cols = np.nonzero(np.tril(H))
    return rows.astype(np.int64), cols.astype(np.int64)


# ------------------------------------------------------------------------------------------ values or patterns
class _Values:
    """Second-derivative ingredients at the optimizer's point."""

    pattern = False

    def __init__(self, tr):
        self.tr = tr

    def kernel_hessian(self, kind, weights, inp, P, A):
        """A kernel Hessian as ``(block, entries (n, nnz))`` (see :func:`_to_extended`)."""
        return self.tr.kernel.hessian_entries(kind, weights, inp["Q"], inp["U"], A=A, Z=inp["Z"], W=inp["W"], X=inp["X"],
                                      L=inp["L"], P=P, E=inp["E"], C=inp["Gam"], Mu=inp["Mu"])

    def mass(self, inp, P):
        return self.tr.kernel.mass_matrix(inp["Q"], inp["U"], inp["Z"], inp["X"], P, W=inp["W"], L=inp["L"],
                                          E=inp["E"])

    def constraint_G(self, inp):
        return self.tr.kernel.constraints(inp["Q"], inp["U"])["G"]

    def goal_hessian(self, b: BoundGoal, data: NodeData):
        return b.hessian(data)

    def multipliers(self, lam):
        return lam


class _Patterns(_Values):
    """The same ingredients as random positive numbers wherever they can be non-zero (structure runs)."""

    pattern = True

    def __init__(self, tr, rng):
        super().__init__(tr)
        self.rng = rng

    def kernel_hessian(self, kind, weights, inp, P, A):
        blk = self.tr.kernel.hessian_block(kind)
        n = weights.shape[0]
        return blk, self.rng.uniform(0.5, 1.5, (n, blk.rows.size))

    def mass(self, inp, P):
        n, nq = inp["U"].shape[0], self.tr.nq
        return self.rng.uniform(0.5, 1.5, (n, nq, nq)) + 4 * nq * np.eye(nq)

    def constraint_G(self, inp):
        G = node_patterns(self.tr)["phi"][0][:, self.tr.layout.q]
        return G * self.rng.uniform(0.5, 1.5, (inp["U"].shape[0],) + G.shape)

    def goal_hessian(self, b, data):
        return [(a, c, self.rng.uniform(0.5, 1.5, data.t.size)) for a, c, _ in b.hessian(data)]

    def multipliers(self, lam):
        return self.rng.uniform(0.5, 1.5, lam.shape)


def _kernel_map(tr, drop_acceleration: bool = False) -> np.ndarray:
    """Kernel input column (node inputs, then parameters) -> extended node column ``[B (nb), P (np), u̇ (nq)]``.

    ``-1``: not a variable (data: prescribed kinematics, time-dependent inputs). In explicit mode (and for outputs,
    ``drop_acceleration``) the kernel's accelerations are not node variables: explicit mode maps them to the
    trailing ``u̇`` columns (eliminated later by :func:`_reduce_explicit`), ``drop_acceleration`` drops them.
    """
    key = ("_hessian_map", drop_acceleration)
    cached = tr.__dict__.get(key)
    if cached is not None:
        return cached
    lay, klay = tr.layout, tr.kernel.layout
    nb, npar = tr.nb, tr.npar
    out = kernel_to_block(tr).copy()
    if not lay.prescribed and not lay.nacc and not drop_acceleration:
        ks = klay.slice("a")
        out[ks] = nb + npar + np.arange(ks.stop - ks.start)
    out[klay.total:] = nb + np.arange(npar)
    tr.__dict__[key] = out
    return out


def _kernel_kind(tr, kind: str) -> str:
    """The kernel Hessian ``kind`` to ask for (``"dynamics"``, ``"outputs"``): under prescribed kinematics its
    ``_prescribed`` variant, w.r.t. the variables only (``q``, ``u``, ``u̇`` are data there, their second
    derivatives would be computed and dropped)."""
    return f"{kind}_prescribed" if tr.layout.prescribed else kind


def _to_extended(tr, Hk: tuple, drop_acceleration: bool = False) -> np.ndarray:
    """A kernel Hessian ``(block, entries (n, nnz))`` as dense (n, e, e) matrices in the extended node space of
    :func:`_kernel_map` (its entries scattered there directly: the kernel's inputs that are data are left out)."""
    blk, entries = Hk
    m = _kernel_map(tr, drop_acceleration)
    explicit_a = not tr.layout.prescribed and not tr.layout.nacc and not drop_acceleration
    size = tr.nb + tr.npar + (tr.nq if explicit_a else 0)
    r, c = m[blk.rows], m[blk.cols]
    keep = (r >= 0) & (c >= 0)
    r, c, entries = r[keep], c[keep], entries[:, keep]
    out = np.zeros((entries.shape[0], size, size))
    out[:, r, c] = entries  # distinct pairs: the map is one-to-one on the kept inputs
    off = r != c
    out[:, c[off], r[off]] = entries[:, off]
    return out


def _reduce_explicit(H: np.ndarray, Ap: np.ndarray) -> np.ndarray:
    """Eliminate the trailing ``u̇`` columns of ``H`` (n, e + nq, e + nq) by ``u̇ = A(x)``, ``∂u̇/∂x = Ap`` (n, nq, e)."""
    e = Ap.shape[2]
    Hxx, Hxa, Haa = H[:, :e, :e], H[:, :e, e:], H[:, e:, e:]
    # batched products, the same sums on every processor; only the rows of Hxa with a non-zero entry (the
    # coordinates, mostly: a tenth of the 2-D walker's) and the u̇-u̇ block only where it has one (the residual is
    # linear in u̇, so never from the dynamics): the other products are sums of zeros, and adding a zero changes
    # no number
    T = np.zeros(Hxx.shape)
    rows = np.flatnonzero(Hxa.any(axis=(0, 2)))
    if rows.size:
        T[:, rows, :] = batched.matmul(Hxa[:, rows, :], Ap)
    out = Hxx + T + np.transpose(T, (0, 2, 1))
    if Haa.any():
        out += batched.matmul(np.transpose(Ap, (0, 2, 1)), batched.matmul(Haa, Ap))
    return out


def _congruence(T: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``Tᵀ S T`` for a symmetric ``S`` (m, m) and ``T`` (m, k), summed only over the rows ``S`` has a non-zero in
    (an endpoint goal's: t0, tf, I and a few outputs of some hundred seeds): every term left out is a product with
    a zero factor, and adding a zero changes no number, so these are the full products' numbers."""
    used = np.flatnonzero(S.any(axis=0) | S.any(axis=1))
    Tu = T[used]
    return batched.matmul(Tu.T, batched.matmul(S[np.ix_(used, used)], Tu))


def node_dynamics_hessian(tr: Any, ev: _Values, idx: np.ndarray, B: np.ndarray, P: np.ndarray, dyn: tuple,
                          wF: np.ndarray, wR: np.ndarray, wK: np.ndarray | None,
                          wProj: np.ndarray | None) -> np.ndarray:
    """``∇²(wF·F + wR·R + wK·K + wProj·(−F_xᵀμ))`` per node over ``[B, P]``: (n, nb + np, nb + np).

    ``dyn`` is :meth:`Transcription.node_dynamics`' result with Jacobians at the same nodes.
    """
    return _dense_sum(tr, *node_dynamics_hessian_terms(tr, ev, idx, B, P, dyn, wF, wR, wK, wProj))


def _dense_sum(tr: Any, pieces: list, Ap: np.ndarray | None) -> np.ndarray:
    """:func:`node_dynamics_hessian` from its terms: the pieces summed in the extended node space, the accelerations
    eliminated in explicit mode."""
    H = _to_extended(tr, pieces[0])
    for piece in pieces[1:]:
        H += _to_extended(tr, piece)
    return H if Ap is None else _reduce_explicit(H, Ap)


def node_dynamics_hessian_terms(tr: Any, ev: _Values, idx: np.ndarray, B: np.ndarray, P: np.ndarray, dyn: tuple,
                                wF: np.ndarray, wR: np.ndarray, wK: np.ndarray | None,
                                wProj: np.ndarray | None) -> tuple[list, np.ndarray | None]:
    """:func:`node_dynamics_hessian` before it is summed: the kernel Hessians ``(block, entries (n, nnz))`` whose sum in
    the extended node space (:func:`_to_extended`) it is, and in explicit mode ``Ap`` (n, nq, nb + np), the
    accelerations' derivatives that eliminate its trailing ``u̇`` columns (None otherwise)."""
    lay, k = tr.layout, tr.kernel
    nq, nz, nw, nl = tr.nq, k.nz, k.nw, tr.nl
    n = B.shape[0]
    F, dF, dFp = dyn[0], dyn[1], dyn[2]
    inp = tr.node_inputs(idx, B)
    explicit = not lay.prescribed and not lay.nacc
    wd = np.zeros((n, nq + nz + nw))
    if lay.prescribed:
        wd[:, nq:nq + nz] = wF
        wd[:, :nq], wd[:, nq + nz:] = wR[:, :nq], wR[:, nq:]
        Aeval = inp["A"]
    else:
        wd[:, nq:nq + nz] = wF[:, 2 * nq:]
        if explicit:
            wd[:, nq + nz:] = wR
            Aeval = F[:, nq:2 * nq]
        else:
            wd[:, :nq], wd[:, nq + nz:] = wR[:, :nq], wR[:, nq:]
            Aeval = inp["A"]
    constrained = nl and not lay.prescribed
    if constrained:
        wc = np.zeros((n, 4 * nl + 3 * nq))
        if wK is not None:
            wc[:, :2 * nl] = wK[:, :2 * nl]
            wc[:, 2 * nl:3 * nl] = wK[:, 2 * nl:]   # Ġu
            wc[:, 3 * nl:4 * nl] = wK[:, 2 * nl:]   # G u̇
        if lay.ngam:
            wc[:, 4 * nl:4 * nl + nq] = wF[:, :nq]  # q̇ = u + Gᵀγ̃
        if wProj is not None:
            wc[:, 4 * nl + nq:] = -wProj
    if explicit:
        w_eff = wF[:, nq:2 * nq].copy()
        if constrained and wK is not None:
            w_eff += np.einsum("nlq,nl->nq", ev.constraint_G(inp), wK[:, 2 * nl:])
        M = ev.mass(inp, P)
        wd[:, :nq] = -batched.solve(np.transpose(M, (0, 2, 1)), w_eff)
    pieces = [ev.kernel_hessian(_kernel_kind(tr, "dynamics"), wd, inp, P, Aeval)]
    if constrained:
        pieces.append(ev.kernel_hessian("constraints", wc, inp, P, Aeval))
    Ap = np.concatenate([dF[:, nq:2 * nq, :], dFp[:, nq:2 * nq, :]], axis=2) if explicit else None
    return pieces, Ap


def _extended_lookup(tr: Any, blk: Any, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the symmetric extended-space entries ``(a, b)`` of a kernel Hessian block's :func:`_to_extended` are
    among its entries: ``(found (k,) bool, entry index (k,))`` (no acceleration columns: implicit or prescribed)."""
    m = _kernel_map(tr)
    size = tr.nb + tr.npar
    r, c = m[blk.rows], m[blk.cols]
    kept = np.flatnonzero((r >= 0) & (c >= 0))
    keys = np.maximum(r[kept], c[kept]).astype(np.int64) * size + np.minimum(r[kept], c[kept])
    want = np.maximum(a, b).astype(np.int64) * size + np.minimum(a, b)
    if not keys.size:
        return np.zeros(want.size, bool), np.zeros(want.size, int)
    order = np.argsort(keys)
    found, at = _find_sorted(keys[order], want)
    return found, kept[order][at]


class _PairHessian:
    """An integrand's per-node Hessian given by its entries alone (:func:`integrand_hessian` with ``sparse=True``
    when the goal's second derivatives are all between two of its variables): ``H[:, rows[j], cols[j]]`` sums
    ``values[:, j]`` over the pairs listed (both orders), everything else zero."""

    def __init__(self, e: int, rows: np.ndarray, cols: np.ndarray, values: np.ndarray):
        keys = rows.astype(np.int64) * e + cols
        self.e = e
        self.keys, inverse = np.unique(keys, return_inverse=True)
        self.values = np.zeros((values.shape[0], self.keys.size))
        if self.keys.size == keys.size:
            self.values[:, inverse] += values       # as the dense H[:, r, c] += V: each entry 0 + v
        else:                                      # pairs listed more than once: summed in their order
            np.add.at(self.values, (slice(None), inverse), values)

    def __getitem__(self, index: tuple) -> np.ndarray:
        """``H[g, a, b]`` as the dense array gives it: ``g`` a slice of all nodes or an index array (one node per
        entry), ``a``, ``b`` index arrays or numbers."""
        g, a, b = index
        want = np.asarray(a, np.int64) * self.e + np.asarray(b, np.int64)
        if not self.keys.size:
            shape = (self.values.shape[0],) + want.shape if isinstance(g, slice) else np.broadcast(g, want).shape
            return np.zeros(shape)
        found, at = _find_sorted(self.keys, want)
        return np.where(found, self.values[:, at] if isinstance(g, slice) else self.values[np.asarray(g), at], 0.0)


def _find_sorted(keys: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``want`` is in the sorted, non-empty ``keys``: ``(found, index)`` (an index in range where not
    found, so that it can be read and masked)."""
    at = np.minimum(np.searchsorted(keys, want), keys.size - 1)
    return keys[at] == want, at


def integrand_hessian(tr: Any, ev: _Values, b: BoundGoal, idx: np.ndarray, B: np.ndarray, P: np.ndarray,
                      data: NodeData, douts: dict, columns: np.ndarray | None = None,
                      sparse: bool = False) -> tuple[np.ndarray, np.ndarray | _PairHessian]:
    """Gradient (n, e) and Hessian (n, e, e) of a goal's integrand over ``[B (nb), P (np), t]`` (e = nb + np + 1).

    ``columns``: only these node-block columns (sorted; the integrand must read no other), so that
    ``[B[:, columns], P, t]`` and e = len(columns) + np + 1. ``sparse``: when the goal's second derivatives are all
    between two of its variables (no model outputs: an effort, a state's tracking), the Hessian as a
    :class:`_PairHessian` (indexed as the dense array, without building it).
    """
    lay = tr.layout
    nb, npar = tr.nb, tr.npar
    n = B.shape[0]
    full = nb + npar + 1
    keep = np.arange(full) if columns is None else np.concatenate([columns, nb + np.arange(npar + 1)])
    e = keep.size
    pos = np.full(full, -1)
    pos[keep] = np.arange(e)
    s, ds = b.integrand(data, True)
    dB, dP, dt = tr.chain_goal_derivative(ds, douts, n)
    grad = np.concatenate([dB, dP, dt[:, None]], axis=1)[:, keep]
    starts = {"Y": lay.y.start, "X": lay.x.start, "A": lay.a.start, "P": nb, "t": nb + npar}

    def vector(ref):
        """The variable ``ref`` as a unit column or as a row of output derivatives (n, e)."""
        if ref[0] != "out":
            j = int(pos[starts[ref[0]] + int(ref[1])])
            if j < 0:
                raise ValueError(f"goal {b.name!r}: its Hessian names {ref}, a column outside {columns}")
            return j
        Jb, Jp = douts[ref[1]]
        v = np.zeros((n, full))
        v[:, :nb], v[:, nb:nb + npar] = Jb[:, ref[2], :], Jp[:, ref[2], :]
        return v[:, keep]

    units_r, units_c, units_v = [], [], []   # pairs of two variables: gathered, added in one step
    mixed_u, mixed_rows = [], []               # a variable and a row of output derivatives
    outer_same, outer_pair = ([], []), ([], [])  # two rows: (weighted rows, rows), the same output or two
    terms = list(ev.goal_hessian(b, data))
    names = [name for name in b.outputs if (ds.get("outputs") or {}).get(name) is not None]
    if sparse and not names and all(a[0] != "out" and c[0] != "out" for a, c, _ in terms):
        r = np.array([vector(a) for a, _, _ in terms], int)
        c = np.array([vector(c) for _, c, _ in terms], int)
        V = np.empty((n, r.size))
        for j, (_, _, v) in enumerate(terms):   # a row of n, or one number for every node
            V[:, j] = v
        off = r != c
        return grad, _PairHessian(e, np.concatenate([r, c[off]]), np.concatenate([c, r[off]]),
                                  np.concatenate([V, V[:, off]], axis=1))
    H = np.zeros((n, e, e))
    for a, c, vals in terms:
        va, vc = vector(a), vector(c)
        if isinstance(va, int) and isinstance(vc, int):
            units_r.append(va)
            units_c.append(vc)
            units_v.append(vals)
            continue
        if isinstance(va, int) or isinstance(vc, int):   # a unit column times a row: one row and one column
            unit, row = (va, vc) if isinstance(va, int) else (vc, va)
            mixed_u.append(unit)
            mixed_rows.append(np.asarray(vals, float)[:, None] * row)
            continue
        # two rows: Σ vals va vcᵀ over the pairs as one batched product (the pairs off the diagonal twice)
        (outer_same if a == c else outer_pair)[0].append(np.asarray(vals, float)[:, None] * va)
        (outer_same if a == c else outer_pair)[1].append(vc)
    if mixed_u:
        M = np.zeros((n, e, e))
        np.add.at(M, (slice(None), np.array(mixed_u)), np.stack(mixed_rows, axis=1))
        H += M + np.transpose(M, (0, 2, 1))
    for rows_a, rows_c, twice in ((*outer_same, False), (*outer_pair, True)):
        if rows_a:
            M = batched.matmul(np.transpose(np.stack(rows_a, axis=1), (0, 2, 1)), np.stack(rows_c, axis=1))
            H += M + np.transpose(M, (0, 2, 1)) if twice else M
    if units_r:
        r, c = np.array(units_r), np.array(units_c)
        V = np.empty((n, r.size))
        for j, v in enumerate(units_v):   # a row of n, or one number for every node
            V[:, j] = v
        off = r != c
        rr, cc = np.concatenate([r, c[off]]), np.concatenate([c, r[off]])
        VV = np.concatenate([V, V[:, off]], axis=1)
        keys = rr * e + cc
        if np.unique(keys).size == keys.size:
            H[:, rr, cc] += VV
        else:   # a pair listed more than once: summed
            np.add.at(H, (slice(None), rr, cc), VV)
    # the outputs' own curvature, weighted by ∂s/∂output
    if names:
        W = np.concatenate([np.broadcast_to(np.asarray(ds["outputs"][name], float),
                                            data.outputs[name].shape) for name in names], axis=1)
        if ev.pattern:
            W = ev.rng.uniform(0.5, 1.5, W.shape)
        inp = tr.node_inputs(idx, B)
        Hk = ev.kernel_hessian((_kernel_kind(tr, "outputs"), tuple(names)), W, inp, P, inp["A"])
        Ho = _to_extended(tr, Hk, drop_acceleration=True)
        if columns is not None:
            Ho = Ho[:, keep[:-1]][:, :, keep[:-1]]
        H[:, :e - 1, :e - 1] += Ho
    return grad, H


# ----------------------------------------------------------------------------------------------- chunks
class ChunkHessian:
    """The exact Hessian of one chunk's constraint binding and of its plain-integral-cost binding.

    Variables are the chunk's (its ``vars``, see :class:`~moco_lab.engine.chunks.Chunk`: ``t0, tf, P``, the node
    blocks, the partial integrals) and the cost binding's (its ``cost_vars``).
    """

    def __init__(self, chunk: Any):
        self.chunk = chunk
        tr = chunk.tr
        self.nv = chunk.off + chunk.nloc * tr.nb  # t0, tf, P and the node blocks
        cols = [np.arange(chunk.off)] + [chunk.off + k * tr.nb + tr.cost_columns for k in range(chunk.nloc)]
        self.cost_positions = np.concatenate(cols)
        self.rows, self.cols = chunk.shared_structure(
            "hessian", lambda: self._structure(self._constraint_dense, chunk.nvar, chunk.nout))
        self.cost_rows, self.cost_cols = (
            chunk.shared_structure("cost hessian", lambda: self._structure(self._cost_dense, chunk.cost_vars.size, 1))
            if tr.integral_costs else (np.zeros(0, int), np.zeros(0, int)))

    def _structure(self, dense, size: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The lower triangle's non-zeros: ``dense`` run twice on patterns (random positive values)."""
        tr = self.chunk.tr
        found = None
        for seed in (12345, 54321):
            rng = np.random.default_rng(seed)
            z = rng.uniform(0.5, 1.5, size)
            z[1] = z[0] + 1.0
            with patterned(tr, rng):
                H = np.abs(dense(z, np.ones(rows), _Patterns(tr, rng))) > 0
            found = H if found is None else (found | H)
        return lower_entries(found)

    # ---------------------------------------------------------------- assembly helpers
    def _add_nodes(self, H: np.ndarray, Hn: np.ndarray, nodes: np.ndarray | None = None) -> None:
        """Add per-node ``[B, P]`` Hessians ``Hn`` (len(nodes), nb + np, nb + np) at the chunk's ``nodes`` (all)."""
        c, tr = self.chunk, self.chunk.tr
        nb, npar = tr.nb, tr.npar
        nodes = np.arange(c.nloc) if nodes is None else nodes
        for k, node in enumerate(nodes):  # each node's block is contiguous and disjoint: slices, not index arrays
            r = c.off + int(node) * nb
            H[r:r + nb, r:r + nb] += Hn[k, :nb, :nb]
            if npar:
                H[r:r + nb, 2:2 + npar] += Hn[k, :nb, nb:]
                H[2:2 + npar, r:r + nb] += Hn[k, nb:, :nb]
        if npar:
            H[2:2 + npar, 2:2 + npar] += Hn[:, nb:, nb:].sum(axis=0)

    def _integral(self, H: np.ndarray, b, data_all, douts_all, B, P, dur: float, factor: float, ev,
                  found: tuple | None = None) -> None:
        """Add ``factor · ∇²[(t_f − t_0) Σ_k q_k s_k]`` of goal ``b``'s integrand over the chunk's nodes.

        With ``S = Σ_k q_k s_k(z_k, t_k)``, ``t_k = (1 − τ_k) t_0 + τ_k t_f``: ``∇²(dur S) = dur ∇²S + e gᵀ + g eᵀ``
        (``e = ∂dur/∂(t_0, t_f, ...) = (−1, 1, 0, ...)``, ``g = ∇S``); all nodes at once. ``found``: the integrand's
        :func:`integrand_hessian` at the chunk's nodes, if already computed (then the data are not read).
        """
        c, tr = self.chunk, self.chunk.tr
        nb, npar = tr.nb, tr.npar
        grad, Hs = found if found is not None else integrand_hessian(tr, ev, b, c.g, B, P, data_all, douts_all)
        nodes = np.flatnonzero(c.quad)
        q = c.quad[nodes]
        T = np.stack([1.0 - c.tau[nodes], c.tau[nodes]], axis=1)     # ∂t_k/∂(t_0, t_f): (k, 2)
        Hs, grad = Hs[nodes], grad[nodes]
        e = nb + npar
        F = factor * dur
        self._add_nodes(H, F * q[:, None, None] * Hs[:, :e, :e], nodes)
        rows = c.off + nodes[:, None] * nb + np.arange(nb)[None, :]
        pc = 2 + np.arange(npar)
        qT = q[:, None] * T                                               # (k, 2)
        for ti in (0, 1):   # ∂²/∂t ∂z through the nodes' times
            node_part = F * qT[:, ti, None] * Hs[:, e, :nb]
            H[ti, rows] += node_part
            H[rows, ti] += node_part
            if npar:
                p_part = F * batched.matmul(qT[:, ti], Hs[:, e, nb:e])
                H[ti, pc] += p_part
                H[pc, ti] += p_part
        H[:2, :2] += F * np.einsum("k,ki,kj->ij", q * Hs[:, e, e], T, T)
        gS = np.zeros(self.nv)
        gS[rows] = q[:, None] * grad[:, :nb]
        gS[pc] = batched.matmul(q, grad[:, nb:e])
        gS[:2] = batched.matmul(q * grad[:, e], T)
        H[0, :] -= factor * gS
        H[1, :] += factor * gS
        H[:, 0] -= factor * gS
        H[:, 1] += factor * gS

    def _pointwise(self, H: np.ndarray, b, data_all, douts_all, B, P, weights: np.ndarray, ev,
                   found: tuple | None = None) -> None:
        """Add ``Σ_k w_k ∇² s(z_k, t_k)`` of row ``b``'s value at the chunk's path nodes (``weights`` (k,)), with
        ``t_k = (1 − τ_k) t_0 + τ_k t_f``; ``found`` as for :meth:`_integral`."""
        c, tr = self.chunk, self.chunk.tr
        nb, npar = tr.nb, tr.npar
        _, Hs = found if found is not None else integrand_hessian(tr, ev, b, c.g, B, P, data_all, douts_all)
        nodes = c.path_nodes
        w = np.asarray(weights, float)
        Hs = Hs[nodes]
        T = np.stack([1.0 - c.tau[nodes], c.tau[nodes]], axis=1)
        e = nb + npar
        self._add_nodes(H, w[:, None, None] * Hs[:, :e, :e], nodes)
        rows = c.off + nodes[:, None] * nb + np.arange(nb)[None, :]
        pc = 2 + np.arange(npar)
        wT = w[:, None] * T
        for ti in (0, 1):
            node_part = wT[:, ti, None] * Hs[:, e, :nb]
            H[ti, rows] += node_part
            H[rows, ti] += node_part
            if npar:
                p_part = batched.matmul(wT[:, ti], Hs[:, e, nb:e])
                H[ti, pc] += p_part
                H[pc, ti] += p_part
        H[:2, :2] += np.einsum("k,ki,kj->ij", w * Hs[:, e, e], T, T)

    # ---------------------------------------------------------------- constraint rows
    def node_weights(self, lam: np.ndarray) -> tuple:
        """The chunk's multipliers ``lam`` as weights per chunk node: ``cF`` (nloc, ny) of the state derivatives
        (``Σ λ·D = ... + dur Σ_k cF_k·F_k``, the duration left out), ``wR`` (nloc, nres) of the residual rows, ``wK``
        (nloc, nkin) of the kinematic rows, ``wProj`` (nloc, nxt) of the projection rows (None where there are
        none), and the index of the first row after them (the goals' rows)."""
        c, tr = self.chunk, self.chunk.tr
        lay, ny = tr.layout, tr.ny
        cF = np.zeros((c.nloc, ny))
        dtau = c.dtau[:, None]
        lr = lam[:c.ndef].reshape(c.L, c.scheme.rows, ny)
        Af = c.scheme.defect_f
        for j in range(c.scheme.stride + 1):  # node j of every interval: Σ_r defect_f[r, j] λ_r
            np.add.at(cF, c.interval_nodes[:, j], dtau * np.einsum("r,lry->ly", Af[:, j], lr))
        r = c.ndef
        wR = np.zeros((c.nloc, tr.nres))
        if tr.nres:
            wR[c.owned] = lam[r:r + c.nres_rows].reshape(-1, tr.nres)
        r += c.nres_rows
        wK = None
        if tr.nkin:
            wK = np.zeros((c.nloc, tr.nkin))
            for k, kcols in c.kin_rows:
                wK[k, kcols] = lam[r:r + kcols.size]
                r += kcols.size
        wProj = None
        if c.proj_nodes.size:
            wProj = np.zeros((c.nloc, lay.nxt))
            wProj[c.proj_nodes] = lam[r:r + c.proj_nodes.size * lay.nxt].reshape(-1, lay.nxt)
            r += c.proj_nodes.size * lay.nxt
        return cF, wR, wK, wProj, r

    def _goal_rows(self, Hv: np.ndarray, z: np.ndarray, lam: np.ndarray, r: int, ev: _Values,
                   found: dict | None = None) -> None:
        """Add the goals' rows of ``λ · c``: partial integrals (from row ``r``) and output path constraints.
        ``found``: ``id(goal)`` -> its :func:`integrand_hessian` at every grid point (``DynamicsHessian.values``, for
        all chunks at once), of which the chunk's nodes are taken; else computed at the chunk's nodes."""
        c, tr = self.chunk, self.chunk.tr
        if not (c.nint or c.npath):
            return
        t0, tf, P, B = c._split(z)
        dur = tf - t0
        if found is None:
            data, douts = c._data(z, B, P, t0 + c.tau * dur, True)
        else:
            data = douts = None

        def mine(bg):  # the chunk's nodes of a goal's precomputed derivatives (sliced only for goals it has)
            if found is None or id(bg) not in found:
                return None
            grad, Hs = found[id(bg)]
            return grad[c.g], Hs[c.g]

        for j, bg in enumerate(tr.integral_goals):  # I_c − dur Σ q s
            self._integral(Hv, bg, data, douts, B, P, dur, -lam[r + j], ev, mine(bg))
        npg = len(tr.path_goals)
        for j, bg in enumerate(tr.path_goals if c.npath else ()):  # Σ_k λ_k s(z_k, t_k) at the path nodes
            self._pointwise(Hv, bg, data, douts, B, P, lam[c.npre + j:c.nout:npg], ev, mine(bg))

    def _constraint_dense(self, z: np.ndarray, lam: np.ndarray, ev: _Values | None = None) -> np.ndarray:
        c, tr = self.chunk, self.chunk.tr
        ev = ev or _Values(tr)
        lam = ev.multipliers(np.asarray(lam, float))
        t0, tf, P, B = c._split(z)
        dur = tf - t0
        dyn = c._dynamics(z, B, P, True)
        dF, dFp = dyn[1], dyn[2]
        cF, wR, wK, wProj, r = self.node_weights(lam)
        H = np.zeros((c.nvar, c.nvar))
        Hv = H[:self.nv, :self.nv]  # view: the partial integrals enter linearly
        Hn = node_dynamics_hessian(tr, ev, c.g, B, P, dyn, dur * cF, wR, wK, wProj)
        self._add_nodes(Hv, Hn)
        # the duration times ∂F: cross terms with t0 (−) and tf (+)
        cross = np.zeros(self.nv)
        cross[c.off:] = np.einsum("ky,kyb->kb", cF, dF).reshape(-1)
        cross[2:c.off] = np.einsum("ky,kyp->p", cF, dFp)
        for ti, sign in ((0, -1.0), (1, 1.0)):
            Hv[ti, :] += sign * cross
            Hv[:, ti] += sign * cross
        self._goal_rows(Hv, z, lam, r, ev)
        return H

    def constraint(self, z: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """The declared entries of ``∇²(λ · c(z))`` for the chunk's constraint rows ``c``."""
        H = self._constraint_dense(np.asarray(z, float), lam)
        return H[self.rows, self.cols]

    # ---------------------------------------------------------------- plain integral costs
    def _cost_dense(self, zc: np.ndarray, sigma, ev: _Values | None = None) -> np.ndarray:
        c, tr = self.chunk, self.chunk.tr
        ev = ev or _Values(tr)
        sigma = float(np.atleast_1d(ev.multipliers(np.atleast_1d(np.asarray(sigma, float))))[0])
        t0, tf, P = zc[0], zc[1], zc[2:c.off]
        B = np.zeros((c.nloc, tr.nb))
        B[:, tr.cost_columns] = zc[c.off:].reshape(c.nloc, tr.cost_columns.size)
        dur = tf - t0
        T = t0 + c.tau * dur
        data, douts = c._data_for_cost(zc, B, P, T, True)
        H = np.zeros((self.nv, self.nv))
        for b in tr.integral_costs:
            self._integral(H, b, data, douts, B, P, dur, sigma * b.weight, ev)
        return H[np.ix_(self.cost_positions, self.cost_positions)]

    def cost(self, zc: np.ndarray, sigma: float) -> np.ndarray:
        """The declared entries of ``σ ∇² f(z)`` for the chunk's plain integral costs ``f``."""
        H = self._cost_dense(np.asarray(zc, float), sigma)
        return H[self.cost_rows, self.cost_cols]


class _GroupedHessian:
    """The sum of several chunk bindings' Hessians evaluated at once (the optimizer sums them anyway).

    Its entries are the union of the bindings' declared entries (so the program's Hessian structure is unchanged),
    each classified by its two variables: ``t0`` (kind 0), ``tf`` (1), a parameter (2) or a column of a grid
    point's node block (3), ordered so that the first has the larger kind.

    Attributes
    ----------
    evaluators : set of int
        ``id`` of the replaced bindings' evaluators.
    rows, cols : ndarray of int, shape (nnz,)
        Program variable indices (``prog.decision_variables()`` order), ``rows >= cols``.
    """

    def __init__(self, tr: Any, bindings: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray]], what: str):
        """``bindings``: ``(evaluator, the binding's program variable indices, declared rows, cols)``."""
        self.tr = tr
        n = tr.prog.num_vars()
        ng = tr.grid.num_points
        self.evaluators = {id(ev) for ev, _, _, _ in bindings}
        keys = [np.maximum(idx[r], idx[c]).astype(np.int64) * n + np.minimum(idx[r], idx[c])
                for _, idx, r, c in bindings]
        union = np.unique(np.concatenate(keys))
        #: each binding's entries' positions in the union
        self.positions = [np.searchsorted(union, k) for k in keys]
        self.rows, self.cols = union // n, union % n
        fi = tr._full_index
        kind, point, column = np.full(n, -1), np.zeros(n, int), np.zeros(n, int)
        kind[fi["t0"]], kind[fi["tf"]] = 0, 1
        kind[np.asarray(fi["P"], int)] = 2
        column[np.asarray(fi["P"], int)] = np.arange(tr.npar)
        kind[fi["B"]] = 3
        point[fi["B"]] = np.arange(ng)[:, None]
        column[fi["B"]] = np.arange(tr.nb)[None, :]
        kr, kc = kind[self.rows], kind[self.cols]
        if np.any(kr < 0) or np.any(kc < 0):
            raise AssertionError(f"{what}: a declared entry outside t0, tf, the parameters and the node blocks")
        swap = kr < kc
        a = np.where(swap, self.cols, self.rows)
        b = np.where(swap, self.rows, self.cols)
        self._ka, self._kb = kind[a], kind[b]
        self._ga, self._ca, self._cb = point[a], column[a], column[b]
        if np.any((self._ka == 3) & (self._kb == 3) & (point[a] != point[b])):
            raise AssertionError(f"{what}: an entry couples two grid points")
        ka, kb = self._ka, self._kb
        self._m_node = np.flatnonzero((ka == 3) & (kb == 3))    # within one grid point's block
        self._m_node_p = np.flatnonzero((ka == 3) & (kb == 2))  # a node variable and a parameter
        self._m_node_t = [np.flatnonzero((ka == 3) & (kb == ti)) for ti in (0, 1)]   # a node variable and t0 / tf
        self._m_pp = np.flatnonzero((ka == 2) & (kb == 2))
        self._m_p_t = [np.flatnonzero((ka == 2) & (kb == ti)) for ti in (0, 1)]
        self._m_tt = {(ta, tb): np.flatnonzero((ka == ta) & (kb == tb)) for ta in (0, 1) for tb in (0, 1)}


class IntegralCostsHessian(_GroupedHessian):
    """The chunks' plain integral costs' Hessian, all chunks at once.

    The chunks' cost bindings (their :meth:`ChunkHessian.cost`) together are
    ``σ Σ_b w_b (t_f − t_0) Σ_g Q_g s_b(z_g, t_g)`` with ``Q_g`` the sum of the chunks' quadrature weights at grid
    point ``g`` (a point two chunks share has a weight from each): one integrand Hessian per goal for all grid
    points, on the cost columns only, instead of one per chunk.
    """

    def __init__(self, tr: Any):
        super().__init__(tr, [(c.cost_evaluator, c.cost_index, c.hessian.cost_rows, c.hessian.cost_cols)
                              for c in tr.chunks], "IntegralCostsHessian")
        self.Q = np.zeros(tr.grid.num_points)
        for c in tr.chunks:
            np.add.at(self.Q, c.g, c.quad)
        self.T = np.stack([1.0 - tr.grid.tau, tr.grid.tau], axis=1)        # ∂t_g/∂(t_0, t_f): (ng, 2)
        # positions in the reduced integrand space [B[:, cost columns], P, t]
        ns = tr.cost_columns.size
        reduced = np.full(tr.nb, -1)
        reduced[tr.cost_columns] = np.arange(ns)
        node_a = self._ka == 3
        self._wa = np.where(node_a, reduced[self._ca], ns + self._ca)
        self._wb = np.where(self._kb == 3, reduced[self._cb], ns + self._cb)
        if np.any(self._wa[node_a] < 0) or np.any(self._wb[self._kb == 3] < 0):
            raise AssertionError("IntegralCostsHessian: a declared entry outside the cost columns")
        self._e = ns + tr.npar   # position of t in the reduced space
        self._m_block = np.concatenate([self._m_node, self._m_node_p])   # both read one grid point's Hessian

    def values(self, x: np.ndarray, sigma: float, multipliers: dict | None = None) -> np.ndarray:
        """The entries of ``σ ∇²`` (all chunks' plain integral costs) at the program's variables ``x``."""
        tr = self.tr
        out = np.zeros(self.rows.size)
        if sigma == 0:
            return out
        x = np.asarray(x, float)
        t0, tf, P, B = tr.split_full(x)
        dur = tf - t0
        g_all = np.arange(tr.grid.num_points)
        data, douts = tr.cache.data_at(x, True)
        ga, wa, wb, e = self._ga, self._wa, self._wb, self._e
        Q, T = self.Q, self.T
        sign = np.array([-1.0, 1.0])   # ∂(t_f − t_0)/∂(t_0, t_f)
        ev = _Values(tr)
        for bg in tr.integral_costs:
            factor = sigma * bg.weight
            F = factor * dur
            grad, Hs = integrand_hessian(tr, ev, bg, g_all, B, P, data, douts, columns=tr.cost_columns, sparse=True)
            Qg = Q[:, None] * grad
            m = self._m_block
            out[m] += F * Q[ga[m]] * Hs[ga[m], wa[m], wb[m]]
            for ti, m in enumerate(self._m_node_t):
                out[m] += F * Q[ga[m]] * T[ga[m], ti] * Hs[ga[m], wa[m], e] + sign[ti] * factor * Qg[ga[m], wa[m]]
            m = self._m_pp
            if m.size:
                out[m] += F * np.einsum("g,gk->k", Q, Hs[:, wa[m], wb[m]])
            for ti, m in enumerate(self._m_p_t):
                if m.size:
                    out[m] += (F * batched.matmul(Q * T[:, ti], Hs[:, wa[m], e])
                               + sign[ti] * factor * Qg[:, wa[m]].sum(axis=0))
            gt = batched.matmul(Qg[:, e], T)             # ∂S/∂(t_0, t_f)
            Htt = F * np.einsum("g,gi,gj->ij", Q * Hs[:, e, e], T, T)
            for (ta, tb), m in self._m_tt.items():
                if m.size:
                    out[m] += Htt[ta, tb] + factor * (sign[ta] * gt[tb] + sign[tb] * gt[ta])
        return out


class DynamicsHessian(_GroupedHessian):
    """The chunks' constraint rows' Hessian ``Σ_c ∇²(λ_c · c_c)``, all chunks at once.

    Every row of a chunk's dynamics is linear in per-node weights of the node dynamics (the defects weight the
    state derivatives ``F`` by ``(t_f − t_0) cF``, the residual, kinematic and projection rows their own
    multipliers: :meth:`ChunkHessian.node_weights`), so the sum over chunks is one node-dynamics Hessian per grid
    point with the chunks' weights summed (a point two chunks share once, not twice), plus the duration's cross
    terms ``± cF · ∂F``. The goals' rows (partial integrals, output path constraints) are added chunk by chunk, from
    each goal's integrand Hessians found once at every grid point (the 2-D walking prediction's goal rows 0.82 ->
    0.43 s of a solve).
    """

    def __init__(self, tr: Any):
        self._chunk_vars = [c.var_full_index for c in tr.chunks]
        super().__init__(tr, [(c.constraint_evaluator, idx, c.hessian.rows, c.hessian.cols)
                              for c, idx in zip(tr.chunks, self._chunk_vars)], "DynamicsHessian")
        self.goal_chunks = [k for k, c in enumerate(tr.chunks) if c.nint or c.npath]
        self._lookups: dict = {}   # id(kernel Hessian block) -> its entries' positions (_gather)

    def _gather_dense(self, out: np.ndarray, Hn: np.ndarray) -> None:
        """The node and parameter entries from per-node Hessians ``Hn`` (ng, nb + np, nb + np)."""
        nb, ga, ca, cb = self.tr.nb, self._ga, self._ca, self._cb
        m = self._m_node
        out[m] = Hn[ga[m], ca[m], cb[m]]
        m = self._m_node_p
        out[m] = Hn[ga[m], ca[m], nb + cb[m]]
        m = self._m_pp
        if m.size:
            out[m] = Hn[:, nb + ca[m], nb + cb[m]].sum(axis=0)

    def _gather(self, out: np.ndarray, pieces: list) -> None:
        """:meth:`_gather_dense` of the pieces' sum, read from their sparse entries (no dense per-node Hessians:
        the same numbers, as each entry is one piece's entry, or their sum in the same order)."""
        nb, ga, ca, cb = self.tr.nb, self._ga, self._ca, self._cb
        lookups = self._lookups
        pp = self._m_pp
        per_node_pp = None   # summed over the pieces node by node, then over the nodes (as the dense sum is)
        for k, (blk, entries) in enumerate(pieces):
            if id(blk) not in lookups:
                node = np.concatenate([self._m_node, self._m_node_p])
                a = np.concatenate([ca[self._m_node], ca[self._m_node_p]])
                b = np.concatenate([cb[self._m_node], nb + cb[self._m_node_p]])
                lookups[id(blk)] = (blk, node, *_extended_lookup(self.tr, blk, a, b),
                                    *_extended_lookup(self.tr, blk, nb + ca[pp], nb + cb[pp]))
            _, node, found, at, found_pp, at_pp = lookups[id(blk)]
            empty = entries.shape[1] == 0    # a kernel Hessian without entries (np.where reads both branches)
            v = np.zeros(node.size) if empty else np.where(found, entries[ga[node], at], 0.0)
            out[node] = v if k == 0 else out[node] + v
            if pp.size:
                v = np.zeros((entries.shape[0], pp.size)) if empty else np.where(found_pp[None, :], entries[:, at_pp],
                                                                                  0.0)
                per_node_pp = v if per_node_pp is None else per_node_pp + v
        if pp.size:
            out[pp] = per_node_pp.sum(axis=0)

    def values(self, x: np.ndarray, sigma: float, multipliers: dict) -> np.ndarray:
        """The entries of ``Σ_c ∇²(λ_c · c_c)`` at the program's variables ``x``; ``multipliers``:
        ``id(evaluator) -> λ_c`` of each chunk's rows."""
        tr, lay = self.tr, self.tr.layout
        ng, ny = tr.grid.num_points, tr.ny
        x = np.asarray(x, float)
        t0, tf, P, B = tr.split_full(x)
        dur = tf - t0
        g_all = np.arange(ng)
        dyn = tr.cache.dynamics_at(x, True)
        CF, WR = np.zeros((ng, ny)), np.zeros((ng, tr.nres))
        WK = np.zeros((ng, tr.nkin)) if tr.nkin else None
        WP = None
        lams, goal_row = [], []   # each chunk's multipliers and the index of its first goal row
        for c in tr.chunks:
            lam = np.asarray(multipliers[id(c.constraint_evaluator)], float)
            cF, wR, wK, wProj, r = c.hessian.node_weights(lam)
            lams.append(lam)
            goal_row.append(r)
            np.add.at(CF, c.g, cF)
            WR[c.g[c.owned]] += wR[c.owned]            # owned rows: each grid point's by one chunk
            if wK is not None:
                WK[c.g[c.owned]] += wK[c.owned]
            if wProj is not None:
                WP = np.zeros((ng, lay.nxt)) if WP is None else WP
                WP[c.g] += wProj
        ev = _Values(tr)
        pieces, Ap = node_dynamics_hessian_terms(tr, ev, g_all, B, P, dyn, dur * CF, WR, WK, WP)
        out = np.zeros(self.rows.size)
        if Ap is None:
            self._gather(out, pieces)
        else:   # explicit mode: the accelerations eliminated on the dense per-node Hessians
            self._gather_dense(out, _dense_sum(tr, pieces, Ap))
        # the duration times ∂F: cross terms with t0 (−) and tf (+)
        ga, ca = self._ga, self._ca
        cross = np.einsum("gy,gyb->gb", CF, dyn[1])
        cross_p = np.einsum("gy,gyp->p", CF, dyn[2])
        for ti, sign in ((0, -1.0), (1, 1.0)):
            m = self._m_node_t[ti]
            out[m] += sign * cross[ga[m], ca[m]]
            m = self._m_p_t[ti]
            out[m] += sign * cross_p[ca[m]]
        found = None
        if self.goal_chunks:   # the goals' integrands' Hessians at every grid point once (elementwise per node)
            data, douts = tr.node_data(g_all, B, P, t0 + tr.grid.tau * dur, True)
            found = {id(bg): integrand_hessian(tr, ev, bg, g_all, B, P, data, douts)
                     for bg in list(tr.integral_goals) + list(tr.path_goals)}
        for k in self.goal_chunks:   # the goals' rows, chunk by chunk (dense: symmetric)
            c = tr.chunks[k]
            h = c.hessian
            H = np.zeros((c.nvar, c.nvar))
            h._goal_rows(H[:h.nv, :h.nv], x[self._chunk_vars[k]], lams[k], goal_row[k], ev, found)
            np.add.at(out, self.positions[k], H[h.rows, h.cols])
        return out


# ----------------------------------------------------------------------------------------------- endpoints
def goal_value_generic(b: BoundGoal, E: EndpointData) -> list:
    """A bound goal's values (its endpoint function or ``[I]``, then its divisions) for any numbers."""
    g = list(b.endpoint_generic(E)) if b.endpoint is not None else [E.integral]
    if b.divide_by_mass:
        g = [v / b.total_mass for v in g]
    if b.divide_by_duration:
        T = E.tf - E.t0
        g = [v / T for v in g]
    if b.divide_by_displacement:
        r0 = E.first.outputs["/com_position"][0]
        r1 = E.last.outputs["/com_position"][0]
        D = jet_sqrt(sum((r1[i] - r0[i]) * (r1[i] - r0[i]) for i in range(3)))
        g = [v / D for v in g]
    return g


class EndpointHessian:
    """The exact Hessian of one goal's endpoint binding (variables ``t0, tf, P``, first and last node blocks,
    the goal's integral variable if any)."""

    def __init__(self, endpoint: Any):
        self.ep = endpoint
        tr, b = endpoint.tr, endpoint.b
        self.has_integral = b.name in tr.I
        self.nvar = endpoint.vars.size
        self.out_sizes = None
        found = None
        for seed in (12345, 54321):
            rng = np.random.default_rng(seed)
            z = rng.uniform(0.5, 1.5, self.nvar)
            z[1] = z[0] + 1.0
            with patterned(tr, rng):
                H = np.abs(self._dense(z, np.ones(b.size), _Patterns(tr, rng))) > 0
            found = H if found is None else (found | H)
        self.rows, self.cols = lower_entries(found)

    def _dense(self, z: np.ndarray, weights: np.ndarray, ev: _Values | None = None) -> np.ndarray:
        ep, tr, b = self.ep, self.ep.tr, self.ep.b
        ev = ev or _Values(tr)
        weights = ev.multipliers(np.atleast_1d(np.asarray(weights, float)))
        o, nb, npar = ep.off, tr.nb, tr.npar
        t0, tf, P = z[0], z[1], z[2:o]
        Bb = z[o:o + 2 * nb].reshape(2, nb)
        t = t0 + tr.grid.tau[ep.idx] * (tf - t0)
        data, douts = tr.node_data(ep.idx, Bb, P, t, True)
        # seed variables: the binding's own (t0, tf, P, both blocks, I), then every output component of both ends
        outs = [(side, name, k) for side in range(2) for name in b.outputs for k in range(data.outputs[name].shape[1])]
        base = self.nvar
        m = base + len(outs)
        seeds = Jet.variables(list(z) + [float(data.outputs[name][side, k]) for side, name, k in outs])
        jt0, jtf = seeds[0], seeds[1]
        jP = np.array(seeds[2:o], dtype=object)
        jI = seeds[o + 2 * nb] if self.has_integral else Jet(0.0)
        pos = {key: base + j for j, key in enumerate(outs)}
        lay = tr.layout
        rows = []
        for side in range(2):
            blk = np.array(seeds[o + side * nb:o + (side + 1) * nb], dtype=object)[None, :]
            tau = tr.grid.tau[ep.idx[side]]
            outputs = {name: np.array([[seeds[pos[(side, name, k)]] for k in range(data.outputs[name].shape[1])]],
                                      dtype=object) for name in b.outputs}
            rows.append(NodeData(np.array([jt0 + (jtf - jt0) * tau], dtype=object), blk[:, lay.y], blk[:, lay.x],
                                 blk[:, lay.a], jP, outputs))
        g = [v if isinstance(v, Jet) else Jet(v) for v in goal_value_generic(b, EndpointData(jt0, jtf, jP, jI, *rows))]
        scale = weights if b.mode != "cost" else np.full(len(g), b.weight * weights[0])
        gJ = sum((w * v.gradient(m) for w, v in zip(scale, g)), np.zeros(m))
        HJ = sum((w * v.hessian(m) for w, v in zip(scale, g)), np.zeros((m, m)))
        if ev.pattern:
            gJ = ev.rng.uniform(0.5, 1.5, m) * (sum(np.abs(v.gradient(m)) for v in g) > 0)
            mask = sum(np.abs(v.hessian(m)) for v in g) > 0
            R = ev.rng.uniform(0.5, 1.5, (m, m))
            HJ = (R + R.T) * mask
        # the seeds in terms of the binding's variables: outputs through their Jacobians
        T = np.zeros((m, self.nvar))
        T[:base, :] = np.eye(base)
        for (side, name, k), j in pos.items():
            Jb, Jp = douts[name]
            T[j, o + side * nb:o + (side + 1) * nb] = Jb[side, k]
            T[j, 2:o] = Jp[side, k]
        H = _congruence(T, HJ)
        # each output's curvature, weighted by the function's slope along it
        for side in range(2):
            names = list(b.outputs)
            if not names:
                continue
            W = np.array([[gJ[pos[(side, name, k)]] for name in names for k in range(data.outputs[name].shape[1])]])
            if not np.any(W):
                continue
            inp = tr.node_inputs(ep.idx[side:side + 1], Bb[side:side + 1])
            Hk = ev.kernel_hessian((_kernel_kind(tr, "outputs"), tuple(names)), W, inp, P, inp["A"])
            He = _to_extended(tr, Hk, drop_acceleration=True)[0]
            idx = np.concatenate([o + side * nb + np.arange(nb), 2 + np.arange(npar)])
            H[np.ix_(idx, idx)] += He
        return H

    def evaluate(self, z: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The declared entries of ``∇²(Σ weights · g)`` (constraint) or ``weights[0] · w ∇² Σ g`` (cost)."""
        H = self._dense(np.asarray(z, float), weights)
        return H[self.rows, self.cols]
