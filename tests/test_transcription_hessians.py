"""Exact second derivatives (``optim_hessian_approximation="exact"``): every binding's Hessian against finite
differences of its exact gradient, its declared structure, and the whole program's Hessian of the Lagrangian.

The configurations are those of ``test_transcription_jacobians.py`` (scheme × dynamics mode × kinematic-constraint
method × muscles, contact, compliant tendons, parameters, goals with outputs, endpoint goals, prescribed
kinematics), at random points inside the bounds with random multipliers. Tolerances:

* each binding's Hessian of ``wᵀ c(z)`` (``w``: random multipliers; for a cost ``σ``) matches central differences
  of the exact gradient ``wᵀ J(z)`` (h = 1e-6) to 1e-5 relative to max(1, |entry|) plus round-off
  1e-9·scale/h — the gradients are exact to round-off (``test_transcription_jacobians.py``), so central
  differences of them are accurate to ~1e-8 relative and a wrong second derivative (a missing chain-rule term, a
  sign, a dropped cross term with the duration) stands out by orders of magnitude;
* every entry of that finite-difference Hessian above its tolerance lies in the declared lower-triangular
  structure (an undeclared entry would be dropped by IPOPT: a silently wrong Newton step);
* the chunks' dynamics rows and their integral costs evaluated all chunks at once (``DynamicsHessian``,
  ``IntegralCostsHessian``: what the optimizer calls) equal the sum of the chunk bindings' Hessians just checked,
  entry for entry, to 1e-12 relative to the largest entry: the same sums in another order (a grid point two chunks
  share evaluated once with their weights summed), so only round-off may differ.
"""
import numpy as np
import pytest
from test_transcription_jacobians import (
    check_bindings,
    leg_model,
    leg_problem,
    prescribed_leg,
    random_point,
    scale_factor_problem,
)

import moco_lab as ml
from moco_lab.engine.transcription import Transcription
from moco_lab.modeling.contact import SmoothSphereHalfSpaceForce
from moco_lab.modeling.markers import Marker
from moco_lab.solve.ipopt_mumps import _Program


def _dense(rows, cols, values, n):
    H = np.zeros((n, n))
    np.add.at(H, (rows, cols), values)
    off = rows != cols
    np.add.at(H, (cols[off], rows[off]), values[off])
    return H


def _binding(tr, ev):
    prog = tr.prog
    for kind, bindings in (("constraint", prog.GetAllConstraints()), ("cost", prog.GetAllCosts())):
        for b in bindings:
            if b.evaluator() is ev or id(b.evaluator()) == id(ev):
                return kind, np.asarray(prog.FindDecisionVariableIndices(b.variables()), int)
    raise AssertionError("binding not found")


def check_hessians(tr: Transcription, rng) -> int:
    """Each binding's exact Hessian against central differences of its exact gradient (module docstring)."""
    x = random_point(tr, rng)
    checked = 0
    for fun, ev, hess in tr.exact_callbacks.values():
        assert hess is not None, ev.get_description()
        rows, cols, h = hess
        assert np.all(rows >= cols)
        kind, idx = _binding(tr, ev)
        z = x[idx]
        w = np.array([1.7]) if kind == "cost" else rng.uniform(-1.0, 1.0, ev.num_outputs())
        H = _dense(rows, cols, np.asarray(h(z, w), float), z.size)

        def grad(zz):
            J = np.asarray(fun(zz, True)[1], float).reshape(-1, zz.size)
            return w @ J

        g0 = grad(z)
        step = 1e-6
        fd = np.zeros_like(H)
        for j in range(z.size):
            e = np.zeros(z.size)
            e[j] = step
            fd[:, j] = (grad(z + e) - grad(z - e)) / (2 * step)
        fd = 0.5 * (fd + fd.T)
        assert np.all(np.isfinite(H)) and np.all(np.isfinite(fd)), ev.get_description()
        tol = 1e-5 * np.maximum(1.0, np.abs(H)) + 1e-9 * max(1.0, float(np.abs(g0).max())) / step
        bad = np.abs(fd - H) > tol
        assert not np.any(bad), (ev.get_description(), kind, np.argwhere(bad)[:5], np.abs(fd - H).max())
        declared = np.zeros(H.shape, bool)
        declared[rows, cols] = declared[cols, rows] = True
        undeclared = (np.abs(fd) > tol) & ~declared
        assert not np.any(undeclared), (ev.get_description(), np.argwhere(undeclared)[:5])
        checked += 1
    assert checked > 0
    for group in tr.exact_callbacks.grouped:
        check_grouped(tr, group, x)
    return checked


