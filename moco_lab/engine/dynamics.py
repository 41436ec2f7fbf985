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

import json

import numpy as np
import sympy
from pydrake.multibody.tree import MultibodyForces_
from pydrake.symbolic import Expression, Jacobian, Variable
from sympy.printing.numpy import NumPyPrinter

from ..modeling.model import Model


class _ExactPrinter(NumPyPrinter):
    """NumPy code printer that writes floats with all 17 significant digits (SymPy's default keeps 15)."""

    def _print_Float(self, expr):
        return repr(float(expr))


def _shared_subexpression_lines(definitions, printer) -> list[str]:
    """Code lines computing ``definitions`` with every repeated subexpression computed once.

    The definitions come from Drake's symbolic engine, whose expressions share
    subtrees; converted to SymPy (unevaluated) the sharing is lost but the
    repeated subtrees are structurally equal, so hash-consing them (one line per
    distinct operation) recovers it in linear time, where SymPy's ``cse`` on such
    trees can take minutes.
    """
    import sys

    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    names: dict = {}
    lines: list[str] = []

    def visit(e):
        if e.is_Atom:
            return e
        found = names.get(e)
        if found is not None:
            return found
        new = e.func(*[visit(a) for a in e.args], evaluate=False)
        sym = sympy.Symbol(f"_s{len(names)}")
        lines.append(f"    {sym.name} = {printer.doprint(new)}")
        names[e] = sym
        return sym

    for sym, expr in definitions:
        lines.append(f"    {sym.name} = {printer.doprint(visit(expr))}")
    return lines


def compile_numpy(inputs: list[tuple[str, list]], outputs: dict[str, sympy.Matrix], name: str = "kernel",
                  definitions: list = ()):
    """Compile SymPy matrices into one numpy function evaluated over nodes.

    Parameters
    ----------
    inputs : list of (argument name, list of sympy symbols)
        An argument named ``P`` is a 1-D array of scalars shared by all nodes;
        every other argument is a 2-D array ``(n, len(symbols))``.
    outputs : dict name -> sympy.Matrix (rows x cols)
    definitions : list of (sympy.Symbol, sympy expression)
        Intermediate quantities computed (in this order) before the outputs,
        which may use their symbols.

    Returns
    -------
    callable
        ``f(*arrays) -> dict name -> ndarray (n, rows, cols)``.
    """
    printer = _ExactPrinter({"fully_qualified_modules": False, "inline": True})
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
    if definitions:
        # only the definitions the outputs need (directly or through other definitions)
        needed = set().union(*(e.free_symbols for e in flat)) if flat else set()
        used = []
        for sym, expr in reversed(list(definitions)):
            if sym in needed:
                used.append((sym, expr))
                needed |= expr.free_symbols
        used.reverse()
        lines.extend(_shared_subexpression_lines(used, printer))
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


_SYMPY_FUNCTIONS = {
    "Sin": sympy.sin, "Cos": sympy.cos, "Tan": sympy.tan, "Asin": sympy.asin, "Acos": sympy.acos,
    "Atan": sympy.atan, "Sinh": sympy.sinh, "Cosh": sympy.cosh, "Tanh": sympy.tanh, "Exp": sympy.exp,
    "Log": sympy.log, "Sqrt": sympy.sqrt, "Abs": sympy.Abs,
}


