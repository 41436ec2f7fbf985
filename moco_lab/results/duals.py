"""The optimizer's dual variables at the end of a solve, kept with the solution for a warm start.

An interior-point method keeps, next to the decision variables ``x``, one multiplier per constraint row (``λ``) and
one per finite variable bound (``z_L``, ``z_U``). A solve that starts from a solution's ``x`` but from IPOPT's
default multipliers (every ``z`` 1, ``λ`` a least-squares estimate) and pushes ``x`` 1 % into its bounds has
thrown half of the solution away; the next solve of a nearby problem can start from all of it
(``SolverSettings.optim_warm_start``, docs/solving.md). The multipliers fit only a program of the same structure
(the same variables, constraint rows and finite bounds in the same order): ``structure`` names it.

:meth:`Duals.write` and :func:`read_duals` keep them in a NumPy ``.npz`` file beside a trajectory file, for a
solution shipped as a warm start (the walking dashboard's, ``moco_lab.ui.walking``).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

__all__ = ["Duals", "read_duals"]


@dataclass(frozen=True, eq=False)
class Duals:
    """IPOPT's multipliers at the last iterate of a solve (kept in memory with the solution; :meth:`write` saves them).

    Attributes
    ----------
    constraints : ndarray, shape (m,)
        ``λ``, one per constraint row, in the order of the program IPOPT solved.
    lower, upper : ndarray, shape (n,)
        ``z_L``, ``z_U`` ≥ 0, one per decision variable (0 where the bound is infinite), in the program's variable
        order.
    structure : str
        A digest of that program's structure (sizes, Jacobian sparsity, which bounds are finite, which constraint
        rows are equalities): multipliers are offered to a program only if its digest is the same.
    """

    constraints: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    structure: str

    def __post_init__(self):
        for name in ("constraints", "lower", "upper"):
            a = np.array(getattr(self, name), dtype=float)  # a private copy
            if a.ndim != 1 or not np.all(np.isfinite(a)):
                raise ValueError(f"Duals.{name} must be a 1-D array of finite numbers, got shape {a.shape}")
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        if self.lower.shape != self.upper.shape:
            raise ValueError(f"Duals: lower and upper have different lengths ({self.lower.size}, {self.upper.size})")

    def write(self, path: str | os.PathLike, metadata: dict | None = None) -> None:
        """Save to the NumPy ``.npz`` file ``path`` with ``metadata`` (JSON-serializable: how they were made, the
        settings of the solve); :func:`read_duals` reads both back."""
        text = json.dumps(metadata or {}, sort_keys=True)
        with open(path, "wb") as f:
            np.savez(f, constraints=self.constraints, lower=self.lower, upper=self.upper,
                     structure=np.array(self.structure), metadata=np.array(text))


def read_duals(path: str | os.PathLike) -> tuple[Duals, dict]:
    """The multipliers and metadata saved by :meth:`Duals.write`.

    Raises ``ValueError`` naming the file if it is not such a file (a key missing, or not a NumPy archive).
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            duals = Duals(data["constraints"], data["lower"], data["upper"], str(data["structure"]))
            metadata = json.loads(str(data["metadata"]))
    except FileNotFoundError:
        raise
    except (KeyError, OSError, ValueError) as e:   # json.JSONDecodeError is a ValueError
        raise ValueError(f"{os.fspath(path)} is not a file of multipliers written by Duals.write: {e}") from None
    return duals, metadata