def check_grouped(tr: Transcription, group, x: np.ndarray, sigma: float = 1.7) -> None:
    """A grouped Hessian (all chunks' dynamics rows, or all their integral costs, at once) against the sum of the
    Hessians of the bindings it replaces, with the same multipliers."""
    n = tr.prog.num_vars()
    rng = np.random.default_rng(3)
    total, multipliers = {}, {}
    for _, ev, hess in tr.exact_callbacks.values():
        if id(ev) not in group.evaluators:
            continue
        rows, cols, h = hess
        kind, idx = _binding(tr, ev)
        w = np.array([sigma]) if kind == "cost" else rng.uniform(-1.0, 1.0, ev.num_outputs())
        multipliers[id(ev)] = w
        r, c = idx[rows], idx[cols]
        for key, v in zip(np.maximum(r, c) * n + np.minimum(r, c), np.asarray(h(x[idx], w), float)):
            total[int(key)] = total.get(int(key), 0.0) + float(v)
    assert total, "the group replaces no binding"
    got = dict(zip((group.rows * n + group.cols).tolist(), group.values(x, sigma, multipliers).tolist()))
    assert set(got) == set(total)  # the same entries: the program's structure does not change
    scale = max(1.0, max(abs(v) for v in total.values()))
    worst = max(abs(got[k] - total[k]) for k in total)
    assert worst <= 1e-12 * scale, (worst, scale)


def exact(study: ml.Study) -> ml.Study:
    study.solver.optim_linear_solver = "mumps"
    study.solver.optim_hessian_approximation = "exact"
    return study


CASES = [("hermite-simpson", "explicit"), ("hermite-simpson", "implicit"), ("trapezoidal", "explicit"),
         ("trapezoidal", "implicit"), ("legendre-gauss-3", "explicit"), ("legendre-gauss-radau-2", "implicit")]


@pytest.mark.parametrize("scheme, mode", CASES)
def test_muscles_contact_and_goals_with_outputs(scheme, mode):
    """Both schemes and modes; DeGrooteFregly2016 muscles, smooth-sphere and gait2d contact, passive moments; effort
    with exponent 3, per displacement (an endpoint cost with its integral), average speed (an endpoint constraint),
    contact-force, marker and state tracking on splines, the final time."""
    study = exact(ml.Study())
    study.problem = leg_problem(leg_model(contact=True), goals=True)
    study.solver.transcription_scheme = scheme
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    check_hessians(study.transcribe(), np.random.default_rng(11))


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_contact_scale_factors(mode):
    """Moco's scale factors on the contact-tracking reference: the parameters' rows and columns of the integrand's
    Hessian (with the outputs, the time and each other)."""
    study = exact(ml.Study())
    study.problem = scale_factor_problem()
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    check_hessians(study.transcribe(), np.random.default_rng(15))


