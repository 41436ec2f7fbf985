"""Marker positions of a model whose bodies are scaled, as exact functions of the poses and the scale factors —
without rebuilding the model.

OpenSim's scaling (:mod:`moco_lab.modeling.osim_scale`) multiplies, along a body's own axes, every length fixed in
that body: the joint frames' positions on it (parent side and child side), its markers, and the translations of the
custom joints whose parent it is (those in the joint's frame on it). Rotations do not change. So at a fixed pose a
marker's world position is *affine* in the factors: with ``σ_g = s_g − 1`` the change of group ``g``'s factors, ::

    p_m(q; s) = p_m(q) + Σ_terms R_f(q) (c_f(q) ⊙ σ_g)

summed over the scaled vectors on the chain from the ground to the marker: each is a vector ``c_f`` with components
in a frame ``f`` (a body's frame; for a custom joint's translation ``c = R_Fᵀ (p_M − p_F)``, a function of ``q``, in
the joint's frame ``F`` on its parent). :class:`ScaledMarkerKinematics` evaluates this and its exact Jacobians from
one compiled block of the unscaled model's kinematics (the markers, each involved body's origin and axes as points,
and the custom joints' frame origins); it is what marker registration with scales
(:func:`~moco_lab.tools.marker_registration.register_markers`) solves with. The scaled model itself is
:func:`~moco_lab.tools.body_scaling.scale_model`; the two agree to round-off (tests/test_body_scaling.py).

Lengths a file gives along a *rotated* offset frame's axes — a marker on such a frame, an offset frame on one —
OpenSim scales along those axes, while the plant holds them in the body's frame: such models are refused by name
(``Model.along_rotated_axes``, recorded by the reader); the shipped models have none.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..modeling.model import Model
from ..util.names import did_you_mean
from .marker_ik import Marker, MarkerKinematics
from .root_residual import side_groups

__all__ = ["ScaledMarkerKinematics", "scale_groups"]


def scale_groups(model: Model, groups: Mapping[str, Sequence[str]] | Sequence[str] | None,
                 who: str = "scale") -> dict[str, list[str]]:
    """Checked groups of bodies that share one set of factors: a dict group name -> body names, a list of body
    names (each its own group), or None (every body of the model, the two sides of a pair together: ``femur_r`` and
    ``femur_l`` form ``femur``)."""
    bodies = list(model.body_paths)
    if groups is None:
        return side_groups(model)
    if isinstance(groups, str):
        raise TypeError(f"{who}: groups must be a dict of body lists or a list of bodies, got the string {groups!r}")
    if not isinstance(groups, Mapping):
        groups = {str(b): [str(b)] for b in groups}
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for name, members in groups.items():
        members = [members] if isinstance(members, str) else list(members)
        if not members:
            raise ValueError(f"{who}: the group {name!r} has no bodies")
        for b in members:
            if b not in bodies:
                raise KeyError(f"{who}: group {name!r}: " + did_you_mean(b, bodies, "body"))
            if b in seen:
                raise ValueError(f"{who}: the body {b!r} is in two groups")
            seen.add(b)
        out[str(name)] = members
    return out


class ScaledMarkerKinematics:
    """Marker positions of ``model`` with its bodies scaled by groups of factors (module docstring).

    ``kin(Q, sigma)`` with ``Q`` (T, nq) and ``sigma`` (G, 3) (the factors minus one, per group) returns

    * ``P`` (T, M, 3): the markers' world positions on the scaled model,
    * ``JP`` (T, M, 3, nq): their Jacobian with respect to the coordinates,
    * ``JS`` (T, M, 3, G, 3): with respect to ``sigma``,
    * ``R``, ``dR`` (T, M, 3, 3) and (T, M, 3 (column k), 3, nq): each marker's body's rotation (columns: its axes
      in the world) and its Jacobian,
    * ``φ``, ``G``: the couplers (T, nl) and their Jacobian (T, nl, nq), as :class:`MarkerKinematics` gives them.

    Raises
    ------
    NotImplementedError
        A length the scaling would change that this kinematics cannot place: a joint offset on a massless frame body
        of a joint chain, a custom joint whose translation axes are not its frame's axes or whose translation is its
        coordinate itself, a length along a rotated offset frame's axes.
    """

    def __init__(self, model: Model, markers: Sequence[Marker], groups: Mapping[str, Sequence[str]]):
        rotated = getattr(model, "along_rotated_axes", [])
        if groups and rotated:
            raise NotImplementedError(f"scaling: {', '.join(rotated[:3])}{' ...' if len(rotated) > 3 else ''} is "
                                      "placed along a rotated offset frame's axes, which OpenSim scales along those "
                                      "axes; moco_lab's scale fit does not follow that yet (scale_model does)")
        self.base = MarkerKinematics(model, markers)
        system = self.base.kernel.system
        tree = model.tree()
        self.M, self.nq = len(markers), len(model.coordinates)
        self.groups = list(groups)
        group_of = {b: g for g, members in enumerate(groups.values()) for b in members}
        real = {i: b.name for i, b in tree.bodies.items() if b.name in model.body_paths}
        parent_joint = {j.child: j for j in tree.joints}
        frames: dict[tuple, int] = {}  # ("body", index) or ("custom", child index) -> slot
        self.body_outputs: list[tuple[int, list[str]]] = []  # (slot, its origin and axis points' outputs)

        def body_frame(i: int) -> int:
            if ("body", i) not in frames:
                frames[("body", i)] = len(frames)
                name = tree.bodies[i].name
                self.body_outputs.append((frames[("body", i)], [
                    system.add_point_output(f"/scale/{name}/axis_{a}", name, v)[0] for a, v in
                    (("o", (0, 0, 0)), ("x", (1, 0, 0)), ("y", (0, 1, 0)), ("z", (0, 0, 1)))]))
            return frames[("body", i)]

        #: per custom slot: (its slot, the parent body's slot, R_PF, the outputs of the points p_F and p_M)
        self.custom: list[tuple[int, int, np.ndarray, str, str]] = []

        def custom_frame(j) -> int:
            if ("custom", j.child) not in frames:
                for axis, function in j.transform.translations:
                    if np.count_nonzero(axis) != 1 or abs(float(np.abs(axis).sum()) - 1.0) > 0.0:
                        raise NotImplementedError(f"scaling: the custom joint {j.name!r} translates along {axis}, not "
                                                  "one of its frame's axes")
                    if type(function).__name__ == "LinearFunction" and (function.slope, function.intercept) == (1, 0):
                        raise NotImplementedError(f"scaling: the custom joint {j.name!r} translates by its coordinate")
                parent = body_frame(j.parent)
                frames[("custom", j.child)] = len(frames)
                pf = system.add_point_output(f"/scale/{j.name}/F", tree.bodies[j.parent].name, j.p_PF)[0]
                pm = system.add_point_output(f"/scale/{j.name}/M", tree.bodies[j.child].name, j.p_CM)[0]
                self.custom.append((frames[("custom", j.child)], parent, j.R_PF.copy(), pf, pm))
            return frames[("custom", j.child)]

        # terms[m]: (frame slot, coefficient (3,) or None for a custom joint's translation, group)
        self.terms: list[list[tuple[int, np.ndarray | None, int]]] = []
        for m in markers:
            i = tree.body_index(m.body)
            terms = []
            if i in real and real[i] in group_of:
                terms.append((body_frame(i), np.asarray(m.location, float), group_of[real[i]]))
            while i != tree.world:
                j = parent_joint[i]
                for side, body, vector, sign in (("parent", j.parent, j.p_PF, 1.0), ("child", j.child, j.p_CM, -1.0)):
                    if not np.any(vector) or body == tree.world:
                        continue
                    if body not in real:
                        raise NotImplementedError(f"scaling: the joint {j.name!r} is offset on the {side} side from "
                                                  f"the massless frame body {tree.bodies[body].name!r}")
                    if real[body] in group_of:
                        terms.append((body_frame(body), sign * np.asarray(vector, float), group_of[real[body]]))
                if j.type == "custom" and j.transform.translations and j.parent in real and real[j.parent] in group_of:
                    terms.append((custom_frame(j), None, group_of[real[j.parent]]))
                i = j.parent
            self.terms.append(terms)
        self.body_slot = [body_frame(tree.body_index(m.body)) for m in markers]
        self.outputs = [n for _, names in self.body_outputs for n in names] + [n for *_, pf, pm in self.custom
                                                                                for n in (pf, pm)]

    def _frames(self, Q: np.ndarray):
        """Per frame slot: rotation (T, 3, 3) with world axes as columns, its Jacobian (T, 3 (k), 3, nq), and for a
        custom slot the translation's components ``c`` (T, 3) in its frame with their Jacobian (T, 3, nq)."""
        out = self.base.kernel.outputs(self.outputs, Q, np.zeros_like(Q), jac=True)
        value = {n: out[n] for n in self.outputs}
        jac = {n: out["J"][n]["dq"] for n in self.outputs}
        R, dR, c, dc = {}, {}, {}, {}
        for slot, names in self.body_outputs:
            F = np.stack([value[n] for n in names], axis=1)  # (T, 4, 3): origin, then the tips of the axes
            JF = np.stack([jac[n] for n in names], axis=1)  # (T, 4, 3, nq)
            R[slot] = np.transpose(F[:, 1:] - F[:, :1], (0, 2, 1))
            dR[slot] = JF[:, 1:] - JF[:, :1]
        for slot, parent, R_PF, pf, pm in self.custom:
            R[slot] = np.einsum("tij,jk->tik", R[parent], R_PF)
            dR[slot] = np.einsum("tlin,lk->tkin", dR[parent], R_PF)
            d, dd = value[pm] - value[pf], jac[pm] - jac[pf]
            c[slot] = np.einsum("tik,ti->tk", R[slot], d)
            dc[slot] = np.einsum("tkin,ti->tkn", dR[slot], d) + np.einsum("tik,tin->tkn", R[slot], dd)
        return R, dR, c, dc

    def __call__(self, Q: np.ndarray, sigma: np.ndarray):
        P, JP, phi, dphi = self.base(Q)
        P, JP = P.copy(), JP.copy()
        T = Q.shape[0]
        G = len(self.groups)
        sigma = np.asarray(sigma, float).reshape(G, 3)
        R, dR, c, dc = self._frames(Q)
        JS = np.zeros((T, self.M, 3, G, 3))
        for m, terms in enumerate(self.terms):
            for slot, coef, g in terms:
                if coef is None:
                    cf, dcf = c[slot], dc[slot]  # (T, 3), (T, 3, nq)
                    cols = R[slot] * cf[:, None, :]  # (T, 3 (xyz), 3 (k)): column k times c_k
                    JS[:, m, :, g, :] += cols
                    P[:, m] += cols @ sigma[g]
                    JP[:, m] += np.einsum("tkin,k,tk->tin", dR[slot], sigma[g], cf)
                    JP[:, m] += np.einsum("tik,k,tkn->tin", R[slot], sigma[g], dcf)
                else:
                    cols = R[slot] * coef[None, None, :]
                    JS[:, m, :, g, :] += cols
                    P[:, m] += cols @ sigma[g]
                    JP[:, m] += np.einsum("tkin,k->tin", dR[slot], sigma[g] * coef)
        Rm = np.stack([R[s] for s in self.body_slot], axis=1)
        dRm = np.stack([dR[s] for s in self.body_slot], axis=1)
        return P, JP, JS, Rm, dRm, phi, dphi
