"""The Moco paper's squat-to-stand model and studies (moco_lab.models.squat_to_stand, ml.examples.squat_to_stand_study).

The comparison with OpenSim Moco 4.6 uses the stored reference of benchmarks/squat_to_stand.py (Moco takes minutes);
the model edits are checked against OpenSim directly when it is installed."""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.osim import read_osim
from moco_lab.modeling.squat import RENAMED, squat_to_stand_osim
from moco_lab.util.config import fast_mode


def test_model_is_the_papers():
    model = ml.models.squat_to_stand()
    coords = {c.name: c for c in model.coordinates}
    assert set(coords) == {"hip_extension_r", "knee_extension_r", "knee_extension_r_beta", "ankle_plantarflexion_r",
                           "lumbar_extension"}
    assert coords["lumbar_extension"].path == "/jointset/back/lumbar_extension"
    assert coords["lumbar_extension"].range == (-1.57079633, 1.57079633)
    assert model.control_names()[0] == "/forceset/lumbar_extension"
    lumbar = model.actuators[0]
    assert (lumbar.optimal_force, lumbar.min_control, lumbar.max_control) == (100.0, -1.0, 1.0)
    # the muscles: the file's, converted, forces doubled, passive force off, implicit tendon dynamics where compliant
    original = {m.muscle.name: m.muscle for m in read_osim("squatToStand_3dof9musc.osim", replace_millard=True).muscles}
    compliant = []
    for m in model.muscles:
        o = original[m.muscle.name]
        assert m.muscle.max_isometric_force == 2 * o.max_isometric_force
        assert m.muscle.ignore_passive_fiber_force and not o.ignore_passive_fiber_force
        assert m.muscle.tendon_compliance_dynamics_mode == "implicit"
        assert m.muscle.ignore_tendon_compliance == o.ignore_tendon_compliance
        if not m.muscle.ignore_tendon_compliance:
            compliant.append(m.muscle.name)
        assert (m.muscle.min_control, m.muscle.max_control) == (0.01, 1.0)
    assert sorted(compliant) == ["med_gas_r", "rect_fem_r", "semimem_r", "soleus_r", "tib_ant_r", "vas_int_r"]
    assert len(model.implicit_derivative_names()) == 6
    spring = ml.models.squat_to_stand(knee_spring=50.0)
    assert spring.property("/forceset/spring/stiffness").default == 50.0
    assert ml.models.from_spec(spring.spec).description() == spring.description()


def test_edited_file_loads_in_opensim_with_the_same_names(tmp_path):
    opensim = pytest.importorskip("opensim")
    path = tmp_path / "squat_to_stand_4dof9musc.osim"
    path.write_text(squat_to_stand_osim())
    theirs = opensim.Model(str(path))
    theirs.initSystem()
    ours = ml.models.squat_to_stand()
    assert {c.getAbsolutePathString() for c in theirs.getCoordinateSet()} == {c.path for c in ours.coordinates}
    assert set(RENAMED.values()) <= {c.getName() for c in theirs.getCoordinateSet()}


def test_squat_to_stand_prediction_small_mesh():
    """A coarse mesh (the test suite's) converges from the paper's guess: the motion starts in the squat and ends
    upright, at rest, with each initial activation equal to its initial excitation."""
    study = ml.examples.squat_to_stand_study(num_mesh_intervals=8 if fast_mode() else 50)
    sol = study.solve()
    assert sol.success, sol.message
    assert 0.1 <= sol.final_time <= 2.0
    for path, q0 in ml.examples.SQUAT_POSE.items():
        q = sol.states[f"{path}/value"]
        assert q[0] == pytest.approx(q0, abs=1e-9) and q[-1] == pytest.approx(0.0, abs=1e-9)
    for m in study.problem.model.muscles:
        assert sol.states[f"{m.path}/activation"][0] == pytest.approx(sol.controls[m.path][0], abs=1e-6)
    assert sol.goal_values["init_activation"] == 0.0
    assert sol.objective == pytest.approx(sum(sol.goal_values.values()), rel=1e-9)


def test_study_with_the_papers_guess_saves_and_the_guess_values_are_checked(tmp_path):
    study = ml.examples.squat_to_stand_study(assisted=True)
    path = tmp_path / "squat.json"
    study.save(path)
    again = ml.Study.load(path)
    assert again.solver.guess_values == study.solver.guess_values and len(study.solver.guess_values) == 24
    assert again.problem.model.description() == study.problem.model.description()
    assert [p.property for p in again.problem.parameters] == ["/forceset/spring/stiffness"]
    tr = again.transcribe()
    from moco_lab.solve.guess import guess_from_bounds

    g = guess_from_bounds(tr)
    Y = dict(zip(tr.state_names, g["Y"].T))
    assert np.all(Y["/forceset/vas_int_r/normalized_tendon_force"] == 0.1)
    assert np.all(Y["/forceset/vas_int_r/activation"] == 0.05)
    assert g["tf"] == pytest.approx(1.05)  # the midpoint of [0.1, 2]
    study.solver.guess_values = {"/forceset/nothing_like_this": 1.0}
    with pytest.raises(ValueError, match="matches no state or control"):
        guess_from_bounds(study.transcribe())
    study.solver.guess_values = {"(": 1.0}
    with pytest.raises(ValueError, match="not a regular expression"):
        study.solver.validate()


def test_knee_moment_arms_move_the_patella_as_opensim_does(tmp_path):
    """compiled_moment_arms about the knee moves the patella along the coupler (OpenSim's moment-arm solver does the
    same); quadriceps paths wrap and end on the patella, so without that the arms would be wrong by centimetres. Against
    OpenSim at 7 knee angles: within 6e-4 m (the single-wrap tolerance of test_osim_opensim.py)."""
    opensim = pytest.importorskip("opensim")
    from moco_lab.analysis.moment_arms import compiled_moment_arms

    model = ml.models.squat_to_stand()
    knees = np.linspace(-2.0, -0.1, 7)
    muscles = ["/forceset/vas_int_r", "/forceset/rect_fem_r", "/forceset/bifemsh_r"]
    ours = compiled_moment_arms(model, "knee_extension_r", knees, muscles)
    path = tmp_path / "squat.osim"
    path.write_text(squat_to_stand_osim())
    theirs = opensim.Model(str(path))
    state = theirs.initSystem()
    coords = {c.getName(): c for c in theirs.getCoordinateSet()}
    worst = 0.0
    for i, q in enumerate(knees):
        coords["knee_extension_r"].setValue(state, float(q), False)
        coords["knee_extension_r_beta"].setValue(state, float(-q), False)
        theirs.realizePosition(state)
        for m in muscles:
            r = opensim.Muscle.safeDownCast(theirs.getComponent(m)).computeMomentArm(state, coords["knee_extension_r"])
            worst = max(worst, abs(r - ours[m][i]))
    assert worst < 6e-4
    assert ours["/forceset/vas_int_r"].min() > 0.015 and ours["/forceset/bifemsh_r"][1:].max() < 0  # extensor, flexor
    with pytest.raises(ValueError, match="dependent coordinate"):
        compiled_moment_arms(model, "knee_extension_r_beta", [0.5])
