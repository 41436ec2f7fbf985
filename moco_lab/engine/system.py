"""A model's equations as one expression graph in the variables of a collocation node.

:class:`SymbolicSystem` derives, for a :class:`~moco_lab.modeling.model.Model`
and a list of optimized properties (parameters):

* the multibody residual ``R = τ_ID(q, u, u̇) − τ_applied(q, u, z, x, p) + G(q)ᵀλ``
  (:mod:`moco_lab.engine.multibody` for ``τ_ID``; ``τ_applied`` from every
  force element's :class:`~moco_lab.modeling.forces.ForceContribution`,
  point forces mapped by ``Jᵀ F``);
* the force elements' state derivatives ``ż`` and implicit residuals;
* the kinematic constraints ``φ(q)`` and what the transcriptions need of them
  (``G``, ``φ̇ = G u``, ``Ġu``, ``Gᵀγ``, Bordalba's projection);
* named outputs: every force element's outputs (``<element path>/<name>``),
  the whole-body centre of mass, and on request the positions and velocities
  of any body point.

Node variables, in this order, are the columns of a kernel's input ``X``:
``q (nq), u (nq), a (nq), z (nz), w (nw), x (nx), λ (nl), γ (nl), μ (2 nl), e (ne)``;
parameters ``p`` are shared by all nodes. ``e`` are the force elements' time-dependent inputs (data known in
advance, e.g. measured ground reaction forces: :meth:`Model.input_values`); they are node data, never
differentiated.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..modeling.model import Model
from ..modeling.wrapping import holds_tangent_points
from ..symbolic import expr as sx
from ..symbolic.expr import Graph, derivatives, substitute
from ..util.memory import paused_gc
from ..util.names import did_you_mean
from .multibody import SymbolicMultibody

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..symbolic.expr import Expr

__all__ = ["SymbolicSystem", "NodeVariables"]


class NodeVariables:
    """Names and sizes of the node variable blocks (the columns of a kernel input)."""

    BLOCKS = ("q", "u", "a", "z", "w", "x", "lam", "gam", "mu", "e")

    def __init__(self, nq: int, nz: int, nw: int, nx: int, nl: int, ne: int = 0):
        self.sizes = {"q": nq, "u": nq, "a": nq, "z": nz, "w": nw, "x": nx, "lam": nl, "gam": nl, "mu": 2 * nl,
                      "e": ne}
        self.offset = {}
        k = 0
        for b in self.BLOCKS:
            self.offset[b] = k
            k += self.sizes[b]
        self.total = k

    def slice(self, block: str) -> slice:
        """Columns of group ``block`` (``"q"``, ``"u"``, ``"a"``, ...) in a node's inputs."""
        return slice(self.offset[block], self.offset[block] + self.sizes[block])


class _PointCapture:
    """A force context whose ``point_position`` returns fresh variables (recorded with the body and the true
    position), so that a path length can be differentiated with respect to the points it passes through."""

    def __init__(self, ctx: "_Context", tag: str):
        self._ctx, self._tag = ctx, tag
        self.points: list[tuple[int, list, list]] = []  # (body index, true position, stand-in variables)

    def __getattr__(self, name: str):
        return getattr(self._ctx, name)

    def point_position(self, body: str, location: ArrayLike) -> list:
        s = self._ctx._s
        k = len(self.points)
        stand_in = s.graph.vars([f"{self._tag}/point{k}/{i}" for i in range(3)])
        self.points.append((s.body_index(body), self._ctx.point_position(body, location), stand_in))
        return stand_in


