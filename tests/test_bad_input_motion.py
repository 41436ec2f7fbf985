"""Bad motion-capture inputs (``lowpass``, ``residual_wrenches``, ``fit_segment_masses``): a ``ValueError`` that
names the function and the argument (shape, time step, NaN frame), never a division by zero or Drake's abort."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from moco_lab.examples.synthetic import synthetic_walk
from moco_lab.tools import residual_reduction as rr


@pytest.fixture(scope="module")
def walk():
    return synthetic_walk(68.0, 1.75, strides=1)


@pytest.mark.parametrize("dt", [0.0, -0.01, float("nan"), "0.01"])
def test_lowpass_needs_a_positive_time_step(dt):
    error = TypeError if isinstance(dt, str) else ValueError
    with pytest.raises(error, match=rf"lowpass: dt must be a positive time step in seconds, got {dt!r}"):
        rr.lowpass(np.zeros((20, 2)), dt)


def test_lowpass_refuses_nan_and_empty_signals():
    Q = np.zeros((20, 2))
    Q[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"lowpass: Q must be .* with NaN or infinite values"):
        rr.lowpass(Q, 0.01)
    with pytest.raises(ValueError, match=r"lowpass: Q must be .*got shape \(0,\)"):
        rr.lowpass(np.zeros(0), 0.01)


@pytest.mark.parametrize("tool", [rr.residual_wrenches, rr.fit_segment_masses])
def test_motion_shape_and_step_are_checked_before_the_kinematics(walk, tool):
    name = tool.__name__
    nq = walk.q.shape[1]
    with pytest.raises(ValueError, match=rf"{name}: Q must be \(T, {nq}\) .* got \({walk.q.shape[0]}, {nq - 1}\)"):
        tool(walk.model, walk.q[:, :-1], walk.dt, walk.forces, walk.cop)
    with pytest.raises(ValueError, match=rf"{name}: dt must be a positive time step in seconds, got 0"):
        tool(walk.model, walk.q, 0, walk.forces, walk.cop)
    Q = walk.q.copy()
    Q[7, 2] = np.nan
    with pytest.raises(ValueError, match=rf"{name}: Q has NaN or infinite values \(frame 7\)"):
        tool(walk.model, Q, walk.dt, walk.forces, walk.cop)


@pytest.mark.parametrize("mass", [0.0, -70.0, float("nan"), "70"])
def test_integrate_com_needs_a_positive_mass(mass):
    from moco_lab.tools.mass_fit import integrate_com

    error = TypeError if isinstance(mass, str) else ValueError
    with pytest.raises(error, match=rf"integrate_com: mass must be a positive number of kg, got {mass!r}"):
        integrate_com((0, 1), (1, 0), mass, np.ones((10, 2)), 0.01)


def test_fit_mass_time_step_given_as_text():
    from moco_lab.tools.mass_fit import fit_mass

    with pytest.raises(TypeError, match=r"dt must be a positive time step in seconds, got '0\.01'"):
        fit_mass(np.zeros((10, 2)), np.ones((10, 2)), "0.01")


@pytest.fixture(scope="module")
def markers(walk):
    from moco_lab.examples.synthetic import gait2d_markers, synthetic_markers

    data = {k: np.asarray(v)[:4] for k, v in synthetic_markers(walk).data.items()}
    return gait2d_markers(walk.model), data


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(initial_guess=np.zeros(2)), ValueError, "initial_guess must be 9 finite coordinates"),
    (dict(weights={"nomarker": 1.0}), KeyError, "a weight for an unknown marker: Unknown marker 'nomarker'"),
    (dict(weights={"shoulder": -1.0}), ValueError, "the weight of marker 'shoulder' must be a finite number >= 0"),
    (dict(tolerance=0), ValueError, "tolerance must be a finite number > 0, got 0"),
])
def test_inverse_kinematics_options(walk, markers, kwargs, error, words):
    """A wrongly sized initial guess used to abort the process in Drake's SetInitialGuess."""
    from moco_lab.tools.marker_ik import inverse_kinematics

    with pytest.raises(error, match=f"inverse_kinematics: {re.escape(words)}"):
        inverse_kinematics(walk.model, markers[0], markers[1], **kwargs)


