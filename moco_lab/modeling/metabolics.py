"""OpenSim's ``Bhargava2004SmoothedMuscleMetabolics``: the metabolic energy rate of muscles (Bhargava et al. 2004,
J Biomech 37:81–88, as OpenSim 4.6 implements it, with its optional smoothing for gradient-based optimization).

A model component with outputs only (it applies no force), reading each listed muscle's excitation ``u``, activation,
fiber length, velocity ``v`` and forces (scaled by ``muscle_effort_scaling_factor``). Per muscle of mass
``m = F_max / σ · ρ · l_opt`` (or a given mass), with ``r`` its slow-twitch ratio:

* activation heat ``m (A_s r sin(π u/2) + A_f (1 − r)(1 − cos(π u/2)))``;
* maintenance heat ``m g(l̃_M) (M_s r sin(π u/2) + M_f (1 − r)(1 − cos(π u/2)))``, ``g`` piecewise linear through
  (0, 0.5), (0.5, 0.5), (1, 1), (1.5, 0), (10, 0);
* shortening heat ``−α (v + ε)``, ``α = 0.25 F_M`` when shortening, 0 when lengthening (or, with
  ``use_force_dependent_shortening_prop_constant``, ``0.16 F_iso + 0.18 F_M`` / ``0.157 F_M``);
* mechanical work rate ``−F_active v`` (only while shortening unless ``include_negative_mechanical_work``);
* with ``forbid_negative_total_power`` the shortening heat is raised so that the sum is not negative; with
  ``enforce_minimum_heat_rate_per_muscle`` the total heat is at least 1 W/kg;

each switch ``if c ≤ 0: left else right`` replaced, with ``use_smoothing``, by ``left + (right − left)(½ + ½
tanh(k c))`` (``smoothing_type="tanh"``; the smoothings ``velocity_smoothing``, ``power_smoothing``,
``heat_rate_smoothing``). Outputs (W): ``<path>/total_metabolic_rate`` (the muscles' sum plus the basal rate
``basal_coefficient · M^basal_exponent``, M the model's mass), ``total_activation_rate``, ``total_maintenance_rate``,
``total_shortening_rate``, ``total_mechanical_work_rate`` and per muscle ``muscle_metabolic_rate_<name>``. An
``OutputGoal`` on ``<path>/total_metabolic_rate`` minimizes the metabolic energy.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from .force_element import ForceContext, ForceContribution, ForceElement
from .xp import where_positive

__all__ = ["Bhargava2004SmoothedMuscleMetabolics", "MetabolicsMuscleParameters"]

_LENGTH_CURVE = ((0.0, 0.5), (0.5, 0.5), (1.0, 1.0), (1.5, 0.0), (10.0, 0.0))


@dataclasses.dataclass
class MetabolicsMuscleParameters:
    """One muscle of :class:`Bhargava2004SmoothedMuscleMetabolics` (OpenSim's
    ``Bhargava2004SmoothedMuscleMetabolics_MuscleParameters``; its defaults).

    Attributes
    ----------
    muscle : str
        The muscle's path (``/forceset/<name>``).
    name : str
        The channel's name (default the muscle's name).
    specific_tension : float
        Pa (0.25e6); ``density`` kg/m³ (1059.7).
    ratio_slow_twitch_fibers : float
        In [0, 1] (0.5).
    provided_muscle_mass : float or None
        kg; None: ``F_max / specific_tension · density · l_opt``.
    activation_constant_slow_twitch, activation_constant_fast_twitch, maintenance_constant_slow_twitch,
    maintenance_constant_fast_twitch : float
        W/kg (40, 133, 74, 111).
    """

    muscle: str
    name: str = ""
    specific_tension: float = 0.25e6
    density: float = 1059.7
    ratio_slow_twitch_fibers: float = 0.5
    provided_muscle_mass: float | None = None
    activation_constant_slow_twitch: float = 40.0
    activation_constant_fast_twitch: float = 133.0
    maintenance_constant_slow_twitch: float = 74.0
    maintenance_constant_fast_twitch: float = 111.0

    def __post_init__(self):
        if not self.name:
            self.name = self.muscle.rsplit("/", 1)[-1]
        if not 0.0 <= self.ratio_slow_twitch_fibers <= 1.0:
            raise ValueError(f"metabolics of {self.muscle!r}: ratio_slow_twitch_fibers must be in [0, 1], got "
                             f"{self.ratio_slow_twitch_fibers}")
        for key in ("specific_tension", "density"):
            if not getattr(self, key) > 0:
                raise ValueError(f"metabolics of {self.muscle!r}: {key} must be > 0, got {getattr(self, key)}")

    def mass(self, muscle: Any) -> float:
        """The muscle's mass (kg)."""
        if self.provided_muscle_mass is not None and not math.isnan(self.provided_muscle_mass):
            return float(self.provided_muscle_mass)
        return muscle.max_isometric_force / self.specific_tension * self.density * muscle.optimal_fiber_length


