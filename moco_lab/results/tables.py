"""Reference tables given in any of the forms tools accept (a trajectory, an ``.sto`` file, arrays)."""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike

from . import sto
from .trajectory import Trajectory, read_trajectory

__all__ = ["reference_columns", "ReferenceLike"]

#: A reference table in any form tools accept: a :class:`Trajectory` (its states), a path to an ``.sto``
#: table, or ``(time, {column: values})``.
ReferenceLike = Union[Trajectory, str, os.PathLike, tuple[ArrayLike, Mapping[str, ArrayLike]]]


def reference_columns(reference: Any, what: str = "reference") -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    """``(time, {name: values}, description)`` of a reference table.

    Parameters
    ----------
    reference : Trajectory, str / path-like, or (time, {name: values})
        A trajectory or solution (its states), a path to an ``.sto`` table (a
        Moco trajectory file contributes its states only, like
        ``MocoTrajectory::exportToStatesTable``), or arrays.
    what : str
        The argument's name, used in error messages (e.g. ``"states_reference"``).

    Returns
    -------
    time : ndarray (n,)
    columns : dict of str -> ndarray (n,)
    description : str
        Where the table came from, for error messages.

    Raises
    ------
    ValueError
        A table in degrees (``inDegrees=yes``): moco_lab needs radians.
    TypeError
        Any other kind of object.
    """
    if isinstance(reference, Trajectory):
        # A Solution that failed is sealed: reading .states raises a clear error.
        return reference.time, dict(reference.states), "trajectory"
    if isinstance(reference, (str, os.PathLike)):
        path = os.fspath(reference)
        time, columns, metadata = sto.read_table(path)
        if str(metadata.get("inDegrees", "no")).strip().lower() in ("yes", "true", "1"):
            raise ValueError(f"{what} {path!r} is in degrees (inDegrees=yes); moco_lab needs radians "
                             "(convert the rotational coordinates and write inDegrees=no).")
        if sto.is_trajectory_header(metadata):
            traj = read_trajectory(path)
            return traj.time, dict(traj.states), f"file {path!r}"
        return time, columns, f"file {path!r}"
    if isinstance(reference, tuple) and len(reference) == 2:
        time, columns = reference
        if not isinstance(columns, dict):
            raise TypeError(f"A (time, columns) {what} needs a dict {{name: values}} as columns")
        return np.asarray(time, float), {str(k): np.asarray(v, float) for k, v in columns.items()}, "table"
    raise TypeError(f"{what} must be a Trajectory, a path to an .sto table, or (time, {{name: values}}); "
                    f"got {type(reference).__name__}")