def test_goals_with_outputs_and_parameters():
    """All goals of the first test with a model parameter (the heel's dissipation) among the variables: the
    parameter rows and columns of the integrals' Hessians, assembled for all nodes at once."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=True)
    p.add_parameter("heel_dissipation", "/forceset/heel/dissipation", (1.0, 3.0))
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    check_hessians(study.transcribe(), np.random.default_rng(13))


@pytest.mark.parametrize("tendon", ["explicit", "implicit"])
def test_compliant_tendons_and_parameters(tendon):
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=False, tendon=tendon), goals=False)
    p.set_state_info("/jointset/knee/knee_angle/value", (-0.6, -0.3))
    p.set_state_info("/jointset/base/rz/value", (-0.1, 0.1))
    p.add_parameter("mass", "/bodyset/shank/mass", (2, 5))
    p.add_parameter("fmax", "/forceset/vasti/max_isometric_force", (2000, 4000))
    p.add_goal(ml.SumSquaredStateGoal("activations", 0.3, pattern=".*/activation"))
    study.solver.num_mesh_intervals = 2
    study.solver.multibody_dynamics_mode = "implicit"
    study.solver.minimize_implicit_auxiliary_derivatives = tendon == "implicit"
    study.solver.minimize_implicit_multibody_accelerations = True
    check_hessians(study.transcribe(), np.random.default_rng(12))


@pytest.mark.parametrize("scheme, method", [("hermite-simpson", "Posa2016"), ("hermite-simpson", "Bordalba2023"),
                                            ("trapezoidal", "Posa2016"), ("trapezoidal", "Bordalba2023"),
                                            ("legendre-gauss-2", "Bordalba2023"),
                                            ("legendre-gauss-radau-3", "Bordalba2023")])
@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_kinematic_constraints(scheme, method, mode):
    """The bead on the parabola: φ, φ̇, φ̈ rows (explicit: through the accelerations' own second derivatives),
    Posa's velocity correction, Bordalba's projection, the multiplier penalty."""
    study = exact(ml.examples.parabola_study("move", w_lambda=0.5))
    study.solver.transcription_scheme = scheme
    study.solver.multibody_dynamics_mode = mode
    study.solver.kinematic_constraint_method = method
    study.solver.num_mesh_intervals = 3
    check_hessians(study.transcribe(), np.random.default_rng(13))


def test_prescribed_kinematics():
    tr = prescribed_leg(optim_linear_solver="mumps", optim_hessian_approximation="exact")
    check_hessians(tr, np.random.default_rng(14))


def test_prescribed_kinematics_with_a_joint_reaction_goal():
    """Prescribed kinematics (the Moco paper's knee load): the knee reaction's Hessian w.r.t. the variables only —
    the muscles' forces through their activations and tendon states, the motion being data."""
    goal = ml.JointReactionGoal("knee_parent", 0.2, joint_path="knee", reaction_measures=["force-x", "force-y"])
    tr = prescribed_leg([goal], optim_linear_solver="mumps", optim_hessian_approximation="exact")
    check_hessians(tr, np.random.default_rng(17))


def test_lagrangian_hessian_vector_products():
    """The whole program as IPOPT sees it (every binding's part summed into one structure, quadratic costs
    included): ``H v`` against central differences of ``σ∇f + Jᵀλ`` along random directions ``v``."""
    study = exact(ml.Study())
    study.problem = leg_problem(leg_model(contact=True), goals=True)
    study.solver.num_mesh_intervals = 3
    study.solver.minimize_lagrange_multipliers = True
    tr = study.transcribe()
    rng = np.random.default_rng(15)
    P = _Program(tr.prog, tr.exact_callbacks, hessian=True)
    x = random_point(tr, rng)
    sigma, lam = 0.8, rng.uniform(-1, 1, P.m)
    vals = np.zeros(P.hess_nnz)
    P.new_point(x)
    P.hessian_at(x, sigma, lam, vals)
    # the declared structure is no larger than it must be: entries that are non-zero at a random point, over
    # entries declared, measured 1.16 here (1.0005 for the squat, 1.17 for the 2-D walker at random points);
    # above 1.2 IPOPT would factorize a KKT matrix with needless entries
    assert P.hess_nnz <= 1.2 * np.count_nonzero(vals), (P.hess_nnz, np.count_nonzero(vals))
    H = _dense(P.hess_rows, P.hess_cols, vals, P.n)
    jv = np.zeros(P.nnz)

    def grad(xx):
        P.new_point(xx)
        g = sigma * P.objective(xx, True)[1]
        P.jacobian_at(xx, jv)
        np.add.at(g, P.jac_cols, lam[P.jac_rows] * jv)
        return g

    for _ in range(3):
        v = rng.standard_normal(P.n)
        fd = (grad(x + 1e-6 * v) - grad(x - 1e-6 * v)) / 2e-6
        exact_hv = H @ v
        assert np.allclose(exact_hv, fd, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(fd).max())), \
            np.abs(exact_hv - fd).max()


def test_unsupported_terms_are_named():
    """A path constraint or a user goal written as a Python function has no second derivatives: the exact
    Hessian is refused with their names, and the settings refuse Drake's IPOPT and SNOPT."""
    study = exact(ml.Study())
    p = study.problem
    p.set_model(ml.coupled_models.patella_knee())
    p.set_time_bounds(0, 0.5)
    p.add_goal(ml.ControlGoal("effort"))
    p.add_path_constraint("knee_speed", lambda t, s, c, par: [s["/jointset/knee/knee_angle/speed"]], [-3], [3])
    study.solver.num_mesh_intervals = 2
    with pytest.raises(ValueError, match="path constraint 'knee_speed'.*limited-memory"):
        study.transcribe()
    settings = ml.SolverSettings(optim_hessian_approximation="exact")
    with pytest.raises(ValueError, match="optim_linear_solver='mumps'"):
        settings.validate()
    with pytest.raises(ValueError, match="optim_hessian_approximation 'newton'"):
        ml.SolverSettings(optim_hessian_approximation="newton").validate()


def test_joint_reaction_goals():
    """The JointReactionGoal's Hessian: quadratic in the reaction, whose own second derivatives (through the
    muscles' path geometry, the contact and the accelerations) come from the output's Hessian block."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    p.add_goal(ml.JointReactionGoal("knee_child", 0.3, joint_path="/jointset/knee", loads_frame="child",
                                    reaction_weights={"force-y": 2.0, "moment-z": 0.5}))
    p.add_goal(ml.JointReactionGoal("knee_parent", 0.2, joint_path="knee", expressed_in_frame_path="/ground",
                                    reaction_measures=["force-x", "force-y"]))
    study.solver.multibody_dynamics_mode = "implicit"
    study.solver.num_mesh_intervals = 3
    check_hessians(study.transcribe(), np.random.default_rng(16))


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_output_goals(mode):
    """Moco's output goals on muscle, contact and centre-of-mass outputs, on a free final time: a scalar to the power
    3 (``|v|³``), two outputs multiplied and divided, a vector's norm, its norm squared after a
    subtraction, a component tracking a cubic of time (its time derivatives enter), a smooth maximum; and the endpoint
    output goals (initial, final, periodicity; a cost and an endpoint constraint)."""
    from moco_lab.modeling.functions import PolynomialFunction

    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    # outputs that are not zero at the random points (a slack tendon's force is, and would hide its terms); weights
    # large enough that each goal's terms stand above the check's tolerance, which scales with the chunk's gradient
    p.add_goal(ml.OutputGoal("cube", 300.0, output_path="/forceset/vasti|lengthening_speed", exponent=3))
    p.add_goal(ml.OutputGoal("product", 2e3, output_path="/forceset/hams/length",
                             second_output_path="/forceset/hams/lengthening_speed", operation="multiplication",
                             exponent=2))
    p.add_goal(ml.OutputGoal("ratio", 1e3, output_path="/forceset/gas/length", second_output_path="/forceset/hams/length",
                             operation="division"))
    p.add_goal(ml.OutputGoal("com_speed", 500.0, output_path="|com_velocity"))
    p.add_goal(ml.OutputGoal("offset", 500.0, output_path="/forceset/heel/point", second_output_path="|com_position",
                             operation="subtraction", exponent=2))
    p.add_goal(ml.OutputTrackingGoal("height", 2e3, output_path="|com_position", output_index=1, exponent=2,
                                     tracking_function=PolynomialFunction([0.3, -0.2, 0.1, 0.9])))
    p.add_goal(ml.OutputExtremumGoal("peak", 700.0, output_path="/forceset/heel/force", output_index=1,
                                     extremum_type="maximum", smoothing_factor=0.5, exponent=2))
    # endpoint output goals: a norm squared at the end, a component cubed at the start, each end's norm's change
    # squared, and (as an endpoint constraint) the change of the product of two outputs
    p.add_goal(ml.FinalOutputGoal("final_speed", 300.0, output_path="|com_velocity", exponent=2))
    p.add_goal(ml.InitialOutputGoal("initial_height", 500.0, output_path="|com_position", output_index=1, exponent=3))
    p.add_goal(ml.OutputPeriodicityGoal("speed_change", 400.0, output_path="/forceset/heel/point",
                                        second_output_path="|com_position", operation="subtraction", exponent=2))
    p.add_goal(ml.OutputPeriodicityGoal("work", output_path="/forceset/hams/length",
                                        second_output_path="/forceset/hams/lengthening_speed",
                                        operation="multiplication", mode="endpoint_constraint", bounds=(-1.0, 1.0)))
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    check_hessians(study.transcribe(), np.random.default_rng(17))


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_output_path_constraints(mode):
    """Moco's output and frame-distance path constraints (rows at the mesh points) on a free final time: a scalar
    cubed, a vector's norm, two outputs multiplied and squared, and two frame pairs' distances projected onto a
    plane (one pair with ground)."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    p.add_path_constraint(ml.OutputConstraint("cube", output_path="/forceset/vasti|lengthening_speed", exponent=3,
                                              bounds=(-1, 1)))
    p.add_path_constraint(ml.OutputConstraint("speed", output_path="|com_velocity", bounds=(0, 3)))
    p.add_path_constraint(ml.OutputBoundConstraint("product", output_path="/forceset/hams/length",
                                                   second_output_path="/forceset/hams/lengthening_speed",
                                                   operation="multiplication", exponent=2, upper_bound=2.0))
    p.add_path_constraint(ml.FrameDistanceConstraint("apart", [("/ground", "/bodyset/shank", 0.1, 2.0),
                                                               ("/bodyset/thigh", "/bodyset/shank", 0.0, 1.0)],
                                                     projection="plane", projection_vector=(0.3, 1.0, 0.2)))
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    check_hessians(study.transcribe(), np.random.default_rng(17))