def test_inverse_kinematics_frames_without_markers(walk, markers):
    from moco_lab.tools.marker_ik import inverse_kinematics

    data = {k: v.copy() for k, v in markers[1].items()}
    for v in data.values():
        v[2] = np.nan
    with pytest.raises(ValueError, match=r"inverse_kinematics: no marker \(with a weight > 0\) is seen in 1 frame\(s\), "
                                         r"the first \[2\]"):
        inverse_kinematics(walk.model, markers[0], data)


def test_model_operators_arguments():
    import moco_lab as ml
    from moco_lab.modeling import operators as ops

    model = ml.read_osim("2D_gait.osim")
    for factor in (float("inf"), "2", 0.0):
        with pytest.raises(TypeError if isinstance(factor, str) else ValueError,
                           match=rf"scale_max_isometric_force: factor must be a finite number > 0, got "
                                             rf"{re.escape(repr(factor))}"):
            ops.scale_max_isometric_force(model, factor)
    with pytest.raises(TypeError, match=r"muscles must be a list of muscle names or paths, got the string 'rect_fem_r'"):
        ops.set_tendon_compliance(model, "implicit", muscles="rect_fem_r")


@pytest.mark.parametrize("kwargs, words", [
    (dict(noise=float("nan")), "noise must be a finite number > 0, got nan"),
    (dict(force_sd=0.0), "force_sd must be a finite number > 0, got 0.0"),
    (dict(acceleration_sd=-1.0), "acceleration_sd must be a finite number > 0, got -1.0"),
    (dict(dt=0.0), "dt must be a positive time step in seconds, got 0.0"),
])
def test_reduce_residuals_checks_its_numbers_first(walk, markers, kwargs, words):
    """A NaN noise used to pass the old ``min(...) <= 0`` check."""
    options = dict(dt=walk.dt)
    options.update(kwargs)
    dt = options.pop("dt")
    T = markers[1][next(iter(markers[1]))].shape[0]
    with pytest.raises(ValueError, match=f"reduce_residuals: {re.escape(words)}"):
        rr.reduce_residuals(walk.model, markers[0], markers[1], walk.q[:T], dt, walk.forces[:T], walk.cop[:T],
                            **options)


def _scale_build(scales):
    from moco_lab.modeling.gait2d import gait2d

    return gait2d(68.0, 1.75, muscles=False, segment_scales=scales)


@pytest.fixture(scope="module")
def marker_trial(walk):
    from moco_lab.examples.synthetic import synthetic_markers

    return synthetic_markers(walk, seed=0).data


def _short(data, frames=3):
    return {k: np.asarray(v)[:frames] for k, v in data.items()}


