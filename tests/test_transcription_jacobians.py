"""Every binding of the transcription: exact Jacobians against finite differences, declared sparsity against
the Jacobian's true non-zeros.

For each configuration (scheme × dynamics mode × kinematic-constraint method × muscles / contact / parameters /
goals with outputs / prescribed kinematics) the program's Python bindings (dynamics chunks, goal endpoints, costs)
are evaluated at a random point inside the bounds:

* the Jacobian each returns matches central differences of its values (h = 1e-6, tolerance 1e-5 relative to
  max(1, |entry|) plus round-off 1e-9·scale/h: central differences of these smooth functions are accurate to
  ~1e-8, so a wrong entry — a missing chain-rule term, a sign — stands out by orders of magnitude);
* every non-zero of that Jacobian is declared in the binding's sparsity pattern (an undeclared entry would be
  dropped by IPOPT: a silent wrong gradient), and the declared pattern has at most 1.2 times as many entries
  as the union of the non-zeros found at three random points (the issue's bound: declaring much more than the
  structure costs factorization time).
"""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.engine.transcription import PrescribedKinematics, Transcription
from moco_lab.modeling.contact import Gait2dContactPoint, SmoothSphereHalfSpaceForce
from moco_lab.modeling.muscle import DeGrooteFregly2016Muscle
from moco_lab.modeling.passive import PassiveJointMoment


def leg_model(contact: bool = True, tendon: str = "rigid"):
    """A planar two-segment leg on a planar base, 3 muscles (one biarticular), contact at the foot."""
    b = ml.ModelBuilder("leg", gravity=(0, -9.81, 0))
    b.add_body("thigh", 7.5, com=(0, -0.19, 0), inertia=(0.15, 0.02, 0.15))
    b.add_planar_joint("base", "ground", "thigh", coordinates=("px", "py", "rz"),
                       ranges=[(-1, 1), (0.3, 1.2), (-1, 1)])
    b.add_body("shank", 3.5, com=(0, -0.19, 0), inertia=(0.06, 0.01, 0.06))
    b.add_pin_joint("knee", "thigh", "shank", coordinate="knee_angle", parent_offset=(0, -0.44, 0), range=(-2, 0.2))

    def muscle(name, fmax, lopt, lslack):
        kw = dict(ignore_tendon_compliance=tendon == "rigid")
        if tendon != "rigid":
            kw["tendon_compliance_dynamics_mode"] = tendon
        return DeGrooteFregly2016Muscle(name=name, max_isometric_force=fmax, optimal_fiber_length=lopt,
                                        tendon_slack_length=lslack, **kw)

    b.add_muscle(muscle("vasti", 3000, 0.09, 0.22), [("thigh", (0.03, -0.2, 0)), ("thigh", (0.05, -0.42, 0)),
                                                     ("shank", (0.04, -0.07, 0))])
    b.add_muscle(muscle("hams", 2000, 0.10, 0.39), [("thigh", (-0.05, 0.0, 0)), ("shank", (-0.03, -0.05, 0))])
    b.add_muscle(muscle("gas", 1500, 0.06, 0.365), [("thigh", (-0.02, -0.40, 0)), ("shank", (-0.03, -0.4, 0))])
    b.add_force_element(PassiveJointMoment("/forceset/knee_rom", "knee_angle", -1.9, 0.05))
    if contact:
        b.add_force_element(SmoothSphereHalfSpaceForce("/forceset/heel", "shank", (0.0, -0.44, 0.0), 0.03,
                                                       stiffness=3e6, dissipation=2.0, static_friction=0.8,
                                                       dynamic_friction=0.8, viscous_friction=0.5,
                                                       transition_velocity=0.2))
        b.add_force_element(Gait2dContactPoint("/forceset/toe", "shank", (0.1, -0.46, 0.0)))
    model = b.build()
    model.add_force_element(ml.CoordinateActuator("/forceset/tau_knee", "knee_angle", 50.0, -1, 1))
    model.add_force_element(ml.CoordinateActuator("/forceset/tau_rz", "rz", 50.0, -1, 1))
    return model


