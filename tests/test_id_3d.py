"""Inverse dynamics of the real 3-D walking trial (issue 36, point 2): ``ml.tools.inverse_dynamics`` against OpenSim
4.6's ``InverseDynamicsTool`` (stored reference, ``benchmarks/walking_3d_mocap.py``), a closed form, the trial's
``id_walk.sto`` and bad input."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.operators import add_external_loads
from moco_lab.results.sto import read_table
from moco_lab.results.tables import filter_lowpass
from moco_lab.tools.inverse_dynamics import inverse_dynamics
from moco_lab.util.data import opensim_file

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"


def _model(loads: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ml.read_osim(opensim_file("subject_walk_scaled.osim"), replace_millard=True)
    return add_external_loads(model, opensim_file("grf_walk.xml")) if loads else model


@pytest.fixture(scope="module")
def trial():
    """moco_lab's inverse dynamics of OpenSim's IK of the trial (the stored file both tools read), 6 Hz."""
    model = _model(loads=True)
    time, columns, meta = read_table(REFERENCE / "walking_3d_ik_opensim.mot")
    assert str(meta["inDegrees"]).strip() == "yes"
    Q = np.column_stack([columns[c.name] if c.name.endswith(("_tx", "_ty", "_tz", "_beta"))
                         else np.radians(columns[c.name]) for c in model.coordinates])
    return model, inverse_dynamics(model, time, Q, lowpass_cutoff=6.0)


def test_same_as_opensims_tool(trial):
    """Every generalized force at every one of the 238 frames equals OpenSim's to the 8 decimals its file prints
    (rounding: 5e-9; measured 6.6e-9 at most), up to 950 N and 148 N·m — the filter, the spline (fitted to the
    padded filtered table, as OpenSim's tool does: fitted to the trial alone, the first and last 0.2 s differ by up
    to 48 N), the 3-D equations and the ground reaction forces applied at their measured points."""
    model, result = trial
    time, theirs, _ = read_table(REFERENCE / "walking_3d_id_opensim.sto")
    assert np.allclose(result.time, time, atol=1e-12)
    for c in model.coordinates:
        label = f"{c.name}_force" if f"{c.name}_force" in theirs else f"{c.name}_moment"
        assert np.abs(result.forces[c.name] - theirs[label]).max() < 1e-8, c.name
        assert result.units[c.name] == ("N" if c.name in ("pelvis_tx", "pelvis_ty", "pelvis_tz") else "N·m")
    meta = json.loads((REFERENCE / "walking_3d_mocap_opensim.json").read_text())
    assert meta["id_lowpass_cutoff_hz"] == 6.0 and meta["id_excluded_forces"] == "Muscles"


def test_against_the_trials_id_walk(trial):
    """``id_walk.sto`` (shipped with the example; an inverse dynamics of other kinematics of the same trial) is the
    same motion processed otherwise: the joints' moments within 10 N·m RMS (measured 1–7.4 N·m; a sign or unit
    error would be tens to hundreds), and on the force plates the pelvis residual force is a few percent of the
    body weight in both (measured RMS 4.5 % here, 4.8 % there)."""
    model, result = trial
    t_walk, walk, _ = read_table(opensim_file("id_walk.sto"))
    inside = (result.time >= t_walk[0]) & (result.time <= t_walk[-1])
    for name in ("hip_flexion_r", "hip_adduction_r", "knee_angle_r", "ankle_angle_r", "hip_flexion_l",
                 "knee_angle_l", "ankle_angle_l", "lumbar_extension"):
        ref = np.interp(result.time[inside], t_walk, walk[f"{name}_moment"])
        assert np.sqrt(np.mean((result.forces[name][inside] - ref) ** 2)) < 10.0, name
    pelvis = np.linalg.norm(np.column_stack([result.forces[n][inside] for n in ("pelvis_tx", "pelvis_ty",
                                                                              "pelvis_tz")]), axis=1)
    assert np.sqrt(np.mean(pelvis ** 2)) / model.body_weight() < 0.06


def test_standing_still_carries_the_body_weight():
    """Held still in the default pose, without ground forces: the vertical root force is the whole body's weight
    (22 bodies, 85.27 kg · 9.80665 m/s²) and the horizontal ones vanish — to round-off."""
    model = _model(loads=False)
    n = 8
    q0 = model.plant.GetPositions(model.plant.CreateDefaultContext())
    result = inverse_dynamics(model, np.linspace(0.0, 0.7, n), np.tile(q0, (n, 1)))
    assert np.allclose(result.forces["pelvis_ty"], model.body_weight(), rtol=1e-12)
    assert model.body_weight() == pytest.approx(85.27 * 9.80665, rel=1e-3)
    assert np.abs(result.forces["pelvis_tx"]).max() < 1e-9 and np.abs(result.forces["pelvis_tz"]).max() < 1e-9


def test_padding_kept_by_the_filter():
    """``filter_lowpass(..., keep_padding=True)``: half the rows again at each end, times continuing the step, the
    middle rows equal to the trimmed result."""
    t = np.linspace(0.0, 1.0, 101)
    x = np.sin(7 * t)
    trimmed_t, trimmed = filter_lowpass(t, {"x": x}, 6.0)
    padded_t, padded = filter_lowpass(t, {"x": x}, 6.0, keep_padding=True)
    assert padded_t.size == 101 + 2 * 50 and np.allclose(np.diff(padded_t), 0.01)
    assert np.allclose(padded_t[50:151], trimmed_t, atol=1e-12) and np.array_equal(padded["x"][50:151], trimmed["x"])


def test_bad_input_names_the_culprit():
    model = _model(loads=False)
    t = np.linspace(0, 1, 10)
    with pytest.raises(ValueError, match=r"Q must be \(len\(time\), 33\)"):
        inverse_dynamics(model, t, np.zeros((10, 31)))
    with pytest.raises(ValueError, match="finite"):
        inverse_dynamics(model, t, np.full((10, 33), np.nan))
    with pytest.raises(ValueError, match="at least 6 strictly increasing"):
        inverse_dynamics(model, t[::-1], np.zeros((10, 33)))
    with pytest.raises(TypeError):
        inverse_dynamics("model.osim", t, np.zeros((10, 33)))


def test_figures(trial):
    """The generalized forces against a reference, one labelled panel per coordinate; the residual in % of body
    weight with the 5/2/1 % lines and the plates' window; an unknown coordinate named."""
    from moco_lab.viz.inverse_dynamics import plot_generalized_forces, plot_residual_percent

    model, result = trial
    fig = plot_generalized_forces(result, ["knee_angle_r", "pelvis_ty"],
                                  reference=(result.time, {"knee_angle_r": -result.forces["knee_angle_r"]}),
                                  reference_label="flipped")
    assert [a.text for a in fig.layout.annotations] == ["knee_angle_r", "pelvis_ty"]
    assert len(fig.data) == 3 and fig.data[1].name == "flipped"
    assert fig.layout.yaxis.title.text == "moment (N·m)" and fig.layout.yaxis2.title.text == "force (N)"
    assert fig.layout.xaxis.title.text == "time (s)"
    with pytest.raises(KeyError, match="knee_angel_r"):
        plot_generalized_forces(result, ["knee_angel_r"])
    res = plot_residual_percent(result, model.body_weight(), window=(0.45, 1.8))
    F = np.linalg.norm(np.column_stack([result.forces[n] for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz")]), axis=1)
    assert np.allclose(res.data[0].y, 100 * F / model.body_weight())
    assert res.layout.yaxis.title.text == "residual force (% body weight)"
    assert sorted(s.y0 for s in res.layout.shapes if s.type == "line") == [1, 2, 5]
