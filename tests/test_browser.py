"""The Voila dashboards in ``widgets/``, driven in headless Chromium with Playwright.

Starts ``voila widgets/`` on a free localhost port (``MOCO_LAB_FAST=1``),
opens each dashboard on a laptop screen (1366×768: the action button above the
fold, a unit on every physical axis), then at a larger size changes settings,
presses the button and checks that the plots and the reported numbers change
and that no error is shown.
Screenshots go to ``test-artifacts/`` (git-ignored). Voila is always stopped.

Run only these tests with ``pytest -m browser tests/test_browser.py``; they
are skipped when ``/usr/bin/chromium`` or the Python ``playwright`` package is
missing.
"""
from __future__ import annotations

import re
from pathlib import Path

from browser_support import (
    ARTIFACTS,
    BROWSER_MARKS,
    LAPTOP,
    SOLVE_TIMEOUT_MS,
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

VIEWPORT = {"width": 1280, "height": 1350}

pytestmark = BROWSER_MARKS
voila_url = voila_url_fixture("voila.log")  # module-scoped; Voila is always stopped
browser = browser_fixture


class Page:
    """A dashboard page plus the console messages and page errors it produced."""

    def __init__(self, browser, url: str):
        self.console: list[str] = []
        self.name = url.rsplit("/", 1)[-1].removesuffix(".ipynb")
        self.page, self.errors = open_page(browser, url, LAPTOP, console=self.console)

    def wait_ready(self, button: str, plots: int) -> None:
        """Wait for the dashboard's first rendering on a laptop screen, check that it shows no error and that it
        fits the screen (:func:`~browser_support.check_on_a_laptop`), then go on at :data:`VIEWPORT`."""
        # 500 ms: let plotly finish laying out before screenshots
        wait_rendered(self.page, self.page.get_by_role("button", name=button), plots, settle_ms=500)
        self.assert_clean()
        check_on_a_laptop(self.page, self.name, button, VIEWPORT)

    def text(self, selector: str) -> str:
        return self.page.locator(selector).first.inner_text()

    def svg_texts(self, selector: str) -> list[str]:
        """``textContent`` of SVG elements (``innerText`` is undefined for SVG)."""
        return svg_texts(self.page, selector)

    def plot_titles(self) -> list[str]:
        return self.svg_texts(".js-plotly-plot .gtitle")

    def select(self, label: str, value: str) -> None:
        select(self.page, label, value)

    def set_int(self, label: str, value: float) -> None:
        set_number(self.page, label, value)

    def type_into_slider(self, label_pattern: str, text: str) -> None:
        """Type ``text`` into the readout of the slider whose label matches ``label_pattern`` (a regex), then Enter."""
        slider = self.page.locator(".widget-slider").filter(
            has=self.page.locator("label", has_text=re.compile(f"^{label_pattern}$")))
        slider.locator(".widget-readout").click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(text)
        self.page.keyboard.press("Enter")

    def record_progress(self) -> None:
        """Collect every text the progress line shows (MutationObserver), into ``window.__progress``."""
        self.page.evaluate("""() => {
            window.__progress = [];
            const el = document.querySelector('.ml-progress');
            new MutationObserver(() => window.__progress.push(el.innerText))
                .observe(el, {subtree: true, childList: true, characterData: true});
        }""")

    def progress_seen(self) -> list[str]:
        return self.page.evaluate("() => window.__progress || []")

    def click_and_wait(self, button: str, changed_selector: str, before: str) -> str:
        self.page.get_by_role("button", name=button).click()
        wait_text_change(self.page, changed_selector, before)
        wait_button_enabled(self.page, button)  # the button comes back (enabled) when the handler has finished
        self.page.wait_for_timeout(600)
        return self.text(changed_selector)

    def screenshot(self, name: str) -> Path:
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path))
        return path

    def assert_clean(self) -> None:
        assert_clean(self.page, self.errors, "a settings error is shown in the panel")

    def close(self):
        self.page.close()


