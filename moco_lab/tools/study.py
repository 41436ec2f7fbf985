"""A study: problem + solver settings (Moco's ``MocoStudy``), saved to and loaded from JSON."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from ..engine.transcription import Transcription
from ..modeling.library import from_spec
from ..ocp.problem import Problem
from ..results.trajectory import Solution
from ..solve.optimizer import Progress
from ..solve.settings import SolverSettings
from ..solve.solution import solve_transcription

FORMAT = "moco_lab.study/1"


class Study:
    """Pose and solve an optimal control problem.

    Attributes
    ----------
    problem : Problem
    solver : SolverSettings

    Examples
    --------
    >>> study = Study()
    >>> study.problem.set_model(models.sliding_mass())   # doctest: +SKIP
    >>> solution = study.solve()                          # doctest: +SKIP
    """

    def __init__(self, name: str = "study"):
        self.name = name
        self.problem = Problem()
        self.solver = SolverSettings()

    def transcribe(self) -> Transcription:
        """Build the nonlinear program (a Drake ``MathematicalProgram``) without solving it."""
        return Transcription(self.problem, self.solver)

    def solve(self, progress: Callable[[Progress], None] | None = None) -> Solution:
        """Transcribe and solve; ``progress`` is called once per optimizer iteration."""
        return solve_transcription(self.transcribe(), self.solver, progress)

    # ----------------------------------------------------------------- files
    def to_dict(self) -> dict:
        model = self.problem.model
        if model is None:
            raise RuntimeError("No model to save: call problem.set_model first.")
        if model.spec is None:
            raise TypeError(
                "This study's model was not built by a moco_lab.models factory, so it cannot be written to a "
                "study file (save your plant-building code instead)."
            )
        if self.solver.guess is not None:
            raise TypeError("Studies with a guess trajectory cannot be saved; write the guess to .sto separately.")
        return {
            "format": FORMAT,
            "name": self.name,
            "model": model.spec,
            "problem": self.problem.to_dict(),
            "solver": self.solver.to_dict(),
        }

    def save(self, path) -> None:
        """Write the study (model factory and arguments, problem, settings) as readable JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def from_dict(cls, d: dict) -> "Study":
        if d.get("format") != FORMAT:
            raise ValueError(f"Not a moco_lab study file (format {d.get('format')!r}, expected {FORMAT!r})")
        study = cls(d.get("name", "study"))
        model = from_spec(d["model"])
        study.problem = Problem.from_dict(d["problem"], model)
        study.solver = SolverSettings.from_dict(d["solver"])
        return study

    @classmethod
    def load(cls, path) -> "Study":
        """Read a study written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text()))

    def __repr__(self) -> str:
        s = self.solver
        return (f"<Study {self.name!r}: {self.problem!r}; {s.transcription_scheme}, {s.multibody_dynamics_mode}, "
                f"N={s.num_mesh_intervals}, {s.optim_solver}>")