def check_both(study: ml.Study, seed: int, *, mode: str | None = None, intervals: int = 3) -> None:
    """Transcribe ``study`` (``intervals`` mesh intervals, chunks of 2; ``mode`` its multibody dynamics mode if
    given) and check each binding's exact Hessian (:func:`check_hessians`) and first derivatives
    (``check_bindings``) at random points drawn from ``seed`` and ``seed + 1``."""
    if mode is not None:
        study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = intervals
    study.solver.chunk_size = 2
    tr = study.transcribe()
    check_hessians(tr, np.random.default_rng(seed))
    check_bindings(tr, np.random.default_rng(seed + 1))


def test_translation_tracking():
    """Moco's translation, angular-velocity and orientation tracking on a free final time (the reference's slopes
    and curvature enter through time): two bodies' origins, one weighted, from a translation table; the shank's
    angular velocity (it depends on the speeds); both bodies' orientations; and a marker's final distance from a
    place. The first derivatives against central differences too (test_transcription_jacobians.check_bindings)."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    t = np.linspace(-0.53, 1.61, 13)  # beyond the time range, knots off the grid (no kinks to difference)
    wave = np.column_stack([0.1 * np.sin(3 * t), 0.8 + 0.05 * np.cos(2 * t), 0.02 * t])
    p.model.markers["toe"] = Marker("toe", "shank", (0.1, -0.46, 0.0))
    p.add_goal(ml.MarkerFinalGoal("reach", 200.0, point_name="/markerset/toe", reference_location=(0.3, 0.1, 0.05)))
    p.add_goal(ml.TranslationTrackingGoal("frames", 300.0, translation_reference=(t, {"/bodyset/thigh": wave,
                                                                                      "/bodyset/shank": wave - 0.4}),
                                          translation_weights={"/bodyset/shank": 2.0}))
    p.add_goal(ml.AngularVelocityTrackingGoal("spin", 40.0, angular_velocity_reference=(t, {
        "/bodyset/shank": np.column_stack([0.1 * t, -0.2 * t, 2.0 * np.sin(2.5 * t)]),
        "/bodyset/thigh": np.column_stack([0 * t, 0 * t, np.cos(t)])}), angular_velocity_weights={"/bodyset/thigh": 0.5}))
    # orientations: a quaternion wandering in 3-D for the shank (its angle to the planar leg's orientation stays away
    # from 0 and π), rotation matrices about z for the thigh
    quat = np.column_stack([np.cos(0.7 * t), 0.3 * np.sin(t), 0.2 + 0 * t, 0.5 * np.sin(0.4 * t + 0.3)])
    angle = 0.4 * np.sin(1.3 * t) - 0.2
    about_z = np.zeros((t.size, 3, 3))
    about_z[:, 0, 0] = about_z[:, 1, 1] = np.cos(angle)
    about_z[:, 1, 0], about_z[:, 0, 1], about_z[:, 2, 2] = np.sin(angle), -np.sin(angle), 1.0
    p.add_goal(ml.OrientationTrackingGoal("attitude", 25.0, rotation_reference=(t, {"/bodyset/shank": quat,
                                                                                     "/bodyset/thigh": about_z}),
                                          rotation_weights={"/bodyset/shank": 1.5}))
    check_both(study, 17)


def test_acceleration_tracking():
    """Moco's acceleration tracking (implicit dynamics: the accelerations are variables) on a free final time: both
    bodies in ground, and the shank as an accelerometer (gravity subtracted, in its own axes). First derivatives
    against central differences too."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    t = np.linspace(-0.53, 1.61, 13)
    wave = np.column_stack([2.0 * np.sin(3 * t), -1.0 + 0.5 * np.cos(2 * t), 0.2 * t])
    p.add_goal(ml.AccelerationTrackingGoal("ground", 0.3, acceleration_reference=(t, {"/bodyset/thigh": wave,
                                                                                       "/bodyset/shank": -wave}),
                                           acceleration_weights={"/bodyset/shank": 2.0}))
    p.add_goal(ml.AccelerationTrackingGoal("imu", 0.2, acceleration_reference=(t, {"/bodyset/shank": wave}),
                                           gravity_offset=True, express_accelerations_in_tracking_frames=True))
    check_both(study, 19, mode="implicit")