def test_every_dashboard_is_opened_on_a_laptop_screen():
    """Each dashboard in ``widgets/`` has a browser test that opens it at the laptop size first
    (:func:`~browser_support.check_on_a_laptop`, through :meth:`Page.wait_ready` here)."""
    tests = Path(__file__).resolve().parent
    sources = {f.name: f.read_text() for f in tests.glob("test_*browser*.py")}
    for notebook in sorted((tests.parent / "widgets").glob("*.ipynb")):
        opened = [name for name, text in sources.items() if f"/voila/render/{notebook.name}" in text]
        assert opened, f"no browser test opens {notebook.name}"
        assert any("wait_ready(" in sources[n] or "check_on_a_laptop(" in sources[n] for n in opened), notebook.name


def test_verification_explorer(voila_url, browser):
    p = Page(browser, f"{voila_url}/voila/render/verification_explorer.ipynb")
    try:
        p.wait_ready("Solve", plots=3)
        numbers0 = p.text(".ml-numbers")
        titles0 = p.plot_titles()
        assert "Solve_Succeeded" in numbers0 and "Hermite–Simpson" in numbers0 and "N = 10" in numbers0
        assert any("Hermite–Simpson" in t for t in titles0)
        p.screenshot("verification_explorer_before.png")

        # Change the scheme and the mesh, solve: numbers and plots change, previous solution overlaid.
        p.select("scheme", "trapezoidal")
        p.set_int("mesh intervals N", 16)
        p.record_progress()
        numbers1 = p.click_and_wait("Solve", ".ml-numbers", numbers0)
        assert "Solve_Succeeded" in numbers1 and "trapezoidal" in numbers1 and "N = 16" in numbers1
        assert re.search(r"J = 16\.8\d*", numbers1) and numbers1 != numbers0
        titles1 = p.plot_titles()
        assert any("trapezoidal" in t and "N = 16" in t for t in titles1), titles1
        assert "previous" in p.svg_texts(".js-plotly-plot .legendtext")  # legend of the faded overlay
        progress = p.progress_seen()
        print("progress texts seen in the browser:", progress)
        assert progress and "done" in progress[-1], progress
        assert any("solving" in t and "iteration" in t for t in progress), progress  # live, during the solve
        p.assert_clean()
        p.screenshot("verification_explorer_after.png")

        # A solve stopped by the iteration limit (2 iterations) is shown as such, in amber with an
        # explanation; the panel keeps working afterwards.
        p.set_int("max iterations", 2)
        numbers2 = p.click_and_wait("Solve", ".ml-numbers", numbers1)
        assert "⚑ Maximum_Iterations_Exceeded" in numbers2 and "FAILED" not in numbers2
        assert p.page.locator(".ml-chip.ml-warn").count() == 1
        assert "did not converge" in p.text(".ml-box-warn")
        p.screenshot("verification_explorer_failed.png")
        p.set_int("max iterations", 3000)
        numbers3 = p.click_and_wait("Solve", ".ml-numbers", numbers2)
        assert "Solve_Succeeded" in numbers3 and p.page.locator(".ml-box-warn, .ml-box-fail").count() == 0

        # The second problem: the sliding mass, solved on selection.
        p.page.locator(".ml-problem select").select_option(label="Sliding mass, minimum time")
        p.page.wait_for_function(
            "() => document.querySelector('.ml-numbers').innerText.includes('t_f*')", timeout=SOLVE_TIMEOUT_MS)
        p.set_int("mesh intervals N", 20)
        numbers4 = p.click_and_wait("Solve", ".ml-numbers", p.text(".ml-numbers"))
        assert "Solve_Succeeded" in numbers4 and "|t_f − t_f*|" in numbers4
        assert any("Sliding mass" in h for h in p.page.locator(".ml-header h2").all_inner_texts())
        p.assert_clean()
        p.screenshot("verification_explorer_sliding_mass.png")

        # Infeasible: the final time may not exceed 0.3 s, but reaching the target takes 0.4 s.
        p.set_int("t_f max (s)", 0.3)
        numbers5 = p.click_and_wait("Solve", ".ml-numbers", numbers4)
        assert "FAILED" in numbers5 and "t_f*" not in numbers5
        assert "did not converge" in p.text(".ml-box-fail")
        p.screenshot("verification_explorer_infeasible.png")
    finally:
        p.close()


