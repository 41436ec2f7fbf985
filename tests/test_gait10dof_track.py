"""Moco's testMocoTrack "MocoTrack gait10dof18musc" (torque-driven tracking of a measured walk under its ground
reaction forces) against OpenSim Moco 4.6: the stored reference of benchmarks/gait10dof_track.py, and cheap
cross-checks of each processing step against OpenSim itself.

Moco's solutions (tolerances 1e-4, the test's, and 1e-6) are stored with their provenance in
benchmarks/reference/. Tolerances:

* Moco's 1e-4 solution put into moco_lab's problem (as the guess, no iteration): each goal equals Moco's value to
  1e-10 relative (the same reference splines, the same quadrature; measured 1e-14), and every constraint holds to
  Moco's constraint tolerance 1e-4 (measured 3.6e-5) — the two tools pose the same problem;
* at 1e-4 the two optimizers' quasi-Newton iterations stop at different points short of the optimum (objectives
  0.03982 and 0.03893); with the tolerances tightened to 1e-6 Moco reaches the optimum 0.0388667. moco_lab solves
  it with exact second derivatives (``optim_hessian_approximation="exact"``): Newton's method converges
  quadratically, so its 1e-6 iterate is the optimum to far more digits than the tolerance (measured: 12
  iterations, objective 0.03886666201, effort 0.00124262; IPOPT's quasi-Newton runs at 1e-8 on two BLAS kernels
  give 0.03886666211 and 0.00124259 / 0.00124260), and the same point on every CPU — the quasi-Newton run at 1e-6
  stops anywhere along the flat direction that trades effort for tracking (effort 0.0012414 with AVX2 kernels,
  0.0012514 with AVX-512 ones). Against Moco's 1e-6 solution: objective to 1e-5 relative (measured 9e-7), each
  goal term to 1e-3 relative (measured 1.3e-4 on the effort: Moco's own distance from the optimum along that
  direction), joint angles to 2e-3 rad RMS.
"""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.results.tables import filter_lowpass, interpolating_spline
from moco_lab.results.trajectory import read_trajectory
from moco_lab.util.data import opensim_file

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
STORED = json.loads((REFERENCE / "gait10dof_track_moco.json").read_text())


