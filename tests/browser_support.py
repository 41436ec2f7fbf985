"""Shared scaffolding of the browser tests: Voila serving ``widgets/`` and headless Chromium (Playwright).

Imported by ``tests/test_*browser.py`` the way the other test helpers are
(``tests/`` is put on ``sys.path`` by pytest). Importing it skips the importing
test module when the Python ``playwright`` package is missing; ``BROWSER_MARKS``
(for ``pytestmark``) marks the tests ``browser`` and skips them when
``/usr/bin/chromium`` or Voila is missing. A test module takes the fixtures as
``voila_url = voila_url_fixture("voila_<name>.log")`` and ``browser = browser_fixture``.
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
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 1500}
#: A laptop screen: each dashboard is first opened at this size (:func:`check_on_a_laptop`)
LAPTOP = {"width": 1366, "height": 768}
#: Axis titles that name a quantity without a unit on purpose (dimensionless, or counts).
UNITLESS = {"activation", "excitation", "iteration", "mesh intervals N", "error", "objective",
            "constraint violation", "weighted goal value", "multiplier 0", "coupling factor"}
# Waits, not speed checks: how long a page may take before the test gives up. Generous, because CI machines are
# shared (the gait2d dashboard's re-solve took over 120 s here with three solves running on two cores).
LOAD_TIMEOUT_MS = 300_000
SOLVE_TIMEOUT_MS = 360_000

playwright_sync = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not found"),
    pytest.mark.skipif(importlib.util.find_spec("voila") is None, reason="voila is not installed"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_widgets(log_name: str):
    """Serve ``widgets/`` with Voila in fast mode, logging to ``test-artifacts/<log_name>``.

    Yields the base URL; always stops the server (and the kernels it started).
    """
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    env = dict(os.environ, MOCO_LAB_FAST="1")
    env.pop("PYTHONPATH", None)  # as an instructor runs it: the notebooks find moco_lab themselves
    cmd = [sys.executable, "-m", "voila", str(ROOT / "widgets"), "--no-browser", f"--port={port}",
           "--Voila.port_retries=0", "--Voila.ip=127.0.0.1", "--VoilaExecutor.timeout=300",
           "--show_tracebacks=True"]
    log_path = ARTIFACTS / log_name
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
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
            os.killpg(proc.pid, signal.SIGTERM)  # Voila and the kernels it started (its own session)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


@contextmanager
def chromium():
    """Headless Debian Chromium (``/usr/bin/chromium``) driven by Playwright; always closed."""
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


def voila_url_fixture(log_name: str):
    """A module-scoped ``voila_url`` fixture serving ``widgets/`` (see ``serve_widgets``); assign it in the test module."""
    @pytest.fixture(scope="module", name="voila_url")
    def voila_url():
        """Serve ``widgets/`` with Voila in fast mode; yield the base URL; always stop the server."""
        with serve_widgets(log_name) as url:
            yield url
    return voila_url


@pytest.fixture(scope="module", name="browser")
def browser_fixture():
    """Module-scoped headless Chromium (see ``chromium``); assign it in the test module as ``browser``."""
    with chromium() as b:
        yield b


def open_page(browser, url: str, viewport: dict = VIEWPORT, console: list[str] | None = None):
    """Open ``url`` in a new page; return it and the list its page errors are collected into.

    With ``console``, the page's console messages are appended to it as well.
    """
    errors: list[str] = []
    page = browser.new_page(viewport=viewport)
    if console is not None:
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="commit")
    return page, errors


def wait_rendered(page, ready, plots: int, settle_ms: int = 800) -> None:
    """Wait for the locator ``ready`` and for ``plots`` plotly figures, then let plotly finish the layout."""
    ready.wait_for(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {2 * plots}",
        timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(settle_ms)


def wait_text_change(page, selector: str, before: str, timeout: float = SOLVE_TIMEOUT_MS) -> None:
    """Wait until the first element matching ``selector`` shows a non-empty text other than ``before``."""
    page.wait_for_function(
        "([sel, old]) => { const e = document.querySelector(sel); return e && e.innerText !== old"
        " && e.innerText.trim() !== ''; }", arg=[selector, before], timeout=timeout)


def wait_button_enabled(page, name: str, timeout: float = SOLVE_TIMEOUT_MS) -> None:
    """Wait until the button ``name`` is enabled (it comes back when its handler has finished)."""
    page.get_by_role("button", name=name).and_(page.locator("button:enabled")).wait_for(timeout=timeout)


def svg_texts(page, selector: str) -> list[str]:
    """``textContent`` of SVG elements (``innerText`` is undefined for SVG)."""
    return page.evaluate("(sel) => Array.from(document.querySelectorAll(sel)).map(e => e.textContent)", selector)


def _labelled(page, widget_class: str, label: str):
    return page.locator(widget_class).filter(
        has=page.locator("label", has_text=re.compile(f"^{re.escape(label)}$")))


def select(page, label: str, value: str) -> None:
    """Choose ``value`` in the dropdown labelled exactly ``label``."""
    _labelled(page, ".widget-dropdown", label).locator("select").select_option(value)


def set_number(page, label: str, value: float) -> None:
    """Type ``value`` into the number field labelled exactly ``label`` and press Enter."""
    field = _labelled(page, ".widget-inline-hbox", label).locator("input").first
    field.fill(str(value))
    field.press("Enter")  # ipywidgets text fields sync on Enter or blur


def assert_clean(page, errors, message: str = "an error is shown in the panel") -> None:
    """No traceback, widget error or ⚠ in the page, and no page errors."""
    body = page.inner_text("body")
    assert "Traceback" not in body
    assert "Error displaying widget" not in body
    assert "⚠" not in body, message
    assert not errors, errors


def check_on_a_laptop(page, name: str, button: str | None, viewport: dict) -> None:
    """A dashboard just opened at the :data:`LAPTOP` size and rendered, as a student first sees it on a
    1366×768 screen: its action ``button`` (None: none) is visible without scrolling, and every plot axis that
    shows a physical quantity says its unit (in parentheses; :data:`UNITLESS` names the exceptions). The visible
    part goes to ``test-artifacts/laptop_<name>.png``. Then the page is resized to ``viewport`` for the rest of
    the test (so that each dashboard is opened, and its first solve run, once)."""
    if button:
        box = page.get_by_role("button", name=button).bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= LAPTOP["height"], (
            f"{name}: the {button!r} button is below the fold on a laptop screen: {box}")
    page.screenshot(path=str(ARTIFACTS / f"laptop_{name}.png"))
    titles = [t.strip() for t in svg_texts(page, ".js-plotly-plot .g-ytitle, .js-plotly-plot .g-y2title")]
    titles = [t for t in titles if t]
    assert titles, f"{name}: no y-axis titles at all"
    for t in titles:
        assert "(" in t or t in UNITLESS, f"{name}: axis {t!r} names no unit"
    page.set_viewport_size(viewport)
    page.wait_for_timeout(500)   # plotly's relayout at the new size
