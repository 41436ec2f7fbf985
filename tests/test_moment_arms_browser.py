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

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 1500}
LOAD_TIMEOUT_MS = 180_000
REDRAW_TIMEOUT_MS = 60_000

playwright_sync = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not found"),
    pytest.mark.skipif(importlib.util.find_spec("voila") is None, reason="voila is not installed"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def voila_url():
    """Serve ``widgets/`` with Voila in fast mode; yield the base URL; always stop the server."""
    ARTIFACTS.mkdir(exist_ok=True)
    port = _free_port()
    env = dict(os.environ, MOCO_LAB_FAST="1")
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "voila", str(ROOT / "widgets"), "--no-browser", f"--port={port}",
           "--Voila.port_retries=0", "--Voila.ip=127.0.0.1", "--VoilaExecutor.timeout=300",
           "--show_tracebacks=True"]
    log_path = ARTIFACTS / "voila_moment_arms.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while "is running at" not in log_path.read_text():
            if proc.poll() is not None:
                raise RuntimeError(f"Voila exited with {proc.returncode}:\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Voila did not start within 60 s:\n{log_path.read_text()}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # Voila and its kernels (own session)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


def _svg_texts(page, selector: str) -> list[str]:
    return page.evaluate("(sel) => Array.from(document.querySelectorAll(sel)).map(e => e.textContent)", selector)


def _assert_clean(page, errors) -> None:
    body = page.inner_text("body")
    assert "Traceback" not in body
    assert "Error displaying widget" not in body
    assert "⚠" not in body, "an error is shown in the panel"
    assert not errors, errors


def _wait_numbers_change(page, before: str) -> str:
    page.wait_for_function(
        "(old) => { const e = document.querySelector('.ml-numbers'); return e && e.innerText !== old"
        " && e.innerText.trim() !== ''; }", arg=before, timeout=REDRAW_TIMEOUT_MS)
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
    errors: list[str] = []
    page = browser.new_page(viewport=VIEWPORT)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{voila_url}/voila/render/moment_arms.ipynb", wait_until="commit")
        page.locator(".ml-numbers").first.wait_for(timeout=LOAD_TIMEOUT_MS)
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 6",
                               timeout=LOAD_TIMEOUT_MS)
        page.wait_for_timeout(800)
        _assert_clean(page, errors)
        numbers0 = page.locator(".ml-numbers").first.inner_text()
        assert "vasti" in numbers0 and "knee_angle = 0.0°" in numbers0, numbers0
        r0 = _angles(numbers0)
        assert set(r0) == {"generalized force", "perturbation", "path velocity", "no coupling vector"}, numbers0
        assert abs(r0["generalized force"] - r0["perturbation"]) < 1e-3
        assert abs(r0["generalized force"] - r0["no coupling vector"]) > 0.05  # the patella term
        titles0 = _svg_texts(page, ".js-plotly-plot .gtitle")
        assert any("knee_angle = 0.0°" in t for t in titles0), titles0
        assert any("moment arm of vasti about knee_angle" in t for t in titles0), titles0
        assert any("Cᵀf" in t for t in titles0), titles0
        legend = _svg_texts(page, ".js-plotly-plot .legendtext")
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
        titles1 = _svg_texts(page, ".js-plotly-plot .gtitle")
        assert any("knee_angle = -90.0°" in t for t in titles1), titles1
        path1 = page.evaluate("() => document.querySelector('.js-plotly-plot .scatterlayer').innerHTML")
        assert path1 != path0, "the configuration plot was not redrawn"
        _assert_clean(page, errors)
        page.screenshot(path=str(ARTIFACTS / "moment_arms_after.png"))

        # Another model: the spine, its extensor; the coupling vector shows in the bars.
        page.locator(".widget-dropdown").filter(has=page.locator("label", has_text=re.compile("^model$"))) \
            .locator("select").select_option(label="Spine: flexion split over 3 joints")
        numbers2 = _wait_numbers_change(page, numbers1)
        assert "extensor" in numbers2 and "flex1 = 0.0°" in numbers2, numbers2
        r2 = _angles(numbers2)
        assert abs(r2["generalized force"]) > 2 * abs(r2["no coupling vector"])  # three joints vs one
        texts = _svg_texts(page, ".js-plotly-plot .textpoint")
        assert any(t in ("c=0.87", "c=0.88") for t in texts) and any("c=0.62" in t or "c=0.63" in t for t in texts), texts
        page.locator(".widget-dropdown").filter(has=page.locator("label", has_text=re.compile("^muscle$"))) \
            .locator("select").select_option(label="flexor")
        numbers3 = _wait_numbers_change(page, numbers2)
        assert "flexor" in numbers3
        _assert_clean(page, errors)
        page.screenshot(path=str(ARTIFACTS / "moment_arms_spine.png"), full_page=True)
    finally:
        page.close()
