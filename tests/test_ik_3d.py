"""Inverse kinematics on the 3-D full-body model and the real walking trial (issue 36, point 2's first step):
``ml.examples.walking_3d_ik`` against OpenSim 4.6's ``InverseKinematicsTool`` (stored reference,
``benchmarks/walking_3d_mocap.py``), exact recovery of known poses, the task file, bounds, couplers and bad input."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.results.ik_tasks import CoordinateTask, read_ik_tasks
from moco_lab.results.trc import read_trc
from moco_lab.tools.marker_ik import inverse_kinematics, marker_trajectories
from moco_lab.util.data import opensim_file

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ml.read_osim(opensim_file("subject_walk_scaled.osim"), replace_millard=True)


@pytest.fixture(scope="module")
def trial(model):
    """The whole trial (238 frames), solved once."""
    return ml.examples.walking_3d_ik(model)


def _index(model, name):
    return next(c.q_index for c in model.coordinates if c.name == name)


def _opensim(model):
    """OpenSim's IK of the trial at accuracy 1e-8, in the model's coordinate order (rad, m)."""
    from moco_lab.results.sto import read_table

    time, columns, meta = read_table(REFERENCE / "walking_3d_ik_opensim.mot")
    assert str(meta["inDegrees"]).strip() == "yes"
    Q = np.zeros((len(time), len(model.coordinates)))
    for c in model.coordinates:
        v = columns[c.name]
        # OpenSim writes rotations in degrees; the coupled knee_angle_*_beta (motion type "coupled") unconverted
        Q[:, c.q_index] = v if c.name.endswith(("_tx", "_ty", "_tz", "_beta")) else np.radians(v)
    return time, Q


def _objective(model, Q):
    table = read_trc(opensim_file("markers_walk.trc"))
    tasks = read_ik_tasks(opensim_file("ik_tasks_walk.xml"))
    names = [n for n in tasks.markers if n in table.markers]
    P = marker_trajectories(model, [model.markers[n] for n in names], Q)
    Y = np.stack([table.markers[n] for n in names], axis=1)
    return np.sum(np.array([tasks.markers[n] for n in names]) * np.sum((P - Y) ** 2, axis=2), axis=1)


def test_same_optimum_as_opensim(model, trial):
    """Every frame reaches at least OpenSim's optimum, and the same pose.

    OpenSim's assembler at accuracy 1e-8 stops just short of the optimum: the weighted squared marker error moco_lab
    reaches is lower in every one of the 238 frames, by 3e-10 to 1.2e-5 relative (measured; both poses evaluated by
    moco_lab's kinematics, which agree with OpenSim's to 1e-15 m, tests/test_osim3d.py). Asserted: never above
    OpenSim's by more than 1e-9 (round-off of a sum of 24 squares), never below by more than 1e-4 (more would mean
    a different minimum). The coordinates: the pelvis translations within 0.01 mm (measured 3e-3 mm), every angle
    within 0.1° (measured 0.044°, elbow) except the forearms' pronation, which only the wrist and forearm markers
    see, so that the objective is flat along it: within 1° (measured 0.66°)."""
    result, time = trial
    t_ref, theirs = _opensim(model)
    assert result.success
    assert np.allclose(time, t_ref, atol=1e-9)
    ours_e, theirs_e = _objective(model, result.q), _objective(model, theirs)
    relative = (ours_e - theirs_e) / theirs_e
    assert relative.max() <= 1e-9
    assert relative.min() >= -1e-4
    for c in model.coordinates:
        d = np.abs(result.q[:, c.q_index] - theirs[:, c.q_index]).max()
        if c.name.endswith(("_tx", "_ty", "_tz")):
            assert d < 1e-5, c.name
        else:
            assert np.degrees(d) < (1.0 if c.name.startswith("pro_sup") else 0.1), c.name
    # the marker errors of a real trial with a fitted model: 1.24 cm RMS, 4.65 cm worst (measured); OpenSim's at
    # the same poses agree, so these are the data's and the model's, not the solver's
    assert 0.005 < result.rmse < 0.02 and result.max_error < 0.06


def test_constraints_and_bounds_hold(model, trial):
    """The patellar couplers hold exactly (knee_angle_*_beta = knee_angle_*, the file's LinearFunction) and every
    clamped coordinate stays in its range; at heel strike (frame 25) the right knee rests on its bound 0, where
    OpenSim's assembler stops 5.5e-5 rad inside it with a higher error."""
    result, _ = trial
    Q = result.q
    for side in "rl":
        assert np.abs(Q[:, _index(model, f"knee_angle_{side}_beta")] - Q[:, _index(model, f"knee_angle_{side}")]).max() \
            < 1e-12
    for c in model.coordinates:
        if c.clamped:
            assert np.all(Q[:, c.q_index] >= c.range[0]) and np.all(Q[:, c.q_index] <= c.range[1]), c.name
    assert Q[25, _index(model, "knee_angle_r")] == 0.0
    assert _opensim(model)[1][25, _index(model, "knee_angle_r")] > 0.0


def test_clamped_flags_are_read(model):
    flags = {c.name: c.clamped for c in model.coordinates}
    assert flags["knee_angle_r"] and flags["pelvis_tx"] and flags["pro_sup_l"]
    assert not flags["knee_angle_r_beta"] and not flags["knee_angle_l_beta"]  # <clamped>false</clamped> in the file


def test_recovers_known_poses(model, trial):
    """Markers computed from known poses (every one of the model's 65 markers, placed by its kinematics) give the
    poses back from the default pose: no residual, so Gauss–Newton converges quadratically; within 1e-9 rad / m."""
    known = trial[0].q[[0, 60, 120, 180]]
    markers = list(model.markers.values())
    P = marker_trajectories(model, markers, known)
    result = inverse_kinematics(model, markers, {m.name: P[:, k] for k, m in enumerate(markers)})
    assert result.success
    assert np.abs(result.q - known).max() < 1e-9
    assert result.max_error < 1e-10


def test_coordinate_tasks(model, trial):
    """A heavily weighted coordinate task pins its coordinate (manual value) or holds it at its default value; an
    unweighted one changes nothing."""
    data = {n: read_trc(opensim_file("markers_walk.trc")).markers[n][40:43] for n in ("R.ASIS", "L.ASIS", "R.PSIS",
                                                                                      "L.PSIS", "S2")}
    markers = [model.markers[n] for n in data]
    start = trial[0].q[39]
    free = inverse_kinematics(model, markers, data, initial_guess=start)
    pinned = inverse_kinematics(model, markers, data, initial_guess=start, coordinate_tasks={
        "lumbar_rotation": CoordinateTask(1e8, "manual_value", 0.1), "hip_flexion_r": CoordinateTask(1e8),
        "knee_angle_l": CoordinateTask(0.0, "manual_value", 1.0)})
    assert np.allclose(pinned.coordinates["lumbar_rotation"], 0.1, atol=1e-6)
    assert np.allclose(pinned.coordinates["hip_flexion_r"], 0.0, atol=1e-6)  # the model's default value
    assert np.allclose(pinned.coordinates["pelvis_tilt"], free.coordinates["pelvis_tilt"], atol=1e-6)


def test_task_file(tmp_path):
    tasks = read_ik_tasks(opensim_file("ik_tasks_walk.xml"))
    assert len(tasks.markers) == 30 and tasks.markers["R.ASIS"] == 20.0 and tasks.markers["R.Toe"] == 2.0
    assert sorted(tasks.ignored) == ["L.Biceps", "L.MElbow", "R.Biceps", "R.MElbow"]
    assert tasks.coordinates == {}
    f = tmp_path / "tasks.xml"
    f.write_text("<OpenSimDocument><IKTaskSet><objects><IKCoordinateTask name='knee_angle_r'><weight>3</weight>"
                 "<value_type>manual_value</value_type><value>0.2</value></IKCoordinateTask></objects></IKTaskSet>"
                 "</OpenSimDocument>")
    assert read_ik_tasks(f).coordinates == {"knee_angle_r": CoordinateTask(3.0, "manual_value", 0.2)}
    for body, match in (("<IKMarkerTask name='a'><weight>-1</weight></IKMarkerTask>", "must be >= 0"),
                        ("<IKMarkerTask name='a'><weight>heavy</weight></IKMarkerTask>", "must be a number"),
                        ("<IKCoordinateTask name='a'><value_type>spline</value_type></IKCoordinateTask>",
                         "value_type must be"),
                        ("<IKTask name='a'/>", "IKTaskSet holds IKMarkerTask"),
                        ("<IKMarkerTask name='a'/><IKMarkerTask name='a'/>", "listed twice")):
        f.write_text(f"<OpenSimDocument><IKTaskSet><objects>{body}</objects></IKTaskSet></OpenSimDocument>")
        with pytest.raises(ValueError, match=match):
            read_ik_tasks(f)
    f.write_text("<OpenSimDocument><MarkerSet/></OpenSimDocument>")
    with pytest.raises(ValueError, match="no <IKTaskSet>"):
        read_ik_tasks(f)


def test_bad_input_names_the_culprit(model):
    markers = [model.markers["R.ASIS"]]
    data = {"R.ASIS": np.zeros((2, 3))}
    with pytest.raises(KeyError, match="knee_angel_r"):
        inverse_kinematics(model, markers, data, coordinate_tasks={"knee_angel_r": CoordinateTask(1.0)})
    with pytest.raises(NotImplementedError, match="from_file"):
        inverse_kinematics(model, markers, data, coordinate_tasks={"knee_angle_r": CoordinateTask(1.0, "from_file")})
    with pytest.raises(TypeError, match="CoordinateTask"):
        inverse_kinematics(model, markers, data, coordinate_tasks={"knee_angle_r": 1.0})
    with pytest.raises(ValueError, match="'gauss-newton', 'snopt' or 'ipopt'"):
        inverse_kinematics(model, markers, data, solver="lm")
    with pytest.raises(NotImplementedError, match="walker_knee|custom|CustomJoint"):
        inverse_kinematics(model, markers, data, solver="ipopt")  # Drake's plant does not hold the walker knee
    with pytest.raises(ValueError, match="no frame"):
        ml.examples.walking_3d_ik(model, start=5.0)


def test_provenance_is_stored():
    meta = json.loads((REFERENCE / "walking_3d_mocap_opensim.json").read_text())
    assert meta["opensim"] == "4.6" and meta["ik_accuracy"] == 1e-8 and "InverseKinematicsTool" in meta["tools"]


def test_ik_inputs_pair_tasks_trial_and_model(model):
    """As OpenSim's tool: the task file's weighted markers the trial holds (24 of 30; the six *Ground markers are
    not in the trial: a warning names them); without tasks, every marker both hold, weight 1 (41); a weighted task
    for a marker the model lacks is an error naming it; the time window cuts the frames."""
    from moco_lab.results.ik_tasks import IKTasks
    from moco_lab.tools.marker_ik import ik_inputs

    table = read_trc(opensim_file("markers_walk.trc"))
    tasks = read_ik_tasks(opensim_file("ik_tasks_walk.xml"))
    with pytest.warns(UserWarning, match="R.HeelGround"):
        markers, data, weights, time = ik_inputs(model, table, tasks, start=0.5, end=0.6)
    assert len(markers) == 24 and weights["R.ASIS"] == 20.0 and len(time) == 11 and data["R.ASIS"].shape == (11, 3)
    everything = ik_inputs(model, table)
    assert len(everything[0]) == 41 and set(everything[2].values()) == {1.0} and len(everything[3]) == 238
    with pytest.raises(KeyError, match="'R.Nose'"):
        ik_inputs(model, table, IKTasks(markers={"R.Nose": 1.0}))
    with pytest.raises(ValueError, match="no marker"):
        ik_inputs(model, table, IKTasks(markers={"R.ASIS": 0.0}))
    with pytest.raises(TypeError, match="MarkerTable"):
        ik_inputs(model, {"R.ASIS": np.zeros((3, 3))})


def test_marker_fit_figure(model, trial):
    """The model at an IK frame with its markers, the measured markers and one error line per measured marker the
    model has, its hover the distance in mm (the IK result's own error)."""
    from moco_lab.viz.pose3d import plot_marker_fit_3d

    result, _ = trial
    table = read_trc(opensim_file("markers_walk.trc"))
    measured = {n: table.markers[n][100] for n in result.names}
    measured["Nowhere"] = np.array([np.nan, 0.0, 0.0])
    fig = plot_marker_fit_3d(model, result.q[100], measured)
    names = [d.name for d in fig.data]
    assert names[-2:] == ["measured markers", "error (model → measured)"]
    assert len(fig.data[-2].x) == len(result.names)  # the NaN marker left out
    k = result.names.index("R.Knee")
    assert fig.data[-1].text[3 * k] == f"R.Knee: {1000 * result.errors[100, k]:.1f} mm"


def test_gaps_in_the_markers(model, trial):
    """A marker lost for some frames (NaN, as read_trc gives an empty cell) is left out of those frames only: IK
    still converges, its error there is NaN (left out of the RMS), the frames before the gap are untouched and after
    it the pose returns to the full data's. Losing a key marker costs accuracy in the gap: without the right knee
    marker for 0.1 s the knee angle strays up to 12° (measured; no other weighted marker sits on the thigh or shank
    but the ankle's), so short gaps should be filled first — ``fill_gaps`` (a cubic spline through the marker's
    seen samples, 0.8 mm from the removed data) brings the knee back within 1° (measured 0.22°). A frame with no
    weighted marker at all is an error naming it."""
    from moco_lab.results.trc import fill_gaps
    from moco_lab.tools.marker_ik import ik_inputs

    with pytest.warns(UserWarning):
        markers, data, weights, time = ik_inputs(model, read_trc(opensim_file("markers_walk.trc")),
                                                 read_ik_tasks(opensim_file("ik_tasks_walk.xml")), start=0.5, end=0.8)
    full = inverse_kinematics(model, markers, data, weights=weights, initial_guess=trial[0].q[49])
    gappy = {n: v.copy() for n, v in data.items()}
    gappy["R.Knee"][10:20] = np.nan
    result = inverse_kinematics(model, markers, gappy, weights=weights, initial_guess=trial[0].q[49])
    k = result.names.index("R.Knee")
    knee = _index(model, "knee_angle_r")
    assert result.success and np.all(np.isnan(result.errors[10:20, k])) and np.isfinite(result.rmse)
    assert np.array_equal(result.q[:10], full.q[:10])  # before the gap: the same data, the same answer
    assert np.abs(result.q[21:] - full.q[21:]).max() < 1e-5  # after it: back on the full data's path
    assert 5.0 < np.degrees(np.abs(result.q[10:20, knee] - full.q[10:20, knee]).max()) < 20.0
    filled = fill_gaps(time, gappy)
    assert np.all(np.isfinite(filled["R.Knee"])) and np.abs(filled["R.Knee"] - data["R.Knee"]).max() < 0.01
    mended = inverse_kinematics(model, markers, filled, weights=weights, initial_guess=trial[0].q[49])
    assert np.degrees(np.abs(mended.q[:, knee] - full.q[:, knee]).max()) < 1.0
    blind = {n: v.copy() for n, v in data.items()}
    for v in blind.values():
        v[3] = np.nan
    with pytest.raises(ValueError, match=r"no marker \(with a weight > 0\) is seen in 1 frame\(s\), the first \[3\]"):
        inverse_kinematics(model, markers, blind, weights=weights)
