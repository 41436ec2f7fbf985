"""A dashboard's memory of its last good solution: the guess of its next solve.

Dashboards whose solves take long (squat to stand, the walkers) re-solve from the previous solution when the
``warm_start`` option is ``"yes"``: after each solve (a demo problem's ``after_solve`` hook) a successful solution is
kept, and the next build takes it as its guess.
"""
from __future__ import annotations

from ..results.trajectory import Solution

__all__ = ["WarmStart", "wants_warm_start"]


def wants_warm_start(settings: dict) -> bool:
    """Whether ``settings["warm_start"]`` asks for a warm start (``"yes"``, the default)."""
    return settings.get("warm_start", "yes") == "yes"


class WarmStart:
    """The latest successful solution of one dashboard problem (one per problem and kernel)."""

    def __init__(self) -> None:
        self._solution: Solution | None = None
        self._settings: dict | None = None

    def keep(self, solution: Solution, settings: dict | None = None) -> None:
        """After a solve: remember ``solution`` if it succeeded, and the dashboard ``settings`` it was solved with
        (a failed solve leaves the previous one)."""
        if solution.success:
            self._solution = solution
            self._settings = None if settings is None else dict(settings)

    def kept_settings(self) -> dict | None:
        """The settings the kept solution was solved with (None if none were given, or nothing is kept)."""
        return None if self._settings is None else dict(self._settings)

    def latest(self, settings: dict) -> Solution | None:
        """The solution the next solve starts from: the kept one when ``settings["warm_start"]`` is ``"yes"`` (the
        default), else ``None`` (start from the problem's own guess)."""
        return self._solution if wants_warm_start(settings) else None

    def clear(self) -> None:
        """Forget the kept solution."""
        self._solution = None
        self._settings = None