@pytest.mark.parametrize("change, error, words", [
    (dict(segments="thigh"), TypeError, "segments must be a list of segment names, got the string 'thigh'"),
    (dict(segments=["thigh", "thigh"]), ValueError, "segments lists ['thigh'] more than once"),
    (dict(build=None), TypeError, "build must be a function, got NoneType"),
    (dict(place="markers"), TypeError, "place must be a function, got str"),
    (dict(data=[]), TypeError, "data must be a dict of marker name -> (T, 2) array, got list"),
    (dict(data={}), ValueError, "data holds no marker"),
    (dict(noise=float("nan")), ValueError, "noise must be a finite number > 0, got nan"),
    (dict(noise="5 mm"), TypeError, "noise must be a finite number > 0, got '5 mm'"),
    (dict(scale_sd=0.0), ValueError, "scale_sd must be a finite number > 0, got 0.0"),
    (dict(scale_prior={"thight": 1.0}), KeyError,
     "scale_prior: Unknown segment among those fitted 'thight'. Did you mean 'thigh'? Valid segments among those fitted:"),
    (dict(scale_prior={"thigh": -1.0}), ValueError, "scale_prior['thigh'] must be a finite number > 0, got -1.0"),
    (dict(scale_prior=[1.0]), TypeError, "scale_prior must be a dict of segment -> scale, got list"),
    (dict(offset_sd=float("nan")), ValueError, "offset_sd must be a finite number > 0, got nan"),
    (dict(offset_sd={"knee_rr": 0.01}), KeyError,
     "offset_sd: Unknown marker in the data 'knee_rr'. Did you mean 'knee_r', 'knee_l', 'heel_r'? Valid markers in the data: 16"),
    (dict(offset_sd={"knee_r": 0.0}), ValueError, "offset_sd['knee_r'] must be a finite number > 0, got 0.0"),
    (dict(max_nfev=2.5), TypeError, "max_nfev must be a whole number, got 2.5"),
    (dict(tolerance=float("inf")), ValueError, "tolerance must be a finite number > 0, got inf"),
    (dict(build=lambda s: "model"), TypeError, "build(scales) must return a moco_lab Model, got str"),
    (dict(place=lambda m: [("knee_r", "thigh_r", (0, 0))]), TypeError,
     "place(model) must return a list of Marker, got ['tuple']"),
])
def test_scale_and_track_checks_every_argument_before_fitting(marker_trial, change, error, words):
    from moco_lab.examples.synthetic import gait2d_markers
    from moco_lab.tools.scaling import scale_and_track

    args = dict(build=_scale_build, place=gait2d_markers, data=_short(marker_trial), segments=["thigh", "shank"])
    args.update(change)
    with pytest.raises(error, match=re.escape(f"scale_and_track: {words}")):
        scale_and_track(args.pop("build"), args.pop("place"), args.pop("data"), args.pop("segments"), **args)


def test_scale_and_track_names_the_marker_whose_data_is_malformed(marker_trial):
    from moco_lab.examples.synthetic import gait2d_markers
    from moco_lab.tools.scaling import scale_and_track

    data = _short(marker_trial)
    name = next(iter(data))
    for bad, words in ((data[name][:, :1], f"the data of marker {name!r} must be a (T, 2) array (planar, m), got "
                                           f"shape (3, 1)"),
                       (data[name][:2], f"the data of marker {name!r} has 2 frames, that of"),
                       (np.full((3, 2), np.inf), f"the data of marker {name!r} has infinite values")):
        other = dict(data)
        other[name] = bad
        if words.endswith("that of"):  # a later marker differs from the first
            other = {"first": data[name], **{k: v for k, v in data.items() if k != name}, name: bad}
        with pytest.raises(ValueError, match=re.escape(f"scale_and_track: {words}")):
            scale_and_track(_scale_build, gait2d_markers, other, ["thigh"])


