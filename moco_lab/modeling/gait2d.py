"""van den Bogert's gait2d: a 7-segment, 9-degree-of-freedom planar walker with 16 Hill muscles.

The model of the "2D Muscle-Driven Gait Model (gait2d) Reference Manual" (van den Bogert, Orchard
Kinetics, 2010; "the manual"), built on a Drake ``MultibodyPlant``:

* segments, frames and coordinates as the manual's §2.1 and §2.3 define them: a trunk whose origin is
  the hip, a thigh, shank and foot per leg, each frame at its proximal joint with +Y towards proximal
  and +X forward; coordinates ``hip_x``, ``hip_y`` (the hip in the ground), ``trunk_angle``, then
  ``hip_flexion_r``, ``knee_angle_r``, ``ankle_angle_r`` and the same for the left leg. A joint angle
  is positive when the child segment rotates counter-clockwise relative to its parent (model facing
  +X): hip flexion, knee extension (a flexed knee is negative) and ankle dorsiflexion are positive;
* passive range-of-motion moments (Eq. 1, :class:`~moco_lab.modeling.passive.PassiveJointMoment`);
* heel and toe contact points on each foot (Eq. 12–14, :class:`~moco_lab.modeling.contact.Gait2dContactPoint`);
* sixteen three-element Hill muscles with constant moment arms (Eq. 2–11, :class:`Gait2dMuscle`).

Parameters come from ``moco_lab/data/gait2d/gait2d_parameters.toml`` (each value with its source).

Where the manual and the readable MEX source disagree
-----------------------------------------------------
The manual is followed unless it contradicts itself; each alternative is an option of
:class:`Gait2dMuscle` (and of :func:`gait2d`):

* ``linear_stiffness`` (the k1 of PEE and SEE, Eq. 9): the manual's text says 10 F_max per metre, but
  its own printed freefall residuals (−0.0001 to −0.0003 for rectus femoris and vasti, whose tendons
  are slack in that test) are only reproduced with 0.01 F_max per metre, the MEX source's value;
  default 0.01, the text's value is ``linear_stiffness=10``.
* ``damping_form`` (the β V_CE term): Eq. 5 writes it inside F_2, which multiplies the activation, but
  the manual gives its purpose as making V_CE solvable "even when the CE is not activated", which only
  a term outside a·F_1·F_2 achieves (as in the MEX source); default ``"outside"``, Eq. 5 literally is
  ``"eq5"``.
* ``see_stiffness_length``: the manual's formula k_2(SEE) = F_max/(u_max L_CEopt)² contradicts its
  definition of u_max ("strain in SEE when loaded by F_max"), which gives F_max/(u_max SEEslack)² as in
  the MEX source; default ``"see_slack"``, the formula literally is ``"lceopt"``.
* ``scaled_vmax``: λ(a) of Eq. 6 (Chow & Darling 1999) or λ = 1 (Eq. 7, the manual's "present
  version"); default ``False``.
* ``contact_linear_term``: the MEX contact code adds ``−y`` to the vertical force (Eq. 13 does not);
  default ``False``.

The contraction residual is ``F_SEE − a F_1 F_2 − F_PEE`` in units of F_max (the MEX source's sign and
scaling; the manual's Eq. 3 has the opposite sign), so that it reads like the manual's printed tables.
"""
from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, field
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

from ..util.checks import finite_number
from ..util.data import GAIT2D_PARAMETERS
from .contact import Gait2dContactPoint
from .force_element import ForceContext, ForceContribution, ForceElement
from .model import Model, ModelBuilder
from .passive import PassiveJointMoment
from .xp import where_positive

__all__ = ["Gait2dMuscle", "gait2d", "gait2d_parameters", "gait2d_segment_lengths", "GAIT2D_COORDINATES",
           "GAIT2D_MUSCLES", "GAIT2D_SEGMENTS", "GAIT2D_REFERENCE_MASS", "GAIT2D_REFERENCE_HEIGHT"]

#: The nine coordinates in the manual's order (q1 ... q9).
GAIT2D_COORDINATES = ("hip_x", "hip_y", "trunk_angle", "hip_flexion_r", "knee_angle_r", "ankle_angle_r",
                      "hip_flexion_l", "knee_angle_l", "ankle_angle_l")