def _piecewise_linear(x: Any, xp: Any) -> Any:
    """OpenSim's ``PiecewiseLinearFunction`` through :data:`_LENGTH_CURVE` (extended linearly beyond its ends)."""
    out = _LENGTH_CURVE[0][1] + 0.0 * x
    slope_before = 0.0
    for (xa, ya), (xb, yb) in zip(_LENGTH_CURVE[:-1], _LENGTH_CURVE[1:]):
        slope = (yb - ya) / (xb - xa)
        # add the change of slope at each knot: a sum of ramps max(x − xa, 0)
        out = out + (slope - slope_before) * xp.maximum(x - xa, 0.0) if slope != slope_before else out
        slope_before = slope
    return out


@dataclasses.dataclass
class Bhargava2004SmoothedMuscleMetabolics(ForceElement):
    """OpenSim's ``Bhargava2004SmoothedMuscleMetabolics`` (module docstring): outputs only. Properties and defaults
    are OpenSim's, ``smoothing_type`` ``"tanh"`` (default) or ``"huber"`` (OpenSim's Huber-loss conditional, which
    divides by the condition: as in OpenSim the shortening constant with ``use_force_dependent_shortening_prop_constant``
    stays tanh-smoothed)."""

    path: str = "/metabolics"
    muscle_parameters: list = dataclasses.field(default_factory=list)
    enforce_minimum_heat_rate_per_muscle: bool = True
    use_force_dependent_shortening_prop_constant: bool = False
    basal_coefficient: float = 1.2
    basal_exponent: float = 1.0
    muscle_effort_scaling_factor: float = 1.0
    include_negative_mechanical_work: bool = True
    forbid_negative_total_power: bool = True
    use_smoothing: bool = False
    smoothing_type: str = "tanh"
    velocity_smoothing: float = 10.0
    power_smoothing: float = 10.0
    heat_rate_smoothing: float = 10.0

    def __post_init__(self):
        self.muscle_parameters = [p if isinstance(p, MetabolicsMuscleParameters) else MetabolicsMuscleParameters(**p)
                                  for p in self.muscle_parameters]
        if self.smoothing_type not in ("tanh", "huber"):
            raise ValueError(f"{self.path}: smoothing_type must be 'tanh' (OpenSim's default) or 'huber', got "
                             f"{self.smoothing_type!r}")
        names = [p.name for p in self.muscle_parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.path}: two muscles share a channel name: {names}")

    def add_muscle(self, muscle: str, **parameters: Any) -> None:
        """Add a muscle (its path) with :class:`MetabolicsMuscleParameters` ``parameters`` (OpenSim's
        ``addMuscle``)."""
        self.muscle_parameters.append(MetabolicsMuscleParameters(muscle, **parameters))
        self.__post_init__()

    def output_units(self) -> dict[str, str]:
        units = {k: "W" for k in ("total_metabolic_rate", "total_activation_rate", "total_maintenance_rate",
                                  "total_shortening_rate", "total_mechanical_work_rate")}
        units.update({f"muscle_metabolic_rate_{p.name}": "W" for p in self.muscle_parameters})
        return units

    def _conditional(self, cond: Any, left: Any, right: Any, smoothing: float, xp: Any, direction: int = 1,
                     tanh: bool = False) -> Any:
        """OpenSim's conditional: ``left`` where ``cond <= 0``, ``right`` elsewhere; smoothed by ``tanh`` or, with
        ``smoothing_type="huber"`` (and not ``tanh``), by OpenSim's Huber-loss formula, whose ``direction`` (±1) says
        which side the function leaves from."""
        if not self.use_smoothing:
            return where_positive(xp, cond, right, left)
        if self.smoothing_type == "tanh" or tanh:
            return left + (right - left) * (0.5 + 0.5 * xp.tanh(smoothing * cond))
        offset = left if direction == 1 else right
        scale = (right - left) / cond
        y = smoothing * (direction * cond + 0.5 / smoothing)
        delta = 1.0
        f = where_positive(xp, y, where_positive(xp, delta - y, 0.5 * y * y + offset, delta * (y - 0.5 * delta) + offset),
                           offset)
        return scale * (f / smoothing + offset * (1.0 - 1.0 / smoothing))

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        xp = ctx.xp
        out = ForceContribution()
        totals = {"activation": 0.0, "maintenance": 0.0, "shortening": 0.0, "mechanical_work": 0.0, "total": 0.0}
        eps = 1e-16
        s = self.muscle_effort_scaling_factor
        for mp in self.muscle_parameters:
            element = ctx.element(mp.muscle)
            if not hasattr(element, "fiber_state"):
                raise TypeError(f"{self.path}: {mp.muscle!r} is not a muscle on a path (PathMuscle)")
            u, info = element.fiber_state(ctx)
            muscle = element.muscle
            mass = mp.mass(muscle)
            excitation, activation = s * u, s * info.activation
            passive = info.passive_fiber_elastic_force + info.passive_fiber_damping_force
            active = s * info.active_fiber_force
            total_force = active + passive
            v = info.fiber_velocity
            slow = mp.ratio_slow_twitch_fibers * xp.sin(math.pi / 2 * excitation)
            fast = (1 - mp.ratio_slow_twitch_fibers) * (1 - xp.cos(math.pi / 2 * excitation))
            activation_heat = mass * (mp.activation_constant_slow_twitch * slow
                                      + mp.activation_constant_fast_twitch * fast)
            maintenance_heat = mass * _piecewise_linear(info.normalized_fiber_length, xp) * (
                mp.maintenance_constant_slow_twitch * slow + mp.maintenance_constant_fast_twitch * fast)
            if self.use_force_dependent_shortening_prop_constant:
                iso = activation * info.active_force_length_multiplier * muscle.max_isometric_force
                # OpenSim smooths this one by tanh whatever smoothing_type is
                alpha = self._conditional(v + eps, 0.16 * iso + 0.18 * total_force, 0.157 * total_force,
                                          self.velocity_smoothing, xp, -1, tanh=True)
            else:
                alpha = self._conditional(v + eps, 0.25 * total_force, 0.0, self.velocity_smoothing, xp, -1)
            shortening_heat = -alpha * (v + eps)
            if self.include_negative_mechanical_work:
                work = -active * v
            else:
                work = self._conditional(v + eps, -active * v, 0.0, self.velocity_smoothing, xp, -1)
            if self.forbid_negative_total_power:
                before = activation_heat + maintenance_heat + shortening_heat + work
                if self.use_smoothing:
                    shortening_heat = shortening_heat - self._conditional(-before, 0.0, before,
                                                                          self.power_smoothing, xp)
                else:
                    shortening_heat = shortening_heat - where_positive(xp, -before, before, 0.0)
            heat = activation_heat + maintenance_heat + shortening_heat
            if self.enforce_minimum_heat_rate_per_muscle:
                if self.use_smoothing:
                    heat = self._conditional(-heat + mass, heat, mass, self.heat_rate_smoothing, xp)
                else:
                    heat = where_positive(xp, mass - heat, mass, heat)
            rate = heat + work
            out.outputs[f"muscle_metabolic_rate_{mp.name}"] = rate
            for key, value in (("activation", activation_heat), ("maintenance", maintenance_heat),
                               ("shortening", shortening_heat), ("mechanical_work", work), ("total", rate)):
                totals[key] = totals[key] + value
        basal = self.basal_coefficient * (ctx.total_mass() ** self.basal_exponent if self.basal_exponent != 1.0
                                          else ctx.total_mass())
        out.outputs["total_metabolic_rate"] = totals["total"] + basal
        for key in ("activation", "maintenance", "shortening", "mechanical_work"):
            out.outputs[f"total_{key}_rate"] = totals[key]
        return out
