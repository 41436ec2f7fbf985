"""How many students can one machine serve? Kernels' memory, page loads and solves with N users at once.

Serves ``widgets/`` with Voila exactly as ``./run dashboards`` does (learner mode, the same culling
settings), opens each dashboard in headless Chromium for 1 and then N users at the same time, and measures

* the time until each page is usable (its action button and first plots drawn);
* each kernel's memory: RSS (what ``top`` shows) and PSS (its fair share of pages shared with the other
  kernels: what a machine actually needs per extra student), after the page load and after a solve;
* the time of a solve pressed by 1 user, then by N users at once;
* how long a closed tab's kernel lives on before Voila's culling frees it.

Writes ``benchmarks/dashboard_capacity.md``. Run from the repository root (about 10 minutes)::

    .venv/bin/python benchmarks/dashboard_capacity.py [--users 4]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).with_suffix(".md")
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
CULL_IDLE, CULL_INTERVAL = 120, 30  # as ./run dashboards
#: dashboard -> its action button (None: no solve, the page computes on load)
DASHBOARDS = {"verification_explorer": "Solve", "suspended_mass": "Solve", "parabola": "Solve",
              "convergence_study": "Run mesh sequence", "moment_arms": None}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parent(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return 0


def kernels(server: int) -> dict[int, tuple[float, float]]:
    """{pid: (RSS MB, PSS MB)} of the ipykernel processes started by the Voila server ``server`` (its children:
    jupyter_client starts each kernel in a session of its own)."""
    out = {}
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            if _parent(pid) != server:
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            if "ipykernel" not in cmd:
                continue
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().split("\n")
            kb = {ln.split(":")[0]: float(ln.split()[1]) for ln in rollup if ln.startswith(("Rss:", "Pss:"))}
            out[pid] = (kb["Rss"] / 1024, kb["Pss"] / 1024)
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue
    return out


def serve(port: int, log) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("MOCO_LAB_FAST", None)  # learner mode, as students get it
    cmd = [sys.executable, "-m", "voila", str(ROOT / "widgets"), "--no-browser", f"--port={port}",
           "--Voila.port_retries=0", "--Voila.ip=127.0.0.1", f"--MappingKernelManager.cull_idle_timeout={CULL_IDLE}",
           f"--MappingKernelManager.cull_interval={CULL_INTERVAL}", "--VoilaExecutor.timeout=300"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while "is running at" not in Path(log.name).read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(Path(log.name).read_text())
        time.sleep(0.2)
    return proc


def ready(page, button: str | None) -> None:
    target = page.get_by_role("button", name=button) if button else page.locator(".widget-slider").first
    target.wait_for(timeout=300_000)
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2", timeout=300_000)


def load(browser, url: str, users: int, button: str | None) -> tuple[list, list[float]]:
    """Open ``users`` pages at once; the pages and each one's time to usable (s)."""
    pages = [browser.new_page(viewport={"width": 1366, "height": 768}) for _ in range(users)]
    start = time.perf_counter()
    for p in pages:
        p.goto(url, wait_until="commit")
    times = []
    for p in pages:
        ready(p, button)
        times.append(time.perf_counter() - start)
    return pages, times


def solve(pages, button: str) -> list[float]:
    """Press the action button on every page at once; each page's time until the button is enabled again (s)."""
    for p in pages:  # the first solve of the page load is over
        p.wait_for_function(f"() => [...document.querySelectorAll('button')].some(b => b.innerText.trim() === "
                            f"{button!r} && !b.disabled)", timeout=300_000)
    start = time.perf_counter()
    for p in pages:
        p.get_by_role("button", name=button).click()
    pages[0].wait_for_timeout(300)  # the buttons turn to "Solving…"
    times = []
    for p in pages:
        p.wait_for_function(f"() => [...document.querySelectorAll('button')].some(b => b.innerText.trim() === "
                            f"{button!r} && !b.disabled)", timeout=600_000)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=4)
    ap.add_argument("--skip-cull", action="store_true", help="do not wait for the culling measurement")
    args = ap.parse_args()
    port = free_port()
    log = open(ROOT / "test-artifacts" / "voila_capacity.log", "w")
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    proc = serve(port, log)
    session = proc.pid  # the server: its children are the kernels
    rows, cull = [], None
    started = time.perf_counter()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for name, button in DASHBOARDS.items():
                url = f"http://127.0.0.1:{port}/voila/render/{name}.ipynb"
                pages, t1 = load(browser, url, 1, button)
                mem_loaded = list(kernels(session).values())
                s1 = solve(pages, button) if button else [float("nan")]
                mem_solved = list(kernels(session).values())
                for p in pages:
                    p.close()
                pages, tn = load(browser, url, args.users, button)
                sn = solve(pages, button) if button else [float("nan")]
                mem_all = kernels(session)  # every kernel started so far: the closed tabs' ones are still alive
                for p in pages:
                    p.close()
                rows.append(dict(name=name, load1=t1[0], loadn=tn, solve1=s1[0], solven=sn,
                                 rss=max(r for r, _ in mem_loaded), pss=max(p for _, p in mem_loaded),
                                 rss_solved=max(r for r, _ in mem_solved), pss_solved=max(p for _, p in mem_solved),
                                 kernels=len(mem_all), pss_all=statistics.mean(p for _, p in mem_all.values()),
                                 rss_all=statistics.mean(r for r, _ in mem_all.values())))
                print(rows[-1], flush=True)
            browser.close()
        if not args.skip_cull:  # every page is closed now: how long until the kernels are gone?
            t0 = time.perf_counter()
            while kernels(session) and time.perf_counter() - t0 < CULL_IDLE + 4 * CULL_INTERVAL:
                time.sleep(5)
            cull = (time.perf_counter() - t0, len(kernels(session)))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()
    write(rows, cull, args.users, time.perf_counter() - started)