def test_generalized_force_tracking():
    """Moco's generalized-force tracking (implicit dynamics) on a free final time: what the motion needs beyond
    gravity, the muscles (a pattern), the contact spheres and the knee's passive moment, three coordinates tracked
    with weights by name and by pattern, errors normalized. First derivatives against central differences too."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    t = np.linspace(-0.53, 1.61, 13)
    reference = (t, {"py_force": 700 + 100 * np.sin(3 * t), "rz_moment": 20 * np.cos(2 * t),
                     "knee_angle_moment": -15 + 5 * t})
    p.add_goal(ml.GeneralizedForceTrackingGoal("tau", 0.7, reference=reference,
                                               force_paths=["/forceset/(vasti|hams|gas)", "/forceset/heel",
                                                            "/forceset/toe", "/forceset/knee_rom"],
                                               generalized_force_weights={"rz_moment": 2.0},
                                               generalized_force_weights_pattern={"knee.*": 0.3},
                                               normalize_tracking_error=True))
    check_both(study, 21, mode="implicit")


@pytest.mark.parametrize("goal, tendon, mode", [("force", "explicit", "endpoint_constraint"),
                                                ("force", "explicit", "cost"),
                                                ("velocity", "explicit", "endpoint_constraint"),
                                                ("velocity", "implicit", "cost")])
def test_initial_muscle_equilibria(goal, tendon, mode):
    """Moco's initial force and velocity equilibria of the leg's muscles with compliant tendons, as endpoint
    constraints (one row per muscle) and as costs. First derivatives against central differences too."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=False, tendon=tendon), goals=False)
    # the ranges test_compliant_tendons_and_parameters keeps the explicit tendons' fiber velocities finite in
    p.set_state_info("/jointset/knee/knee_angle/value", (-0.6, -0.3))
    p.set_state_info("/jointset/base/rz/value", (-0.1, 0.1))
    kind = ml.InitialForceEquilibriumDGFGoal if goal == "force" else ml.InitialVelocityEquilibriumDGFGoal
    p.add_goal(kind("equilibrium", 3.0 if goal == "force" else 1e-4, mode=mode))
    check_both(study, 23, mode="implicit", intervals=2)


