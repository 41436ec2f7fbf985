"""Tracking goals' reference interpolation: Moco's quintic splines by default, straight lines on request."""
import numpy as np
import pytest

from moco_lab.ocp.goals import ContactTrackingGoal, StateTrackingGoal, TableSplines, goal_from_dict


def test_linear_interpolation_values_and_slopes():
    """Straight lines between samples: values as np.interp, slopes the segment's, end values held with slope 0
    (exact arithmetic on these numbers, so compared to 1e-15)."""
    t = np.array([0.0, 1.0, 3.0])
    y = np.array([[0.0, 1.0], [2.0, 1.0], [0.0, 5.0]])
    T = np.array([-1.0, 0.5, 1.0, 2.0, 3.0, 4.0])
    values, slopes = TableSplines(t, y, "linear")(T)
    np.testing.assert_allclose(values[:, 0], [0, 1, 2, 1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(values[:, 1], [1, 1, 1, 3, 5, 5], atol=1e-15)
    np.testing.assert_allclose(slopes[:, 0], [0, 2, -1, -1, -1, 0], atol=1e-15)
    np.testing.assert_allclose(slopes[:, 1], [0, 0, 2, 2, 2, 0], atol=1e-15)


def test_spline_and_linear_differ_between_samples_and_agree_at_them():
    t = np.linspace(0.0, 1.0, 11)
    y = np.sin(3 * t)[:, None]
    spline, linear = TableSplines(t, y), TableSplines(t, y, "linear")
    np.testing.assert_allclose(spline(t)[0], linear(t)[0], atol=1e-12)
    mid = t[2:-3] + 0.05  # the interior: a natural spline's end conditions cost accuracy in the end intervals
    # the quintic spline is within 3e-4 of sin between samples here (measured 1.0e-4); the chord is off by up to
    # h²/8·|y''| = 0.01/8·9 ≈ 1e-2
    assert np.max(np.abs(spline(mid)[0][:, 0] - np.sin(3 * mid))) < 3e-4
    assert np.max(np.abs(linear(mid)[0][:, 0] - np.sin(3 * mid))) > 1e-3


def test_interpolation_is_checked_and_saved():
    ref = (np.array([0.0, 1.0]), {"/x/value": np.array([0.0, 1.0])})
    with pytest.raises(ValueError, match="interpolation must be one of"):
        StateTrackingGoal("s", reference=ref, interpolation="cubic")
    with pytest.raises(ValueError, match="interpolation must be one of"):
        ContactTrackingGoal("c", interpolation="nearest")
    goal = goal_from_dict(StateTrackingGoal("s", reference=ref, interpolation="linear").to_dict())
    assert goal.interpolation == "linear"
    assert goal_from_dict(StateTrackingGoal("s", reference=ref).to_dict()).interpolation == "spline"