def leg_problem(model, goals=True):
    p = ml.Problem()
    p.set_model(model)
    p.set_time_bounds(0, (0.2, 1.0))
    p.set_state_info("/jointset/base/py/value", (0.3, 1.2), 0.9)
    p.add_goal(ml.ControlGoal("effort", 1.0, exponent=3))
    p.add_goal(ml.FinalTimeGoal("time", 0.1))
    if goals:
        p.add_goal(ml.AverageSpeedGoal("speed", 0.3, mode="endpoint_constraint", bounds=(-0.5, 0.5)))
        p.add_goal(ml.ControlGoal("per_distance", 0.5, divide_by_displacement=True))
        t = np.linspace(-0.53, 1.61, 13)  # beyond the time range, knots off the grid (no kinks to difference)
        p.add_goal(ml.ContactTrackingGoal("grf", 0.1, reference=(t, {"fx": 10 * t, "fy": 500 + 50 * t, "fz": 5 + 0 * t}),
                                          groups=[(["/forceset/heel", "/forceset/toe"], ("fx", "fy", "fz"))],
                                          projection="plane", projection_vector=(0, 0, 1),
                                          normalize_tracking_error=True,
                                          scale_factors=[{"name": "grf_scale_x", "group": 0, "index": 0,
                                                          "bounds": (0.5, 1.5)},
                                                         {"name": "grf_scale_y", "group": 0, "index": 1,
                                                          "bounds": (0.8, 1.2)}]))
        p.add_goal(ml.MarkerTrackingGoal("markers", 1.0, markers={"knee": ("shank", (0, 0, 0)),
                                                                  "toe": ("shank", (0.1, -0.46, 0))},
                                         reference=(t, {"knee_x": 0.1 * t, "knee_y": 0.5 + 0 * t,
                                                        "toe_x": 0.2 * t, "toe_y": 0.05 + 0 * t})))
        p.add_goal(ml.StateTrackingGoal("track", 2.0, reference=(t, {"/jointset/knee/knee_angle/value": -t})))
        p.add_goal(ml.ControlTrackingGoal("emg", 3.0, reference=(t, {"envelope": 0.2 + 0.1 * t * t}),
                                          reference_labels={"/forceset/tau_rz": "envelope"}))
    return p


def random_point(tr: Transcription, rng) -> np.ndarray:
    """A random point inside the bounds (times ordered), as a full decision vector."""
    prog = tr.prog
    x = rng.uniform(-0.5, 0.5, prog.num_vars())
    for b in prog.bounding_box_constraints():
        idx = np.asarray(prog.FindDecisionVariableIndices(b.variables()), int)
        lo, hi = b.evaluator().lower_bound(), b.evaluator().upper_bound()
        lo_f = np.where(np.isfinite(lo), lo, -1.0)
        hi_f = np.where(np.isfinite(hi), hi, 1.0)
        lo_f, hi_f = np.minimum(lo_f, hi_f), np.maximum(lo_f, hi_f)
        span = hi_f - lo_f
        x[idx] = lo_f + span * rng.uniform(0.2, 0.8, idx.size)
    # muscle states where the muscle equations are well inside their domain (explicit tendon dynamics divide
    # by a·f_L and overflow far from it)
    for k, name in enumerate(tr.state_names):
        if name.endswith(("/activation", "/normalized_tendon_force")):
            lo, hi = (0.3, 0.8) if name.endswith("/activation") else (0.2, 0.6)
            idx = np.asarray(prog.FindDecisionVariableIndices(tr.Y[:, k]), int)
            x[idx] = rng.uniform(lo, hi, idx.size)
    t0 = x[prog.FindDecisionVariableIndex(tr.t0)]
    tf = prog.FindDecisionVariableIndex(tr.tf)
    x[tf] = max(x[tf], t0 + 0.3)
    return x