def test_contact_impulse_tracking():
    """Moco's contact-impulse tracking (the integral of the contact force's vertical error, squared: an endpoint
    function of the goal's integral) on a free final time, one group of two contact elements. First derivatives
    against central differences too."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    t = np.linspace(-0.53, 1.61, 13)
    p.add_goal(ml.ContactImpulseTrackingGoal("impulse", 0.4, reference=(t, {"fx": 10 * t, "fy": 500 + 50 * np.sin(t),
                                                                            "fz": 0 * t}),
                                             groups=[(["/forceset/heel", "/forceset/toe"], ("fx", "fy", "fz"))],
                                             impulse_axis=1))
    check_both(study, 25)


def test_step_length_asymmetry():
    """Moco's step-length asymmetry (its smoothed conditionals on the feet's lead, 100 × the integral) with the leg's
    two bodies as the "feet", smoothing low enough that the conditionals are not saturated at the random points.
    First derivatives against central differences too."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    p.add_goal(ml.StepLengthAsymmetryGoal("steps", 0.3, left_foot_frame="/bodyset/thigh",
                                          right_foot_frame="/bodyset/shank", asymmetry_smoothing=0.02,
                                          target_asymmetry=0.2, stride_length=0.8, walking_direction="negative-y"))
    check_both(study, 27)


def test_step_time_asymmetry():
    """Moco's step-time asymmetry (smoothed contact detection of two groups, the foot ahead, the mean over the
    motion: an endpoint function of the integral and both times) on a free final time, the leg's contact elements as
    the two "feet" with smoothings low enough for differences. First derivatives against central differences too."""
    study = exact(ml.Study())
    model = leg_model(contact=True)
    model.add_force_element(SmoothSphereHalfSpaceForce("/forceset/ball", "thigh", (0.05, -0.3, 0.0), 0.04,
                                                       stiffness=1e6, dissipation=2.0, static_friction=0.8,
                                                       dynamic_friction=0.8, viscous_friction=0.5,
                                                       transition_velocity=0.2))
    p = study.problem = leg_problem(model, goals=False)
    p.add_goal(ml.StepTimeAsymmetryGoal("steps", 0.3, left_contact_group=(["/forceset/heel"], "/forceset/heel"),
                                        right_contact_group=(["/forceset/ball"], "/forceset/ball"),
                                        target_asymmetry=0.1, contact_force_threshold=5.0,
                                        contact_detection_smoothing=0.01, asymmetry_smoothing=0.5))
    check_both(study, 29)


@pytest.mark.parametrize("tendon, mode, smoothing", [("rigid", "explicit", "tanh"), ("implicit", "implicit", "tanh"),
                                                     ("rigid", "implicit", "huber")])
def test_metabolic_energy_goal(tendon, mode, smoothing):
    """OpenSim's smoothed Bhargava 2004 metabolics of the leg's three muscles (one with the force-dependent
    shortening constant and no negative work) minimized through an OutputGoal, divided by the distance travelled;
    smoothed by tanh or by OpenSim's Huber-loss conditional."""
    model = leg_model(contact=False, tendon=tendon)
    metabolics = ml.Bhargava2004SmoothedMuscleMetabolics("/metabolics", use_smoothing=True, velocity_smoothing=2.0,
                                                         power_smoothing=0.5, heat_rate_smoothing=0.5,
                                                         smoothing_type=smoothing)
    for name in ("vasti", "hams", "gas"):
        metabolics.add_muscle(f"/forceset/{name}")
    model.add_force_element(metabolics)
    other = ml.Bhargava2004SmoothedMuscleMetabolics("/metabolics_other", use_smoothing=True, velocity_smoothing=2.0,
                                                    use_force_dependent_shortening_prop_constant=True,
                                                    include_negative_mechanical_work=False)
    other.add_muscle("/forceset/vasti", ratio_slow_twitch_fibers=0.3, provided_muscle_mass=1.2)
    model.add_force_element(other)
    study = exact(ml.Study())
    p = study.problem = leg_problem(model, goals=False)
    p.set_state_info("/jointset/knee/knee_angle/value", (-0.6, -0.3))
    p.set_state_info("/jointset/base/rz/value", (-0.1, 0.1))
    p.add_goal(ml.OutputGoal("energy", 1e-3, output_path="/metabolics/total_metabolic_rate",
                             divide_by_displacement=True))
    p.add_goal(ml.OutputGoal("other", 1e-3, output_path="/metabolics_other/muscle_metabolic_rate_vasti"))
    check_both(study, 31, mode=mode, intervals=2)


def test_parameter_expression_goal():
    """Moco's expression of parameters (the legs' muscle strengths and a body mass), as a cost and as an endpoint
    constraint, with the smooth functions of OpenSim's expression language."""
    study = exact(ml.Study())
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    p.add_parameter("f_vasti", "/forceset/vasti/max_isometric_force", (500.0, 3000.0))
    p.add_parameter("m_shank", "/bodyset/shank/mass", (2.0, 5.0))
    p.add_goal(ml.ExpressionBasedParameterGoal("cost", 3.0, "square(f/1000 - 1.5)*m + sqrt(m)*exp(-f/2000) + sin(m)",
                                               parameters={"f": "f_vasti", "m": "m_shank"}))
    p.add_goal(ml.ExpressionBasedParameterGoal("limit", expression="f*m/1000 + atan(m)^2", mode="endpoint_constraint",
                                               bounds=(0.0, 20.0), parameters={"f": "f_vasti", "m": "m_shank"}))
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    check_hessians(study.transcribe(), np.random.default_rng(17))



