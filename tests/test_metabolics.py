"""OpenSim's Bhargava2004SmoothedMuscleMetabolics (``moco_lab.modeling.metabolics``): its outputs against OpenSim 4.6's
own component on the same muscles at random states and excitations, smoothed and not, with the options that change
its branches; exact derivatives of a goal on it are checked in tests/test_transcription_hessians.py."""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.metabolics import Bhargava2004SmoothedMuscleMetabolics, MetabolicsMuscleParameters

MUSCLES = ("left", "middle", "right")


def _opensim_rates(osim, options: dict, tx, ty, vx, vy, act, exc) -> np.ndarray:
    """(n, 4): OpenSim's total metabolic rate and each muscle's, on the suspended mass with the component added."""
    from benchmarks import moco_reference as mr

    model = mr.build_suspended_mass_model()
    met = osim.Bhargava2004SmoothedMuscleMetabolics()
    met.setName("metabolics")
    for key, value in options.items():
        getattr(met, f"set_{key}")(value)
    for name in MUSCLES:
        met.addMuscle(name, osim.Muscle.safeDownCast(model.getForceSet().get(name)))
    model.addComponent(met)
    model.finalizeConnections()
    state = model.initSystem()
    coords = model.getCoordinateSet()
    rows = []
    for k in range(len(tx)):
        coords.get("tx").setValue(state, tx[k], False)
        coords.get("ty").setValue(state, ty[k], False)
        coords.get("tx").setSpeedValue(state, vx[k])
        coords.get("ty").setSpeedValue(state, vy[k])
        for j, name in enumerate(MUSCLES):
            osim.Muscle.safeDownCast(model.getForceSet().get(name)).setActivation(state, act[k, j])
        model.realizeVelocity(state)
        controls = model.getControls(state)
        for j in range(len(MUSCLES)):
            controls.set(j, exc[k, j])
        model.setControls(state, controls)
        model.realizeDynamics(state)
        rows.append([met.getTotalMetabolicRate(state)]
                    + [met.getMuscleMetabolicRate(state, f"/forceset/{name}") for name in MUSCLES])
    return np.array(rows)


@pytest.mark.parametrize("options", [{"use_smoothing": True}, {"use_smoothing": False},
                                     {"use_smoothing": True, "use_force_dependent_shortening_prop_constant": True,
                                      "include_negative_mechanical_work": False, "velocity_smoothing": 3.0},
                                     {"use_smoothing": True, "basal_coefficient": 2.0, "basal_exponent": 0.8,
                                      "muscle_effort_scaling_factor": 0.7, "forbid_negative_total_power": False},
                                     {"use_smoothing": True, "smoothing_type": "huber"},
                                     {"use_smoothing": True, "smoothing_type": "huber", "velocity_smoothing": 3.0,
                                      "heat_rate_smoothing": 50.0, "power_smoothing": 0.5,
                                      "include_negative_mechanical_work": False},
                                     {"use_smoothing": True, "smoothing_type": "huber",
                                      "use_force_dependent_shortening_prop_constant": True}])
