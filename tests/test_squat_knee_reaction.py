"""The squat's knee load against OpenSim 4.6: moco_lab's ``joint_reactions`` and OpenSim's
``Joint::calcReactionOnChildExpressedInGround`` (the joint's ``reaction_on_child`` output, through Moco's
``analyzeSpatialVec``) along the same trajectory — Moco's own solution of the paper's unassisted squat-to-stand
(tolerance 1e-4), stored by benchmarks/squat_to_stand.py — on the same model file, with the paper's muscle
operators (DeGrooteFregly2016 muscles, maximum isometric forces doubled, no passive fibre force).

The load is large: 27.7 body weights at the start, in the deepest squat (the model's single leg carries its pelvis
and torso, 38.6 of its 53.3 kg, on the doubled muscle forces), which is why the lessons show what minimizing it
changes; both tools compute that number.

Tolerance. moco_lab takes the accelerations from the solution (its implicit dynamics' ``accel`` columns, which satisfy
the dynamics to the solve's tolerance 1e-4), OpenSim from forward dynamics at the states and controls: measured
1.0 N apart at most on loads up to 14.4 kN (7e-5 relative). Asserted 2e-4 of the peak load (3 N): a muscle force
missing from the reaction, a wrong frame or sign, or a joint origin elsewhere moves it by hundreds of newtons.
"""
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.squat import squat_to_stand_osim
from moco_lab.tools.analyze import joint_reactions

opensim = pytest.importorskip("opensim")

SOLUTION = Path(__file__).resolve().parents[1] / "benchmarks" / "reference" / "squat_to_stand_moco_unassisted_tol1e-4.sto"


def _opensim_reaction(model_file: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """Time, the knee's reaction on the tibia in ground (n, 6: moment, force) and the model's weight, by OpenSim."""
    model = opensim.Model(str(model_file))
    model.finalizeConnections()
    opensim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    for muscle in model.getMuscles():  # the Moco paper's script (benchmarks/squat_to_stand.py)
        muscle.set_max_isometric_force(2.0 * muscle.get_max_isometric_force())
        dgf = opensim.DeGrooteFregly2016Muscle.safeDownCast(muscle)
        dgf.set_ignore_passive_fiber_force(True)
        dgf.set_tendon_compliance_dynamics_mode("implicit")
    state = model.initSystem()
    trajectory = opensim.MocoTrajectory(str(SOLUTION))
    table = opensim.analyzeSpatialVec(model, trajectory.exportToStatesTable(), trajectory.exportToControlsTable(),
                                      opensim.StdVectorString([r"/jointset/knee_r\|reaction_on_child"]))
    flat = table.flatten(opensim.StdVectorString(["_mx", "_my", "_mz", "_fx", "_fy", "_fz"]))
    weight = model.getTotalMass(state) * -model.getGravity()[1]
    return np.array(flat.getIndependentColumn()), flat.getMatrix().to_numpy(), weight


def test_knee_reaction_equals_opensims(tmp_path):
    model_file = tmp_path / "squat_to_stand_4dof9musc.osim"
    model_file.write_text(squat_to_stand_osim(lumbar=True))  # the file both tools' solutions are of
    t, expected, weight = _opensim_reaction(model_file)
    model = ml.examples.squat_to_stand_study().problem.model
    table = joint_reactions(model, ml.read_trajectory(str(SOLUTION)), "knee_r", loads_frame="child",
                            expressed_in="/ground")
    prefix = "/jointset/knee_r/reaction_on_child_in_/ground"
    ours = np.column_stack([table.columns[f"{prefix}_{kind}_{axis}"] for kind in ("moment", "force")
                            for axis in "xyz"])
    np.testing.assert_allclose(np.asarray(table.time), t, atol=1e-12)
    peak = np.linalg.norm(expected[:, 3:], axis=1).max()
    np.testing.assert_allclose(ours[:, 3:], expected[:, 3:], rtol=0, atol=2e-4 * peak)
    np.testing.assert_allclose(ours[:, :3], expected[:, :3], rtol=0,
                               atol=2e-4 * np.linalg.norm(expected[:, :3], axis=1).max())
    assert peak / weight == pytest.approx(27.67, abs=0.01)  # the number the lessons quote (body weights)