def _version() -> str:
    text = (ROOT / "moco_lab" / "util" / "version.py").read_text()
    return text.split('"')[1]


def write(rows, cull, users: int, total: float) -> None:
    import importlib.metadata as md

    mem_total = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 ** 2
    lines = [
        "# Dashboards: what one machine can serve",
        "",
        f"Generated by `benchmarks/dashboard_capacity.py --users {users}` on {datetime.date.today()} in "
        f"{total / 60:.0f} min: {os.cpu_count()} CPUs, {mem_total:.1f} GB RAM, Python {platform.python_version()}, "
        f"voila {md.version('voila')}, moco_lab {_version()}. Learner mode (no `MOCO_LAB_FAST`), "
        f"Voila started as `./run dashboards` starts it (cull idle kernels after {CULL_IDLE} s, checked every "
        f"{CULL_INTERVAL} s), headless Chromium as the students' browsers on the same machine.",
        "",
        f"| dashboard | page usable, 1 user [s] | {users} users at once [s] | solve, 1 user [s] | "
        f"{users} users at once [s] | kernel RSS [MB] | kernel PSS [MB] | after a solve: RSS / PSS [MB] |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        sn = "—" if r["solve1"] != r["solve1"] else f"{statistics.median(r['solven']):.1f} (max {max(r['solven']):.1f})"
        s1 = "—" if r["solve1"] != r["solve1"] else f"{r['solve1']:.1f}"
        lines.append(f"| {r['name']} | {r['load1']:.1f} | {statistics.median(r['loadn']):.1f} (max {max(r['loadn']):.1f}) "
                     f"| {s1} | {sn} | {r['rss']:.0f} | {r['pss']:.0f} | {r['rss_solved']:.0f} / {r['pss_solved']:.0f} |")
    solve_ratio = [statistics.median(r["solven"]) / r["solve1"] for r in rows if r["solve1"] == r["solve1"]]
    load_ratio = [statistics.median(r["loadn"]) / r["load1"] for r in rows]
    last = rows[-1]
    pss = last["pss_all"]
    lines += [
        "",
        f"With {last['kernels']} kernels alive at the end (closed tabs' kernels wait for culling), a kernel's RSS "
        f"was {last['rss_all']:.0f} MB and its PSS {pss:.0f} MB on average; the first kernel alone has a PSS close to "
        "its RSS because it shares its libraries with nobody yet.",
        "",
        "Times of several users are medians over the users (slowest in brackets), measured from the moment all "
        "pages were requested (or all buttons pressed).",
        "",
        "## What this means for a class",
        "",
        f"* **Memory.** Each extra open tab costs its kernel's own share, about {pss:.0f} MB (PSS); RSS "
        f"({last['rss_all']:.0f} MB) counts the libraries every kernel shares. Plan {pss:.0f} MB per open tab plus "
        f"about 1 GB for the system and the server: **about {1024 / pss:.0f} open tabs per GB** beyond that.",
        f"* **CPU.** A solve uses one core, and so does starting a kernel (Python, pydrake). With {users} users at "
        f"once on {os.cpu_count()} cores, solves took {min(solve_ratio):.1f}–{max(solve_ratio):.1f}× and page loads "
        f"{min(load_ratio):.1f}–{max(load_ratio):.1f}× the single-user time (more than users/cores = "
        f"{users / os.cpu_count():.0f}: the browsers ran on the same machine). A class where everyone presses Solve "
        "at the same moment needs about one core per two students to keep a solve near a second; students who "
        "mostly read and drag sliders need far less.",
    ]
    if cull is not None:
        lines.append(f"* **Closed tabs.** After the last tab closed, its kernels were gone after {cull[0]:.0f} s "
                     f"({cull[1]} left): `--MappingKernelManager.cull_idle_timeout={CULL_IDLE}` plus up to one "
                     f"`cull_interval` ({CULL_INTERVAL} s).")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