def test_rates_equal_opensims(options):
    """15 random states (positions, speeds from −0.5 to 0.5 m/s: shortening and lengthening fibers), activations and
    excitations in [0.02, 1]: every rate equal to OpenSim's to 1e-12 of the largest (measured 1.6e-16: the same
    arithmetic; a wrong constant, branch or smoothing changes them by far more)."""
    osim = pytest.importorskip("opensim")
    rng = np.random.default_rng(0)
    n = 15
    tx, ty = rng.uniform(-0.1, 0.1, n), rng.uniform(-0.3, -0.12, n)
    vx, vy = rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n)
    act, exc = rng.uniform(0.02, 1, (n, 3)), rng.uniform(0.02, 1, (n, 3))
    theirs = _opensim_rates(osim, options, tx, ty, vx, vy, act, exc)
    model = ml.models.suspended_mass()
    metabolics = Bhargava2004SmoothedMuscleMetabolics("/metabolics", **options)
    for name in MUSCLES:
        metabolics.add_muscle(f"/forceset/{name}")
    model.add_force_element(metabolics)
    states = {"/jointset/tx/tx/value": tx, "/jointset/ty/ty/value": ty, "/jointset/tx/tx/speed": vx,
              "/jointset/ty/ty/speed": vy, **{f"/forceset/{m}/activation": act[:, j] for j, m in enumerate(MUSCLES)}}
    controls = {f"/forceset/{m}": exc[:, j] for j, m in enumerate(MUSCLES)}
    table = ml.analyze(model, ml.Trajectory(np.arange(n, dtype=float), states=states, controls=controls),
                       "/metabolics/.*")
    ours = np.column_stack([table.columns["/metabolics/total_metabolic_rate"]]
                           + [table.columns[f"/metabolics/muscle_metabolic_rate_{m}"] for m in MUSCLES])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12 * np.abs(theirs).max())
    assert table.units["/metabolics/total_metabolic_rate"] == "W"


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="smoothing_type must be 'tanh' .* or 'huber', got 'logistic'"):
        Bhargava2004SmoothedMuscleMetabolics(smoothing_type="logistic")
    with pytest.raises(ValueError, match="ratio_slow_twitch_fibers must be in \\[0, 1\\]"):
        MetabolicsMuscleParameters("/forceset/left", ratio_slow_twitch_fibers=1.5)
    model = ml.models.suspended_mass()
    metabolics = Bhargava2004SmoothedMuscleMetabolics()
    metabolics.add_muscle("/forceset/lft")
    model.add_force_element(metabolics)
    with pytest.raises(KeyError, match="Did you mean '/forceset/left'"):
        ml.analyze(model, ml.Trajectory(np.arange(2.0), states={s: np.zeros(2) for s in model.state_names()},
                                        controls={c: np.zeros(2) for c in model.control_names()}),
                   "/metabolics/total_metabolic_rate")
    with pytest.raises(ValueError, match="two muscles share a channel name"):
        metabolics.add_muscle("/forceset/lft")


def test_minimum_metabolic_energy_equals_mocos():
    """The Moco paper's suspended-mass prediction with the effort replaced by the metabolic energy (an OutputGoal on the
    smoothed component's total rate; benchmarks/metabolics_moco.py stores Moco 4.6's solution): same transcription,
    both tools at tolerance 1e-8. The objective to 1e-6 relative (measured 1.1e-11: the same optimum), the final time
    to 1e-4 relative (measured 4e-7) and the states and controls to 1e-3 of their range on the normalized time
    (measured 8.5e-5; the optimum is flat along the excitations' small values, where the tools' stopping points
    differ within the tolerance). Minimizing effort instead ends at t_f = 0.4118 s (3 % earlier, and other
    excitations): a metabolic rate computed otherwise than OpenSim's would move the optimum by far more than the
    tolerances."""
    import json
    from pathlib import Path

    stored = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "reference" /
                         "metabolics_moco.json").read_text())
    s, moco = stored["settings"], stored["result"]
    study = ml.examples.suspended_mass_prediction_study(num_mesh_intervals=s["num_mesh_intervals"], tol=s["tol"])
    p = study.problem
    p.remove_goal("effort")
    metabolics = Bhargava2004SmoothedMuscleMetabolics("/metabolics", **s["component"])
    for name in s["muscles"]:
        metabolics.add_muscle(f"/forceset/{name}")
    p.model.add_force_element(metabolics)
    p.add_goal(ml.OutputGoal("energy", s["weight"], output_path="/metabolics/total_metabolic_rate"))
    sol = study.solve()
    assert sol.success and moco["success"]
    assert sol.objective == pytest.approx(moco["objective"], rel=1e-6)
    assert sol.time[-1] == pytest.approx(moco["time"][-1], rel=1e-4)
    x = np.linspace(0.0, 1.0, 200)

    def normalized(t):
        t = np.asarray(t, float)
        return (t - t[0]) / (t[-1] - t[0])

    for ref, ours in ((moco["states"], sol.states), (moco["controls"], sol.controls)):
        for name, values in ref.items():
            a = np.interp(x, normalized(sol.time), np.asarray(ours[name]))
            b = np.interp(x, normalized(moco["time"]), np.asarray(values))
            assert np.abs(a - b).max() <= 1e-3 * np.ptp(values), name