def check_bindings(tr: Transcription, rng, sparsity_ratio: float = 1.2):
    prog = tr.prog
    points = [random_point(tr, rng) for _ in range(3)]
    checked = 0
    for binding in list(prog.GetAllConstraints()) + list(prog.GetAllCosts()):
        ev = binding.evaluator()
        if type(ev).__name__ not in ("PyFunctionConstraint", "PyFunctionCost"):
            continue
        idx = np.asarray(prog.FindDecisionVariableIndices(binding.variables()), int)
        from pydrake.autodiffutils import ExtractGradient, InitializeAutoDiff

        union = None
        for x in points:
            z = x[idx]
            J = ExtractGradient(ev.Eval(InitializeAutoDiff(z)))
            nz = np.abs(J) > 0
            union = nz if union is None else (union | nz)
        z = points[0][idx]
        J = ExtractGradient(ev.Eval(InitializeAutoDiff(z)))
        f0 = np.atleast_1d(ev.Eval(z))
        assert np.all(np.isfinite(J)) and np.all(np.isfinite(f0)), ev.get_description()
        h = 1e-6
        scale = max(1.0, float(np.max(np.abs(f0))))
        for j in range(z.size):
            zp, zm = z.copy(), z.copy()
            zp[j] += h
            zm[j] -= h
            fd = (np.atleast_1d(ev.Eval(zp)) - np.atleast_1d(ev.Eval(zm))) / (2 * h)
            assert np.all(np.isfinite(fd)), (ev.get_description(), j)
            tol = 1e-5 * np.maximum(1.0, np.abs(J[:, j])) + 1e-9 * scale / h
            bad = np.abs(fd - J[:, j]) > tol
            assert not np.any(bad), (ev.get_description(), j, np.flatnonzero(bad)[:5],
                                     np.abs(fd - J[:, j]).max())
        pattern = ev.gradient_sparsity_pattern()
        if pattern is not None:
            declared = np.zeros_like(union)
            if pattern:
                r, c = zip(*pattern)
                declared[list(r), list(c)] = True
            missing = union & ~declared
            assert not np.any(missing), (ev.get_description(), np.argwhere(missing)[:5])
            assert declared.sum() <= sparsity_ratio * union.sum(), (ev.get_description(), declared.sum(), union.sum())
        checked += 1
    assert checked > 0
    return checked


CASES = [
    ("hermite-simpson", "explicit"), ("hermite-simpson", "implicit"), ("trapezoidal", "explicit"),
    ("trapezoidal", "implicit"), ("legendre-gauss-3", "explicit"), ("legendre-gauss-radau-2", "implicit"),
]


@pytest.mark.parametrize("scheme, mode", CASES)
def test_muscles_contact_and_goals_with_outputs(scheme, mode):
    model = leg_model(contact=True)
    study = ml.Study()
    study.problem = leg_problem(model, goals=True)
    study.solver.transcription_scheme = scheme
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    check_bindings(study.transcribe(), np.random.default_rng(1))


def scale_factor_problem():
    """The leg's contact force tracked alone (so that the cost binding's size leaves the scale factors' terms
    visible to the finite differences), with Moco's scale factors on two components of the reference."""
    p = ml.Problem()
    p.set_model(leg_model(contact=True))
    p.set_time_bounds(0, (0.2, 1.0))
    p.set_state_info("/jointset/base/py/value", (0.3, 1.2), 0.9)
    t = np.linspace(-0.53, 1.61, 13)
    p.add_goal(ml.ContactTrackingGoal("grf", 1.0, reference=(t, {"fx": 10 * t, "fy": 500 + 50 * t, "fz": 5 + 0 * t}),
                                      groups=[(["/forceset/heel", "/forceset/toe"], ("fx", "fy", "fz"))],
                                      projection="plane", projection_vector=(0, 0, 1),
                                      scale_factors=[{"name": "sx", "group": 0, "index": 0, "bounds": (0.5, 1.5)},
                                                     {"name": "sy", "group": 0, "index": 1, "bounds": (0.8, 1.2)}]))
    return p


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_contact_scale_factors(mode):
    study = ml.Study()
    study.problem = scale_factor_problem()
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    tr = study.transcribe()
    assert tr.param_names == ["sx", "sy"]
    check_bindings(tr, np.random.default_rng(4))