#: The sixteen muscles in the manual's order (right leg, then left).
GAIT2D_MUSCLES = tuple(f"{m}_{side}" for side in ("r", "l") for m in (
    "iliopsoas", "glutei", "hamstrings", "rectus_femoris", "vasti", "gastrocnemius", "soleus", "tibialis_anterior"))
GAIT2D_REFERENCE_MASS = 75.0  #: kg, the subject the parameter file describes
GAIT2D_REFERENCE_HEIGHT = 1.80  #: m

_JOINT_OF = {"hip": "hip_flexion", "knee": "knee_angle", "ankle": "ankle_angle"}


#: The segments whose lengths ``gait2d(segment_scales=...)`` scales.
GAIT2D_SEGMENTS = ("trunk", "thigh", "shank", "foot")


def _segment_scales(segment_scales: dict | None, what: str = "segment_scales") -> dict[str, float]:
    scales = {k: 1.0 for k in GAIT2D_SEGMENTS}
    for name, value in (segment_scales or {}).items():
        if name not in scales:
            raise KeyError(f"gait2d: {what} has an unknown segment {name!r}; the segments are "
                           f"{list(GAIT2D_SEGMENTS)}")
        scales[name] = finite_number(value, f"gait2d: {what}: the factor of segment {name!r}", minimum=0,
                                     inclusive=False, what="a positive number")
    return scales


def gait2d_segment_lengths(model: Model) -> dict[str, float]:
    """Lengths (m) of a gait2d model's segments as it was built: ``trunk`` (hip to shoulder), ``thigh`` (hip to
    knee), ``shank`` (knee to ankle), ``foot`` (the parameter table's foot length), from the model's factory
    arguments (height and segment scales)."""
    spec = model.spec or {}
    if spec.get("factory") != "gait2d":
        raise ValueError(f"gait2d_segment_lengths: model {model.name!r} was not made by gait2d()")
    kwargs = spec.get("kwargs", {})
    return _segment_lengths(_parameters()["segments"], kwargs.get("height", GAIT2D_REFERENCE_HEIGHT),
                            _segment_scales(kwargs.get("segment_scales")))


def _segment_lengths(seg: dict, height: float, scales: dict[str, float]) -> dict[str, float]:
    """Each segment's length for a subject of ``height`` with ``scales`` (the one formula gait2d() builds with)."""
    sl0 = height / GAIT2D_REFERENCE_HEIGHT
    return {k: seg[k]["length"] * sl0 * scales[k] for k in GAIT2D_SEGMENTS}


@functools.lru_cache(maxsize=1)
def _parameters() -> dict:
    """The parameter file parsed once (read-only: callers that change it get :func:`gait2d_parameters`' copy)."""
    return tomllib.loads(GAIT2D_PARAMETERS.read_text(encoding="utf-8"))


def gait2d_parameters() -> dict:
    """The shipped parameter file (``moco_lab/data/gait2d/gait2d_parameters.toml``) as a dict (a fresh copy)."""
    return copy.deepcopy(_parameters())


