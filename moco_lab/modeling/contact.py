"""Foot–ground contact force elements: OpenSim's ``SmoothSphereHalfSpaceForce`` and gait2d's point contact.

Both are smooth functions of the contact point's position and velocity, so
collocation can differentiate them exactly; both report the force they apply
to the body (``<path>/force``, world frame, N) for ground-reaction-force
plots and contact-tracking goals.

:class:`SmoothSphereHalfSpaceForce`
    Simbody's smooth Hunt–Crossley sphere–plane contact with smooth Coulomb,
    Stribeck and viscous friction (Serrancolí et al. 2019), as OpenSim 4.6 and
    Moco's 2-D walking example use it.
:class:`Gait2dContactPoint`
    van den Bogert's gait2d contact point (gait2d reference manual §2.8, Eq.
    12–14): a smooth penetration ``d``, a linear spring with Hunt–Crossley-type
    damping, and regularized Coulomb friction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .force_element import ForceContext, ForceContribution, ForceElement

__all__ = ["SmoothSphereHalfSpaceForce", "Gait2dContactPoint"]


def _unit(v) -> tuple[float, float, float]:
    v = np.asarray(v, float)
    n = np.linalg.norm(v)
    if not n > 0:
        raise ValueError(f"a normal vector must not be zero, got {v}")
    return tuple(float(x) for x in v / n)


@dataclass(repr=False)
class SmoothSphereHalfSpaceForce(ForceElement):
    """A sphere fixed on a body against a half-space (OpenSim's ``SmoothSphereHalfSpaceForce``).

    With the sphere centre ``c`` (radius ``R``) and the half-space's frame
    origin ``o`` and unit normal ``n`` (OpenSim: the half-space frame's x axis,
    pointing *into* the half-space, e.g. ``(0, −1, 0)`` for a floor at
    ``y = 0``), following Simbody's ``SmoothSphereHalfSpaceForceImpl::calcForce``:

    * indentation ``δ = (c − o)·n + R``; contact point ``p = c + R n − ½ δ n``;
    * relative velocity of the sphere's body at ``p`` (minus the half-space
      body's), normal part ``v_n = v·n`` and tangential ``v_t``;
    * Hertz ``f_H = (4/3) k √(R k) (√(δ² + c_f))^{3/2}`` with ``k = ½ E^{2/3}``,
      smoothed ``f_Hs = f_H (½ + ½ tanh(b_d δ))``;
    * Hunt–Crossley ``f_HC = f_Hs (1 + 1.5 c v_n)``, smoothed
      ``f_HCs = f_HC (½ + ½ tanh(b_v (v_n + 2/(3c))))``;
    * friction ``f_f = f_HCs (min(v_r, 1)(μ_d + 2(μ_s − μ_d)/(1 + v_r²)) + μ_v v_s)``,
      ``v_s = √(‖v_t‖² + c_f)``, ``v_r = v_s / v_trans``;
    * the sphere's body receives ``−(f_HCs n + f_f v_t / v_s)`` at ``p`` (the
      half-space body the opposite).

    Parameters
    ----------
    path : str
    sphere_body : str
        Body carrying the sphere.
    sphere_location : (3,)
        Sphere centre in that body's frame (m).
    radius : float
        m.
    plane_body : str
        Body carrying the half-space (``"ground"``).
    plane_origin, plane_normal : (3,)
        Half-space frame origin and x axis in the plane body's frame.
    stiffness : float
        ``E`` (N/m²); dissipation ``c`` (s/m); static, dynamic and viscous
        friction ``μ_s, μ_d, μ_v``; transition_velocity (m/s);
        constant_contact_force ``c_f``; hertz_smoothing ``b_d``;
        hunt_crossley_smoothing ``b_v`` — OpenSim's property names and defaults.
    """

    path: str
    sphere_body: str
    sphere_location: tuple
    radius: float
    plane_body: str = "ground"
    plane_origin: tuple = (0.0, 0.0, 0.0)
    plane_normal: tuple = (0.0, -1.0, 0.0)
    stiffness: float = 1.0
    dissipation: float = 0.0
    static_friction: float = 0.0
    dynamic_friction: float = 0.0
    viscous_friction: float = 0.0
    transition_velocity: float = 0.01
    constant_contact_force: float = 1e-5
    hertz_smoothing: float = 300.0
    hunt_crossley_smoothing: float = 50.0

    _PROPERTIES = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction",
                   "transition_velocity", "constant_contact_force", "hertz_smoothing", "hunt_crossley_smoothing",
                   "radius")

    def __post_init__(self):
        self.sphere_location = tuple(float(v) for v in self.sphere_location)
        self.plane_origin = tuple(float(v) for v in self.plane_origin)
        self.plane_normal = _unit(self.plane_normal)
        for name in self._PROPERTIES:
            value = float(getattr(self, name))
            if not math.isfinite(value):
                raise ValueError(f"{self.path}: {name} must be finite, got {value}")
            setattr(self, name, value)
        if not self.radius > 0:
            raise ValueError(f"{self.path}: radius must be > 0, got {self.radius}")
        if not self.dissipation > 0:
            raise ValueError(f"{self.path}: dissipation must be > 0 (it divides in the Hunt–Crossley smoothing), "
                             f"got {self.dissipation}")
        if not (self.transition_velocity > 0 and self.constant_contact_force > 0):
            raise ValueError(f"{self.path}: transition_velocity and constant_contact_force must be > 0")

    def properties(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self._PROPERTIES}

    def body_names(self) -> list[str]:
        return [self.sphere_body, self.plane_body]

    def output_units(self) -> dict[str, str]:
        return {"force": "N", "point": "m", "indentation": "m", "normal_force": "N", "friction_force": "N",
                "normal_speed": "m/s"}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        xp = ctx.xp
        val = lambda k: ctx.value(self, k)  # noqa: E731
        R = val("radius")
        c = ctx.point_position(self.sphere_body, self.sphere_location)
        o = ctx.point_position(self.plane_body, self.plane_origin)
        n_loc = self.plane_normal
        if self.plane_body in ("ground", "world"):
            n = list(n_loc)
        else:  # the plane's normal rotates with its body
            p0 = ctx.point_position(self.plane_body, (0.0, 0.0, 0.0))
            tip = ctx.point_position(self.plane_body, n_loc)
            n = [b - a for a, b in zip(p0, tip)]
        delta = sum((ci - oi) * ni for ci, oi, ni in zip(c, o, n)) + R
        p = [ci + (R - 0.5 * delta) * ni for ci, ni in zip(c, n)]
        # velocity of the sphere's body (and of the plane's body) at the contact point
        v1 = self._body_velocity_at(ctx, self.sphere_body, p)
        v2 = self._body_velocity_at(ctx, self.plane_body, p)
        v = [a - b for a, b in zip(v1, v2)]
        vn = sum(vi * ni for vi, ni in zip(v, n))
        vt = [vi - vn * ni for vi, ni in zip(v, n)]
        E, diss = val("stiffness"), val("dissipation")
        cf, bd, bv = val("constant_contact_force"), val("hertz_smoothing"), val("hunt_crossley_smoothing")
        k = 0.5 * E ** (2.0 / 3.0)
        fh = (4.0 / 3.0) * k * xp.sqrt(R * k) * xp.sqrt(delta * delta + cf) ** 1.5
        fhs = fh * (0.5 + 0.5 * xp.tanh(bd * delta))
        fhc = fhs * (1.0 + 1.5 * diss * vn)
        fhcs = fhc * (0.5 + 0.5 * xp.tanh(bv * (vn + 2.0 / (3.0 * diss))))
        vslip = xp.sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2] + cf)
        vrel = vslip / val("transition_velocity")
        us, ud, uv = val("static_friction"), val("dynamic_friction"), val("viscous_friction")
        ff = fhcs * (xp.minimum(vrel, 1.0) * (ud + 2.0 * (us - ud) / (1.0 + vrel * vrel)) + uv * vslip)
        force = [fhcs * ni + ff * ti / vslip for ni, ti in zip(n, vt)]  # Simbody's "force" (on the plane body)
        on_sphere = [-f for f in force]
        out = ForceContribution()
        out.point_forces.append((self.sphere_body, p, on_sphere))
        if self.plane_body not in ("ground", "world"):
            out.point_forces.append((self.plane_body, p, force))
        out.outputs.update(force=on_sphere, point=p, indentation=delta, normal_force=fhcs, friction_force=ff,
                           normal_speed=vn)
        return out

    @staticmethod
    def _body_velocity_at(ctx, body, point):
        """Velocity of the material point of ``body`` that is at world position ``point``."""
        if body in ("ground", "world"):
            return [0.0, 0.0, 0.0]
        return ctx.body_point_velocity(body, point)


@dataclass(repr=False)
class Gait2dContactPoint(ForceElement):
    """A gait2d foot contact point (gait2d reference manual §2.8).

    With the point's ground height ``y`` and velocities ``ẋ, ẏ`` (the ground is
    ``y = ground_height``, friction acts along x):

    * ``d = ½ (√(y² + y0²) − y)`` (Eq. 12, a smooth penetration);
    * ``F_y = k d (1 − b ẏ)`` (Eq. 13); with ``linear_term=True`` the readable
      gait2d code's variant ``F_y = k d (1 − b ẏ) − y`` (a 1 N/m spring that is
      active everywhere, giving non-zero gradients in the air);
    * ``F_x = −γ F_y ẋ / √(ẋ² + v0²)`` (Eq. 14).

    Parameters
    ----------
    path : str
    body : str
        The foot.
    location : (3,)
        Contact point in the foot frame (m); gait2d's heel (−0.06, −0.0702)
        and toe (0.1636, −0.0702) for a 1.80 m subject.
    stiffness : float
        ``k`` (N/m), manual: 1e5.
    damping : float
        ``b`` (s/m), manual: 1.
    transition : float
        ``y0`` (m), manual: 0.002.
    friction : float
        ``γ``, manual: 1.
    friction_velocity : float
        ``v0`` (m/s), manual: 0.1.
    linear_term : bool
        Add the code's ``−y`` (N, with y in m) to ``F_y`` (default False: the manual's Eq. 13).
    ground_height : float
        Height of the ground (m).
    """

    path: str
    body: str
    location: tuple
    stiffness: float = 1e5
    damping: float = 1.0
    transition: float = 0.002
    friction: float = 1.0
    friction_velocity: float = 0.1
    linear_term: bool = False
    ground_height: float = 0.0

    _PROPERTIES = ("stiffness", "damping", "transition", "friction", "friction_velocity")

    def __post_init__(self):
        self.location = tuple(float(v) for v in self.location)
        for name in self._PROPERTIES + ("ground_height",):
            setattr(self, name, float(getattr(self, name)))
        if not (self.transition > 0 and self.friction_velocity > 0):
            raise ValueError(f"{self.path}: transition (y0) and friction_velocity (v0) must be > 0")

    def properties(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self._PROPERTIES}

    def body_names(self) -> list[str]:
        return [self.body]

    def output_units(self) -> dict[str, str]:
        return {"force": "N", "point": "m", "penetration": "m"}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        xp = ctx.xp
        val = lambda k: ctx.value(self, k)  # noqa: E731
        p = ctx.point_position(self.body, self.location)
        v = ctx.point_velocity(self.body, self.location)
        y = p[1] - self.ground_height
        y0 = val("transition")
        d = 0.5 * (xp.sqrt(y * y + y0 * y0) - y)
        fy = val("stiffness") * d * (1.0 - val("damping") * v[1])
        if self.linear_term:
            fy = fy - y
        v0 = val("friction_velocity")
        fx = -val("friction") * fy * v[0] / xp.sqrt(v[0] * v[0] + v0 * v0)
        force = [fx, fy, 0.0]
        out = ForceContribution()
        out.point_forces.append((self.body, p, force))
        out.outputs.update(force=force, point=p, penetration=d)
        return out