@pytest.mark.parametrize("tendon", ["explicit", "implicit"])
def test_compliant_tendons_and_parameters(tendon):
    model = leg_model(contact=False, tendon=tendon)
    study = ml.Study()
    p = study.problem = leg_problem(model, goals=False)
    # joint angles where the fibers stay near their optimal lengths (explicit tendon dynamics overflow far away)
    p.set_state_info("/jointset/knee/knee_angle/value", (-0.6, -0.3))
    p.set_state_info("/jointset/base/rz/value", (-0.1, 0.1))
    p.add_parameter("mass", "/bodyset/shank/mass", (2, 5))
    p.add_parameter("fmax", "/forceset/vasti/max_isometric_force", (2000, 4000))
    study.solver.num_mesh_intervals = 2
    study.solver.multibody_dynamics_mode = "implicit"
    study.solver.minimize_implicit_auxiliary_derivatives = tendon == "implicit"
    check_bindings(study.transcribe(), np.random.default_rng(2))


@pytest.mark.parametrize("scheme, method", [("hermite-simpson", "Posa2016"), ("hermite-simpson", "Bordalba2023"),
                                            ("trapezoidal", "Posa2016"), ("trapezoidal", "Bordalba2023"),
                                            ("legendre-gauss-2", "Bordalba2023"),
                                            ("legendre-gauss-radau-3", "Bordalba2023")])
@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_kinematic_constraints(scheme, method, mode):
    study = ml.examples.parabola_study("move", w_lambda=0.5)
    study.solver.transcription_scheme = scheme
    study.solver.multibody_dynamics_mode = mode
    study.solver.kinematic_constraint_method = method
    study.solver.num_mesh_intervals = 3
    check_bindings(study.transcribe(), np.random.default_rng(3))


def test_coupled_model_with_muscles_path_constraint_and_user_goal():
    model = ml.coupled_models.patella_knee()
    study = ml.Study()
    p = study.problem
    p.set_model(model)
    p.set_time_bounds(0, 0.5)
    p.add_goal(ml.ControlGoal("effort"))
    p.add_goal(ml.UserGoal("user", 0.3, integrand=lambda t, s, c, par: s["/jointset/knee/knee_angle/speed"] ** 2
                           + np.sin(s["/jointset/hip/hip_flexion/value"])))
    p.add_path_constraint("knee_speed", lambda t, s, c, par: [s["/jointset/knee/knee_angle/speed"] * np.cos(t)],
                          [-3], [3])
    study.solver.num_mesh_intervals = 2
    check_bindings(study.transcribe(), np.random.default_rng(4))


def prescribed_leg(goals=(), **settings) -> Transcription:
    """The leg with compliant tendons and contact, its kinematics prescribed (``Inverse``'s transcription), with
    ``goals`` added to its effort and initial-activation goals."""
    model = leg_model(contact=True, tendon="implicit")
    nq = model.nq

    def kin(t):
        t = np.asarray(t)[:, None]
        base = np.array([0.0, 0.9, 0.1, -0.5])
        return base + 0.1 * np.sin(3 * t + np.arange(nq)), 0.3 * np.cos(3 * t + np.arange(nq)), \
            -0.9 * np.sin(3 * t + np.arange(nq))

    p = ml.Problem()
    p.set_model(model)
    p.set_time_bounds(0, 0.4)
    p.add_goal(ml.ControlGoal("effort"))
    p.add_goal(ml.InitialActivationGoal())
    for goal in goals:
        p.add_goal(goal)
    options = ml.SolverSettings(num_mesh_intervals=3, minimize_implicit_auxiliary_derivatives=True, **settings)
    return Transcription(p, options, PrescribedKinematics(0.0, 0.4, kin))