def _motion_cases():
    """(call on the synthetic walk and its markers, exception class, words the message must hold)."""
    from moco_lab.tools import marker_ik as mik
    from moco_lab.tools import mass_fit as mf

    F = np.ones((10, 2))
    return [
        (lambda w, m, d: rr.lowpass(np.zeros((20, 2)), 0.01, cutoff=math.nan), ValueError,
         "lowpass: cutoff must be a frequency in Hz > 0, got nan"),
        (lambda w, m, d: rr.lowpass(np.zeros((20, 2)), 0.01, order=2.5), TypeError,
         "lowpass: order must be a whole number, got 2.5"),
        (lambda w, m, d: rr.lowpass(np.zeros((20, 2)), 0.01, order=0), ValueError, "lowpass: order must be >= 1"),
        (lambda w, m, d: rr.residual_percent(np.ones((5, 3)), np.ones((4, 2)), 1.0), ValueError,
         "residual_percent: residuals must be (T, 3) (from residual_wrenches) and forces (T, 2) with the same T"),
        (lambda w, m, d: rr.residual_percent(np.ones((5, 3)), np.ones((5, 2)), 0.0), ValueError,
         "residual_percent: com_height must be a positive height in m, got 0.0"),
        (lambda w, m, d: rr.segment_groups(w.model, "trunk"), TypeError,
         "segment_groups: names must be a list of segment names, got the string 'trunk'"),
        (lambda w, m, d: rr.group_masses(w.model, {"legs": ["nobody"]}), KeyError,
         "group_masses: groups['legs']: Unknown body 'nobody'"),
        (lambda w, m, d: rr.group_masses("gait2d.osim", {}), TypeError,
         "group_masses: model must be a moco_lab Model, got str (read a file with ml.read_osim(path))"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, w.forces, w.cop, mass_scales={"trunk": math.nan}),
         ValueError, "residual_wrenches: mass_scales['trunk'] must be a finite number > 0, got nan"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, w.forces, w.cop, mass_scales={"trunc": 1.0}),
         KeyError, "residual_wrenches: mass_scales: Unknown mass group 'trunc'. Did you mean 'trunk'"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, w.forces, w.cop, groups={"legs": ["nobody"]}),
         KeyError, "residual_wrenches: groups['legs']: Unknown body 'nobody'"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, w.forces, w.cop, groups={"legs": "thigh_r"}),
         TypeError, "residual_wrenches: groups['legs'] must be a list of body names, got 'thigh_r'"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, w.forces, w.cop,
                                              groups={"a": ["thigh_r"], "b": ["thigh_r"]}),
         ValueError, "residual_wrenches: body 'thigh_r' is in two mass groups, 'a' and 'b'"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, w.forces[:-1], w.cop), ValueError,
         "residual_wrenches: forces and cop must be (T, 2) arrays"),
        (lambda w, m, d: rr.residual_wrenches(w.model, w.q, w.dt, np.full_like(w.forces, np.inf), w.cop), ValueError,
         "residual_wrenches: forces or cop have infinite values"),
        (lambda w, m, d: rr.fit_segment_masses(w.model, w.q, w.dt, w.forces, w.cop, moment_arm=0), ValueError,
         "fit_segment_masses: moment_arm must be a positive length in m, got 0"),
        (lambda w, m, d: rr.fit_segment_masses(w.model, w.q, w.dt, w.forces, w.cop, moment_arm="1"), TypeError,
         "fit_segment_masses: moment_arm must be a positive length in m, got '1'"),
        (lambda w, m, d: rr.reduce_residuals(w.model, "markers", d, w.q, w.dt, w.forces, w.cop), TypeError,
         "reduce_residuals: markers must be a list of Marker (name, body, location), got str"),
        (lambda w, m, d: rr.reduce_residuals(w.model, m, {k: v[:4] for k, v in d.items()}, w.q, w.dt, w.forces,
                                             w.cop), ValueError, "reduce_residuals: the data of marker"),
        (lambda w, m, d: rr.reduce_residuals(w.model, m, d, w.q, w.dt, w.forces, w.cop, settings="fast"), TypeError,
         "reduce_residuals: settings must be a SolverSettings or None, got str"),
        (lambda w, m, d: rr.reduce_residuals(w.model, m, d, w.q, w.dt, w.forces, w.cop, method="newton"),
         ValueError, "reduce_residuals: Unknown method 'newton'"),
        (lambda w, m, d: rr.reduce_residuals(w.model, m, d, w.q, w.dt, w.forces, w.cop, progress=3), TypeError,
         "reduce_residuals: progress must be a function of a Progress, got int"),
        (lambda w, m, d: rr.reduce_residuals(w.model, m, d, w.q, w.dt, w.forces, w.cop, mass_scales={"arm": 1.0}),
         KeyError, "reduce_residuals: mass_scales: Unknown mass group 'arm'"),
        (lambda w, m, d: rr.reduce_residuals(w.model, m, list(d.values()), w.q, w.dt, w.forces, w.cop), TypeError,
         "reduce_residuals: data must be a dict of marker name -> (T, 2) array, got list"),
        (lambda w, m, d: mf.com_linear_map(F, 0.01, gravity=[0, 0, -9.81]), ValueError,
         "com_linear_map: gravity must be 2 finite numbers like the forces"),
        (lambda w, m, d: mf.com_linear_map(F, 0.01, gravity=[0, math.nan]), ValueError,
         "com_linear_map: gravity must be 2 finite numbers like the forces, got [0, nan]"),
        (lambda w, m, d: mf.fit_mass(np.zeros((9, 2)), F, 0.01), ValueError,
         "fit_mass: com has shape (9, 2) but forces (10, 2)"),
        (lambda w, m, d: mf.integrate_com((0, 1, 2), (1, 0), 70.0, F, 0.01), ValueError,
         "integrate_com: initial_position must be 2 finite numbers like the forces, got (0, 1, 2)"),
        (lambda w, m, d: mf.integrate_com((0, 1), (math.nan, 0), 70.0, F, 0.01), ValueError,
         "integrate_com: initial_velocity must be 2 finite numbers like the forces, got (nan, 0)"),
        (lambda w, m, d: mf.linear_residual_forces(np.zeros((10, 2)), F, "70", 0.01), TypeError,
         "linear_residual_forces: mass must be a positive number of kg, got '70'"),
        (lambda w, m, d: mf.residual_force_percent(np.ones((8, 2)), np.ones((10, 3))), ValueError,
         "residual_force_percent: residuals (K, d) and forces (T, d) must have the same d"),
        (lambda w, m, d: mik.Marker("knee", "thigh_r", "0 0"), TypeError,
         "marker 'knee': location must be 2 or 3 numbers (x, y[, z]) in m, got '0 0'"),
        (lambda w, m, d: mik.marker_positions(w.model, m, np.zeros(3)), ValueError,
         "marker_positions: q must be (9,) (one value per coordinate), got shape (3,)"),
        (lambda w, m, d: mik.marker_trajectories(w.model, m, np.zeros((3, 2))), ValueError,
         "marker_trajectories: Q must be (T, 9) finite coordinates"),
        (lambda w, m, d: mik.marker_trajectories(w.model, [m[0], m[0]], np.zeros((3, 9))), ValueError,
         "marker_trajectories: two markers are named 'shoulder'"),
        (lambda w, m, d: mik.marker_frames(w.model, [m[0], ("knee", "thigh_r", (0, 0))]), TypeError,
         "marker_frames: markers[1] is a tuple, not a Marker"),
        (lambda w, m, d: mik.inverse_kinematics(w.model, "knee_r", d), TypeError,
         "inverse_kinematics: markers must be a list of Marker (name, body, location), got str"),
        (lambda w, m, d: mik.inverse_kinematics(w.model, m, "walk.trc"), TypeError,
         "inverse_kinematics: data must be a dict of marker name -> (T, 2) or (T, 3) array, got str"),
        (lambda w, m, d: mik.inverse_kinematics(None, m, d), TypeError,
         "inverse_kinematics: model must be a moco_lab Model, got NoneType"),
    ]


@pytest.mark.parametrize("index", range(len(_motion_cases())))
def test_motion_capture_tools_name_the_bad_argument(walk, marker_trial, index):
    """Shapes, NaN, text where a number goes, unknown bodies, groups and markers, wrong types of settings and
    callbacks: the standard exception class, before any work, with the function and the argument named."""
    from moco_lab.examples.synthetic import gait2d_markers

    call, error, words = _motion_cases()[index]
    markers = gait2d_markers(walk.model)
    with pytest.raises(error, match=re.escape(words)):
        call(walk, markers, {k: np.asarray(v) for k, v in marker_trial.items()})
