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
from moco_lab.tools.root_residual import fit_segment_masses_to_residual, reduce_root_residual, root_residual
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


@pytest.fixture(scope="module")
def mass_fit(trial):
    """The segment masses fitted to the residual on the plates (0.45–1.8 s), the default prior."""
    model, result = trial
    return fit_segment_masses_to_residual(model, result, window=(0.45, 1.8))


def test_root_residual_is_the_pelvis_residual(trial, mass_fit):
    """The residual wrench (the ground-pelvis joint's reaction on the model without muscles) has, as its force, the
    pelvis translations' generalized forces of inverse dynamics (they translate along ground axes; two computations
    of the engine: the reaction's momentum sums and the ID's projection onto the coordinates; round-off of 950 N
    sums: 1e-9); on the plates 4.5 % of body weight RMS (test above: id_walk.sto's 4.8 %); the centre of mass
    about 1 m high."""
    model, result = trial
    before = mass_fit.before
    inside = (result.time >= 0.45) & (result.time <= 1.8)
    assert np.array_equal(before.time, result.time[inside]) and before.joint == "/jointset/ground_pelvis"
    F = np.column_stack([result.forces[n][inside] for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz")])
    assert np.abs(before.force - F).max() < 1e-9
    assert before.body_weight == pytest.approx(model.body_weight(), rel=1e-12)
    assert 0.9 < before.com_height < 1.1
    s = before.summary()
    assert 3.0 < s["force_rms"] < 6.0 and s["force_max"] < 10.0 and 0.5 < s["moment_rms"] < 5.0


def test_fitted_masses_against_a_model_built_with_them(trial, mass_fit, tmp_path):
    """The residual the fit predicts for its masses (the wrench is linear in them; each body's share from the
    engine's equations with the masses as parameters) is the inverse dynamics of a model *read from a file* whose
    masses and inertias were edited to the fitted ones — an independent path, equal to round-off (1e-8 N of up to
    50 N; measured 0). The fit lowers the residual (4.5 → 3.4 % RMS force, 2.2 → 1.6 % moment: the masses alone
    cannot explain the kinematics' errors)."""
    import xml.etree.ElementTree as ET

    _, result = trial
    tree = ET.parse(opensim_file("subject_walk_scaled.osim"))
    edited = 0
    for body in tree.iter("Body"):
        name = body.get("name")
        if name in mass_fit.body_masses:
            mass, inertia = body.find("mass"), body.find("inertia")
            k = mass_fit.body_masses[name] / float(mass.text)
            mass.text = repr(mass_fit.body_masses[name])
            inertia.text = " ".join(repr(k * float(v)) for v in inertia.text.split())
            edited += 1
    assert edited == 22
    tree.write(tmp_path / "fitted.osim")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = add_external_loads(ml.read_osim(tmp_path / "fitted.osim", replace_millard=True),
                                    opensim_file("grf_walk.xml"))
    again = inverse_dynamics(fitted, result.time, result.q)
    inside = (again.time >= 0.45) & (again.time <= 1.8)
    F = np.column_stack([again.forces[n][inside] for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz")])
    assert np.abs(F - mass_fit.after.force).max() < 1e-8
    assert fitted.body_weight() == pytest.approx(mass_fit.total_mass * 9.80665, rel=1e-12)
    before, after = mass_fit.before.summary(), mass_fit.after.summary()
    assert after["force_rms"] < 0.85 * before["force_rms"] and after["moment_rms"] < 0.85 * before["moment_rms"]
    # what the plates determine well, the total, agrees with the COM fit's 85.07 kg (test_mass_3d) within 1 %
    # (measured 84.84 kg); single factors do not (tibia 0.46: the masses absorb errors of the kinematics)
    assert abs(mass_fit.total_mass / 85.07 - 1) < 0.01
    assert all(0.5 <= v <= 2.0 for v in mass_fit.scales.values()) and mass_fit.at_bounds == ["tibia"]
    assert mass_fit.scales["tibia"] == pytest.approx(0.5, abs=1e-9)  # unbounded the data ask for 0.455
    assert sum(mass_fit.masses.values()) == pytest.approx(mass_fit.total_mass, rel=1e-12)


def test_mass_fit_options_and_bad_input(trial, mass_fit):
    """The total mass held exactly when asked; a tight prior keeps the model's masses; bad groups and windows named."""
    model, result = trial
    held = fit_segment_masses_to_residual(model, result, window=(0.45, 1.8), total_mass=85.07)
    assert held.total_mass == pytest.approx(85.07, rel=1e-12)
    assert held.after.summary()["force_rms"] == pytest.approx(mass_fit.after.summary()["force_rms"], rel=0.02)
    tight = fit_segment_masses_to_residual(model, result, window=(0.45, 1.8), mass_sd=1e-6,
                                           groups={"legs": ["femur_r", "femur_l", "tibia_r", "tibia_l"]})
    assert abs(tight.scales["legs"] - 1) < 1e-4  # prior sd 1e-6 against data worth ~1e-2 per frame
    assert tight.body_masses["torso"] == model.properties()["/bodyset/torso/mass"].default  # in no group: kept
    assert held.at_bounds == ["tibia"] and held.scales["tibia"] == pytest.approx(0.5, abs=1e-9)  # both at once
    assert all(0.5 <= v <= 2.0 for v in held.scales.values())
    with pytest.raises(ValueError, match="cannot be reached"):
        fit_segment_masses_to_residual(model, result, total_mass=300.0)
    with pytest.raises(ValueError, match="lower < 1 < upper"):
        fit_segment_masses_to_residual(model, result, scale_bounds=(1.2, 2.0))
    with pytest.raises(KeyError, match="femur_rr"):
        fit_segment_masses_to_residual(model, result, groups={"thigh": ["femur_rr"]})
    with pytest.raises(ValueError, match="'femur_r' is in groups 'a' and 'b'"):
        fit_segment_masses_to_residual(model, result, groups={"a": ["femur_r"], "b": ["femur_r"]})
    with pytest.raises(ValueError, match="window"):
        root_residual(model, result, window=(5.0, 6.0))
    with pytest.raises(TypeError, match="IDResult"):
        root_residual(model, {"time": result.time})
    with pytest.raises(ValueError, match="mass_sd"):
        fit_segment_masses_to_residual(model, result, mass_sd=0)


def test_root_residual_figure(mass_fit):
    """Before and after, force and moment panels with labelled axes, the lines, the RMS in the legend."""
    from moco_lab.viz.inverse_dynamics import plot_root_residuals

    fig = plot_root_residuals({"model": mass_fit.before, "fitted": mass_fit.after})
    b = mass_fit.before.summary()
    assert len(fig.data) == 4 and fig.data[0].name == f"model (RMS {b['force_rms']:.1f} % / {b['moment_rms']:.1f} %)"
    assert [d.showlegend for d in fig.data] == [True, False, True, False]  # one legend entry per label
    assert np.allclose(fig.data[2].y, mass_fit.after.force_percent())
    assert np.allclose(fig.data[3].y, mass_fit.after.moment_percent())
    assert fig.layout.yaxis.title.text == "force (% body weight)" and fig.layout.xaxis2.title.text == "time (s)"
    assert fig.layout.yaxis2.title.text == "moment (% BW × COM height)"
    assert sorted(s.y0 for s in fig.layout.shapes) == [1, 1, 2, 2, 5, 5]
    with pytest.raises(TypeError, match="RootResidual"):
        plot_root_residuals({"x": np.zeros(3)})


@pytest.fixture(scope="module")
def kinematics_fit(trial):
    """Masses and kinematics adjusted together on the plates, from the filtered IK, the task file's weights."""
    from moco_lab.examples.walking_3d import walking_3d_markers

    model, result = trial
    markers, measured, weights, frames = walking_3d_markers(model)
    assert np.allclose(frames, result.time, atol=1e-9)
    return reduce_root_residual(model, markers, measured, frames, result.q, weights=weights, window=(0.45, 1.8))


def test_kinematics_and_masses_together(trial, mass_fit, kinematics_fit):
    """AddBiomechanics' dynamics pass in 3-D: the residual on the plates falls from 4.5 % to under 1 % of body weight
    RMS (measured 0.66 %; its moment 2.2 → 0.9 %) while the markers fit as well as inverse kinematics did (RMS within
    1 mm of IK's 1.24 cm), the couplers held (1e-10, the solver's test), the knees within their clamped range, the
    total mass where the plates put it (within 1 % of 85.07 kg), in a few Gauss–Newton iterations."""
    model, result = trial
    fit = kinematics_fit
    assert fit.success and fit.iterations <= 20
    after, before = fit.after.summary(), mass_fit.before.summary()
    assert after["force_rms"] < 1.0 and after["force_rms"] < 0.25 * before["force_rms"] and after["force_max"] < 2.0
    assert after["moment_rms"] < 1.5
    assert fit.marker_rmse < 0.0134 and fit.marker_max < 0.05
    for side in "rl":
        knee = fit.coordinates[f"knee_angle_{side}"]
        assert np.abs(fit.coordinates[f"knee_angle_{side}_beta"] - knee).max() < 1e-9 and knee.min() >= 0.0
    assert abs(fit.total_mass / 85.07 - 1) < 0.01 and not fit.at_bounds


def test_the_fitted_motion_by_splined_inverse_dynamics(trial, kinematics_fit):
    """The fit's residual is computed with central differences; inverse dynamics by the quintic spline of the fitted
    coordinates (OpenSim's tool, no filter) with the fitted masses gives the same wrench away from the window's
    ends (0.55–1.7 s) within 3 N and 2 N·m — the two second derivatives differ by O(Δt²) on the smooth fitted
    motion (measured 1.4 N, 0.9 N·m). At the ends the motion passes from fitted to free and the spline differs."""
    model, _ = trial
    fit = kinematics_fit
    splined = root_residual(model, inverse_dynamics(model, fit.time, fit.q), window=(0.55, 1.7),
                            masses=fit.body_masses)
    inner = (fit.after.time >= 0.55) & (fit.after.time <= 1.7)
    assert np.array_equal(splined.time, fit.after.time[inner])
    assert np.abs(splined.force - fit.after.force[inner]).max() < 3.0
    assert np.abs(splined.moment - fit.after.moment[inner]).max() < 2.0


def test_kinematics_fit_jacobian_against_finite_differences(trial):
    """The exact sparse Jacobian of every term (markers, acceleration prior, the residual wrench chained through the
    central differences, the mass prior) and of the couplers, against central finite differences along random
    directions on ten frames: relative error below 1e-6 (step 1e-6: truncation ~1e-12, round-off ~1e-9 of terms
    of order 1e3)."""
    from least_squares_check import jacobian_errors

    from moco_lab.examples.walking_3d import walking_3d_markers
    from moco_lab.tools.root_residual import _KinematicsMassProblem

    model, result = trial
    markers, measured, weights, frames = walking_3d_markers(model)
    rows = slice(100, 110)
    problem = _KinematicsMassProblem(model, markers, {n: v[rows] for n, v in measured.items()}, frames[rows],
                                     result.q[rows], weights, None, None, 0.01, 0.01, 0.1, 100.0, (0.5, 2.0), "test")
    rng = np.random.default_rng(3)
    x = problem.x0 + 0.01 * rng.standard_normal(problem.n_x)
    r, J, phi, G, _ = problem.evaluate(x)
    assert max(jacobian_errors(problem, x, rng)) < 1e-6
    assert phi.size == 20 and r.size == J.shape[0] and J.shape[1] == problem.n_x == 10 * 33 + 12


def test_kinematics_fit_bad_input(trial):
    from moco_lab.examples.walking_3d import walking_3d_markers

    model, result = trial
    markers, measured, weights, frames = walking_3d_markers(model)
    with pytest.raises(ValueError, match="Q must be"):
        reduce_root_residual(model, markers, measured, frames, result.q[:, :10])
    with pytest.raises(ValueError, match="equally spaced"):
        reduce_root_residual(model, markers, measured, frames ** 2, result.q)
    with pytest.raises(KeyError, match="no data for marker"):
        reduce_root_residual(model, markers, {n: v for n, v in list(measured.items())[1:]}, frames, result.q)
    with pytest.raises(ValueError, match="noise"):
        reduce_root_residual(model, markers, measured, frames, result.q, noise=-1.0)