def test_prescribed_kinematics():
    check_bindings(prescribed_leg(), np.random.default_rng(5))


@pytest.mark.parametrize("scheme", ["hermite-simpson", "trapezoidal"])
def test_joint_reaction_goals(scheme):
    """Moco's JointReactionGoal (implicit dynamics: the accelerations are variables) on the knee, loaded by the
    muscles' forces on the bones and the foot's contact, on the child in its own frame and on the parent in
    ground, with measure weights; its output's Jacobian through the muscles' path geometry."""
    study = ml.Study()
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    p.add_goal(ml.JointReactionGoal("knee_child", 0.3, joint_path="/jointset/knee", loads_frame="child",
                                    reaction_weights={"force-y": 2.0, "moment-z": 0.5}))
    p.add_goal(ml.JointReactionGoal("knee_parent", 0.2, joint_path="knee", expressed_in_frame_path="/ground",
                                    reaction_measures=["force-x", "force-y"]))
    study.solver.transcription_scheme = scheme
    study.solver.multibody_dynamics_mode = "implicit"
    study.solver.num_mesh_intervals = 3
    check_bindings(study.transcribe(), np.random.default_rng(4))


# ---------------------------------------------------------------- the chunks' Jacobians all at once (IPOPT's C path)
def check_grouped_jacobian(tr: Transcription, rng) -> None:
    """:class:`DynamicsJacobian` gives every chunk's rows and declared entries exactly as the chunk's own evaluation
    holds them as the optimizer calls it, with the node cache at the point (bit for bit: the same operations on the
    same node dynamics), from the node cache and without it; the IPOPT driver's rows and Jacobian with it equal
    the ones it assembles chunk by chunk."""
    from moco_lab.engine.jacobian import DynamicsJacobian
    from moco_lab.solve.ipopt_mumps import _Program

    assert DynamicsJacobian.covers(tr)
    group = DynamicsJacobian(tr)
    prog = tr.prog
    x = random_point(tr, rng)
    expected, rows = [], []
    tr.cache.update(x)
    for c, (r, col) in zip(tr.chunks, group.entries):
        declared = set(c.constraint_evaluator.gradient_sparsity_pattern())
        assert declared == set(zip(r.tolist(), col.tolist()))
        z = x[prog.FindDecisionVariableIndices(c.vars)]
        rows.append(c.constraint(z, False)[0])
        expected.append(c.constraint(z, True)[1][r, col])
    expected, rows = np.concatenate(expected), np.concatenate(rows)
    assert np.array_equal(group.values(x), expected)          # from the node cache
    assert np.array_equal(group.constraints(x), rows)
    tr.cache.x = None
    assert np.array_equal(group.values(x), expected)          # computing the node dynamics itself
    assert np.array_equal(group.constraints(x), rows)
    P = _Program(prog, tr.exact_callbacks)
    assert [g for g, _, _ in P.jacobian_groups] == tr.exact_callbacks.grouped_jacobians
    assert not any(id(t.evaluator) in set(group.evaluators) for t in P.jacobian_terms)
    grouped, grouped_rows = np.zeros(P.nnz), np.zeros(P.m)
    P.jacobian_at(x, grouped)
    P.constraints_at(x, grouped_rows)
    P.jacobian_terms, P.jacobian_groups = P.nonlinear, []
    one_by_one, one_by_one_rows = np.zeros(P.nnz), np.zeros(P.m)
    P.jacobian_at(x, one_by_one)
    P.constraints_at(x, one_by_one_rows)
    assert np.array_equal(grouped, one_by_one)
    assert np.array_equal(grouped_rows, one_by_one_rows)


