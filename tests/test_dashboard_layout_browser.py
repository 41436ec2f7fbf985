"""Every dashboard on a 1366×768 laptop screen: the action button is visible without scrolling, and every
plot axis that shows a physical quantity says its unit.

Screenshots (the visible part only, as a student first sees it) go to ``test-artifacts/laptop_<name>.png``.
"""
from __future__ import annotations

import pytest
from browser_support import (
    ARTIFACTS,
    BROWSER_MARKS,
    assert_clean,
    browser_fixture,
    open_page,
    svg_texts,
    voila_url_fixture,
    wait_rendered,
)

LAPTOP = {"width": 1366, "height": 768}

pytestmark = BROWSER_MARKS
voila_url = voila_url_fixture("voila_layout.log")
browser = browser_fixture

#: dashboard -> (its action button, plots drawn on load)
DASHBOARDS = {
    "verification_explorer": ("Solve", 3),
    "suspended_mass": ("Solve", 4),
    "parabola": ("Solve", 5),
    "convergence_study": ("Run mesh sequence", 1),
    "moment_arms": (None, 3),
    "squat_to_stand": ("Solve", 5),
    "walking": ("Solve", 5),
    "motion_capture": ("Run", 3),
    "walking_3d": ("Solve", 2),
}

#: Axis titles that name a quantity without a unit on purpose (dimensionless, or counts).
UNITLESS = {"activation", "excitation", "iteration", "mesh intervals N", "error", "objective",
            "constraint violation", "weighted goal value", "multiplier 0", "coupling factor"}


@pytest.mark.parametrize("name", list(DASHBOARDS))
def test_fits_a_laptop_screen_with_units_on_every_axis(voila_url, browser, name):
    button, plots = DASHBOARDS[name]
    page, errors = open_page(browser, f"{voila_url}/voila/render/{name}.ipynb", LAPTOP)
    try:
        ready = page.get_by_role("button", name=button) if button else page.locator(".widget-slider").first
        wait_rendered(page, ready, plots)
        assert_clean(page, errors)
        if button:
            box = page.get_by_role("button", name=button).bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= LAPTOP["height"], (
                f"the {button!r} button is below the fold: {box}")
        page.screenshot(path=str(ARTIFACTS / f"laptop_{name}.png"))
        titles = [t.strip() for t in svg_texts(page, ".js-plotly-plot .g-ytitle, .js-plotly-plot .g-y2title")]
        titles = [t for t in titles if t]
        assert titles, "no y-axis titles at all"
        for t in titles:
            assert "(" in t or t in UNITLESS, (
                f"{name}: axis {t!r} names no unit")
    finally:
        page.close()
