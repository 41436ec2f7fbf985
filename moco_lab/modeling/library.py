"""Model factories: the systems of Moco's verification problems and classics.

Each factory returns a :class:`~moco_lab.modeling.model.Model` whose names follow the
OpenSim models that Moco's examples and tests build, so the same state and
control paths work in moco_lab and in OpenSim Moco.

==========================  =====================================================
factory                     states / controls
==========================  =====================================================
``sliding_mass``            ``/slider/position/{value,speed}`` / ``/actuator``
``linear_problem``          ``/jointset/j/coord/{value,speed}`` /
                            ``/forceset/coordinateactuator``
``pendulum``                ``/jointset/j0/q0/{value,speed}`` / ``/tau0``
``double_pendulum``         ``.../j0/q0/...``, ``.../j1/q1/...`` /
                            ``/tau0``, ``/tau1``
``n_link_pendulum``         ``.../j<i>/q<i>/...`` / ``/tau<i>``, i < n
==========================  =====================================================
"""
from __future__ import annotations

from .constraints import PointOnCurveConstraint
from .model import GRAVITY, Model, ModelBuilder
from .muscle import DeGrooteFregly2016Muscle

__all__ = ["sliding_mass", "linear_problem", "pendulum", "double_pendulum", "n_link_pendulum", "suspended_mass",
           "planar_point_mass", "CURVES", "FACTORIES", "from_spec", "squat_to_stand", "gait2d"]


def _spec(builder: ModelBuilder, factory: str, **kwargs) -> Model:
    builder.spec = {"factory": factory, "kwargs": kwargs}
    return builder.build()


def sliding_mass(mass: float = 2.0) -> Model:
    """Point mass sliding on a frictionless horizontal line, pushed by one actuator.

    Moco's ``exampleSlidingMass``: body ``body`` (``mass`` kg) on slider joint
    ``/slider`` (coordinate ``position`` along ground x), coordinate actuator
    ``/actuator`` with optimal force 1 N; no gravity.
    """
    b = ModelBuilder("sliding_mass", gravity=(0, 0, 0))
    b.add_body("body", mass, path="/body")
    b.add_slider_joint("slider", "ground", "body", axis=(1, 0, 0), coordinate="position", path="/slider")
    b.add_coordinate_actuator("/actuator", "position", optimal_force=1.0)
    return _spec(b, "sliding_mass", mass=mass)


def linear_problem(variant: str = "kirk") -> Model:
    """The linear system of the Moco paper's analytic verification (the Moco paper, Eq. 2).

    Unit mass on slider joint ``/jointset/j`` (coordinate ``coord``), a
    ``SpringGeneralizedForce`` ``/forceset/spring`` with stiffness 0 and
    viscosity ``+1`` (``variant="kirk"``: ``udot = -u + x`` as in Kirk 2004 and
    the paper) or ``-1`` (``variant="moco_test"``: ``udot = u + x`` as in Moco's
    own ``testMocoAnalytic.cpp``), and coordinate actuator
    ``/forceset/coordinateactuator`` (optimal force 1), so ``x`` is the force.
    """
    viscosity = {"kirk": 1.0, "moco_test": -1.0}
    if variant not in viscosity:
        raise ValueError(f"Unknown variant {variant!r}; choose 'kirk' or 'moco_test'.")
    b = ModelBuilder("linear_problem", gravity=(0, -GRAVITY, 0))
    b.add_body("b", 1.0)
    b.add_slider_joint("j", "ground", "b", axis=(1, 0, 0), coordinate="coord")
    b.add_spring_generalized_force("/forceset/spring", "coord", stiffness=0.0, rest_length=0.0,
                                   viscosity=viscosity[variant])
    b.add_coordinate_actuator("/forceset/coordinateactuator", "coord", optimal_force=1.0)
    return _spec(b, "linear_problem", variant=variant)


def _n_link(n: int, factory: str, mass: float, length: float, inertia: float) -> Model:
    # OpenSim's ModelFactory::createNLinkPendulum: body b<i> (mass at its origin,
    # inertia diag(inertia)); pin joint j<i> about z, located at the previous
    # body's origin (ground origin for j0); the child frame sits `length`
    # behind the body origin along -x, so at q = 0 each link points along +x.
    b = ModelBuilder(factory, gravity=(0, -GRAVITY, 0))
    parent = "ground"
    for i in range(n):
        b.add_body(f"b{i}", mass, inertia=(inertia, inertia, inertia))
        b.add_pin_joint(f"j{i}", parent, f"b{i}", axis=(0, 0, 1), coordinate=f"q{i}",
                        child_offset=(-length, 0, 0))
        b.add_coordinate_actuator(f"/tau{i}", f"q{i}", optimal_force=1.0)
        parent = f"b{i}"
    return b