def check_scattered_blocks(tr: Transcription, rng) -> None:
    """The node dynamics' derivative blocks scattered from the kernel's sparse entries (implicit and prescribed
    modes) equal the kernel's dense Jacobians placed group by group (``Kernel.evaluate(dense=True)``)."""
    x = random_point(tr, rng)
    _, _, P, B = tr.split_full(x)
    idx = np.arange(tr.grid.num_points)
    _, dF, dFp, _, dR, dRp, _ = tr.node_dynamics(idx, B, P, True)
    inp = tr.node_inputs(idx, B)
    res = tr.kernel.evaluate(inp["Q"], inp["U"], inp["X"], P, Z=inp["Z"], A=inp["A"], jac=True, W=inp["W"],
                             L=inp["L"], E=inp["E"], motion_fixed=tr.layout.prescribed)
    n, lay = idx.size, tr.layout
    zrows = slice(tr.ny - lay.nz, tr.ny)
    assert np.array_equal(dF[:, zrows], tr._block(res["JZ"], lay.nz, n))
    assert np.array_equal(dFp[:, zrows], res["JZ"]["dp"])
    assert np.array_equal(dR, np.concatenate([tr._block(res["J"], tr.nq, n), tr._block(res["JW"], lay.nw, n)], 1))
    assert np.array_equal(dRp, np.concatenate([res["J"]["dp"], res["JW"]["dp"]], axis=1))


def grouped_cases():
    """Transcriptions whose chunks hold defects, residuals and kinematic rows only: both modes and several schemes,
    parameters, compliant tendons, kinematic constraints by Posa's method (with a parameter), prescribed kinematics,
    partial integrals of goals on outputs — between them, every kind of entry :class:`DynamicsJacobian` gathers."""
    cases = {}
    # the leg alone, and with partial integrals (a goal divided by the displacement), goals on outputs, scale factors
    for goals, scheme, mode in [(False, "hermite-simpson", "explicit"), (False, "hermite-simpson", "implicit"),
                                (False, "trapezoidal", "implicit"), (False, "legendre-gauss-3", "implicit"),
                                (False, "legendre-gauss-radau-2", "explicit"), (True, "hermite-simpson", "explicit"),
                                (True, "trapezoidal", "implicit")]:
        study = ml.Study()
        study.problem = leg_problem(leg_model(contact=True), goals=goals)
        study.solver.transcription_scheme = scheme
        study.solver.multibody_dynamics_mode = mode
        study.solver.num_mesh_intervals = 3
        study.solver.chunk_size = 2
        cases[f"leg{'-goals' if goals else ''}-{scheme}-{mode}"] = study.transcribe
    for mode in ("explicit", "implicit"):
        def tendons_and_parameters(mode=mode):
            study = ml.Study()
            p = study.problem = leg_problem(leg_model(contact=False, tendon="implicit"), goals=False)
            p.set_state_info("/jointset/knee/knee_angle/value", (-0.6, -0.3))
            p.add_parameter("mass", "/bodyset/shank/mass", (2, 5))
            p.add_parameter("fmax", "/forceset/vasti/max_isometric_force", (2000, 4000))
            # a partial integral that reads a parameter (the centre of mass moves with the shank's mass)
            p.add_goal(ml.OutputGoal("com", 0.5, output_path="/com_position", output_index=1, exponent=2,
                                     divide_by_duration=True))
            study.solver.num_mesh_intervals = 2
            study.solver.multibody_dynamics_mode = mode
            return study.transcribe()
        cases[f"tendons-parameters-{mode}"] = tendons_and_parameters

        def posa(mode=mode):
            study = ml.examples.parabola_study("move", w_lambda=0.5)
            study.problem.add_parameter("mass", "/bodyset/body/mass", (0.5, 2.0))   # φ̈'s rows read it (explicit)
            study.solver.multibody_dynamics_mode = mode
            study.solver.kinematic_constraint_method = "Posa2016"
            study.solver.num_mesh_intervals = 3
            return study.transcribe()
        cases[f"posa-{mode}"] = posa
    cases["prescribed"] = prescribed_leg
    return cases


