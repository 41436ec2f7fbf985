"""Multibody dynamics kernels with exact derivatives, vectorized over nodes.

The equations of motion of a :class:`~moco_lab.model.Model` are derived once,
symbolically: Drake's ``MultibodyPlant.ToSymbolic()`` gives the inverse
dynamics ``ID(q, u, udot) = M(q) udot + f_inertial(q, u) - f_app,Drake(q, u)``
(gravity and Drake's own force elements) as ``pydrake.symbolic`` expressions,
moco_lab's own force elements are added (``- f_app,moco_lab(q, u, x, p)``), and
the result and its Jacobians are compiled (via SymPy common-subexpression
elimination) into plain numpy functions that evaluate all collocation nodes in
one call. This keeps the number of Python calls per NLP evaluation small, which
is what decides solve time with pydrake (see ``shared/reference/DRAKE_PERFORMANCE.md``).

Array conventions: ``Q, U, A`` have shape ``(n, nq)``, ``X`` ``(n, nu)`` and
``P`` ``(np,)``; Jacobians have shape ``(n, rows, cols)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy
from pydrake.multibody.tree import MultibodyForces_
from pydrake.symbolic import Expression, Variable, to_sympy
from sympy.printing.numpy import NumPyPrinter

from .model import Model


def compile_numpy(inputs: list[tuple[str, list]], outputs: dict[str, sympy.Matrix], name: str = "kernel"):
    """Compile SymPy matrices into one numpy function evaluated over nodes.

    Parameters
    ----------
    inputs : list of (argument name, list of sympy symbols)
        An argument named ``P`` is a 1-D array of scalars shared by all nodes;
        every other argument is a 2-D array ``(n, len(symbols))``.
    outputs : dict name -> sympy.Matrix (rows x cols)

    Returns
    -------
    callable
        ``f(*arrays) -> dict name -> ndarray (n, rows, cols)``.
    """
    printer = NumPyPrinter({"fully_qualified_modules": False, "inline": True})
    names = list(outputs)
    flat = []
    for key in names:
        mat = outputs[key]
        flat.extend(list(mat))
    replacements, reduced = sympy.cse(flat, symbols=sympy.numbered_symbols("_c"))
    lines = [f"def {name}({', '.join(a for a, _ in inputs)}):"]
    first2d = next((a for a, _ in inputs if a != "P"), None)
    lines.append(f"    n = {first2d}.shape[0]" if first2d else "    n = 1")
    for arg, syms in inputs:
        for k, s in enumerate(syms):
            lines.append(f"    {s.name} = {arg}[{k}]" if arg == "P" else f"    {s.name} = {arg}[:, {k}]")
    for sym, expr in replacements:
        lines.append(f"    {sym.name} = {printer.doprint(expr)}")
    lines.append("    out = {}")
    k = 0
    for key in names:
        r, c = outputs[key].shape
        lines.append(f"    o = np.zeros((n, {r}, {c}))")
        for i in range(r):
            for j in range(c):
                e = reduced[k]
                k += 1
                if e != 0:
                    lines.append(f"    o[:, {i}, {j}] = {printer.doprint(e)}")
        lines.append(f"    out[{key!r}] = o")
    lines.append("    return out")
    src = "\n".join(lines)
    namespace = {"np": np, "numpy": np}
    for fn in ("sin", "cos", "tan", "exp", "log", "sqrt", "arctan2", "tanh", "abs", "sign", "pi",
               "arcsin", "arccos", "arctan", "sinh", "cosh", "power", "heaviside", "select", "where"):
        namespace[fn] = getattr(np, fn)
    exec(compile(src, f"<moco_lab {name}>", "exec"), namespace)
    fn = namespace[name]
    fn.source = src
    return fn


@dataclass
class NodeEval:
    """Dynamics evaluated at ``n`` nodes (see :class:`MultibodyKernel`)."""

    value: np.ndarray
    jac: dict[str, np.ndarray]


class MultibodyKernel:
    """Vectorized multibody dynamics of a model with exact Jacobians.

    Parameters
    ----------
    model : Model
    parameters : list of str
        Property paths (see :meth:`Model.properties`) treated as inputs ``P``
        instead of fixed values, in this order.
    """

    def __init__(self, model: Model, parameters: list[str] = ()):
        self.model = model
        self.parameters = list(parameters)
        nq, nu, npar = model.nq, model.num_controls, len(self.parameters)
        self.q = sympy.symbols(f"q0:{nq}") if nq else ()
        self.u = sympy.symbols(f"u0:{nq}") if nq else ()
        self.a = sympy.symbols(f"a0:{nq}") if nq else ()
        self.x = sympy.symbols(f"x0:{nu}") if nu else ()
        self.p = sympy.symbols(f"p0:{npar}") if npar else ()
        ID = self._symbolic_inverse_dynamics()
        R = sympy.Matrix(ID)
        A = sympy.Matrix(self.a)
        M = R.jacobian(A)
        R0 = R.subs({ai: 0 for ai in self.a})
        Q, U, X, P = (sympy.Matrix(v) for v in (self.q, self.u, self.x, self.p))
        self._mass_and_bias = compile_numpy(
            [("Q", self.q), ("U", self.u), ("X", self.x), ("P", self.p)], {"M": M, "R0": R0}, "mass_and_bias"
        )
        outs = {"dq": R.jacobian(Q), "du": R.jacobian(U)}
        if nu:
            outs["dx"] = R.jacobian(X)
        if npar:
            outs["dp"] = R.jacobian(P)
        self._residual_jac = compile_numpy(
            [("Q", self.q), ("U", self.u), ("A", self.a), ("X", self.x), ("P", self.p)], outs, "residual_jac"
        )
        self.symbolic_residual = R

    def _symbolic_inverse_dynamics(self) -> list:
        model = self.model
        plant = model.plant.ToSymbolic()
        ctx = plant.CreateDefaultContext()
        nq = model.nq
        dq = [Variable(f"q{i}") for i in range(nq)]
        du = [Variable(f"u{i}") for i in range(nq)]
        da = [Variable(f"a{i}") for i in range(nq)]
        dp = [Variable(f"p{i}") for i in range(len(self.parameters))]
        memo = {}
        for dv, sv in zip(dq + du + da + dp, list(self.q) + list(self.u) + list(self.a) + list(self.p)):
            memo[dv.get_id()] = sv
        props = model.properties()
        values = {}
        for k, path in enumerate(self.parameters):
            prop = props[path]
            if prop.kind == "body_mass":
                plant.GetBodyByName(prop.target).SetMass(ctx, Expression(dp[k]))
            values[path] = self.p[k]
        plant.SetPositions(ctx, np.array([Expression(v) for v in dq]))
        plant.SetVelocities(ctx, np.array([Expression(v) for v in du]))
        forces = MultibodyForces_[Expression](plant)
        plant.CalcForceElementsContribution(ctx, forces)
        ID = plant.CalcInverseDynamics(ctx, np.array([Expression(v) for v in da]), forces)
        ID = [sympy.sympify(to_sympy(e, memo=memo)) for e in ID]
        tau = model.applied_generalized_forces(self.q, self.u, self.x, values)
        return [ID[i] - tau[i] for i in range(nq)]

    # ------------------------------------------------------------ evaluation
    def residual(self, Q, U, A, X, P, jac: bool = False):
        """Inverse-dynamics residual ``M A + f_inertial - f_app`` at each node.

        Returns
        -------
        R : ndarray (n, nq)
        J : dict with ``dq, du, da, dx, dp`` of shape ``(n, nq, .)`` when ``jac``.
        """
        out = self._mass_and_bias(Q, U, X, P)
        M, R0 = out["M"], out["R0"][:, :, 0]
        R = np.einsum("nij,nj->ni", M, A) + R0
        if not jac:
            return R, None
        J = self._residual_jac(Q, U, A, X, P)
        J["da"] = M
        return R, self._complete(J, Q.shape[0])

    def forward(self, Q, U, X, P, jac: bool = False):
        """Forward dynamics: generalized accelerations ``udot`` at each node.

        Returns
        -------
        A : ndarray (n, nq)
        J : dict with ``dq, du, dx, dp`` (derivatives of ``A``) when ``jac``.
        """
        out = self._mass_and_bias(Q, U, X, P)
        M, R0 = out["M"], out["R0"]
        A = -np.linalg.solve(M, R0)[:, :, 0]
        if not jac:
            return A, None
        J = self._complete(self._residual_jac(Q, U, A, X, P), Q.shape[0])
        dA = {k: -np.linalg.solve(M, J[k]) if J[k].shape[2] else J[k] for k in ("dq", "du", "dx", "dp")}
        return A, dA

    def _complete(self, J, n):
        nq = self.model.nq
        J.setdefault("dx", np.zeros((n, nq, 0)))
        J.setdefault("dp", np.zeros((n, nq, 0)))
        return J