def test_convergence_study(voila_url, browser):
    p = Page(browser, f"{voila_url}/voila/render/convergence_study.ipynb")
    try:
        p.wait_ready("Run mesh sequence", plots=1)
        summary0 = p.text(".ml-numbers")
        assert "Hermite–Simpson" in summary0 and "trapezoidal" in summary0 and "order" in summary0
        assert "solves done" in p.text(".ml-progress")
        p.screenshot("convergence_study_before.png")

        # Only trapezoidal, implicit mode, another mesh sequence.
        p.page.get_by_role("checkbox", name="Hermite–Simpson").uncheck()
        p.select("dynamics mode", "implicit")
        meshes = p.page.locator(".widget-text").filter(has=p.page.locator("label", has_text="mesh intervals N"))
        meshes.locator("input").fill("8, 16, 32")
        meshes.locator("input").press("Enter")
        p.record_progress()
        summary1 = p.click_and_wait("Run mesh sequence", ".ml-numbers", summary0)
        assert "trapezoidal" in summary1 and "Hermite–Simpson" not in summary1
        assert "3 solves done" in p.text(".ml-progress")
        assert any("implicit" in t for t in p.plot_titles())
        table = p.text(".ml-table")
        assert "32" in table and "p =" in table
        seen = p.progress_seen()
        assert any("solve" in s for s in seen), seen
        p.assert_clean()
        p.screenshot("convergence_study_after.png")
    finally:
        p.close()


def test_suspended_mass(voila_url, browser):
    p = Page(browser, f"{voila_url}/voila/render/suspended_mass.ipynb")
    try:
        p.wait_ready("Solve", plots=4)  # states and controls, path of the mass, cost, history
        numbers0 = p.text(".ml-numbers")
        titles0 = p.plot_titles()
        assert "Solve_Succeeded" in numbers0 and "Hermite–Simpson" in numbers0 and "N = 10" in numbers0
        assert "peak activation" in numbers0
        assert any("Hermite–Simpson" in t for t in titles0), titles0
        assert "Path of the mass (predict)" in titles0, titles0
        assert any("three muscles" in h for h in p.page.locator(".ml-header h2").all_inner_texts())
        subplots = p.svg_texts(".js-plotly-plot .annotation-text")
        assert any("activation" in s for s in subplots), subplots
        p.screenshot("suspended_mass_before.png")

        # Change the scheme, solve: numbers and plots change, previous solution overlaid.
        p.select("scheme", "trapezoidal")
        numbers1 = p.click_and_wait("Solve", ".ml-numbers", numbers0)
        assert "Solve_Succeeded" in numbers1 and "trapezoidal" in numbers1 and "N = 10" in numbers1
        assert numbers1 != numbers0
        j0, j1 = (re.search(r"J = ([0-9.eE+-]+)", n).group(1) for n in (numbers0, numbers1))
        assert j0 != j1
        titles1 = p.plot_titles()
        assert titles1 != titles0 and any("trapezoidal" in t for t in titles1), titles1
        legend = p.svg_texts(".js-plotly-plot .legendtext")
        assert legend.count("previous") >= 2, legend  # in the states and controls and in the path
        p.assert_clean()
        p.screenshot("suspended_mass_after.png")
        path_plot = p.page.locator(".js-plotly-plot").filter(has_text="Path of the mass")
        path_plot.screenshot(path=str(ARTIFACTS / "suspended_mass_path.png"))  # scrolls it into view

        # Track the prediction: the task re-poses the problem (tracking goals, weight slider) and solves.
        p.select("task", "track")
        p.page.wait_for_function(
            "() => document.querySelector('.ml-numbers').innerText.includes('activations vs prediction')",
            timeout=SOLVE_TIMEOUT_MS)
        wait_button_enabled(p.page, "Solve")
        p.page.wait_for_timeout(600)
        numbers2 = p.text(".ml-numbers")
        assert "Solve" in numbers2 and "implicit" in numbers2, numbers2
        sliders = p.page.locator(".ml-sidebar .widget-hslider")
        assert sliders.count() == 1  # the tracking weight's log slider, under its editable number
        assert sliders.first.bounding_box()["width"] >= 200  # about 80 px per decade of 0.1 ... 100
        assert p.page.locator(".ml-sidebar .widget-text").filter(
            has=p.page.locator("label", has_text="weight")).count() == 2  # both goals' weights can be typed
        rms2 = float(re.search(r"activations vs prediction: RMS ([0-9.eE+-]+)%", numbers2).group(1))
        assert rms2 < 1.0, numbers2
        assert "Path of the mass (track)" in p.plot_titles()
        assert "prediction (tracked)" in p.svg_texts(".js-plotly-plot .legendtext")
        p.assert_clean()
        p.screenshot("suspended_mass_track.png")

        # Effort exponent 4: the same path, other activations (muscle redundancy).
        p.set_int("exponent", 4)
        numbers3 = p.click_and_wait("Solve", ".ml-numbers", numbers2)
        rms4 = float(re.search(r"activations vs prediction: RMS ([0-9.eE+-]+)%", numbers3).group(1))
        print(f"activation RMS vs prediction (fast mode): exponent 2 {rms2}%, exponent 4 {rms4}%")
        assert rms4 > 5.0 and rms4 > 20 * rms2, (rms2, rms4)
        p.assert_clean()
        p.screenshot("suspended_mass_track_exponent4.png")
        path_plot.screenshot(path=str(ARTIFACTS / "suspended_mass_track_path.png"))
        p.page.screenshot(path=str(ARTIFACTS / "suspended_mass_track_full.png"), full_page=True)
    finally:
        p.close()