def test_reference_has_its_provenance():
    env, settings = STORED["environment"], STORED["settings"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert settings["states_global_tracking_weight"] == 10 and settings["tolerances"] == [1e-4, 1e-6]
    assert all(r["success"] for r in STORED["results"].values())


def test_mocos_solution_solves_our_problem():
    moco = read_trajectory(REFERENCE / "gait10dof_track_moco_tol0.0001.sto")
    study = ml.examples.gait10dof_track().initialize()
    assert study.solver.num_mesh_intervals == 25 and study.problem.time_final.lower == 1.0
    study.solver.guess = moco
    study.solver.optim_max_iterations = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IPOPT's "maximum iterations" (0 asked for)
        at_moco = study.solve()
    stored = STORED["results"]["tol0.0001"]
    print("Moco's solution in moco_lab's problem:", at_moco.goal_values, at_moco.constraint_violation)
    assert at_moco.objective == pytest.approx(stored["objective"], rel=1e-10)
    for goal, value in stored["goals"].items():
        assert at_moco.goal_values[goal] == pytest.approx(value, rel=1e-10)
    assert at_moco.constraint_violation < 1e-4


def test_same_optimum_as_moco_at_tight_tolerance():
    solution = ml.examples.gait10dof_track(optim_tolerance=1e-6, optim_hessian_approximation="exact").solve()
    assert solution.success
    stored = STORED["results"]["tol1e-06"]
    print(f"objective {solution.objective:.8f} (Moco {stored['objective']:.8f}), {solution.nit} iterations")
    assert solution.objective == pytest.approx(stored["objective"], rel=1e-5)
    for goal, value in stored["goals"].items():
        assert solution.goal_values[goal] == pytest.approx(value, rel=1e-3)
    moco = read_trajectory(REFERENCE / "gait10dof_track_moco_tol1e-06.sto")
    np.testing.assert_allclose(moco.time, solution.time, atol=1e-12)
    model = ml.examples.gait10dof_torque_model()
    for c in model.coordinates:
        rms = np.sqrt(np.mean((solution.states[c.value_path] - moco.states[c.value_path]) ** 2))
        assert rms < 2e-3, (c.name, rms)


def test_reference_processing():
    """What the tracking sees: degrees become radians (rotations only), the 6 Hz filter, speeds from the quintic
    spline's slope; a time range outside the reference is refused."""
    track = ml.examples.gait10dof_track()
    raw_t, raw, meta = ml.results.sto.read_table(opensim_file("walk_gait1018_state_reference.mot"))
    assert meta["inDegrees"] == "yes"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, filtered = filter_lowpass(raw_t, raw, 6.0)
    knee, tx = "/jointset/knee_r/knee_angle_r/value", "/jointset/ground_pelvis/pelvis_tx/value"
    np.testing.assert_allclose(track.reference[knee], np.radians(filtered[knee]), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(track.reference[tx], filtered[tx])   # metres: not converted
    speed = interpolating_spline(t, track.reference[knee]).derivative()(t)
    np.testing.assert_array_equal(track.reference[knee.replace("/value", "/speed")], speed)
    assert len(track.reference) == 20
    with pytest.raises(ValueError, match="final_time 3.*outside the states reference"):
        ml.examples.gait10dof_track(final_time=3.0)


# ------------------------------------------------------------------ cheap cross-checks with OpenSim itself
@pytest.mark.opensim
def test_lowpass_filter_is_opensims():
    """TabOpLowPassFilter(6) on the reference file (which OpenSim resamples first: its times are rounded) and on a
    uniformly sampled signal: the same rows and values to round-off (measured 3e-15 relative)."""
    opensim = pytest.importorskip("opensim")
    opensim.Logger.setLevelString("error")
    path = str(opensim_file("walk_gait1018_state_reference.mot"))
    raw_t, raw, _ = ml.results.sto.read_table(path)
    processor = opensim.TableProcessor(path)
    processor.append(opensim.TabOpLowPassFilter(6))
    theirs = processor.process()
    with pytest.warns(UserWarning, match="resampled with interval"):
        t, ours = filter_lowpass(raw_t, raw, 6.0)
    np.testing.assert_array_equal(np.array(theirs.getIndependentColumn()), t)
    for name, values in ours.items():
        col = theirs.getDependentColumn(name).to_numpy()
        np.testing.assert_allclose(values, col, rtol=0, atol=1e-13 * np.abs(col).max())
    tu = np.arange(120) * 0.01
    signal = np.sin(7 * tu) + 0.2 * np.cos(60 * tu)
    table = opensim.TimeSeriesTable(list(tu))
    table.appendColumn("s", opensim.Vector(signal.tolist()))
    opensim.TabOpLowPassFilter(6).operate(table)
    _, ours = filter_lowpass(tu, {"s": signal}, 6.0)
    np.testing.assert_allclose(ours["s"], table.getDependentColumn("s").to_numpy(), rtol=0, atol=1e-13)


@pytest.mark.opensim
def test_splines_and_speeds_are_mocotracks():
    """MocoTrack writes the states it tracks (after the filter, the conversion to radians and the speeds from
    position derivatives) to ``<name>_tracked_states.sto``: moco_lab's reference equals it to round-off (a natural
    quintic spline's slope; measured 1e-13 rad/s)."""
    opensim = pytest.importorskip("opensim")
    import os
    import tempfile

    opensim.Logger.setLevelString("error")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            track = opensim.MocoTrack()
            track.setName("t")
            processor = opensim.ModelProcessor(str(opensim_file("walk_gait1018_subject01.osim")))
            processor.append(opensim.ModOpRemoveMuscles())
            track.setModel(processor)
            table = opensim.TableProcessor(str(opensim_file("walk_gait1018_state_reference.mot")))
            table.append(opensim.TabOpLowPassFilter(6))
            track.setStatesReference(table)
            track.set_track_reference_position_derivatives(True)
            track.initialize()
            with pytest.warns(UserWarning, match="nColumns=11 but every row has 21"):  # OpenSim's stale header
                t, theirs, _ = ml.results.sto.read_table(Path(tmp) / "t_tracked_states.sto")
        finally:
            os.chdir(cwd)
    ours = ml.examples.gait10dof_track()
    np.testing.assert_allclose(ours.reference_time, t, rtol=0, atol=1e-14)   # as written to the file
    assert set(theirs) == set(ours.reference)
    for name, values in theirs.items():
        np.testing.assert_allclose(ours.reference[name], values, rtol=0, atol=1e-11 * max(1.0, np.abs(values).max()))
