"""A study: problem + solver settings (Moco's ``MocoStudy``), saved to and loaded from JSON."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from ..engine.settings import SolverSettings
from ..engine.transcription import Transcription
from ..modeling.library import from_spec
from ..ocp.problem import Problem
from ..results.trajectory import Solution
from ..solve.optimizer import Progress
from ..solve.solution import Evaluation, evaluate_trajectory, solve_transcription
from ..util.version import __version__
from .analyze import OutputTable, analyze

if TYPE_CHECKING:
    from ..modeling.model import Model
    from ..results.trajectory import Trajectory

FORMAT = "moco_lab.study/1"


def model_recipe(model: Model) -> dict:
    """How to rebuild ``model``: its factory and arguments, plus property edits made after it was built.

    The model is rebuilt from its factory and compared with the current one
    (:meth:`Model.description`). Differences that are property values (a
    muscle's ``max_isometric_force``, a spring's stiffness, ...) are recorded as
    ``"edits"``; any other difference (an element or constraint added or
    removed, a body or joint changed) cannot be written down, and the model is
    refused with a message naming the difference.

    Raises
    ------
    TypeError
        The model was not built by a factory, or was changed in a way a recipe cannot record.
    """
    if model.spec is None:
        raise TypeError(
            "This study's model was not built by a moco_lab.models factory, so it cannot be written to a "
            "study file (save your plant-building code instead).")
    spec = {k: v for k, v in model.spec.items() if k != "edits"}
    fresh = from_spec(spec)
    current, props = model.description(), model.properties()
    # goals' scale factors (Moco's MocoScaleFactor components) are recreated from the goals when a problem is checked
    current["force_elements"] = [e for e in current["force_elements"] if e.get("type") != "ScaleFactor"]
    fresh_props = fresh.properties()
    edits = {}
    for path, prop in props.items():
        if path in fresh_props and prop.kind == "force" and prop.default != fresh_props[path].default:
            fresh.set_property(path, prop.default)
            edits[path] = prop.default
    rebuilt = fresh.description()
    if json.dumps(rebuilt, sort_keys=True) != json.dumps(current, sort_keys=True):
        diffs = [key for key in current if json.dumps(current[key], sort_keys=True)
                 != json.dumps(rebuilt.get(key), sort_keys=True)]
        raise TypeError(
            f"This study's model was changed after the factory {spec.get('factory')!r} built it, in ways a study "
            f"file cannot record (differences in: {', '.join(diffs)}; only property edits such as "
            "model.set_property(...) are recorded). Build the model with a factory that includes the change, "
            "or save the code that builds it.")
    if edits:
        spec["edits"] = edits
    return spec


def model_from_recipe(recipe: dict) -> Model:
    """Rebuild a model written by :func:`model_recipe` (its factory, then its property edits)."""
    model = from_spec({k: v for k, v in recipe.items() if k != "edits"})
    for path, value in recipe.get("edits", {}).items():
        model.set_property(path, value)
    model.spec = dict(recipe)
    return model


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
        return solve_transcription(self.transcribe(), progress)

    def evaluate(self, trajectory: Trajectory) -> Evaluation:
        """``trajectory`` judged by this study's problem without solving: objective, each goal's value and the
        largest constraint violation (:func:`~moco_lab.solve.solution.evaluate_trajectory`). Use it to score a
        solution from another tool, an earlier study, or a guess."""
        from ..results.trajectory import Trajectory

        if not isinstance(trajectory, Trajectory):
            hint = " (read a file with ml.read_trajectory(path))" if isinstance(trajectory, (str, os.PathLike)) else ""
            raise TypeError(f"Study.evaluate: trajectory must be a Trajectory or Solution, got "
                            f"{type(trajectory).__name__}{hint}")
        return evaluate_trajectory(self.transcribe(), trajectory)

    def analyze(self, trajectory: Trajectory, outputs: Sequence[str] | str | None = None) -> "OutputTable":
        """Model outputs along ``trajectory`` (Moco's ``MocoStudy::analyze``); see :func:`~moco_lab.tools.analyze.analyze`.

        ``outputs``: names or regular expressions (``".*normal_force"``); default all.
        """
        if self.problem.model is None:
            raise RuntimeError("No model: call problem.set_model first.")
        return analyze(self.problem.model, trajectory, outputs)

    # ----------------------------------------------------------------- files
    def to_dict(self) -> dict:
        """The study as plain data (model recipe, problem, settings); TypeError for what cannot be saved."""
        model = self.problem.model
        if model is None:
            raise RuntimeError("No model to save: call problem.set_model first.")
        if self.solver.guess is not None:
            raise TypeError("Studies with a guess trajectory cannot be saved; write the guess to .sto separately.")
        return {
            "format": FORMAT,
            "moco_lab_version": __version__,
            "name": self.name,
            "model": model_recipe(model),
            "problem": self.problem.to_dict(),
            "solver": self.solver.to_dict(),
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the study (model factory and arguments, problem, settings) as readable JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def from_dict(cls, d: dict) -> "Study":
        """Rebuild a study written by :meth:`to_dict`."""
        if not isinstance(d, dict):
            raise ValueError(f"Not a moco_lab study (a JSON object with 'format': {FORMAT!r}), got a "
                             f"{type(d).__name__}")
        if d.get("format") != FORMAT:
            written = d.get("moco_lab_version", "unknown")
            if isinstance(d.get("format"), str) and d["format"].startswith("moco_lab.study/"):
                raise ValueError(f"This study file has format {d['format']!r} (written by moco_lab {written}); "
                                 f"moco_lab {__version__} reads {FORMAT!r}. Re-create the study with this version "
                                 "(the file is readable JSON: its problem and settings can be copied over).")
            raise ValueError(f"Not a moco_lab study file (format {d.get('format')!r}, expected {FORMAT!r})")
        study = cls(d.get("name", "study"))
        model = model_from_recipe(d["model"])
        study.problem = Problem.from_dict(d["problem"], model)
        study.solver = SolverSettings.from_dict(d["solver"])
        return study

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Study":
        """Read a study written by :meth:`save`; ``ValueError`` naming the file for one that is not such a study."""
        text = Path(path).read_text()
        try:
            d = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{str(path)!r} is not a moco_lab study file: not JSON ({err.msg} at line {err.lineno}, "
                             f"column {err.colno})") from None
        try:
            return cls.from_dict(d)
        except ValueError as err:
            raise ValueError(f"{str(path)!r}: {err}") from None

    def __repr__(self) -> str:
        s = self.solver
        return (f"<Study {self.name!r}: {self.problem!r}; {s.transcription_scheme}, {s.multibody_dynamics_mode}, "
                f"N={s.num_mesh_intervals}, {s.optim_solver}>")
