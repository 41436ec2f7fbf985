"""The parabola dashboard ``widgets/parabola.ipynb`` in headless Chromium (Voila + Playwright).

Starts ``voila widgets/`` on a free localhost port (``MOCO_LAB_FAST=1``), opens
the dashboard, checks that the panel solved the actuated bead and drew the
curve with the constraint-force arrows and the constraint-error plot, then
switches to trapezoidal (larger midpoint drift), raises the multiplier penalty
w_λ (larger J) and switches to the released bead. Screenshots go to
``test-artifacts/parabola_*.png``. Voila is always stopped.

Run with ``pytest -m browser tests/test_parabola_browser.py``; skipped when
``/usr/bin/chromium``, Voila or the Python ``playwright`` package is missing.
"""
from __future__ import annotations

import re

from browser_support import (
    ARTIFACTS,
    BROWSER_MARKS,
    LAPTOP,
    SOLVE_TIMEOUT_MS,
    VIEWPORT,
    assert_clean,
    browser_fixture,
    check_on_a_laptop,
    open_page,
    select,
    set_number,
    svg_texts,
    voila_url_fixture,
    wait_button_enabled,
    wait_rendered,
    wait_text_change,
)

pytestmark = BROWSER_MARKS
voila_url = voila_url_fixture("voila_parabola.log")  # module-scoped; Voila is always stopped
browser = browser_fixture


def _numbers(page) -> str:
    return page.locator(".ml-numbers").first.inner_text()


def _number(text: str, label: str) -> float:
    match = re.search(re.escape(label) + r":\s*([-0-9.eE+]+)", text)
    assert match, (label, text)
    return float(match.group(1))


def _wait_solved(page, before: str) -> str:
    """Wait until the numbers line differs from ``before`` and the Solve button is enabled again."""
    wait_text_change(page, ".ml-numbers", before)
    wait_button_enabled(page, "Solve")
    page.wait_for_timeout(800)  # let plotly finish the redraw
    return _numbers(page)


def _drawn_segments(page, trace_name: str) -> int:
    """Number of SVG line pieces plotly drew for the trace ``trace_name`` (one per arrow shaft or barb)."""
    return page.evaluate("""(name) => {
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            if (!gd.data) continue;
            const k = gd.data.findIndex(t => t.name === name);
            if (k < 0) continue;
            const trace = gd.querySelectorAll('.scatterlayer .trace')[k];
            if (!trace) return 0;
            return Array.from(trace.querySelectorAll('path.js-line'))
                .filter(p => (p.getAttribute('d') || '').length > 3).length;
        }
        return 0;
    }""", trace_name)


def test_parabola_dashboard(voila_url, browser):
    page, errors = open_page(browser, f"{voila_url}/voila/render/parabola.ipynb", LAPTOP)
    try:
        # states and controls, path with arrows, constraint errors, cost, history
        wait_rendered(page, page.get_by_role("button", name="Solve"), plots=5)
        assert_clean(page, errors)
        check_on_a_laptop(page, "parabola", "Solve", VIEWPORT)
        numbers0 = _numbers(page)
        assert "Solve_Succeeded" in numbers0 and "Hermite–Simpson" in numbers0 and "N = 10" in numbers0, numbers0
        assert _number(numbers0, "max |φ| at mesh points") < 1e-9
        assert _number(numbers0, "max |φ̇| at mesh points") < 1e-9
        drift_hs = _number(numbers0, "max midpoint drift |φ|")
        lam0 = _number(numbers0, "max |λ|")
        assert 1e-5 < drift_hs < 1e-2 and 25 < lam0 < 35, numbers0
        titles = svg_texts(page, ".js-plotly-plot .gtitle")
        assert "Bead on y = x² (move): forces on the bead" in titles, titles
        assert "Kinematic constraint (hermite-simpson)" in titles, titles
        assert any("parabola" in h for h in page.locator(".ml-header h2").all_inner_texts())
        legend = svg_texts(page, ".js-plotly-plot .legendtext")
        for name in ("y = x²", "path", "constraint force −Gᵀλ", "actuator force ×5", "|φ| at mesh points"):
            assert name in legend, (name, legend)
        # N = 10 Hermite–Simpson: 21 grid points, an arrow (shaft and two barbs) at each
        assert _drawn_segments(page, "constraint force −Gᵀλ") == 63
        assert _drawn_segments(page, "actuator force ×5") >= 45  # (no arrow where the force is exactly 0)
        annotations = svg_texts(page, ".js-plotly-plot .annotation-text")
        assert any(re.match(r"arrows: [0-9.]+ N = ", a) for a in annotations), annotations
        page.screenshot(path=str(ARTIFACTS / "parabola_before.png"))
        path_plot = page.locator(".js-plotly-plot").filter(has_text="forces on the bead")
        path_plot.screenshot(path=str(ARTIFACTS / "parabola_path.png"))  # scrolls it into view

        # Trapezoidal: φ only at the mesh points, so φ̇ ≠ 0 there and the midpoints drift more.
        select(page, "scheme", "trapezoidal")
        page.get_by_role("button", name="Solve").click()
        numbers1 = _wait_solved(page, numbers0)
        assert "Solve_Succeeded" in numbers1 and "trapezoidal" in numbers1, numbers1
        assert _number(numbers1, "max |φ̇| at mesh points") > 1e-2
        drift_tr = _number(numbers1, "max midpoint drift |φ|")
        assert drift_tr > 10 * drift_hs, (drift_hs, drift_tr)
        assert "Kinematic constraint (trapezoidal)" in svg_texts(page, ".js-plotly-plot .gtitle")
        assert "previous" in svg_texts(page, ".js-plotly-plot .legendtext")
        assert_clean(page, errors)
        page.screenshot(path=str(ARTIFACTS / "parabola_trapezoidal.png"), full_page=True)

        # A multiplier penalty: the curve's force now costs, the actuators take over part of it; J grows.
        set_number(page, "w_λ (λ penalty)", 1)
        page.get_by_role("button", name="Solve").click()
        numbers2 = _wait_solved(page, numbers1)
        j1, j2 = (float(re.search(r"J = ([0-9.eE+-]+)", n).group(1)) for n in (numbers1, numbers2))
        assert j2 > j1 + 10, (j1, j2)
        assert _number(numbers2, "max |λ|") < _number(numbers1, "max |λ|")
        assert_clean(page, errors)

        # The released bead (no actuators, no goal): re-posed and solved on selection.
        select(page, "motion", "release")
        page.wait_for_function("() => document.querySelector('.ml-numbers').innerText.includes('t_f = 0.8')",
                               timeout=SOLVE_TIMEOUT_MS)
        numbers3 = _wait_solved(page, numbers2)
        assert "Solve_Succeeded" in numbers3 and "t_f = 0.8" in numbers3, numbers3
        assert "Bead on y = x² (release): forces on the bead" in svg_texts(page, ".js-plotly-plot .gtitle")
        legend = svg_texts(page, ".js-plotly-plot .legendtext")
        assert "constraint force −Gᵀλ" in legend and not any(t.startswith("actuator") for t in legend), legend
        assert 35 < _number(numbers3, "max |λ|") < 80, numbers3
        assert_clean(page, errors)
        path_plot = page.locator(".js-plotly-plot").filter(has_text="forces on the bead")
        path_plot.screenshot(path=str(ARTIFACTS / "parabola_release_path.png"))
        page.screenshot(path=str(ARTIFACTS / "parabola_release.png"), full_page=True)
    finally:
        page.close()