def test_squat_to_stand(voila_url, browser):
    """The squat dashboard opens solved (no spring); optimizing the knee spring re-solves warm-started, shows the
    stiffness in the numbers line, and keeps the unassisted activations dotted under the new ones."""
    p = Page(browser, f"{voila_url}/voila/render/squat_to_stand.ipynb")
    try:
        p.wait_ready("Solve", plots=5)  # states and controls, cost, history, the motion, the activations
        numbers0 = p.text(".ml-numbers")
        assert "Solve_Succeeded" in numbers0 and "implicit" in numbers0 and "knee spring" not in numbers0
        assert "The rise (press play)" in p.plot_titles() and any("Activations" in t for t in p.plot_titles())
        p.select("spring", "optimize")
        numbers1 = p.click_and_wait("Solve", ".ml-numbers", numbers0)
        assert "Solve_Succeeded" in numbers1, numbers1
        k = float(re.search(r"knee spring: ([0-9.]+) N·m/rad", numbers1).group(1))
        assert 60 <= k <= 100, numbers1
        peaks = [float(re.search(r"peak vas_int_r: ([0-9.]+)", n).group(1)) for n in (numbers0, numbers1)]
        assert peaks[1] < peaks[0]  # the spring takes load off the vasti
        legend = p.svg_texts(".js-plotly-plot .legendtext")
        assert "vas_int_r" in legend
        activations = p.page.locator(".js-plotly-plot").filter(has_text="Activations (solid")
        assert activations.locator("path.js-line").count() >= 12  # 6 muscles, now and previous
        p.assert_clean()
        activations.screenshot(path=str(ARTIFACTS / "squat_to_stand_activations.png"))
    finally:
        p.close()