class _Context:
    """The engine's :class:`~moco_lab.modeling.forces.ForceContext`."""

    xp = sx

    def __init__(self, system: "SymbolicSystem"):
        self._s = system
        self.q, self.u = system.q, system.u

    def coordinate_index(self, name: str) -> int:
        return self._s.coordinate_index(name)

    def coordinate_names(self) -> list[str]:
        return [c.name for c in self._s.model.coordinates]

    def state(self, name: str):
        return self._s.named(name, self._s.z_index, self._s.z, "state")

    def control(self, name: str):
        return self._s.named(name, self._s.x_index, self._s.x, "control")

    def implicit_derivative(self, name: str):
        return self._s.named(name, self._s.w_index, self._s.w, "implicit derivative")

    def input(self, name: str):
        return self._s.named(name, self._s.e_index, self._s.e, "input")

    def value(self, element, prop: str):
        path = f"{element.path}/{prop}"
        if path in self._s.param_index:
            return self._s.p[self._s.param_index[path]]
        return float(element.properties()[prop])

    def point_position(self, body: str, location: ArrayLike) -> list:
        return self._s.mb.point_position(self._s.body_index(body), location)

    def point_velocity(self, body: str, location: ArrayLike) -> list:
        return self._s.mb.point_velocity(self._s.body_index(body), location)

    def body_point_velocity(self, body: str, point: ArrayLike) -> list:
        b = self._s.body_index(body)
        mb = self._s.mb
        r = [pi - oi for pi, oi in zip(point, mb.p[b])]
        w = mb.w[b]
        return [mb.v[b][0] + w[1] * r[2] - w[2] * r[1], mb.v[b][1] + w[2] * r[0] - w[0] * r[2],
                mb.v[b][2] + w[0] * r[1] - w[1] * r[0]]

    def element(self, path: str):
        elements = {e.path: e for e in self._s.model.force_elements}
        if path not in elements:
            raise KeyError(did_you_mean(path, list(elements), "force element"))
        return elements[path]

    def total_mass(self):
        return self._s.mb.total_mass()

    def gradient(self, e) -> list:
        d = derivatives([e], self._s.q)[0]
        return [d.get(i, 0.0) for i in range(len(self._s.q))]

    def gradient_holding(self, build) -> tuple:
        held: dict = {}
        value = build(self._s.hold_function(held))
        d = derivatives([value], self._s.q)[0]
        out = substitute([value] + [d.get(i, 0.0) for i in range(len(self._s.q))], held)
        return out[0], out[1:]