GROUPED = grouped_cases()


@pytest.mark.parametrize("case", sorted(GROUPED))
def test_chunk_jacobians_all_at_once(case):
    tr = GROUPED[case]()
    check_grouped_jacobian(tr, np.random.default_rng(6))
    if tr.mode != "explicit":
        check_scattered_blocks(tr, np.random.default_rng(7))


def test_chunks_with_path_rows_keep_their_own_jacobians():
    """Output path rows are not gathered: the chunks are evaluated one by one, and DynamicsJacobian refuses such a
    transcription."""
    from moco_lab.engine.jacobian import DynamicsJacobian

    study = ml.Study()
    p = study.problem = leg_problem(leg_model(contact=True), goals=False)
    p.add_path_constraint(ml.OutputConstraint("com", "/com_position", output_index=1, bounds=(-5.0, 5.0)))
    study.solver.num_mesh_intervals = 3
    tr = study.transcribe()
    assert any(c.npath for c in tr.chunks)
    assert not DynamicsJacobian.covers(tr) and not tr.exact_callbacks.grouped_jacobians
    with pytest.raises(ValueError, match="path rows"):
        DynamicsJacobian(tr)


def test_grouped_cases_cover_every_kind_of_entry():
    from moco_lab.engine import jacobian

    kinds = {name: getattr(jacobian, name) for name in dir(jacobian)
             if name.startswith(("_DEFECT_", "_RES_", "_KIN_", "_INT_"))}
    seen = set()
    for make in GROUPED.values():
        group = jacobian.DynamicsJacobian(make())
        seen |= {code for code, m in group._m.items() if m.size}
    assert seen == set(kinds.values()), {name for name, code in kinds.items() if code not in seen}


def test_chunk_variable_indices_are_drakes():
    """Each chunk's variable indices (worked out from the grid's) are Drake's own lookups of its variables: with
    parameters, partial integrals (a goal divided by the displacement) and prescribed kinematics."""
    study = ml.Study()
    study.problem = leg_problem(leg_model(contact=True), goals=True)
    study.solver.num_mesh_intervals = 3
    for tr in (study.transcribe(), GROUPED["tendons-parameters-implicit"](), GROUPED["prescribed"]()):
        prog = tr.prog
        for c in tr.chunks:
            assert np.array_equal(c.var_index, prog.FindDecisionVariableIndices(c.node_vars))
            assert np.array_equal(c.cost_index, prog.FindDecisionVariableIndices(c.cost_vars))
            assert np.array_equal(c.var_full_index, prog.FindDecisionVariableIndices(c.vars))


def test_the_optimizer_gets_drakes_variable_indices():
    """The indices the transcription hands the IPOPT driver for its own bindings (chunks, costs, bounds, the node
    cache) are Drake's lookups of those bindings' variables."""
    from moco_lab.solve.ipopt_mumps import _binding_indices

    study = ml.Study()
    study.problem = leg_problem(leg_model(contact=True), goals=True)
    study.solver.num_mesh_intervals = 3
    for tr in (study.transcribe(), GROUPED["prescribed"]()):
        prog = tr.prog
        bindings = (*prog.bounding_box_constraints(), *prog.GetAllConstraints(), *prog.GetAllCosts(),
                    *prog.visualization_callbacks())
        given = {id(ev) for ev, _ in tr.exact_callbacks.indices.values()}
        assert sum(id(b.evaluator()) in given for b in bindings) >= len(tr.chunks) + 2
        for b, idx in zip(bindings, _binding_indices(prog, bindings, tr.exact_callbacks.indices)):
            assert np.array_equal(idx, prog.FindDecisionVariableIndices(b.variables()))