def test_walking(voila_url, browser):
    """The walking dashboard opens with gait2d's converged prediction, the walk animated and drawn against Winter's
    bands; weakening the calf muscles re-predicts warm-started: the peak soleus activation rises and the previous
    walk stays (dashed) in the Winter figure. Choosing Moco's 2-D walker predicts it at once at 1.2 m/s, the cycle
    animated and drawn against the example's data, its activations drawn. (Its weak-soleus re-prediction is the
    same Solve path, checked in Python by tests/test_walking_dashboard.py.)"""
    p = Page(browser, f"{voila_url}/voila/render/walking.ipynb")
    try:
        p.wait_ready("Solve", plots=5)  # activations, cost, history, the walk, angles and GRFs against Winter
        numbers0 = p.text(".ml-numbers")
        assert "Solve_Succeeded" in numbers0 and "stance r / l" in numbers0 and "N = 25" in numbers0, numbers0
        titles = p.plot_titles()
        assert "The predicted cycle at 1.325 m/s (press play)" in titles, titles
        assert any("against Winter" in t for t in titles), titles
        p.set_int("soleus (%)", 70)
        p.set_int("gastroc. (%)", 70)
        numbers1 = p.click_and_wait("Solve", ".ml-numbers", numbers0)
        assert "Solve_Succeeded" in numbers1, numbers1
        peaks = [float(re.search(r"peak soleus_r: ([0-9.]+)", n).group(1)) for n in (numbers0, numbers1)]
        assert peaks[1] > peaks[0], (peaks, numbers1)
        winter = p.page.locator(".js-plotly-plot").filter(has_text="against Winter")
        assert "previous" in svg_texts(p.page, ".js-plotly-plot .legendtext")
        p.assert_clean()
        winter.screenshot(path=str(ARTIFACTS / "walking_gait2d_winter.png"))
        p.page.locator(".js-plotly-plot").filter(has_text="press play").screenshot(
            path=str(ARTIFACTS / "walking_gait2d_motion.png"))
        p.page.screenshot(path=str(ARTIFACTS / "walking_gait2d_full.png"), full_page=True)

        # The other walker, solved on selection.
        p.page.locator(".ml-problem select").select_option(label="Predicting walking with Moco's 2-D walker")
        p.page.wait_for_function(
            "() => document.querySelector('.ml-numbers').innerText.includes('step')", timeout=SOLVE_TIMEOUT_MS)
        wait_button_enabled(p.page, "Solve")
        p.page.wait_for_timeout(600)
        numbers2 = p.text(".ml-numbers")
        assert "Solve_Succeeded" in numbers2 and "double support" in numbers2 and "N = 15" in numbers2, numbers2
        titles = p.plot_titles()
        assert "A full gait cycle at 1.2 m/s (press play)" in titles, titles
        assert any("tracking data of Moco's example" in t for t in titles), titles
        assert not any("against Winter" in t for t in titles), titles  # gait2d's figures are gone
        # (its weak-soleus re-prediction runs the Solve path shown above for gait2d: tests/test_walking_dashboard.py)
        assert "peak soleus_r" in numbers2
        activations = p.page.locator(".js-plotly-plot").filter(has_text="Activations of the right leg")
        assert activations.locator("path.js-line").count() >= 9
        p.assert_clean()
        p.page.locator(".js-plotly-plot").filter(has_text="tracking data of Moco's example").screenshot(
            path=str(ARTIFACTS / "walking_2d_data.png"))
        p.page.locator(".js-plotly-plot").filter(has_text="press play").screenshot(
            path=str(ARTIFACTS / "walking_2d_motion.png"))
        p.page.screenshot(path=str(ARTIFACTS / "walking_2d_full.png"), full_page=True)
    finally:
        p.close()