@pytest.mark.parametrize("method", ["Posa2016", "Bordalba2023"])
def test_equal_chunks_share_their_structures(method):
    """Chunks with equal signatures (the same rows owned, the same kinematic, projection and path rows) get their
    Jacobian and Hessian structures from one structure run: here each chunk's shared structures equal the ones its
    own run finds, entry for entry, and fewer runs than chunks were made (the first, middle and last chunks of
    a constrained model with a path constraint and an integral cost differ; Bordalba's projection rows read each
    grid point's data, so those chunks are told apart by their points)."""
    study = exact(ml.examples.parabola_study("move", w_lambda=0.5))
    study.solver.kinematic_constraint_method = method
    study.solver.num_mesh_intervals = 6
    study.solver.chunk_size = 1
    # the centre of mass' distance from the origin (its speed's norm would have a kink where the bead starts at rest)
    study.problem.add_path_constraint(ml.OutputConstraint("reach", output_path="|com_position", bounds=(0, 30)))
    tr = study.transcribe()
    assert len(tr.chunks) == 6
    store = tr.__dict__["_chunk_structures"]
    runs = {what: sum(1 for k in store if k[0] == what) for what in ("jacobian", "hessian", "cost hessian")}
    signatures = {c.signature() for c in tr.chunks}
    assert runs["jacobian"] == runs["hessian"] == len(signatures)
    assert len(signatures) == (6 if method == "Bordalba2023" else 2)   # Posa: the last chunk owns its last point
    for c in tr.chunks:
        assert c.sparsity == c._find_structure()
        h = c.hessian
        for (rows, cols), (r2, c2) in (((h.rows, h.cols), h._structure(h._constraint_dense, c.nvar, c.nout)),
                                       ((h.cost_rows, h.cost_cols), h._structure(h._cost_dense, c.cost_vars.size, 1))):
            assert np.array_equal(rows, r2) and np.array_equal(cols, c2)
    check_bindings(tr, np.random.default_rng(21))
    check_hessians(tr, np.random.default_rng(22))


def _exact_parabola_with_a_parameter(mode: str) -> Transcription:
    study = exact(ml.examples.parabola_study("move", w_lambda=0.5))
    study.problem.add_parameter("mass", "/bodyset/body/mass", (0.5, 2.0))
    study.solver.multibody_dynamics_mode = mode
    study.solver.kinematic_constraint_method = "Posa2016"
    study.solver.num_mesh_intervals = 3
    return study.transcribe()


@pytest.mark.parametrize("case", ["prescribed", "posa-implicit", "tendons-parameters", "squat"])
def test_dynamics_hessian_read_from_sparse_entries_as_dense(case):
    """In implicit and prescribed modes DynamicsHessian reads its entries straight from the kernels' sparse Hessian
    entries; they equal, bit for bit, the dense per-node Hessians it reads in explicit mode (one kernel Hessian, two
    with kinematic constraints; node, node-parameter and parameter-parameter entries; the squat's coupler, whose
    kinematic terms have no second derivatives: a kernel Hessian without entries)."""
    from moco_lab.engine.hessian import DynamicsHessian, _Values, node_dynamics_hessian, node_dynamics_hessian_terms

    if case == "prescribed":
        tr = prescribed_leg(optim_linear_solver="mumps", optim_hessian_approximation="exact")
    elif case == "squat":
        study = ml.examples.squat_to_stand_study(num_mesh_intervals=4)
        study.solver.set_hessian_approximation("exact")
        tr = study.transcribe()
    elif case == "posa-implicit":
        tr = _exact_parabola_with_a_parameter("implicit")
    else:
        study = exact(ml.Study())
        p = study.problem = leg_problem(leg_model(contact=False, tendon="implicit"), goals=False)
        p.add_parameter("mass", "/bodyset/shank/mass", (2, 5))
        p.add_parameter("fmax", "/forceset/vasti/max_isometric_force", (2000, 4000))
        p.add_parameter("lopt", "/forceset/vasti/optimal_fiber_length", (0.08, 0.1))   # second derivatives in it
        study.solver.num_mesh_intervals = 2
        study.solver.multibody_dynamics_mode = "implicit"
        tr = study.transcribe()
    group = next(g for g in tr.exact_callbacks.grouped if isinstance(g, DynamicsHessian))
    rng = np.random.default_rng(21)
    x = random_point(tr, rng)
    _, _, P, B = tr.split_full(x)
    ng = tr.grid.num_points
    g_all = np.arange(ng)
    dyn = tr.node_dynamics(g_all, B, P, True)
    weights = (rng.uniform(-1, 1, (ng, tr.ny)), rng.uniform(-1, 1, (ng, tr.nres)),
               rng.uniform(-1, 1, (ng, tr.nkin)) if tr.nkin else None, None)
    pieces, Ap = node_dynamics_hessian_terms(tr, _Values(tr), g_all, B, P, dyn, *weights)
    assert Ap is None and len(pieces) == (2 if case in ("posa-implicit", "squat") else 1)
    if case == "squat":
        assert pieces[1][1].shape[1] == 0
    sparse, dense = np.zeros(group.rows.size), np.zeros(group.rows.size)
    group._gather(sparse, pieces)
    group._gather_dense(dense, node_dynamics_hessian(tr, _Values(tr), g_all, B, P, dyn, *weights))
    assert np.count_nonzero(dense) > 0
    assert np.count_nonzero(dense[group._m_node_p]) > 0 or case in ("prescribed", "squat")   # (no parameters)
    assert np.array_equal(sparse, dense)
    assert group._m_pp.size > 0 or case != "tendons-parameters"


