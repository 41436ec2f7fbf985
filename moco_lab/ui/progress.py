"""A one-line live progress report for long solves in notebooks and scripts.

``ProgressLine`` is a callable to pass as ``progress=`` to ``Study.solve``,
``Track.solve`` or ``Inverse.solve``. While the optimizer runs it shows one line
(iteration, objective, constraint violation, seconds so far), updated at most a
few times a second: in a Jupyter kernel as an output that is rewritten in place,
elsewhere on standard error. When the solve is over, ``done(solution)`` replaces the
line with a summary that holds no timings (so that a notebook's stored output is
the same on every machine, whatever the speed of the solve)::

    line = ProgressLine("exponent 2")
    solution = study.solve(progress=line)
    line.done(solution)
"""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from ..solve.optimizer import Progress

if TYPE_CHECKING:
    from ..results.trajectory import Solution

__all__ = ["ProgressLine"]


def _in_kernel() -> bool:
    """True inside a running IPython kernel (Jupyter, Voila, nbclient)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython()
    return ip is not None and hasattr(ip, "kernel")


class ProgressLine:
    """Show the progress of one solve on a single line that updates in place.

    Parameters
    ----------
    label : str
        What is being solved, shown first (e.g. ``"exponent 2"``).
    interval : float
        Least time between two updates (s); updating more often only slows the solve down.
    """

    def __init__(self, label: str, interval: float = 0.25):
        self.label = label
        self.interval = float(interval)
        self.last: Progress | None = None
        self._shown_at = -float("inf")
        self._handle = None
        self._kernel = _in_kernel()

    def _show(self, text: str) -> None:
        if self._kernel:
            from IPython.display import display

            if self._handle is None:  # an empty line first: what a notebook checker sees is always the same
                self._handle = display({"text/plain": ""}, raw=True, display_id=True)
            self._handle.update({"text/plain": text}, raw=True)
        else:
            sys.stderr.write("\r" + text)
            sys.stderr.flush()

    def __call__(self, p: Progress) -> None:
        """Receive one optimizer report (the ``progress`` callback protocol)."""
        self.last = p
        now = time.perf_counter()
        if now - self._shown_at >= self.interval:
            self._shown_at = now
            self._show(f"⏳ {self.label}: iteration {p.iteration}, objective {p.objective:.6g}, "
                       f"constraint violation {p.constraint_violation:.1e}, {p.elapsed:.0f} s")

    def done(self, solution: Solution | None = None) -> None:
        """Replace the live line by a summary without timings (``solution``: the result, if any).

        In a kernel the live line is emptied and the summary printed, so that the
        output a notebook stores does not depend on how long the solve took.
        """
        if solution is None:
            text = f"{self.label}: stopped"
        else:
            mark = "✔" if getattr(solution, "success", False) else "✘"
            text = f"{mark} {self.label}: {solution.status}, {solution.nit} iterations"
        if self._kernel:
            self._show("")  # (created empty if the solve reported nothing)
            print(text)
        else:
            sys.stderr.write("\r" + text + "\n")
            sys.stderr.flush()


class SweepProgress:
    """A progress bar for :func:`moco_lab.sweep` in notebooks and dashboards (pass it as ``progress=``).

    Shows tasks done out of the total, how many failed, the elapsed time and an estimate of the time
    left (from the mean time per finished task so far).

    Examples
    --------
    >>> bar = SweepProgress()          # doctest: +SKIP
    >>> bar                            # doctest: +SKIP  (displays the bar)
    >>> ml.sweep(study, changes, progress=bar)   # doctest: +SKIP
    """

    def __init__(self, description: str = "sweep"):
        import ipywidgets as W

        self.bar = W.IntProgress(value=0, min=0, max=1, description=description, bar_style="info",
                                 layout=W.Layout(width="420px"))
        self.label = W.HTML("<span style='color:#555'>waiting for the first task…</span>")
        self.widget = W.HBox([self.bar, self.label])
        self._start = time.perf_counter()
        self.done = self.failed = self.total = 0

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def __call__(self, done: int, failed: int, total: int) -> None:
        """Receive the sweep's report after each task (the ``progress`` callback protocol)."""
        self.done, self.failed, self.total = done, failed, total
        elapsed = time.perf_counter() - self._start
        self.bar.max, self.bar.value = total, done
        left = elapsed / done * (total - done) if done else float("nan")
        self.bar.bar_style = "success" if done == total and not failed else ("warning" if failed else "info")
        self.label.value = (f"{done}/{total} done, {failed} failed · {elapsed:.0f} s"
                            + (f", about {left:.0f} s left" if done < total and done else ""))