class DrakeToSympy:
    """Convert Drake symbolic expressions to SymPy, fast.

    pydrake's ``to_sympy`` lets SymPy evaluate (and query its assumption
    system on) every node it builds, which takes minutes on a muscle's
    derivatives. This converter unevaluated SymPy nodes, which is all common-subexpression
    elimination and code printing need (pydrake's expressions cannot be hashed
    from Python, so repeated subtrees are converted again; SymPy's ``cse``
    merges them).

    Parameters
    ----------
    memo : dict
        Drake variable id -> SymPy symbol (shared with the caller).
    """

    def __init__(self, memo: dict):
        self.memo = memo

    def __call__(self, e):
        if not isinstance(e, Expression):
            return sympy.Float(float(e))
        import sys

        if sys.getrecursionlimit() < 20000:
            sys.setrecursionlimit(20000)
        return self._convert(e)

    def _convert(self, e: Expression):
        return self._build(e)

    def _arg(self, a):
        return self._convert(a) if isinstance(a, Expression) else sympy.Float(float(a))

    def _build(self, e: Expression):
        kind = e.get_kind().name
        _, args = e.Unapply()
        if kind == "Constant":
            v = float(args[0])
            return sympy.Integer(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else sympy.Float(v)
        if kind == "Var":
            var = args[0]
            if var.get_id() not in self.memo:
                self.memo[var.get_id()] = sympy.Symbol(var.get_name())
            return self.memo[var.get_id()]
        conv = [self._arg(a) for a in args]
        if kind == "Add":
            return sympy.Add(*conv, evaluate=False)
        if kind == "Mul":
            return sympy.Mul(*conv, evaluate=False)
        if kind == "Div":
            return sympy.Mul(conv[0], sympy.Pow(conv[1], -1, evaluate=False), evaluate=False)
        if kind == "Pow":
            return sympy.Pow(conv[0], conv[1], evaluate=False)
        if kind == "Atan2":
            return sympy.atan2(*conv, evaluate=False)
        if kind in ("Max", "Min"):
            return (sympy.Max if kind == "Max" else sympy.Min)(*conv, evaluate=False)
        if kind in _SYMPY_FUNCTIONS:
            return _SYMPY_FUNCTIONS[kind](*conv, evaluate=False)
        raise NotImplementedError(f"Drake expression kind {kind} is not supported by moco_lab's compiler")


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
        nz = len(model.auxiliary_state_names())
        nw = len(model.implicit_derivative_names())
        self.nz, self.nw = nz, nw
        self.q = sympy.symbols(f"q0:{nq}") if nq else ()
        self.u = sympy.symbols(f"u0:{nq}") if nq else ()
        self.a = sympy.symbols(f"a0:{nq}") if nq else ()
        self.z = sympy.symbols(f"z0:{nz}") if nz else ()
        self.w = sympy.symbols(f"w0:{nw}") if nw else ()
        self.x = sympy.symbols(f"x0:{nu}") if nu else ()
        self.p = sympy.symbols(f"p0:{npar}") if npar else ()
        ID, Zd, tau_app, Rw = self._symbolic_dynamics()
        Zd = sympy.Matrix(Zd) if nz else sympy.zeros(0, 1)
        Rw = sympy.Matrix(Rw) if nw else sympy.zeros(0, 1)
        tau = sympy.Matrix(tau_app) if nq else sympy.zeros(0, 1)
        wrt = {"dq": self.q, "du": self.u, "dz": self.z, "dw": self.w, "dx": self.x, "dp": self.p}
        args = [("Q", self.q), ("U", self.u), ("Z", self.z), ("W", self.w), ("X", self.x), ("P", self.p)]
        # Muscle expressions are written in terms of stand-in symbols for each path's length and
        # lengthening speed; derivatives use the chain rule through them, and the path
        # expressions are substituted only at the end (differentiating the substituted
        # expressions directly is far slower).
        L, V = sympy.Matrix(self._path_symbols[0]), sympy.Matrix(self._path_symbols[1])
        Lx, Vx = sympy.Matrix(self._path_exprs[0]), sympy.Matrix(self._path_exprs[1])
        paths = dict(zip(list(L) + list(V), list(Lx) + list(Vx)))

        opaque = list(self._opaque_defs)
        # path stand-ins first: the muscles' definitions use them
        defs = [(sym_, paths[sym_]) for sym_ in list(L) + list(V)] + self._definitions

        def chain(s_, vm):
            """Row d s / d v for a local symbol s of a muscle (a variable, or a path stand-in)."""
            if s_ in paths:
                return sympy.Matrix([paths[s_]]).jacobian(vm)
            return sympy.Matrix([[1 if s_ == vi else 0 for vi in vm]])

        def jac(E, v):
            vm = sympy.Matrix(v)
            J = E.jacobian(vm)
            if len(L):
                J = J + E.jacobian(L) * Lx.jacobian(vm) + E.jacobian(V) * Vx.jacobian(vm)
            if opaque:
                dE = E.jacobian(sympy.Matrix(opaque))
                dO = sympy.zeros(len(opaque), len(v))
                for k, o in enumerate(opaque):
                    if any(dE[:, k]):
                        for s_, d in self._opaque_defs[o].items():
                            dO[k, :] += d * chain(s_, vm)
                J = J + dE * dO
            return J.xreplace(paths)

        def sub(E):
            return E.xreplace(paths)

        # The multibody part ID(q, u, a, p) is differentiated by Drake's symbolic engine (two
        # orders of magnitude faster than SymPy's), moco_lab's applied forces by SymPy.
        ID_vars = {"dq": self._drake_vars["q"], "du": self._drake_vars["u"], "dp": self._drake_vars["p"]}
        M = self._to_sympy(Jacobian(ID, self._drake_vars["a"])) if nq else sympy.zeros(0, 0)
        zero_a = {v: Expression(0.0) for v in self._drake_vars["a"]}
        R0 = self._to_sympy(np.array([e.Substitute(zero_a) for e in ID])) - tau
        self._mass_and_bias = compile_numpy(args, {"M": M, "R0": sub(R0), "Zd": sub(Zd), "Rw": sub(Rw)},
                                            "mass_and_bias", defs)
        outs = {}
        for k, v in wrt.items():
            if not len(v):
                continue
            J = -jac(tau, v)
            if k in ID_vars:
                J = J + self._to_sympy(Jacobian(ID, ID_vars[k]))
            outs[k] = J
        if nq:
            outs["da"] = M
        outs.update({"z" + k: jac(Zd, v) for k, v in wrt.items() if len(v) and nz})
        outs.update({"w" + k: jac(Rw, v) for k, v in wrt.items() if len(v) and nw})
        Zd, tau_app, Rw = sub(Zd), sub(tau), sub(Rw)
        self._residual_jac = compile_numpy(
            [("Q", self.q), ("U", self.u), ("A", self.a), ("Z", self.z), ("W", self.w), ("X", self.x),
             ("P", self.p)], outs, "residual_jac", defs)
        self._applied = compile_numpy(args, {"tau": tau_app, "Zd": Zd}, "applied", defs)
        self.nl = len(model.multiplier_names()) if getattr(model, "constraints", None) else 0
        if self.nl:
            self._build_constraints()

    def _opaque(self, expr, dvars: dict):
        """A SymPy symbol standing for the Drake expression ``expr`` of the local symbols ``dvars``.

        Records its value and its partial derivatives (by Drake's ``Jacobian``), both converted
        to SymPy; :meth:`__init__` differentiates through it by the chain rule and substitutes the
        values before compiling.
        """
        k = len(self._opaque_defs)
        sym_ = sympy.Symbol(f"_o{k}")
        if not isinstance(expr, Expression):
            expr = Expression(float(expr))
        syms = list(dvars)
        J = Jacobian([expr], [dvars[s_] for s_ in syms])[0]
        conv = self._converter
        partials = {}
        for s_, d in zip(syms, J):
            if d.get_kind().name == "Constant" and float(d.Evaluate()) == 0.0:
                continue
            psym = sympy.Symbol(f"_o{k}_d{s_.name}")
            self._definitions.append((psym, conv(d)))
            partials[s_] = psym
        self._definitions.append((sym_, conv(expr)))
        self._opaque_defs[sym_] = partials
        return sym_

    def _build_constraints(self) -> None:
        """Compile the kinematic constraints ``φ(q)`` (Drake symbolic, differentiated by Drake).

        Outputs per node, with ``G = ∂φ/∂q`` (nl × nq): ``phi``, ``phid = G u``, ``bias = Ġu``
        (so ``φ̈ = G u̇ + Ġu``), ``GtL = Gᵀλ`` and ``GtGam = Gᵀγ`` with their Jacobians.
        """
        from pydrake.symbolic import Expression as E

        nl = self.nl
        dq, du, da = self._drake_vars["q"], self._drake_vars["u"], self._drake_vars["a"]
        dl = [Variable(f"lam{i}") for i in range(nl)]
        dg = [Variable(f"gam{i}") for i in range(nl)]
        self.lam = sympy.symbols(f"lam0:{nl}")
        self.gam = sympy.symbols(f"gam0:{nl}")
        for dv, sv in zip(dl + dg, list(self.lam) + list(self.gam)):
            self._memo[dv.get_id()] = sv
        qe = np.array([E(v) for v in dq], dtype=object)
        ue = np.array([E(v) for v in du], dtype=object)
        ae = np.array([E(v) for v in da], dtype=object)
        lam_e = np.array([E(v) for v in dl], dtype=object)
        gam_e = np.array([E(v) for v in dg], dtype=object)

        def expr(values):
            return np.array([v if isinstance(v, E) else E(float(v)) for v in np.atleast_1d(values)], dtype=object)

        try:
            with np.errstate(all="ignore"):
                phi = expr(np.concatenate([np.asarray(c.phi(qe), dtype=object) for c in self.model.constraints]))
        except Exception as err:
            raise TypeError("A kinematic constraint's φ(q) could not be evaluated with pydrake symbolic "
                            "expressions; write it with numpy functions (np.sin, ...) so that Drake can "
                            f"differentiate it exactly ({err})") from err
        with np.errstate(all="ignore"):  # numpy flags spurious "invalid value" on Drake scalar objects
            G = Jacobian(phi, dq)
            phid = expr(G @ ue)
            Gd = Jacobian(phid, dq)  # ∂(G u)/∂q
            bias = expr(Gd @ ue)
            Ga = expr(G @ ae)
            GtL = expr(G.T @ lam_e)
            GtG = expr(G.T @ gam_e)
        S = self._to_sympy
        col = lambda v: S(v).reshape(len(v), 1)
        outs = {"phi": col(phi), "G": S(G), "phid": col(phid), "phid_q": S(Gd),
                "bias": col(bias), "bias_q": S(Jacobian(bias, dq)), "bias_u": S(Jacobian(bias, du)),
                "GtL": col(GtL), "GtL_q": S(Jacobian(GtL, dq)), "GtG": col(GtG), "GtG_q": S(Jacobian(GtG, dq))}
        self._constraint_fn = compile_numpy(
            [("Q", self.q), ("U", self.u), ("L", self.lam), ("C", self.gam)], outs, "constraints")
        self._constraint_acc = compile_numpy([("Q", self.q), ("A", self.a)], {"Ga_q": S(Jacobian(Ga, dq))},
                                             "constraint_acceleration")
        # Bordalba et al.'s projection: x − x̃ = F_x(x)ᵀ μ with F = [φ; φ̇] (2 nl), x = [q; u]
        dm = [Variable(f"mu{i}") for i in range(2 * nl)]
        self.mu = sympy.symbols(f"mu0:{2 * nl}")
        for dv, sv in zip(dm, self.mu):
            self._memo[dv.get_id()] = sv
        with np.errstate(all="ignore"):
            Fx = Jacobian(np.concatenate([phi, phid]), list(dq) + list(du))
            proj = expr(Fx.T @ np.array([E(v) for v in dm], dtype=object))
        self._projection = compile_numpy(
            [("Q", self.q), ("U", self.u), ("M", self.mu)],
            {"proj": col(proj), "proj_x": S(Jacobian(proj, list(dq) + list(du))), "Fx": S(Fx)}, "projection")

    def projection(self, Q, U, Mu) -> dict:
        """Bordalba et al.'s state projection ``F_x(q, u)ᵀ μ`` at ``n`` nodes.

        ``F = [φ(q); φ̇(q, u)]`` (2 nl), ``x = [q; u]``. Returns ``proj`` (n, 2 nq), its Jacobian
        ``proj_x`` (n, 2 nq, 2 nq) w.r.t. x, and ``Fx`` (n, 2 nl, 2 nq).
        """
        out = self._projection(Q, U, Mu)
        out["proj"] = out["proj"][:, :, 0]
        return out

    def constraints(self, Q, U, L=None, C=None) -> dict:
        """Kinematic-constraint terms at ``n`` nodes (see :meth:`_build_constraints`); empty without constraints.

        Parameters
        ----------
        Q, U : (n, nq); L : (n, nl) multipliers λ; C : (n, nl) velocity corrections γ.

        Returns
        -------
        dict of ndarray
            ``phi, phid, bias`` (n, nl); ``G, phid_q, bias_q, bias_u`` (n, nl, nq);
            ``GtL, GtG`` (n, nq); ``GtL_q, GtG_q`` (n, nq, nq).
        """
        n = Q.shape[0]
        zero = np.zeros((n, self.nl))
        out = self._constraint_fn(Q, U, zero if L is None else L, zero if C is None else C)
        for key in ("phi", "phid", "bias", "GtL", "GtG"):
            out[key] = out[key][:, :, 0]
        return out

    def _to_sympy(self, exprs) -> sympy.Matrix:
        """Drake symbolic expressions (1-D or 2-D array) as a SymPy matrix in the kernel's symbols."""
        arr = np.atleast_1d(np.asarray(exprs, dtype=object))
        conv = self._converter
        return sympy.Matrix([[conv(e) for e in row] for row in arr.reshape(arr.shape[0], -1)])

    def _symbolic_dynamics(self):
        """Drake's symbolic inverse dynamics ``ID(q, u, a, p)`` (nq), and in SymPy: muscle-state
        derivatives ``Zd`` (nz), moco_lab's applied generalized forces ``tau(q, u, z, x, p)`` (nq)
        and implicit tendon residuals ``Rw`` (nw). The residual is ``ID - tau``."""
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
        self._memo = memo
        self._converter = DrakeToSympy(memo)
        self._drake_vars = {"q": dq, "u": du, "a": da, "p": dp}
        tau = list(model.applied_generalized_forces(self.q, self.u, self.x, values))
        import pydrake.symbolic as dsym

        self._opaque_defs = {}
        self._definitions = []  # (symbol, SymPy expression) evaluated before a kernel's outputs
        # muscles: tension T along the path; generalized force -(dl/dq)^T T
        Zd, Rw = [], []
        zi = wi = 0
        nact = len(model.actuators)
        self._path_symbols = ([], [])
        self._path_exprs = ([], [])
        for j, pm in enumerate(model.muscles):
            mus = pm.muscle
            e = self.x[nact + j]
            length_expr = pm.geometry.symbolic_length(plant, ctx, memo)
            dl = [sympy.diff(length_expr, qi) for qi in self.q]
            length, speed = sympy.Symbol(f"_L{j}"), sympy.Symbol(f"_V{j}")
            self._path_symbols[0].append(length)
            self._path_symbols[1].append(speed)
            self._path_exprs[0].append(length_expr)
            self._path_exprs[1].append(sum(dli * ui for dli, ui in zip(dl, self.u)))
            # The muscle's equations are built and differentiated in Drake's symbolic engine (in
            # terms of its local symbols: excitation, activation, path length and speed, tendon
            # force and its derivative); each output enters the SymPy expressions as an opaque
            # symbol whose exact partial derivatives are known (see _opaque).
            a = e
            ntf = None
            local = [e, length, speed]
            if not mus.ignore_activation_dynamics:
                a = self.z[zi]
                local.append(a)
                zi += 1
            w = None
            if not mus.ignore_tendon_compliance:
                ntf = self.z[zi]
                local.append(ntf)
                zi += 1
                if not mus.is_tendon_dynamics_explicit:
                    w = self.w[wi]
                    local.append(w)
                    wi += 1
            dvars = {sym_: Variable(sym_.name) for sym_ in local}
            for sym_, var in dvars.items():
                memo[var.get_id()] = sym_
            D = lambda sym_: None if sym_ is None else Expression(dvars[sym_])  # noqa: E731
            if not mus.ignore_activation_dynamics:
                Zd.append(self._opaque(mus.calc_activation_derivative(D(a), D(e), xp=dsym), dvars))
            if not mus.ignore_tendon_compliance:
                if mus.is_tendon_dynamics_explicit:
                    Zd.append(self._opaque(mus.calc_normalized_tendon_force_derivative(
                        D(a), D(length), D(speed), D(ntf), xp=dsym), dvars))
                else:  # Moco's implicit form: the derivative is a variable, the equilibrium a residual
                    Zd.append(w)
                    Rw.append(self._opaque(mus.calc_implicit_residual(
                        D(a), D(length), D(speed), D(ntf), D(w), xp=dsym), dvars))
            tension = self._opaque(mus.calc_tendon_force(D(a), D(length), D(speed), D(ntf), xp=dsym), dvars)
            tau = [tau[i] - dl[i] * tension for i in range(nq)]
        return ID, Zd, tau, Rw

    # ------------------------------------------------------------ evaluation
    def evaluate(self, Q, U, X, P, Z=None, A=None, jac: bool = False, W=None, L=None) -> dict:
        """Dynamics at ``n`` nodes.

        Parameters
        ----------
        Q, U : (n, nq); X : (n, nu); P : (np,); Z : (n, nz) muscle states;
        A : (n, nq) accelerations for the implicit residual, or None for
            forward dynamics.
        W : (n, nw) normalized tendon force derivatives of muscles with
            implicit tendon dynamics.
        L : (n, nl) Lagrange multipliers of the model's kinematic
            constraints; the residual gains ``+ Gᵀλ`` (``M u̇ + f_inertial −
            f_app + Gᵀλ = 0``) and the Jacobians a ``dl`` block.

        Returns
        -------
        dict
            ``"A"`` (n, nq) forward-dynamics accelerations (when ``A`` is None)
            or ``"R"`` (n, nq) inverse-dynamics residual ``M A + f_inertial -
            f_app``; ``"Zd"`` (n, nz) muscle-state derivatives; ``"Rw"``
            (n, nw) implicit tendon residuals. With ``jac``: ``"J"`` =
            derivatives of A (or R) w.r.t. ``dq, du, dz, dw, dx, dp`` (and
            ``da`` = M for R), ``"JZ"`` of Zd and ``"JW"`` of Rw, each of shape
            ``(n, rows, cols)``.
        """
        n = Q.shape[0]
        Z = np.zeros((n, 0)) if Z is None else Z
        W = np.zeros((n, 0)) if W is None else W
        out = self._mass_and_bias(Q, U, Z, W, X, P)
        M, R0, Zd = out["M"], out["R0"], out["Zd"][:, :, 0]
        cons = None
        if self.nl:
            cons = self.constraints(Q, U, np.zeros((n, self.nl)) if L is None else L)
            R0 = R0 + cons["GtL"][:, :, None]
        res = {"Zd": Zd, "Rw": out["Rw"][:, :, 0]}
        if cons is not None:
            res["constraints"] = cons
        if A is None:
            Aval = -np.linalg.solve(M, R0)[:, :, 0]
            res["A"] = Aval
        else:
            Aval = A
            res["R"] = np.einsum("nij,nj->ni", M, A) + R0[:, :, 0]
        if not jac:
            return res
        J = self._residual_jac(Q, U, Aval, Z, W, X, P)
        sizes = {"dq": Q.shape[1], "du": Q.shape[1], "dz": Z.shape[1], "dw": W.shape[1], "dx": X.shape[1],
                 "dp": P.shape[0], "dl": self.nl}
        nq, nz, nw = Q.shape[1], Z.shape[1], W.shape[1]
        JR = {k: J.get(k, np.zeros((n, nq, m))) for k, m in sizes.items()}
        if cons is not None:
            JR["dq"] = JR["dq"] + cons["GtL_q"]
            JR["dl"] = np.transpose(cons["G"], (0, 2, 1))
        res["JZ"] = {k: J.get("z" + k, np.zeros((n, nz, m))) for k, m in sizes.items()}
        res["JW"] = {k: J.get("w" + k, np.zeros((n, nw, m))) for k, m in sizes.items()}
        if A is None:
            res["J"] = {k: -np.linalg.solve(M, v) if v.shape[2] else v for k, v in JR.items()}
        else:
            JR["da"] = M
            res["J"] = JR
        return res

    def forward_constrained(self, Q, U, X, P, Z=None, W=None):
        """Accelerations and multipliers of the constrained dynamics (a KKT solve per node).

        Solves ``[M Gᵀ; G 0] [u̇; λ] = [f_app − f_inertial; −Ġu]`` (so that
        ``φ̈ = G u̇ + Ġu = 0``), as a time-stepping simulator does.

        Returns
        -------
        A : (n, nq) accelerations; L : (n, nl) multipliers; GtL : (n, nq) ``Gᵀλ``.
        """
        n, nq = Q.shape
        Z = np.zeros((n, self.nz)) if Z is None else Z
        W = np.zeros((n, self.nw)) if W is None else W
        out = self._mass_and_bias(Q, U, Z, W, X, P)
        M, R0 = out["M"], out["R0"][:, :, 0]
        if not self.nl:
            return -np.linalg.solve(M, R0[:, :, None])[:, :, 0], np.zeros((n, 0)), np.zeros((n, nq))
        c = self.constraints(Q, U)
        G, nl = c["G"], self.nl
        K = np.zeros((n, nq + nl, nq + nl))
        K[:, :nq, :nq] = M
        K[:, :nq, nq:] = np.transpose(G, (0, 2, 1))
        K[:, nq:, :nq] = G
        rhs = np.concatenate([-R0, -c["bias"]], axis=1)
        sol = np.linalg.solve(K, rhs[:, :, None])[:, :, 0]
        L = sol[:, nq:]
        return sol[:, :nq], L, np.einsum("nlq,nl->nq", G, L)

    def applied(self, Q, U, Z, X, P):
        """moco_lab's applied generalized forces and muscle-state derivatives (no Jacobians).

        Returns
        -------
        tau : (n, nq)
            Generalized forces of actuators, springs/dampers and muscles (not
            gravity or Drake's own force elements), by coordinate (q order).
        Zd : (n, nz)
            Muscle-state derivatives.
        """
        out = self._applied(Q, U, Z, np.zeros((Q.shape[0], self.nw)), X, P)
        return out["tau"][:, :, 0], out["Zd"][:, :, 0]

    def residual(self, Q, U, A, X, P, jac: bool = False, Z=None):
        """Inverse-dynamics residual ``M A + f_inertial - f_app`` at each node.

        Returns
        -------
        R : ndarray (n, nq)
        J : dict with ``dq, du, dz, da, dx, dp`` of shape ``(n, nq, .)`` when ``jac``.
        """
        res = self.evaluate(Q, U, X, P, Z=Z, A=A, jac=jac)
        return res["R"], res.get("J")

    def forward(self, Q, U, X, P, jac: bool = False, Z=None):
        """Forward dynamics: generalized accelerations ``udot`` at each node.

        Returns
        -------
        A : ndarray (n, nq)
        J : dict with ``dq, du, dz, dx, dp`` (derivatives of ``A``) when ``jac``.
        """
        res = self.evaluate(Q, U, X, P, Z=Z, jac=jac)
        return res["A"], res.get("J")


_FACTORY_KERNELS: dict = {}


def kernel_for(model: Model, parameters: tuple[str, ...] = ()) -> MultibodyKernel:
    """The model's compiled dynamics, rebuilt whenever a force-element property changed.

    Kernels are cached on the model; for models built by a factory of
    :mod:`moco_lab.models` they are also shared by every model built with the
    same factory arguments (a dashboard rebuilding its model on each click does
    not recompile). A kernel only reads its model while it is built, so sharing
    it between identical models is safe. :func:`clear_kernel_cache` empties the
    shared cache.
    """
    cache = model.__dict__.setdefault("_moco_lab_kernels", {})
    key = (tuple(parameters), model.property_signature())
    if key not in cache:
        shared = (json.dumps(model.spec, sort_keys=True), key) if model.spec is not None else None
        kernel = _FACTORY_KERNELS.get(shared) if shared is not None else None
        if kernel is None:
            kernel = MultibodyKernel(model, list(parameters))
            if shared is not None:
                _FACTORY_KERNELS[shared] = kernel
        cache[key] = kernel
    return cache[key]


def clear_kernel_cache() -> None:
    """Forget compiled dynamics shared between factory-built models (e.g. to time a cold solve)."""
    _FACTORY_KERNELS.clear()