@pytest.mark.parametrize("case", ["prescribed", "effort-and-time", "tracking"])
def test_integral_costs_hessian_from_pairs_as_dense(case, monkeypatch):
    """IntegralCostsHessian reads a cost's second derivatives from its pairs of variables when it has no others
    (an effort, a state's tracking); the entries equal, bit for bit, those it reads from the dense per-node
    Hessians."""
    from moco_lab.engine import hessian

    if case == "prescribed":
        tr = prescribed_leg(optim_linear_solver="mumps", optim_hessian_approximation="exact")
    else:
        study = exact(ml.Study())
        p = study.problem = leg_problem(leg_model(contact=True), goals=False)
        if case == "tracking":
            t = np.linspace(-0.5, 1.6, 13)
            p.add_goal(ml.StateTrackingGoal("track", 2.0, reference=(t, {"/jointset/knee/knee_angle/value": -t})))
        study.solver.num_mesh_intervals = 3
        tr = study.transcribe()
    group = next(g for g in tr.exact_callbacks.grouped if isinstance(g, hessian.IntegralCostsHessian))
    x = random_point(tr, np.random.default_rng(22))
    tr.cache.update(x)
    pairs = group.values(x, 1.3)
    dense_only = hessian.integrand_hessian
    monkeypatch.setattr(hessian, "integrand_hessian", lambda *a, **k: dense_only(*a, **{**k, "sparse": False}))
    dense = group.values(x, 1.3)
    assert np.count_nonzero(dense) > 0 and np.array_equal(pairs, dense)


def test_explicit_elimination_and_endpoint_products_skip_only_zeros():
    """Explicit mode's elimination of u̇ multiplies only the rows of H_xu̇ with a non-zero and adds the u̇-u̇ term only
    where there is one; an endpoint goal's Tᵀ HJ T runs only over the seeds HJ touches. Both are the full products'
    numbers, bit for bit (every term left out is a product with a zero factor), with and without the u̇-u̇ block."""
    from moco_lab.engine.hessian import _congruence, _reduce_explicit
    from moco_lab.symbolic import batched

    rng = np.random.default_rng(31)
    n, e, nq = 5, 12, 3
    for with_aa in (False, True):
        H = rng.standard_normal((n, e + nq, e + nq))
        H = H + np.transpose(H, (0, 2, 1))
        H[:, 4:e, e:] = 0.0     # only rows 0-3 of H_xu̇ (and their mirror) have entries
        H[:, e:, 4:e] = 0.0
        if not with_aa:
            H[:, e:, e:] = 0.0
        Ap = rng.standard_normal((n, nq, e))
        Hxa = H[:, :e, e:]
        T = batched.matmul(Hxa, Ap)
        full = (H[:, :e, :e] + T + np.transpose(T, (0, 2, 1))
                + batched.matmul(np.transpose(Ap, (0, 2, 1)), batched.matmul(H[:, e:, e:], Ap)))
        assert np.array_equal(_reduce_explicit(H, Ap), full)
    # the endpoint's product (EndpointHessian._dense), seeds 1, 4 and 6 of 9 touched; and none
    for used in (np.array([1, 4, 6]), np.zeros(0, int)):
        HJ = np.zeros((9, 9))
        HJ[np.ix_(used, used)] = rng.standard_normal((used.size, used.size))
        HJ = HJ + HJ.T
        Tm = rng.standard_normal((9, 7))
        assert np.array_equal(_congruence(Tm, HJ), batched.matmul(Tm.T, batched.matmul(HJ, Tm)))


def test_squat_solves_with_the_exact_hessian():
    """A whole solve with the exact Hessian on the squat (muscles on wrapped paths, the patella's coupler: a kinematic
    term without second derivatives) reaches the limited-memory run's optimum. At N = 10 and tolerances 1e-6 both
    stop at 1.5260993 (measured: exact 44 iterations, limited-memory 115; objectives 2e-8 apart), so 1e-6 relative
    is the tolerances' own scale."""
    objectives = {}
    for approximation in ("exact", "limited-memory"):
        study = ml.examples.squat_to_stand_study(num_mesh_intervals=10)
        study.solver.set_hessian_approximation(approximation)
        study.solver.optim_linear_solver = "mumps"
        study.solver.optim_convergence_tolerance = study.solver.optim_constraint_tolerance = 1e-6
        solution = study.solve()
        assert solution.success, (approximation, solution.message)
        objectives[approximation] = solution.objective
    assert objectives["exact"] == pytest.approx(objectives["limited-memory"], rel=1e-6)