def pendulum(mass: float = 1.0, length: float = 1.0, inertia: float = 1.0) -> Model:
    """One-link pendulum under gravity (OpenSim ``ModelFactory::createPendulum``).

    Pin joint ``/jointset/j0`` (coordinate ``q0``, about z; ``q0 = 0`` points
    the link along +x, horizontal), body ``b0`` with its mass at distance
    ``length`` from the pin, torque actuator ``/tau0`` (optimal force 1).
    """
    b = _n_link(1, "pendulum", mass, length, inertia)
    return _spec(b, "pendulum", mass=mass, length=length, inertia=inertia)


def double_pendulum(mass: float = 1.0, length: float = 1.0, inertia: float = 1.0) -> Model:
    """Two-link pendulum under gravity (OpenSim ``ModelFactory::createDoublePendulum``).

    Coordinates ``/jointset/j0/q0`` and ``/jointset/j1/q1`` (relative angle),
    torque actuators ``/tau0`` and ``/tau1`` (optimal force 1). Geometry as
    OpenSim's: bodies ``b0``, ``b1`` of 1 kg with central inertia diag(1, 1, 1),
    each pin 1 m behind its body's origin along -x; at ``q = 0`` both links
    point along ground +x; gravity -9.80665 along y.
    """
    b = _n_link(2, "double_pendulum", mass, length, inertia)
    return _spec(b, "double_pendulum", mass=mass, length=length, inertia=inertia)


