"""The equations of motion of a ``MultibodyPlant``, derived as an expression graph by recursion over its tree.

The plant stays the single description of the mechanics: :func:`read_tree`
reads its joints (type, axis, the fixed poses of the joint frames on parent
and child), its bodies' spatial inertias and the gravity vector, and
:class:`SymbolicMultibody` runs the textbook recursions on expressions of
``q``, ``u = q̇`` and ``u̇``:

* kinematics from the root outward: body poses ``X_WB``, angular velocities
  and accelerations, velocities and accelerations of body origins (world
  frame), with gravity entering as the acceleration ``−g`` of the world (the
  usual Newton–Euler trick);
* Newton–Euler inverse dynamics from the leaves inward: the generalized
  forces ``τ_ID(q, u, u̇) = M(q) u̇ + C(q, u) − τ_g(q)``;
* the generalized forces ``Jᵀ F`` of forces applied at points of bodies, by
  the same inward recursion (no Jacobian is formed).

Each scalar operation is a node of a hash-consed graph
(:mod:`moco_lab.symbolic.expr`), so the work grows linearly with the number
of bodies. Everything here is checked against Drake's own
``CalcInverseDynamics``, ``CalcMassMatrix`` and point kinematics in
``tests/test_multibody.py``.

Supported joints: ``RevoluteJoint``, ``PrismaticJoint``, ``PlanarJoint``
(``q = (x, y, θ)``), ``WeldJoint``; joint damping (``−d u``); and OpenSim's
``CustomJoint`` of one coordinate (:class:`~moco_lab.modeling.joints.CustomTransform`,
read from the model rather than from the plant, which holds a revolute carrier). Gravity is the
only Drake force element supported (others raise, naming the element).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..modeling.joints import rotation_about
from ..modeling.tree import SUPPORTED_JOINTS, BodyInfo, JointInfo, Tree, read_tree
from ..symbolic import expr as sx
from ..symbolic.expr import is_expr

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..symbolic.expr import Expr

__all__ = ["JointInfo", "BodyInfo", "Tree", "read_tree", "SymbolicMultibody", "SUPPORTED_JOINTS"]


# ------------------------------------------------------------------ small vector algebra on expressions
def _add(a, b):
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]


def _sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _scale(s, a):
    return [s * a[0], s * a[1], s * a[2]]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _mv(R, v):
    return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3)]


def _mm(A, B):
    return [[A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j] for j in range(3)] for i in range(3)]


def _const_mat(M):
    return [[float(M[i][j]) for j in range(3)] for i in range(3)]


def _const_vec(v):
    return [float(v[0]), float(v[1]), float(v[2])]


def _is_zero(v) -> bool:
    return all(isinstance(x, float) and x == 0.0 for x in v)


class SymbolicMultibody:
    """Kinematics and dynamics of a :class:`Tree` as expressions.

    Parameters
    ----------
    tree : Tree
    q, u : sequence of Expr, length nq
        Positions and speeds (``q̇ = u`` for the supported joints).
    a : sequence of Expr or None
        Accelerations ``u̇``; None derives kinematics and velocities only.
    masses : dict of body index -> Expr, optional
        Body masses to use instead of the plant's (optimization parameters). The rotational inertia about the
        centre of mass is kept, as OpenSim's ``Body::setMass`` and Moco's mass parameters keep it.
    inertia_scales : dict of body index -> Expr, optional
        Factors of bodies' rotational inertias about their centres of mass (a body scaled as a whole: its mass
        in ``masses`` scaled by the same factor, as Drake's ``SetMass`` does, which keeps the unit inertia).
    """

    def __init__(self, tree: Tree, q: Sequence, u: Sequence, a: Sequence | None = None,
                 masses: dict | None = None, inertia_scales: dict | None = None):
        self.tree = tree
        self.q, self.u, self.a = list(q), list(u), None if a is None else list(a)
        self.masses = dict(masses or {})
        self.inertia_scales = dict(inertia_scales or {})
        world = tree.world
        zero = [0.0, 0.0, 0.0]
        I3 = _const_mat(np.eye(3))
        # per body: R_WB, p_WB, w (angular velocity), v (origin velocity), al, ac (accelerations)
        self.R = {world: I3}
        self.p = {world: zero}
        self.w = {world: zero}
        self.v = {world: zero}
        g = _const_vec(tree.gravity)
        self.al = {world: zero}
        self.ac = {world: [-g[0], -g[1], -g[2]]}  # gravity as the world's acceleration
        self.joint_origin = {}  # child body -> p_WM (world position of the joint frame M)
        self.joint_frame_R = {}  # child body -> R_WF
        self.joint_parent_origin = {}  # child body -> p_WF (world position of the joint frame F on the parent)
        self.joint_child_R = {}  # child body -> R_WM
        self.partials = {}  # child body of a custom joint -> (H_w, H_v): partial velocities in F
        for j in tree.joints:
            self._forward(j)

    # ------------------------------------------------------------ joint kinematics
    def _joint(self, j: JointInfo):
        """``R_FM, p_FM, w_FM, v_FM, dw_FM, dv_FM`` (in F) of a joint."""
        s = j.q_start
        q = self.q[s:s + j.num_q]
        u = self.u[s:s + j.num_q]
        a = self.a[s:s + j.num_q] if self.a is not None else None
        zero = [0.0, 0.0, 0.0]
        if j.type == "weld":
            return _const_mat(np.eye(3)), zero, zero, zero, zero, zero
        if j.type == "revolute":
            c, sn = np.cos(q[0]), np.sin(q[0])
            ax = _const_vec(j.axis)
            return (rotation_about(j.axis, c, sn), zero, _scale(u[0], ax), zero,
                    _scale(a[0], ax) if a is not None else zero, zero)
        if j.type == "prismatic":
            ax = _const_vec(j.axis)
            return (_const_mat(np.eye(3)), _scale(q[0], ax), zero, _scale(u[0], ax), zero,
                    _scale(a[0], ax) if a is not None else zero)
        if j.type == "planar":  # q = (x, y, θ): M translated by (x, y, 0) in F, rotated by θ about z
            c, sn = np.cos(q[2]), np.sin(q[2])
            R = rotation_about((0.0, 0.0, 1.0), c, sn)
            return (R, [q[0], q[1], 0.0], [0.0, 0.0, u[2]], [u[0], u[1], 0.0],
                    [0.0, 0.0, a[2]] if a is not None else zero, [a[0], a[1], 0.0] if a is not None else zero)
        if j.type == "custom":  # OpenSim CustomJoint: rotations and translations are functions of q
            xp = sx if any(is_expr(v) for v in (q[0], u[0])) else np
            R, p, w, v, dw, dv, H_w, H_v = j.transform.kinematics(q[0], u[0], a[0] if a is not None else None, xp)
            self.partials[j.child] = (H_w, H_v)
            return R, p, w, v, dw, dv
        raise NotImplementedError(j.type)  # pragma: no cover - read_tree rejects others

    def _forward(self, j: JointInfo):
        P, C = j.parent, j.child
        R_WP, p_WP, w_P, v_P = self.R[P], self.p[P], self.w[P], self.v[P]
        R_FM, p_FM, w_FM, v_FM, dw_FM, dv_FM = self._joint(j)
        R_WF = _mm(R_WP, _const_mat(j.R_PF))
        p_WF = _add(p_WP, _mv(R_WP, _const_vec(j.p_PF)))
        R_WM = _mm(R_WF, R_FM)
        Fp = _mv(R_WF, p_FM)
        p_WM = _add(p_WF, Fp)
        R_MC = j.R_CM.T
        p_MC = [-v for v in _mv(R_MC, j.p_CM)]  # written out: numpy's BLAS rounds by CPU, keys must not
        R_WC = _mm(R_WM, _const_mat(R_MC))
        r2 = _mv(R_WM, _const_vec(p_MC))
        p_WC = _add(p_WM, r2)
        Fw = _mv(R_WF, w_FM)
        w_C = _add(w_P, Fw)
        Fv = _mv(R_WF, v_FM)
        r1 = _sub(p_WM, p_WP)
        v_M = _add(_add(v_P, _cross(w_P, r1)), Fv)
        v_C = _add(v_M, _cross(w_C, r2))
        self.R[C], self.p[C], self.w[C], self.v[C] = R_WC, p_WC, w_C, v_C
        self.joint_origin[C] = p_WM
        self.joint_frame_R[C] = R_WF
        self.joint_parent_origin[C] = p_WF
        self.joint_child_R[C] = R_WM
        if self.a is not None:
            al_P, ac_P = self.al[P], self.ac[P]
            al_C = _add(_add(al_P, _cross(w_P, Fw)), _mv(R_WF, dw_FM))
            r1dot = _add(_cross(w_P, r1), Fv)
            a_M = _add(_add(_add(_add(ac_P, _cross(al_P, r1)), _cross(w_P, r1dot)), _cross(w_P, Fv)),
                       _mv(R_WF, dv_FM))
            a_C = _add(_add(a_M, _cross(al_C, r2)), _cross(w_C, _cross(w_C, r2)))
            self.al[C], self.ac[C] = al_C, a_C

    # ------------------------------------------------------------ points
    def point_position(self, body: int, location: ArrayLike) -> list:
        """World position of a point fixed on ``body`` (its location may be an expression)."""
        return _add(self.p[body], _mv(self.R[body], list(location)))

    def point_velocity(self, body: int, location: ArrayLike) -> list:
        """World velocity of a point fixed on ``body``."""
        return _add(self.v[body], _cross(self.w[body], _mv(self.R[body], list(location))))

    def body_mass(self, body: int) -> Expr | float:
        """Mass of body ``body`` (a parameter variable if the problem optimizes it)."""
        return self.masses.get(body, self.tree.bodies[body].mass)

    def total_mass(self) -> Expr | float:
        """Total mass of the model (kg)."""
        total = 0.0
        for i in self.tree.bodies:
            total = total + self.body_mass(i)
        return total

    def center_of_mass(self) -> tuple[list, list]:
        """Whole-body centre of mass: world position and velocity."""
        mtot = self.total_mass()
        pos, vel = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        for i, b in self.tree.bodies.items():
            m = self.body_mass(i)
            if isinstance(m, float) and m == 0.0:
                continue
            pos = _add(pos, _scale(m, self.point_position(i, _const_vec(b.com))))
            vel = _add(vel, _scale(m, self.point_velocity(i, _const_vec(b.com))))
        return _scale(1.0 / mtot, pos) if isinstance(mtot, float) else [x / mtot for x in pos], \
            _scale(1.0 / mtot, vel) if isinstance(mtot, float) else [x / mtot for x in vel]

    # ------------------------------------------------------------ inward recursions
    def _subtree_loads(self, forces: dict, moments: dict) -> tuple[dict, dict]:
        """Per child body, the net force and the net moment about its joint origin of the loads on its subtree
        (``forces``, ``moments``: per body, a force and a moment about that body's joint origin)."""
        F = {k: list(v) for k, v in forces.items()}
        N = {k: list(v) for k, v in moments.items()}
        for j in reversed(self.tree.joints):
            C, P = j.child, j.parent
            f = F.get(C, [0.0, 0.0, 0.0])
            n = N.get(C, [0.0, 0.0, 0.0])
            if P != self.tree.world and not (_is_zero(f) and _is_zero(n)):
                # carry to the parent's joint origin
                r = _sub(self.joint_origin[C], self.joint_origin[P])
                F[P] = _add(F.get(P, [0.0, 0.0, 0.0]), f)
                N[P] = _add(_add(N.get(P, [0.0, 0.0, 0.0]), n), _cross(r, f))
        return F, N

    def _project(self, forces: dict, moments: dict) -> list:
        """Generalized forces from net forces and moments (about each joint origin) of every subtree."""
        tau = [0.0] * self.tree.nq
        F, N = self._subtree_loads(forces, moments)
        for j in self.tree.joints:
            C = j.child
            f = F.get(C, [0.0, 0.0, 0.0])
            n = N.get(C, [0.0, 0.0, 0.0])
            R_WF = self.joint_frame_R[C]
            s = j.q_start
            if j.type == "revolute":
                tau[s] = _dot(_mv(R_WF, _const_vec(j.axis)), n)
            elif j.type == "prismatic":
                tau[s] = _dot(_mv(R_WF, _const_vec(j.axis)), f)
            elif j.type == "planar":
                tau[s] = _dot([R_WF[0][0], R_WF[1][0], R_WF[2][0]], f)
                tau[s + 1] = _dot([R_WF[0][1], R_WF[1][1], R_WF[2][1]], f)
                tau[s + 2] = _dot([R_WF[0][2], R_WF[1][2], R_WF[2][2]], n)
            elif j.type == "custom":
                H_w, H_v = self.partials[C]
                tau[s] = _dot(_mv(R_WF, H_w), n) + _dot(_mv(R_WF, H_v), f)
        return tau

    def _inertial_loads(self) -> tuple[dict, dict]:
        """Per body, ``m a_com`` and the rate of change of angular momentum plus ``r × m a_com`` about its joint
        origin (gravity included: the world accelerates at −g)."""
        if self.a is None:
            raise ValueError("inverse dynamics and joint reactions need accelerations")
        forces, moments = {}, {}
        for j in self.tree.joints:
            C = j.child
            b = self.tree.bodies[C]
            m = self.body_mass(C)
            if isinstance(m, float) and m == 0.0:
                continue
            R, w, al = self.R[C], self.w[C], self.al[C]
            rc = _mv(R, _const_vec(b.com))
            a_com = _add(_add(self.ac[C], _cross(al, rc)), _cross(w, _cross(w, rc)))
            f = _scale(m, a_com)
            I_B = _const_mat(b.inertia_com)
            I_W = _mm(_mm(R, I_B), [[R[0][0], R[1][0], R[2][0]], [R[0][1], R[1][1], R[2][1]],
                                    [R[0][2], R[1][2], R[2][2]]])
            n = _add(_mv(I_W, al), _cross(w, _mv(I_W, w)))
            if C in self.inertia_scales:
                n = _scale(self.inertia_scales[C], n)
            p_com = _add(self.p[C], rc)
            forces[C] = f
            moments[C] = _add(n, _cross(_sub(p_com, self.joint_origin[C]), f))
        return forces, moments

    def _applied_loads(self, point_forces: Sequence = (), body_moments: Sequence = ()) -> tuple[dict, dict]:
        """Per body, the applied force and its moment about the body's joint origin (see
        :meth:`generalized_forces` for the arguments)."""
        forces, moments = {}, {}
        for body, point, force in point_forces:
            if body == self.tree.world:
                continue
            forces[body] = _add(forces.get(body, [0.0, 0.0, 0.0]), list(force))
            moments[body] = _add(moments.get(body, [0.0, 0.0, 0.0]),
                                 _cross(_sub(list(point), self.joint_origin[body]), list(force)))
        for body, moment in body_moments:
            if body == self.tree.world:
                continue
            moments[body] = _add(moments.get(body, [0.0, 0.0, 0.0]), list(moment))
        return forces, moments

    def joint_reaction(self, child: int, point_forces: Sequence = (), body_moments: Sequence = (), *,
                       on: str = "child", parent_side: int | None = None) -> tuple[list, list]:
        """The load the joint into ``child`` transmits to the child's subtree, as Simbody's mobilizer reaction
        (OpenSim's ``Joint::calcReactionOnChildExpressedInGround``): ``(moment about the joint frame M's origin,
        force)``, both in world coordinates. It is the subtree's rate of change of momentum minus every load applied
        to its bodies (gravity, ``point_forces``, ``body_moments``): mobility forces — the joint's own generalized
        force, a coupler's — are part of it, those of joints inside the subtree cancel.

        ``on="parent"``: the equal and opposite load on the parent (``calcReactionOnParentExpressedInGround``), its
        moment about the origin of the joint frame F on the parent of the joint into ``parent_side`` (default
        ``child``; the first joint of a chain of massless frame bodies whose last joint leads to ``child``).
        """
        if on not in ("child", "parent"):
            raise ValueError(f"joint_reaction: on must be 'child' or 'parent', got {on!r}")
        Fi, Ni = self._subtree_loads(*self._inertial_loads())
        Fa, Na = self._subtree_loads(*self._applied_loads(point_forces, body_moments))
        zero = [0.0, 0.0, 0.0]
        moment, force = _sub(Ni.get(child, zero), Na.get(child, zero)), _sub(Fi.get(child, zero), Fa.get(child, zero))
        if on == "child":
            return moment, force
        r = _sub(self.joint_origin[child], self.joint_parent_origin[child if parent_side is None else parent_side])
        return _scale(-1.0, _add(moment, _cross(r, force))), _scale(-1.0, force)

    def inverse_dynamics(self) -> list:
        """``τ_ID = M(q) u̇ + C(q, u) − τ_g(q) + D u`` (joint damping ``D``), one expression per coordinate."""
        forces, moments = self._inertial_loads()
        tau = self._project(forces, moments)
        for j in self.tree.joints:
            for k in range(j.num_q):
                d = float(j.damping[k])
                if d:
                    tau[j.q_start + k] = tau[j.q_start + k] + d * self.u[j.q_start + k]
        return tau

    def generalized_forces(self, point_forces: Sequence = (), body_moments: Sequence = ()) -> list:
        """``Σ Jᵀ F``: generalized forces of forces applied at points fixed on bodies, and of moments.

        Parameters
        ----------
        point_forces : sequence of (body index, world position of the point, world force vector)
        body_moments : sequence of (body index, world moment vector)

        Returns
        -------
        list of nq expressions
        """
        forces, moments = self._applied_loads(point_forces, body_moments)
        return self._project(forces, moments)