class SymbolicSystem:
    """The equations of ``model`` with ``parameters`` (property paths) as shared variables.

    Attributes
    ----------
    graph : Graph
    q, u, a, z, w, x, lam, gam, mu, e, p : list of Expr
        The node variables (see the module docstring) and the parameters.
    residual : list of Expr (nq)
        ``τ_ID − τ_applied + Gᵀλ``.
    applied : list of Expr (nq)
        ``τ_applied`` (every force element, not gravity).
    applied_passive : list of Expr (nq)
        The part of ``τ_applied`` from passive elements (no controls, no states: springs, contact, ...).
    state_derivatives : list of Expr (nz)
    implicit_residuals : list of Expr (nw)
    phi : list of Expr (nl)
    outputs : dict of str -> list of Expr
    """

    @paused_gc()   # tens of thousands of new nodes at once (moco_lab.util.memory)
    def __init__(self, model: Model, parameters: Sequence[str] = ()):
        self.model = model
        self.parameters = list(parameters)
        props = model.properties()
        for path in self.parameters:
            if path not in props:
                raise KeyError(did_you_mean(path, props, "model property"))
        g = self.graph = Graph()
        nq = model.nq
        self.z_names = model.auxiliary_state_names()
        self.w_names = model.implicit_derivative_names()
        self.x_names = model.control_names()
        self.lam_names = model.multiplier_names() if model.constraints else []
        self.e_names = model.input_names()
        nl = len(self.lam_names)
        self.layout = NodeVariables(nq, len(self.z_names), len(self.w_names), len(self.x_names), nl,
                                    len(self.e_names))
        self.q = g.vars([f"q{i}" for i in range(nq)])
        self.u = g.vars([f"u{i}" for i in range(nq)])
        self.a = g.vars([f"a{i}" for i in range(nq)])
        self.z = g.vars([f"z{i}" for i in range(len(self.z_names))])
        self.w = g.vars([f"w{i}" for i in range(len(self.w_names))])
        self.x = g.vars([f"x{i}" for i in range(len(self.x_names))])
        self.lam = g.vars([f"lam{i}" for i in range(nl)])
        self.gam = g.vars([f"gam{i}" for i in range(nl)])
        self.mu = g.vars([f"mu{i}" for i in range(2 * nl)])
        self.e = g.vars([f"e{i}" for i in range(len(self.e_names))])
        self.p = g.vars([f"p{i}" for i in range(len(self.parameters))])
        self.node_inputs = (self.q + self.u + self.a + self.z + self.w + self.x + self.lam + self.gam + self.mu
                            + self.e)
        self.param_index = {path: k for k, path in enumerate(self.parameters)}
        self._held_count = 0  # stand-ins made by hold_function, numbered for their names
        self.z_index = {n: k for k, n in enumerate(self.z_names)}
        self.w_index = {n: k for k, n in enumerate(self.w_names)}
        self.x_index = {n: k for k, n in enumerate(self.x_names)}
        self.e_index = {n: k for k, n in enumerate(self.e_names)}

        self.tree = model.tree()
        masses, inertia_scales = {}, {}
        for path, k in self.param_index.items():
            prop = props[path]
            if prop.kind in ("body_mass", "body_scale"):
                b = self.tree.body_index(prop.target)
                if b in masses:
                    raise ValueError(f"{path}: the body {prop.target!r} has another parameter on its mass; "
                                     "optimize either its mass or its mass_scale")
                if prop.kind == "body_mass":
                    masses[b] = self.p[k]
                else:
                    masses[b] = self.p[k] * self.tree.bodies[b].mass
                    inertia_scales[b] = self.p[k]
        self.mb = SymbolicMultibody(self.tree, self.q, self.u, self.a, masses, inertia_scales)

        # force elements
        ctx = _Context(self)
        zdot: dict = {}
        resid: dict = {}
        self.outputs: dict[str, list] = {}
        # generalized forces of all elements, and of the passive ones (no controls, no states)
        applied = {True: [0.0] * nq, False: [0.0] * nq}
        point_forces = {True: [], False: []}
        moments = {True: [], False: []}
        #: Per force element (by path): its generalized forces ``{q index: Expr}``, point forces and body moments.
        self.element_loads: dict[str, tuple] = {}
        for element in model.force_elements:
            c = element.contribute(ctx)
            passive = not element.control_names() and not element.state_names()
            self.element_loads[element.path] = (dict(c.generalized),
                                                [(self.body_index(b), p, f) for b, p, f in c.point_forces],
                                                [(self.body_index(b), m) for b, m in c.body_moments])
            for i, v in c.generalized.items():
                applied[passive][i] = applied[passive][i] + v
            point_forces[passive] += [(self.body_index(b), p, f) for b, p, f in c.point_forces]
            moments[passive] += [(self.body_index(b), m) for b, m in c.body_moments]
            zdot.update(c.state_derivatives)
            resid.update(c.residuals)
            for name, value in c.outputs.items():
                self.outputs[f"{element.path}/{name}"] = list(value) if isinstance(value, (list, tuple)) else [value]
        #: Every load the force elements apply to bodies: ``(body index, world point, world force)`` and
        #: ``(body index, world moment)`` (joint reactions subtract them from their subtree's momentum rate).
        self.point_forces = point_forces[True] + point_forces[False]
        self._path_point_forces: list | None = None
        self.body_moments = moments[True] + moments[False]
        for passive in (True, False):
            if point_forces[passive] or moments[passive]:
                jtf = self.mb.generalized_forces(point_forces[passive], moments[passive])
                applied[passive] = [a_ + b_ for a_, b_ in zip(applied[passive], jtf)]
        self.applied_passive = [g.lift(v) for v in applied[True]]
        applied = [a_ + b_ for a_, b_ in zip(applied[True], applied[False])]
        missing = [n for n in self.z_names if n not in zdot]
        if missing:
            raise ValueError(f"force elements gave no time derivative for the states {missing}")
        missing = [n for n in self.w_names if n not in resid]
        if missing:
            raise ValueError(f"force elements gave no residual for the implicit derivatives {missing}")
        self.applied = [g.lift(v) for v in applied]
        self.state_derivatives = [g.lift(zdot[n]) for n in self.z_names]
        self.implicit_residuals = [g.lift(resid[n]) for n in self.w_names]
        com, vcom = self.mb.center_of_mass()
        self.outputs["/com_position"] = [g.lift(v) for v in com]
        self.outputs["/com_velocity"] = [g.lift(v) for v in vcom]

        # kinematic constraints
        self.phi = []
        for cons in (model.constraints or []):
            self.phi += [g.lift(v) for v in cons.phi_expr(self.q, ctx.point_position)]
        tau_id = self.mb.inverse_dynamics()
        self.id_forces = [g.lift(t) for t in tau_id]  # M u̇ + c(q, u) − gravity's generalized forces
        residual = [t - f for t, f in zip(self.id_forces, self.applied)]
        if self.phi:
            self.G = derivatives(self.phi, self.q)  # per row {q index: ∂φ/∂q}
            for l, row in enumerate(self.G):
                for i, d in row.items():
                    residual[i] = residual[i] + d * self.lam[l]
        else:
            self.G = []
        self.residual = [g.lift(r) for r in residual]

    # ------------------------------------------------------------ names
    def coordinate_index(self, name: str) -> int:
        """Index in ``q`` of a coordinate given by name, path or value path."""
        for c in self.model.coordinates:
            if name in (c.name, c.path, c.value_path):
                return c.q_index
        raise KeyError(did_you_mean(name, [c.name for c in self.model.coordinates], "coordinate"))

    def body_index(self, body: str | int) -> int:
        """Drake body index of a body given by name, OpenSim path or index (``"ground"``: the world)."""
        if isinstance(body, (int, np.integer)):
            return int(body)
        name = body
        if body not in ("ground", "world"):
            for drake_name, path in self.model.body_paths.items():
                if body == path:
                    name = drake_name
        try:
            return self.tree.body_index(name)
        except KeyError:
            raise KeyError(did_you_mean(str(body), ["ground", *self.model.body_paths], "body")) from None

    @staticmethod
    def named(name: str, index: dict, values: Sequence, what: str) -> Expr:
        """``values[index[name]]``, or a KeyError that suggests close names of kind ``what``."""
        if name not in index:
            raise KeyError(did_you_mean(name, list(index), what))
        return values[index[name]]

    # ------------------------------------------------------------ constraint quantities
    def constraint_terms(self) -> dict[str, list]:
        """Expressions of the kinematic-constraint terms (empty without constraints).

        ``phi`` (nl), ``phid = G u`` (nl), ``bias = Ġu`` (nl, so that
        ``φ̈ = G u̇ + Ġu``), ``Ga = G u̇`` (nl), ``GtG = Gᵀγ`` (nq), ``GtL = Gᵀλ`` (nq) and Bordalba's
        ``proj = F_xᵀ μ`` (2 nq) with ``F = [φ; φ̇]``, ``x = [q; u]``.
        """
        if not self.phi:
            return {}
        g, nq = self.graph, len(self.q)
        G = self.G
        phid = [sum((d * self.u[i] for i, d in row.items()), g.zero) for row in G]
        dphid = derivatives(phid, self.q)
        bias = [sum((d * self.u[i] for i, d in row.items()), g.zero) for row in dphid]
        Ga = [sum((d * self.a[i] for i, d in row.items()), g.zero) for row in G]
        GtG = [g.zero] * nq
        GtL = [g.zero] * nq
        for l, row in enumerate(G):
            for i, d in row.items():
                GtG[i] = GtG[i] + d * self.gam[l]
                GtL[i] = GtL[i] + d * self.lam[l]
        nl = len(self.phi)
        mu_p, mu_v = self.mu[:nl], self.mu[nl:]
        proj = [g.zero] * (2 * nq)
        for l in range(nl):  # F_x = [[G, 0], [∂φ̇/∂q, G]]
            for i, d in G[l].items():
                proj[i] = proj[i] + d * mu_p[l]
                proj[nq + i] = proj[nq + i] + d * mu_v[l]
            for i, d in dphid[l].items():
                proj[i] = proj[i] + d * mu_v[l]
        return {"phi": self.phi, "phid": [g.lift(v) for v in phid], "bias": [g.lift(v) for v in bias],
                "Ga": [g.lift(v) for v in Ga], "GtG": [g.lift(v) for v in GtG], "GtL": [g.lift(v) for v in GtL],
                "proj": [g.lift(v) for v in proj]}

    # ------------------------------------------------------------ outputs on request
    def hold_function(self, held: dict) -> "Callable[[list], list]":
        """``hold(values) -> stand-ins``: fresh variables for ``values`` (recorded in ``held``: variable ->
        value), so that an expression built on them can be differentiated with those values held fixed and then
        have them put back (:meth:`~moco_lab.modeling.force_element.ForceContext.gradient_holding`)."""
        def hold(values):
            out = []
            for v in values:
                if isinstance(v, sx.Expr):
                    self._held_count += 1
                    stand_in = self.graph.var(f"held/{self._held_count}")
                    held[stand_in] = v
                    v = stand_in
                out.append(v)
            return out
        return hold

    def path_point_forces(self) -> list:
        """The forces the path muscles apply to bodies, ``(body index, world point, world force)``: at each point
        the length depends on (path points, wrapping surfaces' frame points), ``−T ∂l/∂p`` — the tension along the
        segments at each path point, as OpenSim's ``GeometryPath`` applies it, and on a wrapping surface's body the
        load of the wrapped part. Their generalized forces are the muscles' ``−T ∂l/∂q`` (a moving point's motion
        relative to its body is a mobility force, as in OpenSim). Function-based paths apply none (their tension
        acts through generalized forces only, as in OpenSim 4.6)."""
        if self._path_point_forces is None:
            out = []
            ctx = _Context(self)
            for m in self.model.muscles:
                if not getattr(m.geometry, "points", None):
                    continue
                capture = _PointCapture(ctx, m.path)
                held: dict = {}  # OpenSim's wrapping: its tangent points held on the cylinder (see length_and_gradient)
                hold = self.hold_function(held) if holds_tangent_points(m.geometry.wraps) else None
                length = m.geometry.length_expr(capture, hold)
                stand_ins = [v for _, _, vs in capture.points for v in vs]
                grads = derivatives([length], stand_ins)[0]
                values = {v: x for _, p, vs in capture.points for v, x in zip(vs, p)}
                keys = sorted(grads)
                dl = [grads[k] for k in keys]
                if held:  # the held values are in the points' stand-ins: put them back first
                    dl = substitute(dl, held)
                dl = dict(zip(keys, substitute(dl, values)))
                tension = self.outputs[f"{m.path}/tendon_force"][0]
                for k, (body, p, _) in enumerate(capture.points):
                    d = [dl.get(3 * k + i, 0.0) for i in range(3)]
                    if not all(isinstance(v, float) and v == 0.0 for v in d):
                        out.append((body, p, [-tension * v for v in d]))
            self._path_point_forces = out
        return self._path_point_forces

    def joint_chain(self, joint: str) -> list:
        """The tree joints that make the model's joint ``joint`` (name or path ``/jointset/<name>``), root side
        first: one, or the chain of a multi-coordinate joint (:meth:`Model.joint_paths`)."""
        paths = self.model.joint_paths()
        key = joint if joint.startswith("/") else f"/jointset/{joint}"
        if key not in paths:
            raise KeyError(did_you_mean(joint, sorted(paths), "joint"))
        return [j for j in self.tree.joints if j.name in paths[key]]

    def add_joint_reaction_output(self, joint: str, loads_frame: str = "parent", expressed_in: str | None = None) -> str:
        """Add the output of the reaction load of ``joint`` (OpenSim's ``Joint::calcReactionOn{Parent,Child}``):
        ``[moment x, y, z, force x, y, z]``, on the ``loads_frame`` (``"parent"``: the load the child applies to
        the parent, at the joint frame on the parent; ``"child"``: the load the parent applies to the child, at
        the joint frame on the child), expressed in ``expressed_in`` (default: that joint frame; ``"ground"``, or
        a body by name or path). Needs accelerations (implicit or prescribed kinematics). Returns its name."""
        if loads_frame not in ("parent", "child"):
            raise ValueError(f"joint reaction of {joint!r}: loads_frame must be 'parent' or 'child', got "
                             f"{loads_frame!r}")
        others = sorted({type(c).__name__ for c in self.model.constraints or []} - {"CoordinateCouplerConstraint"})
        if others:
            raise NotImplementedError(f"joint reaction of {joint!r}: the model's {others[0]} applies forces to bodies "
                                      "that the reaction would have to include; only coordinate couplers are "
                                      "supported")
        chain = self.joint_chain(joint)
        first, last = chain[0], chain[-1]
        point_forces = self.point_forces + self.path_point_forces()
        frame = "" if expressed_in is None else str(expressed_in)
        path = joint if joint.startswith("/") else f"/jointset/{joint}"
        name = f"{path}/reaction_on_{loads_frame}" + (f"_in_{frame}" if frame else "")
        if name in self.outputs:
            return name
        mb = self.mb
        moment, force = mb.joint_reaction(last.child, point_forces, self.body_moments, on=loads_frame,
                                          parent_side=first.child)
        if not frame:
            R = mb.joint_frame_R[first.child] if loads_frame == "parent" else mb.joint_child_R[last.child]
        elif frame in ("ground", "/ground", "world"):
            R = None
        else:
            R = mb.R[self.body_index(frame)]
        if R is not None:  # Rᵀ v: world components into the frame's
            moment = [sum(R[i][k] * moment[i] for i in range(3)) for k in range(3)]
            force = [sum(R[i][k] * force[i] for i in range(3)) for k in range(3)]
        self.outputs[name] = [self.graph.lift(v) for v in [*moment, *force]]
        return name

    def add_angular_velocity_output(self, name: str, body: str) -> str:
        """Add output ``<name>/angular_velocity``: a body's angular velocity in ground (rad/s, ground axes)."""
        b = self.body_index(body)
        out = f"{name}/angular_velocity"
        self.outputs[out] = [self.graph.lift(v) for v in self.mb.w[b]]
        return out

    def add_acceleration_output(self, name: str, body: str, gravity_offset: bool = False,
                                expressed_in_body: bool = False) -> str:
        """Add output ``<name>/linear_acceleration``: the acceleration of a body's origin in ground (m/s²), less
        gravity with ``gravity_offset`` (what an accelerometer senses), in the body's axes with
        ``expressed_in_body``, else ground's. Needs accelerations (implicit or prescribed kinematics)."""
        b = self.body_index(body)
        out = f"{name}/linear_acceleration" + ("_gravity_offset" if gravity_offset else "") + (
            "_in_body" if expressed_in_body else "")
        if out in self.outputs:
            return out
        acc = list(self.mb.ac[b])  # the multibody's accelerations are taken with the world accelerating at −g
        if not gravity_offset:
            acc = [acc[i] + float(self.tree.gravity[i]) for i in range(3)]
        if expressed_in_body:
            R = self.mb.R[b]
            acc = [sum(R[i][k] * acc[i] for i in range(3)) for k in range(3)]
        self.outputs[out] = [self.graph.lift(v) for v in acc]
        return out

    def add_generalized_force_output(self, name: str, force_paths: Sequence[str]) -> str:
        """Add output ``<name>/generalized_forces`` (nq): the generalized forces that the accelerations need beyond
        gravity and the force elements ``force_paths`` (``M u̇ + c(q, u) − g(q) − Σ_listed τ_e``, constraints
        ignored: Simbody's ``calcResidualForceIgnoringConstraints`` with those forces applied, what Moco's
        ``MocoGeneralizedForceTrackingGoal`` tracks). Needs accelerations (implicit or prescribed kinematics)."""
        out = f"{name}/generalized_forces"
        unknown = [p for p in force_paths if p not in self.element_loads]
        if unknown:
            raise KeyError(did_you_mean(unknown[0], list(self.element_loads), "force element"))
        tau = list(self.id_forces)
        point_forces, moments = [], []
        for path in force_paths:
            generalized, pf, bm = self.element_loads[path]
            for i, v in generalized.items():
                tau[i] = tau[i] - v
            point_forces += pf
            moments += bm
        if point_forces or moments:
            tau = [t - f for t, f in zip(tau, self.mb.generalized_forces(point_forces, moments))]
        self.outputs[out] = [self.graph.lift(v) for v in tau]
        return out

    def add_rotation_output(self, name: str, body: str) -> str:
        """Add output ``<name>/rotation``: a body's orientation in ground, the rotation matrix ``R_GB`` by rows (9)."""
        b = self.body_index(body)
        out = f"{name}/rotation"
        self.outputs[out] = [self.graph.lift(v) for row in self.mb.R[b] for v in row]
        return out

    def add_point_output(self, name: str, body: str, location: ArrayLike) -> tuple[str, str]:
        """Add outputs ``<name>/position`` and ``<name>/velocity`` (world frame) of a point fixed on a body."""
        b = self.body_index(body)
        loc = [float(v) for v in location]
        pos, vel = f"{name}/position", f"{name}/velocity"
        self.outputs[pos] = [self.graph.lift(v) for v in self.mb.point_position(b, loc)]
        self.outputs[vel] = [self.graph.lift(v) for v in self.mb.point_velocity(b, loc)]
        return pos, vel