def n_link_pendulum(n: int, mass: float = 1.0, length: float = 1.0, inertia: float = 1.0) -> Model:
    """Planar chain of ``n`` links under gravity (OpenSim ``ModelFactory::createNLinkPendulum``).

    Pin joints ``/jointset/j<i>`` with coordinates ``q<i>`` (each relative to
    the previous link), torque actuators ``/tau<i>``; geometry as
    :func:`double_pendulum` (which is ``n = 2``). Used to measure how the
    engine's cost grows with the depth of a joint chain.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n_link_pendulum needs n >= 1 links, got {n}")
    b = _n_link(n, "n_link_pendulum", mass, length, inertia)
    return _spec(b, "n_link_pendulum", n=n, mass=mass, length=length, inertia=inertia)


def suspended_mass(tendon: str = "rigid") -> Model:
    """Point mass in a vertical plane hung from three DeGrooteFregly2016 muscles (the Moco paper, Figure 4).

    OpenSim's ``createPlanarPointMass`` without its actuators: a massless body
    ``intermed`` on slider ``/jointset/tx`` (coordinate ``tx``, ground x) and a
    1 kg body ``body`` on slider ``/jointset/ty`` (coordinate ``ty``, ground y);
    gravity -9.80665 along y. Muscles ``left``, ``middle`` and ``right`` run
    straight from ground points (-0.2, 0, 0), (0, 0, 0), (0.2, 0, 0) to the
    body's origin, with rigid tendons and activation dynamics
    (``VERIFICATION.md`` (c)); controls ``/forceset/<name>``
    (excitations), states ``/forceset/<name>/activation``.

    ``tendon="explicit"`` or ``"implicit"`` makes the tendons compliant (OpenSim's
    default tendon strain 0.049 at isometric force), with the normalized tendon force
    ``/forceset/<name>/normalized_tendon_force`` as a further state, in Moco's explicit or
    implicit form (the latter adds the algebraic derivative
    ``/forceset/<name>/implicitderiv_normalized_tendon_force``). Not the paper's problem.
    """
    if tendon not in ("rigid", "explicit", "implicit"):
        raise ValueError(f"Unknown tendon {tendon!r}; choose 'rigid', 'explicit' or 'implicit'")
    b = ModelBuilder("suspended_mass", gravity=(0, -GRAVITY, 0))
    b.add_body("intermed", 0.0)
    b.add_body("body", 1.0)
    b.add_slider_joint("tx", "ground", "intermed", axis=(1, 0, 0), coordinate="tx", range=(-0.2, 0.2))
    b.add_slider_joint("ty", "intermed", "body", axis=(0, 1, 0), coordinate="ty", range=(-0.4, 0.0))
    for name, x, fmax, lopt, lslack in (("left", -0.2, 10.0, 0.20, 0.10),
                                         ("middle", 0.0, 10.0, 0.09, 0.10),
                                         ("right", 0.2, 20.0, 0.21, 0.09)):
        compliance = {} if tendon == "rigid" else {"tendon_compliance_dynamics_mode": tendon}
        muscle = DeGrooteFregly2016Muscle(name=name, max_isometric_force=fmax, optimal_fiber_length=lopt,
                                          tendon_slack_length=lslack, ignore_tendon_compliance=tendon == "rigid",
                                          **compliance)
        b.add_muscle(muscle, [("ground", (x, 0.0, 0.0)), ("body", (0.0, 0.0, 0.0))])
    return _spec(b, "suspended_mass", **({} if tendon == "rigid" else {"tendon": tendon}))


#: Curves of :func:`planar_point_mass`: name -> g(x) with the constraint y = g(x).
CURVES = {"parabola": lambda x: x * x, "line": lambda x: x}


def planar_point_mass(curve: str | None = None, actuated: bool = True, mass: float = 1.0,
                      range: float = 2.0) -> Model:
    """A point mass in the vertical plane, optionally held on a curve (the Moco paper, "Kinematic constraints").

    Moco's ``ModelFactory::createPlanarPointMass`` layout (``VERIFICATION.md`` d1): a
    massless body ``intermed`` on slider ``/jointset/tx`` (coordinate ``tx`` along ground x), the
    body ``body`` (``mass`` kg, zero inertia) on slider ``/jointset/ty`` (coordinate ``ty`` along
    ground y), gravity ``-9.80665`` along y; coordinate ranges ``[-range, range]``.

    Parameters
    ----------
    curve : {None, "parabola", "line"}
        ``"parabola"``: a :class:`~moco_lab.constraints.PointOnCurveConstraint` named ``curve``,
        ``φ = ty − tx²`` (Moco's example writes ``tx² − ty``: its multiplier has the opposite
        sign); ``"line"``: ``φ = ty − tx``; None: free.
    actuated : bool
        Coordinate actuators ``/forceset/force_x`` and ``/forceset/force_y`` (optimal force 1 N).
    """
    if curve is not None and curve not in CURVES:
        raise ValueError(f"Unknown curve {curve!r}; choose from {sorted(CURVES)} or None")
    b = ModelBuilder("planar_point_mass", gravity=(0, -GRAVITY, 0))
    b.add_body("intermed", 0.0)
    b.add_body("body", float(mass))
    b.add_slider_joint("tx", "ground", "intermed", axis=(1, 0, 0), coordinate="tx", range=(-range, range))
    b.add_slider_joint("ty", "intermed", "body", axis=(0, 1, 0), coordinate="ty", range=(-range, range))
    if actuated:
        b.add_coordinate_actuator("/forceset/force_x", "tx", optimal_force=1.0)
        b.add_coordinate_actuator("/forceset/force_y", "ty", optimal_force=1.0)
    if curve is not None:
        b.add_constraint(PointOnCurveConstraint("curve", CURVES[curve], x="tx", y="ty"))
    return _spec(b, "planar_point_mass", curve=curve, actuated=actuated, mass=mass, range=range)


from . import coupled as _coupled  # noqa: E402 - registered below
from .gait2d import gait2d  # noqa: E402 - registered below
from .operators import apply_operators  # noqa: E402
from .osim import model_from_file as _model_from_file  # noqa: E402 - registered below
from .squat import squat_to_stand  # noqa: E402 - registered below

#: Model factories by name (what ``Model.spec["factory"]`` refers to).
FACTORIES = {
    "single_pin": _coupled.single_pin,
    "patella_knee": _coupled.patella_knee,
    "composite_joint": _coupled.composite_joint,
    "sliding_mass": sliding_mass,
    "linear_problem": linear_problem,
    "pendulum": pendulum,
    "double_pendulum": double_pendulum,
    "n_link_pendulum": n_link_pendulum,
    "suspended_mass": suspended_mass,
    "planar_point_mass": planar_point_mass,
    "read_osim": _model_from_file,
    "squat_to_stand": squat_to_stand,
    "gait2d": gait2d,
}


def from_spec(spec: dict) -> Model:
    """Rebuild a model from ``Model.spec`` (``{"factory": name, "kwargs": {...}, "operators": [...]}``)."""
    name = spec.get("factory")
    if name not in FACTORIES:
        raise ValueError(f"Unknown model factory {name!r}; known: {sorted(FACTORIES)}")
    model = FACTORIES[name](**spec.get("kwargs", {}))
    return apply_operators(model, spec.get("operators", []))


def data_files(spec: dict) -> dict[str, str]:
    """The files a model recipe (``Model.spec``) reads, each with the SHA-256 recorded when it was read.

    ``{absolute path: sha256}`` for the ``.osim`` file of :func:`~moco_lab.modeling.osim.read_osim` and the
    external-loads ``.xml`` and force table of :func:`~moco_lab.modeling.operators.add_external_loads`: what a
    saved study or a sweep folder depends on besides its own data, so that a change to any of them is noticed.
    A recipe of a factory that reads no file gives ``{}``.
    """
    from pathlib import Path

    from ..results.external_loads import read_external_loads
    from ..util.data import opensim_file

    files: dict[str, str] = {}
    kwargs = spec.get("kwargs", {})
    if spec.get("factory") == "read_osim" and kwargs.get("sha256"):
        path = Path(kwargs["path"])
        files[str((path if path.exists() else opensim_file(str(path))).resolve())] = kwargs["sha256"]
    for name, op in spec.get("operators", []):
        if name != "add_external_loads":
            continue
        hashes = op.get("sha256") or {}
        loads = Path(op["loads"])
        if "loads" in hashes:
            files[str(loads.resolve())] = hashes["loads"]
        data = op.get("data")
        if data is None and loads.is_file():
            data = read_external_loads(loads).datafile
        if data is not None and "data" in hashes:
            files[str(Path(data).resolve())] = hashes["data"]
    return files

