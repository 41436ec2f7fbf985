"""The moment-arm dashboard ``widgets/moment_arms.ipynb`` in headless Chromium (Voila + Playwright).

Starts ``voila widgets/`` on a free localhost port (``MOCO_LAB_FAST=1``), opens
the dashboard, checks that the three figures render, drags the joint angle
(through the slider's editable readout) and checks that the configuration, the
numbers and the curve marker are redrawn, then switches model and muscle.
Screenshots go to ``test-artifacts/moment_arms_*.png``. Voila is always stopped.

Run with ``pytest -m browser tests/test_moment_arms_browser.py``; skipped when
``/usr/bin/chromium``, Voila or the Python ``playwright`` package is missing.
"""
from __future__ import annotations

import re

from browser_support import (
    ARTIFACTS,
    BROWSER_MARKS,
    LAPTOP,
    VIEWPORT,
    assert_clean,
    browser_fixture,
    check_on_a_laptop,
    open_page,
    svg_texts,
    voila_url_fixture,
    wait_rendered,
    wait_text_change,
)

REDRAW_TIMEOUT_MS = 60_000

pytestmark = BROWSER_MARKS
voila_url = voila_url_fixture("voila_moment_arms.log")  # module-scoped; Voila is always stopped
browser = browser_fixture


def _wait_numbers_change(page, before: str) -> str:
    wait_text_change(page, ".ml-numbers", before, timeout=REDRAW_TIMEOUT_MS)
    page.wait_for_timeout(800)  # let plotly finish the redraw
    return page.locator(".ml-numbers").first.inner_text()


def _set_slider(page, degrees: float) -> None:
    """Type a value into the FloatSlider's editable readout (as a user can) and press Enter."""
    readout = page.locator(".widget-slider .widget-readout").first
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(f"{degrees}")
    page.keyboard.press("Enter")


def _angles(text: str) -> dict[str, float]:
    """Moment arms (cm) per method from the numbers table."""
    out = {}
    for label, value in re.findall(r"(generalized force|perturbation|path velocity|no coupling vector)[^\n]*?"
                                   r"(-?\d+\.\d+) cm", text):
        out[label] = float(value)
    return out


def test_moment_arm_dashboard(voila_url, browser):
    page, errors = open_page(browser, f"{voila_url}/voila/render/moment_arms.ipynb", LAPTOP)
    try:
        wait_rendered(page, page.locator(".ml-numbers").first, plots=3)
        assert_clean(page, errors)
        check_on_a_laptop(page, "moment_arms", None, VIEWPORT)
        numbers0 = page.locator(".ml-numbers").first.inner_text()
        assert "vasti" in numbers0 and "knee_angle = 0.0°" in numbers0, numbers0
        r0 = _angles(numbers0)
        assert set(r0) == {"generalized force", "perturbation", "path velocity", "no coupling vector"}, numbers0
        assert abs(r0["generalized force"] - r0["perturbation"]) < 1e-3
        assert abs(r0["generalized force"] - r0["no coupling vector"]) > 0.05  # the patella term
        titles0 = svg_texts(page, ".js-plotly-plot .gtitle")
        assert any("knee_angle = 0.0°" in t for t in titles0), titles0
        assert any("moment arm of vasti about knee_angle" in t for t in titles0), titles0
        assert any("Cᵀf" in t for t in titles0), titles0
        legend = svg_texts(page, ".js-plotly-plot .legendtext")
        assert "line of action" in legend and "distance to joint centre" in legend, legend
        path0 = page.evaluate("() => document.querySelector('.js-plotly-plot .scatterlayer').innerHTML")
        page.screenshot(path=str(ARTIFACTS / "moment_arms_before.png"))

        # Drag the knee to −90°: configuration, numbers and curve marker are redrawn.
        _set_slider(page, -90)
        numbers1 = _wait_numbers_change(page, numbers0)
        assert "knee_angle = -90.0°" in numbers1, numbers1
        r1 = _angles(numbers1)
        assert abs(r1["generalized force"] - r1["perturbation"]) < 1e-3
        assert r1["generalized force"] != r0["generalized force"]
        titles1 = svg_texts(page, ".js-plotly-plot .gtitle")
        assert any("knee_angle = -90.0°" in t for t in titles1), titles1
        path1 = page.evaluate("() => document.querySelector('.js-plotly-plot .scatterlayer').innerHTML")
        assert path1 != path0, "the configuration plot was not redrawn"
        assert_clean(page, errors)
        page.screenshot(path=str(ARTIFACTS / "moment_arms_after.png"))

        # Another model: the spine, its extensor; the coupling vector shows in the bars.
        page.locator(".widget-dropdown").filter(has=page.locator("label", has_text=re.compile("^model$"))) \
            .locator("select").select_option(label="Spine: flexion split over 3 joints")
        numbers2 = _wait_numbers_change(page, numbers1)
        assert "extensor" in numbers2 and "flex1 = 0.0°" in numbers2, numbers2
        r2 = _angles(numbers2)
        assert abs(r2["generalized force"]) > 2 * abs(r2["no coupling vector"])  # three joints vs one
        texts = svg_texts(page, ".js-plotly-plot .textpoint")
        assert any(t in ("c=0.87", "c=0.88") for t in texts) and any("c=0.62" in t or "c=0.63" in t for t in texts), texts
        page.locator(".widget-dropdown").filter(has=page.locator("label", has_text=re.compile("^muscle$"))) \
            .locator("select").select_option(label="flexor")
        numbers3 = _wait_numbers_change(page, numbers2)
        assert "flexor" in numbers3
        assert_clean(page, errors)
        page.screenshot(path=str(ARTIFACTS / "moment_arms_spine.png"), full_page=True)
    finally:
        page.close()