def test_motion_capture(voila_url, browser):
    """The motion-capture dashboard opens with a run done: residual bars for the four reconstructions with the
    5 / 2 / 1 % lines, the fitted model over the truth, marker errors; the joint fit passes. Tightening the mass
    prior (typed into the slider's readout) and running again changes the fitted segment masses, and the previous
    run's joint-fit bars appear. The second tab computes the real 3-D trial when opened: its numbers and the 3-D
    marker fit, the joint moments against id_walk.sto, the pelvis residual and its reduction."""
    p = Page(browser, f"{voila_url}/voila/render/motion_capture.ipynb")
    try:
        p.wait_ready("Run", plots=3)
        numbers0 = p.text(".ml-numbers")
        assert "Gauss-Newton converged" in numbers0 and "masses + kinematics: force" in numbers0, numbers0
        titles = p.plot_titles()
        assert "Residuals of each reconstruction" in titles and "Marker errors" in titles, titles
        assert any(t.startswith("Fitted over true") for t in titles), titles
        annotations = p.svg_texts(".js-plotly-plot .annotation-text")
        assert {"5 % (Hicks)", "2 % (AddBiomechanics)", "1 % (Hicks)"} <= set(annotations), annotations
        ticks = p.svg_texts(".js-plotly-plot .xtick text")
        assert {"raw IK", "smoothed", "masses alone", "masses + kinematics"} <= set(ticks), ticks
        p.type_into_slider(r"mass prior \(%\)", "5")
        numbers1 = p.click_and_wait("Run", ".ml-numbers", numbers0)
        assert "Gauss-Newton converged" in numbers1, numbers1
        thigh = [float(re.search(r"thigh ([0-9.]+)/", n).group(1)) for n in (numbers0, numbers1)]
        assert thigh[0] != thigh[1], (thigh, numbers1)
        assert "previous run (joint fit)" in p.svg_texts(".js-plotly-plot .xtick text")
        p.assert_clean()
        p.page.screenshot(path=str(ARTIFACTS / "motion_capture_full.png"), full_page=True)
        # the second tab: the real 3-D trial computes when first opened (lesson 17)
        p.page.get_by_role("tab", name="Real 3-D trial").click()
        real = p.page.locator(".ml-numbers").filter(has_text="the plates weigh")
        real.first.wait_for(timeout=120_000)
        numbers = real.first.inner_text()
        assert "85.07" in numbers and "4.5 %" in numbers and "converged in every frame" in numbers, numbers
        assert "masses and kinematics together" in numbers, numbers
        p.page.wait_for_timeout(800)  # plotly's layout of the four new figures
        titles = p.plot_titles()
        assert "Right leg joint moments" in titles and "Residual reduction on the plates" in titles, titles
        assert any(t.startswith("Pelvis residual force") for t in titles), titles
        assert any(t.startswith("Pose and markers at t = 1.00 s") for t in titles), titles
        assert {"measured markers", "id_walk.sto"} <= set(p.svg_texts(".js-plotly-plot .legendtext")), titles
        p.assert_clean()
        p.page.screenshot(path=str(ARTIFACTS / "motion_capture_real_trial.png"), full_page=True)
    finally:
        p.close()


def test_walking_3d(voila_url, browser):
    """The 3-D walking dashboard opens with the inverse solved: the trial drawn in a 3-D scene, ten panels of
    activations against EMG envelopes. An EMG weight typed into the slider's readout and Solve: the EMG-tracking
    goal appears in the numbers, the previous solve stays as dotted lines. *Show the stored study* draws the stored
    knee-load study with its peaks in body weights."""
    p = Page(browser, f"{voila_url}/voila/render/walking_3d.ipynb")
    try:
        p.wait_ready("Solve", plots=2)
        numbers0 = p.text(".ml-numbers")
        assert "Solve_Succeeded" in numbers0 and "EMG correlation r" in numbers0, numbers0
        assert p.page.locator(".js-plotly-plot .gl-container canvas").count() >= 1  # the WebGL 3-D scene
        titles = p.svg_texts(".js-plotly-plot .gtitle")
        assert any(t.startswith("Right-leg muscle activity") for t in titles), titles
        assert {"soleus", "gastrocnemius", "gluteus medius"} <= set(p.svg_texts(".js-plotly-plot .annotation-text"))
        p.type_into_slider("EMG weight", "10")
        numbers1 = p.click_and_wait("Solve", ".ml-numbers", numbers0)
        assert "emg_tracking" in numbers1 and "largest changes in mean activation" in numbers1, numbers1
        assert any(t.startswith("previous (p = 2)") for t in p.svg_texts(".js-plotly-plot .legendtext"))
        # the stored knee-load study: its figure and numbers appear below
        p.page.get_by_role("button", name="Show the stored study").click()
        p.page.locator(".js-plotly-plot .gtitle", has_text="Knee reaction force on the femur").first.wait_for(timeout=60_000)
        knee = p.page.locator(".ml-numbers", has_text="body weights").first
        knee.wait_for(timeout=60_000)  # the numbers' update can arrive after the figure
        assert "r knee peak 4.3 → 2.8 body weights" in knee.inner_text()
        p.assert_clean()
        p.page.screenshot(path=str(ARTIFACTS / "walking_3d_full.png"), full_page=True)
        # Voila scrolls inside its own container, so the full page stops above the knee figure: picture it alone
        figure = p.page.locator(".js-plotly-plot").filter(has_text="Knee reaction force on the femur").first
        figure.locator(".main-svg").first.wait_for(timeout=60_000)
        figure.scroll_into_view_if_needed()
        figure.screenshot(path=str(ARTIFACTS / "walking_3d_knee.png"))
    finally:
        p.close()
