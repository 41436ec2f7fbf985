"""Bad motion-capture inputs (``lowpass``, ``residual_wrenches``, ``fit_segment_masses``): a ``ValueError`` that
names the function and the argument (shape, time step, NaN frame), never a division by zero or Drake's abort."""
from __future__ import annotations

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
    (dict(scale_prior={"thight": 1.0}), KeyError, "scale_prior: Unknown segment among those fitted 'thight'"),
    (dict(scale_prior={"thigh": -1.0}), ValueError, "scale_prior['thigh'] must be a finite number > 0, got -1.0"),
    (dict(scale_prior=[1.0]), TypeError, "scale_prior must be a dict of segment -> scale, got list"),
    (dict(offset_sd=float("nan")), ValueError, "offset_sd must be a finite number > 0, got nan"),
    (dict(offset_sd={"knee_rr": 0.01}), KeyError, "offset_sd: Unknown marker in the data 'knee_rr'"),
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