@dataclass(repr=False)
class Gait2dMuscle(ForceElement):
    """gait2d's three-element Hill muscle with constant moment arms (the manual, Eq. 2–11).

    Variables: the control ``<path>`` (neural excitation u), the states ``<path>/activation`` (a) and
    ``<path>/normalized_fiber_length`` (L_CE / L_CEopt), and the implicit derivative
    ``<path>/implicitderiv_normalized_fiber_length`` (V_CE in L_CEopt/s) whose residual is the
    force balance of Eq. 3.

    * activation: ``da/dt = (u − a)(c1 u + c2)`` (Eq. 2);
    * muscle–tendon length ``L_m = L0 − Σ_j d_j q_j`` (Eq. 10), joint moments ``d_j F`` (Eq. 11);
    * F_1 = exp(−((L_CE − 1)/W)²) (Eq. 4); F_2 the Hill–Katz hyperbolae (Eq. 5, c3 of Eq. 8);
    * PEE and SEE: ``k1 x + k2 x² [x > 0]`` (Eq. 9) with k2(PEE) = kPEE F_max/L_CEopt² and
      k2(SEE) = F_max/(u_max SEEslack)²;
    * residual ``F_SEE − a F_1 F_2 − β V_CE − F_PEE`` in units of F_max (see the module docstring for
      the options); the force on the skeleton is ``F = F_max F_SEE``.

    Parameters
    ----------
    path : str
        ``/forceset/<name>``.
    max_isometric_force, optimal_fiber_length, width, pee_slack, see_slack, l0 : float
        F_max (N), L_CEopt (m), W and PEEslack (in L_CEopt), SEEslack (m), L0 (m).
    moment_arms : dict of str -> float
        Coordinate name -> d (m).
    kpee, umax, vmax, hill_a, gmax, c1, c2, damping, linear_stiffness : float
        The constants of the manual (``linear_stiffness`` in F_max per metre, ``damping`` β in F_max per
        L_CEopt/s, ``vmax`` in L_CEopt/s, c1 and c2 in 1/s).
    damping_form : {"outside", "eq5"}
    see_stiffness_length : {"see_slack", "lceopt"}
    scaled_vmax : bool
    """

    path: str
    max_isometric_force: float
    optimal_fiber_length: float
    width: float
    pee_slack: float
    see_slack: float
    l0: float
    moment_arms: dict = field(default_factory=dict)
    kpee: float = 1.0
    umax: float = 0.04
    vmax: float = 10.0
    hill_a: float = 0.25
    gmax: float = 1.5
    c1: float = 3.3
    c2: float = 16.7
    damping: float = 0.001
    linear_stiffness: float = 0.01
    damping_form: str = "outside"
    see_stiffness_length: str = "see_slack"
    scaled_vmax: bool = False

    _PROPERTIES = ("max_isometric_force", "optimal_fiber_length", "width", "pee_slack", "see_slack", "l0",
                   "kpee", "umax", "vmax", "hill_a", "gmax", "c1", "c2", "damping", "linear_stiffness")

    def __post_init__(self):
        for name in self._PROPERTIES:
            setattr(self, name, float(getattr(self, name)))
        self.moment_arms = {str(k): float(v) for k, v in self.moment_arms.items()}
        for name in ("max_isometric_force", "optimal_fiber_length", "width", "see_slack", "umax", "vmax",
                     "hill_a"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{self.path}: {name} must be > 0, got {getattr(self, name)}")
        if not self.gmax > 1:
            raise ValueError(f"{self.path}: gmax must be > 1 (eccentric force above isometric), got {self.gmax}")
        if self.c1 < 0 or self.c2 <= 0:
            raise ValueError(f"{self.path}: activation rate constants need c1 >= 0 and c2 > 0, got {self.c1}, "
                             f"{self.c2}")
        if self.damping_form not in ("outside", "eq5"):
            raise ValueError(f"{self.path}: damping_form must be 'outside' or 'eq5', got {self.damping_form!r}")
        if self.see_stiffness_length not in ("see_slack", "lceopt"):
            raise ValueError(f"{self.path}: see_stiffness_length must be 'see_slack' or 'lceopt', got "
                             f"{self.see_stiffness_length!r}")

    # -- variables
    def state_names(self) -> list[str]:
        return [f"{self.path}/activation", f"{self.path}/normalized_fiber_length"]

    def control_names(self) -> list[str]:
        return [self.path]

    def implicit_derivative_names(self) -> list[str]:
        return [f"{self.path}/implicitderiv_normalized_fiber_length"]

    def default_state_bounds(self, name: str) -> tuple[float, float]:
        if name.endswith("/activation"):
            return (0.0, 1.0)
        return (0.2, 2.0)  # normalized fiber length

    def default_control_bounds(self, name: str) -> tuple[float, float]:
        return (0.0, 1.0)

    def implicit_derivative_bounds(self, name: str) -> tuple[float, float]:
        return (-50.0, 50.0)  # L_CEopt/s: five times V_max either way

    def default_state_value(self, name: str) -> float:
        if name.endswith("/activation"):
            return 0.0
        return 1.0

    def properties(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self._PROPERTIES}

    def coordinate_names(self) -> list[str]:
        return list(self.moment_arms)

    def output_units(self) -> dict[str, str]:
        return {"tendon_force": "N", "length": "m", "activation": "", "excitation": "",
                "normalized_fiber_length": "", "fiber_velocity": "m/s", "active_fiber_force": "N",
                "passive_fiber_force": "N", "contraction_residual": ""}

    # -- equations (numbers or expressions alike)
    def musculotendon_length(self, q: dict) -> Any:
        """``L_m = L0 − Σ d_j q_j`` (Eq. 10); ``q``: coordinate name -> angle (rad)."""
        return self.l0 - sum(d * q[c] for c, d in self.moment_arms.items())

    def forces(self, a: Any, lce: Any, vce: Any, lm: Any, xp: Any, p: dict | None = None) -> dict:
        """The muscle's normalized forces (units of F_max) at activation ``a``, normalized fiber length
        ``lce``, fiber velocity ``vce`` (L_CEopt/s) and muscle–tendon length ``lm`` (m).

        Returns ``{"F1", "F2", "active", "passive", "tendon", "residual"}``; ``active`` includes the
        damping term. ``xp``: ``numpy`` for numbers and arrays, else the engine's math namespace. ``p``
        overrides property values (the engine passes parameter variables).
        """
        p = {k: getattr(self, k) for k in self._PROPERTIES} | (p or {})
        f1 = xp.exp(-((lce - 1.0) / p["width"]) ** 2)
        vmax = p["vmax"]
        if self.scaled_vmax:  # Eq. 6
            vmax = vmax * (1.0 - xp.exp(-3.82 * a) + a * math.exp(-3.82))
        hill_a, gmax = p["hill_a"], p["gmax"]
        c3 = p["vmax"] * hill_a * (gmax - 1.0) / (hill_a + 1.0)  # Eq. 8
        v_short = where_positive(xp, -vce, vce, 0.0)  # each branch is evaluated only where it is finite
        v_long = where_positive(xp, -vce, 0.0, vce)
        concentric = (vmax + v_short) / (vmax - v_short / hill_a)
        eccentric = (gmax * v_long + c3) / (v_long + c3)
        f2 = where_positive(xp, -vce, concentric, eccentric)  # shortening (V_CE < 0): concentric
        beta_v = p["damping"] * vce
        if self.damping_form == "eq5":
            active = a * f1 * (f2 + beta_v)
        else:
            active = a * f1 * f2 + beta_v
        k1 = p["linear_stiffness"]
        x_pee = lce - p["pee_slack"]  # in L_CEopt
        passive = k1 * p["optimal_fiber_length"] * x_pee + p["kpee"] * where_positive(xp, x_pee, x_pee * x_pee, 0.0)
        x_see = lm - lce * p["optimal_fiber_length"] - p["see_slack"]  # m
        see_length = p["see_slack"] if self.see_stiffness_length == "see_slack" else p["optimal_fiber_length"]
        k_see = 1.0 / (p["umax"] * see_length) ** 2
        tendon = k1 * x_see + k_see * where_positive(xp, x_see, x_see * x_see, 0.0)
        return {"F1": f1, "F2": f2, "active": active, "passive": passive, "tendon": tendon,
                "residual": tendon - active - passive}

    def activation_derivative(self, a: Any, u: Any, p: dict | None = None) -> Any:
        """``(u − a)(c1 u + c2)`` (Eq. 2)."""
        p = {"c1": self.c1, "c2": self.c2} | (p or {})
        return (u - a) * (p["c1"] * u + p["c2"])

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        xp = ctx.xp
        p = {k: ctx.value(self, k) for k in self._PROPERTIES}
        q = {c: ctx.q[ctx.coordinate_index(c)] for c in self.moment_arms}
        lm = p["l0"] - sum(d * q[c] for c, d in self.moment_arms.items())
        u = ctx.control(self.path)
        a = ctx.state(f"{self.path}/activation")
        lce = ctx.state(f"{self.path}/normalized_fiber_length")
        vce = ctx.implicit_derivative(f"{self.path}/implicitderiv_normalized_fiber_length")
        f = self.forces(a, lce, vce, lm, xp, p)
        force = p["max_isometric_force"] * f["tendon"]
        out = ForceContribution()
        out.state_derivatives[f"{self.path}/activation"] = self.activation_derivative(a, u, p)
        out.state_derivatives[f"{self.path}/normalized_fiber_length"] = vce
        out.residuals[f"{self.path}/implicitderiv_normalized_fiber_length"] = f["residual"]
        for c, d in self.moment_arms.items():
            out.add_generalized(ctx.coordinate_index(c), d * force)
        out.outputs.update(tendon_force=force, length=lm, activation=a, excitation=u,
                           normalized_fiber_length=lce, fiber_velocity=vce * p["optimal_fiber_length"],
                           active_fiber_force=p["max_isometric_force"] * f["active"],
                           passive_fiber_force=p["max_isometric_force"] * f["passive"],
                           contraction_residual=f["residual"])
        return out


def gait2d(mass: float = GAIT2D_REFERENCE_MASS, height: float = GAIT2D_REFERENCE_HEIGHT, *, muscles: bool = True,
           linear_stiffness: float | None = None, damping_form: str = "outside",
           see_stiffness_length: str = "see_slack", scaled_vmax: bool = False,
           contact_linear_term: bool = False, segment_scales: dict | None = None,
           segment_mass_scales: dict | None = None) -> Model:
    """van den Bogert's gait2d model (see the module docstring), scaled to a subject.

    Parameters
    ----------
    mass, height : float
        The subject (kg, m). As the gait2d MEX function's "Scale" command: segment masses scale by
        ``mass/75``, lengths, centres of mass and contact points by ``height/1.8``, moments of inertia
        by ``(mass/75)(height/1.8)²``. Muscle parameters are not scaled.
    muscles : bool
        Add the sixteen muscles (False: the skeleton with contact and passive moments only, e.g. for
        torque-driven studies with your own actuators).
    linear_stiffness, damping_form, see_stiffness_length, scaled_vmax, contact_linear_term
        The options of :class:`Gait2dMuscle` and :class:`~moco_lab.modeling.contact.Gait2dContactPoint`
        where the manual and its code disagree (module docstring); ``linear_stiffness`` defaults to the
        parameter file's value (0.01 F_max per metre).
    segment_scales : dict, optional
        A subject whose proportions differ from the model's: ``{"trunk", "thigh", "shank", "foot"}`` -> a
        factor on that segment's length (both sides), applied on top of ``height/1.8`` to its length, centre of
        mass and (foot) contact points, and squared to its moment of inertia. Missing segments: 1. Segment
        masses follow ``mass`` alone.
    segment_mass_scales : dict, optional
        A subject whose mass is distributed unlike the model's: ``{"trunk", "thigh", "shank", "foot"}`` -> a
        factor on that segment's mass and moment of inertia (both sides), after which all masses are rescaled so
        that the total stays ``mass``. Missing segments: 1.

    Returns
    -------
    Model
        Bodies ``trunk``, ``thigh_r``, ``shank_r``, ``foot_r``, ``thigh_l``, ``shank_l``, ``foot_l``;
        coordinates :data:`GAIT2D_COORDINATES` (paths ``/jointset/<joint>/<coordinate>``; joints
        ``ground_trunk`` (planar), ``hip_r``, ``knee_r``, ``ankle_r``, ``hip_l``, ``knee_l``, ``ankle_l``);
        force elements ``/forceset/<muscle>`` (:data:`GAIT2D_MUSCLES`), ``/forceset/contact_heel_r``,
        ``contact_toe_r``, ``contact_heel_l``, ``contact_toe_l`` and ``/forceset/passive_<coordinate>``.
    """
    if not (mass > 0 and height > 0):
        raise ValueError(f"gait2d: mass and height must be positive, got {mass} kg and {height} m")
    par = gait2d_parameters()
    sm, sl0 = mass / GAIT2D_REFERENCE_MASS, height / GAIT2D_REFERENCE_HEIGHT
    seg = par["segments"]
    scales = _segment_scales(segment_scales)
    mass_factors = _segment_scales(segment_mass_scales, "segment_mass_scales")
    lengths = _segment_lengths(seg, height, scales)
    generic_total = seg["trunk"]["mass"] + 2 * sum(seg[k]["mass"] for k in ("thigh", "shank", "foot"))
    weighted_total = seg["trunk"]["mass"] * mass_factors["trunk"] + 2 * sum(
        seg[k]["mass"] * mass_factors[k] for k in ("thigh", "shank", "foot"))
    sm_total = sm * generic_total / weighted_total  # keeps the total mass at `mass`
    b = ModelBuilder("gait2d", gravity=(0.0, -par["subject"]["gravity"], 0.0))

    def body(name: str, s: dict) -> None:
        sl = sl0 * scales[name.split("_")[0]]
        ms = sm_total * mass_factors[name.split("_")[0]]
        izz = s["inertia"] * ms * sl * sl  # the motion is planar: only Izz matters; Ixx = Iyy = Izz/2 (a
        b.add_body(name, s["mass"] * ms, com=(s["com"][0] * sl, s["com"][1] * sl, 0.0),  # lamina) are valid
                   inertia=(izz / 2, izz / 2, izz))

    body("trunk", seg["trunk"])
    b.add_planar_joint("ground_trunk", "ground", "trunk", coordinates=GAIT2D_COORDINATES[:3])
    for side in ("r", "l"):
        body(f"thigh_{side}", seg["thigh"])
        body(f"shank_{side}", seg["shank"])
        body(f"foot_{side}", seg["foot"])
        b.add_pin_joint(f"hip_{side}", "trunk", f"thigh_{side}", coordinate=f"hip_flexion_{side}")
        b.add_pin_joint(f"knee_{side}", f"thigh_{side}", f"shank_{side}", coordinate=f"knee_angle_{side}",
                        parent_offset=(0.0, -lengths["thigh"], 0.0))
        b.add_pin_joint(f"ankle_{side}", f"shank_{side}", f"foot_{side}", coordinate=f"ankle_angle_{side}",
                        parent_offset=(0.0, -lengths["shank"], 0.0))
    con = par["contact"]
    for side in ("r", "l"):
        for point in ("heel", "toe"):
            x, y = con[point]
            sl = sl0 * scales["foot"]
            b.add_force_element(Gait2dContactPoint(
                f"/forceset/contact_{point}_{side}", f"foot_{side}", (x * sl, y * sl, 0.0),
                stiffness=con["stiffness"], damping=con["damping"], transition=con["transition"],
                friction=con["friction"], friction_velocity=con["friction_velocity"],
                linear_term=contact_linear_term))
    rom = par["joint_range"]
    for side in ("r", "l"):
        for joint in ("hip", "knee", "ankle"):
            lo, hi = rom[f"{joint}_deg"]
            coord = f"{_JOINT_OF[joint]}_{side}"
            b.add_force_element(PassiveJointMoment(
                f"/forceset/passive_{coord}", coord, math.radians(lo), math.radians(hi),
                stiffness=rom["stiffness"], transition=math.radians(rom["transition_deg"]), damping=rom["damping"]))
    if muscles:
        const = dict(par["muscle"])
        if linear_stiffness is not None:
            const["linear_stiffness"] = linear_stiffness
        for side in ("r", "l"):
            for m in par["muscles"]:
                b.add_force_element(Gait2dMuscle(
                    f"/forceset/{m['name']}_{side}", max_isometric_force=m["fmax"], optimal_fiber_length=m["lceopt"],
                    width=m["width"], pee_slack=m["pee_slack"], see_slack=m["see_slack"], l0=m["l0"],
                    moment_arms={f"{_JOINT_OF[j]}_{side}": d for j, d in m["d"].items()},
                    damping_form=damping_form, see_stiffness_length=see_stiffness_length, scaled_vmax=scaled_vmax,
                    **const))
    kwargs: dict = {}
    if mass != GAIT2D_REFERENCE_MASS:
        kwargs["mass"] = float(mass)
    if height != GAIT2D_REFERENCE_HEIGHT:
        kwargs["height"] = float(height)
    options = {"muscles": muscles, "linear_stiffness": linear_stiffness, "damping_form": damping_form,
               "see_stiffness_length": see_stiffness_length, "scaled_vmax": scaled_vmax,
               "contact_linear_term": contact_linear_term}
    defaults = {"muscles": True, "linear_stiffness": None, "damping_form": "outside",
                "see_stiffness_length": "see_slack", "scaled_vmax": False, "contact_linear_term": False}
    kwargs.update({k: v for k, v in options.items() if v != defaults[k]})
    if any(v != 1.0 for v in scales.values()):
        kwargs["segment_scales"] = {k: v for k, v in scales.items() if v != 1.0}
    if any(v != 1.0 for v in mass_factors.values()):
        kwargs["segment_mass_scales"] = {k: v for k, v in mass_factors.items() if v != 1.0}
    b.spec = {"factory": "gait2d", "kwargs": kwargs}
    return b.build()
