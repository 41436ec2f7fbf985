"""OpenSim's tab-delimited Storage (``.sto``) files, as OpenSim Moco writes them.

Moco 4.6 (``MocoTrajectory::write``, via OpenSim's ``STOFileAdapter``) writes::

    inDegrees=no
    num_controls=1
    num_derivatives=0
    num_input_controls=0
    num_iterations=14                 <- MocoSolution only
    num_multipliers=0
    num_parameters=1
    num_slacks=0
    num_states=2
    objective=0.900450                <- MocoSolution only (``%f``, 6 decimals)
    objective_<goal name>=0.900450    <- MocoSolution only, one per goal (weighted)
    solver_duration=0.184200          <- MocoSolution only (seconds)
    status=Solve_Succeeded            <- MocoSolution only
    success=true                      <- MocoSolution only
    DataType=double
    version=3
    OpenSimVersion=4.6-2026-06-22-85aaf64
    endheader
    time	/slider/position/value	/slider/position/speed	/actuator	mass
    0	0	0	10.00000009787938	2
    0.09004503333791208	0.02027027027074272	0.4502251711054756	10.00000009828535	nan
    ...

* ``inDegrees`` comes first, the table's metadata follow sorted by key (a
  ``std::map``), then ``DataType``, ``version`` and ``OpenSimVersion``. A
  table's ``header`` metadata, if any, becomes a bare title line before
  them. There are **no** ``nRows=`` / ``nColumns=`` lines (those belong to the
  legacy ``Storage`` format, ``version=1``, which this reader also accepts).
* The columns are: ``time``, states, controls, input controls, multipliers,
  derivatives, slacks, parameters.
* A parameter column holds the value in the first row and ``nan`` below.
* Moco prints 16 significant digits, so its files do not always round-trip
  exactly (``0.30000000000000004`` is written as ``0.3``). This module writes
  the shortest decimal that round-trips exactly (Python's ``repr``), which
  OpenSim reads back bit-for-bit.
* OpenSim writes ``inf``/``-inf`` but reads any infinity back as ``nan``;
  this module reads them as infinities.

Public functions: :func:`write_trajectory`, :func:`read_trajectory_columns`
(:func:`moco_lab.results.read_trajectory` builds a ``Trajectory`` from it),
:func:`write_table`, :func:`read_table`. Malformed files raise
:class:`StoFormatError` (a ``ValueError``) naming the file and line.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


__all__ = [
    "StoFormatError",
    "TRAJECTORY_COUNT_KEYS",
    "is_trajectory_header",
    "read_table",
    "read_trajectory_columns",
    "write_table",
    "write_trajectory",
]

PathLike = Union[str, "os.PathLike[str]"]

#: ``version=`` written in the header (the STO format version OpenSim 4.x uses).
FORMAT_VERSION = 3
#: ``OpenSimVersion=`` written in the header (OpenSim's own reader ignores it).
OPENSIM_VERSION = "4.6-moco_lab"

#: Column blocks of a Moco trajectory file, in file order, with their header key.
_BLOCKS = (
    ("states", "num_states"),
    ("controls", "num_controls"),
    ("input_controls", "num_input_controls"),
    ("multipliers", "num_multipliers"),
    ("derivatives", "num_derivatives"),
    ("slacks", "num_slacks"),
    ("parameters", "num_parameters"),
)
#: Header keys that mark a Moco trajectory file (``num_states``, ``num_controls``, ...).
TRAJECTORY_COUNT_KEYS = tuple(key for _, key in _BLOCKS)
# Keys the writers generate themselves; values supplied in metadata are ignored.
_GENERATED_KEYS = frozenset({"DataType", "version", "OpenSimVersion", "nRows", "nColumns", "endheader"})
_FLOAT_KEYS = frozenset({"objective", "solver_duration", "constraint_violation"})
_INT_KEYS = frozenset({"version", "nRows", "nColumns"})

# Spellings of non-finite numbers produced by C/C++ runtimes that float() rejects.
_SPECIAL_FLOATS = {
    "1.#qnan": math.nan, "-1.#qnan": math.nan, "1.#ind": math.nan, "-1.#ind": math.nan,
    "nan(ind)": math.nan, "-nan(ind)": math.nan, "1.#inf": math.inf, "-1.#inf": -math.inf,
}


class StoFormatError(ValueError):
    """A malformed ``.sto`` file.

    Attributes
    ----------
    path : str
        The file.
    line : int or None
        1-based line number of the problem (``None`` if not tied to a line).
    """

    def __init__(self, path: PathLike, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


# --------------------------------------------------------------------- format
def _format_float(value: float) -> str:
    """Shortest decimal string that reads back as exactly ``value``.

    Integral values drop the ``.0`` (``0``, ``-2``, ``-0``) like OpenSim does;
    non-finite values are written ``nan``, ``inf`` and ``-inf``.
    """
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _format_metadata_value(key: str, value: Any) -> str:
    """A header value as text (``true``/``false`` for booleans, exact floats)."""
    if isinstance(value, (bool, np.bool_)):
        text = ("yes" if value else "no") if key == "inDegrees" else ("true" if value else "false")
    elif isinstance(value, (int, np.integer)):
        text = str(int(value))
    elif isinstance(value, (float, np.floating)):
        text = _format_float(value)
    else:
        text = str(value)
    if "\n" in text or "\r" in text:
        raise ValueError(f"metadata {key!r} must fit on one line; got {text!r}")
    return text


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key or key != key.strip():
        raise ValueError(f"metadata keys must be non-empty strings without surrounding spaces; got {key!r}")
    if any(c in key for c in "=\t\n\r"):
        raise ValueError(f"metadata key {key!r} must not contain '=', tabs or newlines")
    return key


def _check_labels(labels: list[str]) -> None:
    seen: set[str] = set()
    for label in labels:
        if not isinstance(label, str) or not label or label != label.strip():
            raise ValueError(f"column names must be non-empty strings without surrounding spaces; got {label!r}")
        if any(c in label for c in "\t\n\r"):
            raise ValueError(f"column name {label!r} must not contain tabs or newlines")
        if label.lower() == "time":
            raise ValueError(f"column name {label!r} clashes with the time column")
        if label in seen:
            raise ValueError(f"column name {label!r} appears twice")
        seen.add(label)


def _write(path: PathLike, time: np.ndarray, labels: list[str], data: np.ndarray,
           metadata: Mapping[str, Any]) -> None:
    """Write a header, the column labels and the rows of ``data`` (shape (n, len(labels)))."""
    _check_labels(labels)
    metadata = dict(metadata)
    lines = []
    title = metadata.pop("header", None)
    if title is not None:
        # One title line per line of text (read_table joins them with newlines).
        for line in str(title).splitlines():
            if "=" in line or line.strip() == "endheader" or "\r" in line:
                raise ValueError(f"the header title must not contain '=' or be 'endheader'; got {title!r}")
            if line.strip():
                lines.append(line.strip())
    lines.append(f"inDegrees={_format_metadata_value('inDegrees', metadata.pop('inDegrees', 'no'))}")
    for key in sorted(k for k in metadata if k not in _GENERATED_KEYS):
        lines.append(f"{_check_key(key)}={_format_metadata_value(key, metadata[key])}")
    lines += ["DataType=double", f"version={FORMAT_VERSION}", f"OpenSimVersion={OPENSIM_VERSION}", "endheader"]
    lines.append("\t".join(["time", *labels]))
    for t, row in zip(time, data):
        lines.append("\t".join([_format_float(t), *map(_format_float, row)]))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------- parse
def _parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        special = _SPECIAL_FLOATS.get(text.lower())
        if special is None:
            raise
        return special


def _convert_metadata_value(key: str, value: str) -> Any:
    """Typed value for the keys Moco defines; every other value stays a string."""
    try:
        if key == "success" and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if key in _INT_KEYS or key.startswith("num_"):
            return int(value)
        if key in _FLOAT_KEYS or key.startswith("objective_"):
            return float(value)
    except ValueError:
        pass
    return value


def _split(line: str, tabbed: bool) -> list[str]:
    fields = [f.strip() for f in line.split("\t")] if tabbed else line.split()
    return fields


def _parse(path: PathLike) -> tuple[np.ndarray, list[str], np.ndarray, dict[str, Any], int]:
    """Read a ``.sto`` file.

    Returns
    -------
    time : ndarray (n,)
    labels : list of str
        Column labels after ``time``.
    data : ndarray (n, len(labels))
    metadata : dict
        Header ``key=value`` pairs (typed by :func:`_convert_metadata_value`);
        a bare title line is stored under ``"header"``.
    labels_line : int
        1-based line number of the column labels.
    """
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except UnicodeDecodeError as exc:
        raise StoFormatError(path, None, f"not a text file ({exc})") from None
    if lines and lines[-1] == "":
        lines.pop()

    metadata: dict[str, Any] = {}
    titles: list[str] = []
    end = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped == "endheader":
            end = index
            break
        if not stripped:
            continue
        if "=" in stripped:
            key, value = stripped.split("=", 1)
            key, value = key.strip(), value.strip()
            metadata[key] = _convert_metadata_value(key, value)
        else:
            titles.append(stripped)
    if end is None:
        raise StoFormatError(path, len(lines) or None,
                             "no 'endheader' line: an OpenSim .sto file needs a header ending with 'endheader' "
                             "before the column labels")
    if titles:
        metadata["header"] = "\n".join(titles)

    index = end + 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index == len(lines):
        raise StoFormatError(path, end + 1, "no column labels after 'endheader'")
    labels_line = index + 1
    tabbed = "\t" in lines[index]
    labels = _split(lines[index], tabbed)
    if tabbed and len(labels) > 1 and labels[-1] == "":
        labels.pop()  # trailing tab
    if labels[0].lower() != "time":
        raise StoFormatError(path, labels_line, f"the first column must be 'time', not {labels[0]!r}")
    labels = labels[1:]
    for i, label in enumerate(labels):
        if not label:
            raise StoFormatError(path, labels_line, f"column {i + 2} has an empty label")
        if label in labels[:i]:
            raise StoFormatError(path, labels_line, f"column label {label!r} appears twice")

    ncol = len(labels) + 1
    rows = []
    row_lines = []
    for index in range(labels_line, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        fields = _split(line, tabbed)
        if tabbed and len(fields) == ncol + 1 and fields[-1] == "":
            fields.pop()  # trailing tab
        if len(fields) != ncol:
            raise StoFormatError(path, index + 1,
                                 f"expected {ncol} columns (time and the {ncol - 1} labels of line {labels_line}) "
                                 f"but found {len(fields)}")
        try:
            rows.append([_parse_float(x) for x in fields])
            row_lines.append(index + 1)
        except ValueError:
            bad = next(j for j, x in enumerate(fields) if not _is_number(x))
            column = "time" if bad == 0 else labels[bad - 1]
            raise StoFormatError(path, index + 1,
                                 f"non-numeric value {fields[bad]!r} in column {column!r}") from None
    data = np.array(rows, dtype=float).reshape(len(rows), ncol)
    steps = np.diff(data[:, 0])
    if np.any(~(steps > 0)):  # also catches NaN times
        k = int(np.flatnonzero(~(steps > 0))[0])
        raise StoFormatError(path, row_lines[k + 1], f"time {data[k + 1, 0]:g} does not increase "
                             f"(the previous row, line {row_lines[k]}, has time {data[k, 0]:g}); times must be "
                             "strictly increasing")

    if "nRows" in metadata and metadata["nRows"] != data.shape[0]:  # a truncated or spliced file
        raise StoFormatError(path, None, f"the header says nRows={metadata['nRows']} but the file has {data.shape[0]}")
    if "nColumns" in metadata and metadata["nColumns"] != ncol:
        # every row has one value per label (checked above), so the header alone is stale: OpenSim writes such
        # files itself (MocoTrack's <name>_tracked_states.sto keeps the count from before it appended speeds)
        import warnings

        warnings.warn(f"{path}: the header says nColumns={metadata['nColumns']} but every row has {ncol} values, "
                      f"one per label; read as labelled", UserWarning, stacklevel=3)
    return data[:, 0].copy(), labels, data[:, 1:], metadata, labels_line


def _is_number(text: str) -> bool:
    try:
        _parse_float(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------- tables
def write_table(path: PathLike, time: ArrayLike, columns: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> None:
    """Write a plain OpenSim table (a ``TimeSeriesTable`` ``.sto``).

    Parameters
    ----------
    path : str or path-like
        Output file.
    time : array_like, shape (n,)
        The independent column.
    columns : dict of str -> array_like (n,)
        Dependent columns, written in the dict's order.
    metadata : dict of str -> object, optional
        Header ``key=value`` pairs: ``str`` as is, ``bool`` as ``true``/``false``
        (``yes``/``no`` for ``inDegrees``, which defaults to ``no``), numbers
        exactly. ``"header"`` becomes the title line. ``DataType``, ``version``,
        ``OpenSimVersion``, ``nRows`` and ``nColumns`` are generated, not copied.

    Raises
    ------
    ValueError
        A column's length differs from ``time``, or a name/value cannot be
        written (tabs, newlines, ``=`` in keys, duplicated or ``time`` names).
    """
    time = np.asarray(time, dtype=float)
    if time.ndim != 1:
        raise ValueError("time must be one-dimensional")
    labels = list(columns)
    arrays = []
    for name in labels:
        values = np.asarray(columns[name], dtype=float)
        if values.shape != time.shape:
            raise ValueError(f"column {name!r} has shape {values.shape}; expected {time.shape} like time")
        arrays.append(values)
    data = np.column_stack(arrays) if arrays else np.zeros((time.size, 0))
    _write(path, time, labels, data, metadata or {})


def read_table(path: PathLike) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, Any]]:
    """Read any OpenSim ``.sto`` table (Moco trajectory, ``TimeSeriesTable`` or legacy ``Storage``).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    time : ndarray (n,)
    columns : dict of str -> ndarray (n,)
        In file order.
    metadata : dict of str -> object
        Header ``key=value`` pairs. Known Moco keys are typed (``success`` ->
        bool, ``num_*``/``nRows``/``nColumns``/``version`` -> int,
        ``objective``/``objective_*``/``solver_duration`` -> float); others are
        strings. A bare title line is stored under ``"header"``.

    Raises
    ------
    StoFormatError
        No ``endheader``, a row with the wrong number of columns, a
        non-numeric value, ... (the message names the file and line).
    """
    time, labels, data, metadata, _ = _parse(path)
    return time, {label: data[:, j].copy() for j, label in enumerate(labels)}, metadata


# --------------------------------------------------------------- trajectories
def is_trajectory_header(metadata: Mapping[str, Any]) -> bool:
    """True if a header read by :func:`read_table` is a Moco trajectory's (it has ``num_*`` counts)."""
    return any(key in metadata for key in TRAJECTORY_COUNT_KEYS)


def _solution_metadata(solution: Any) -> dict[str, Any]:
    """Header entries for a ``Solution`` (anything with its attributes), with Moco's key names."""
    meta: dict[str, Any] = {
        "success": solution.success,
        "status": solution.status,
        "objective": solution.objective,
        "num_iterations": solution.nit,
        "solver_duration": solution.solve_time,
        # Not written by Moco (harmless extra keys for OpenSim).
        "solver": solution.solver,
        "message": " ".join(str(solution.message).split()),
        "constraint_violation": solution.constraint_violation,
    }
    for goal, value in solution.goal_values.items():
        meta[_check_key(f"objective_{goal}")] = value
    return meta


def write_trajectory(traj: Any, path: PathLike) -> None:
    """Write ``traj`` like ``MocoTrajectory::write`` (readable by ``osim.MocoTrajectory(path)``).

    Parameters
    ----------
    traj : Trajectory or Solution
        For a :class:`~moco_lab.results.trajectory.Solution` the header also records
        ``success``, ``status``, ``objective``, ``objective_<goal>``,
        ``num_iterations`` and ``solver_duration`` (Moco's names) plus
        ``solver``, ``message`` and ``constraint_violation``. Key/values in a
        ``traj.metadata`` dict (as set by :func:`read_trajectory`) are written
        too, and ``traj.input_controls`` / ``traj.slacks`` dicts, if present,
        become Moco's input-control and slack columns.
    path : str or path-like

    Raises
    ------
    RuntimeError
        ``traj`` is a sealed (failed) Solution: call ``unseal()`` first, as
        in Moco.
    ValueError
        A trajectory with parameters but no times (Moco stores parameters in
        the first row), or names that cannot be written.
    """
    groups = {
        "states": traj.states,  # Raises for a sealed Solution.
        "controls": traj.controls,
        "input_controls": getattr(traj, "input_controls", None) or {},
        "multipliers": traj.multipliers,
        "derivatives": traj.derivatives,
        "slacks": getattr(traj, "slacks", None) or {},
    }
    parameters = traj.parameters
    n = traj.num_times
    if parameters and n == 0:
        raise ValueError("cannot write parameters of a trajectory without times (they go in the first row)")

    labels: list[str] = []
    blocks = []
    for group, table in groups.items():
        for name, values in table.items():
            values = np.asarray(values, dtype=float)
            if values.shape != (n,):
                raise ValueError(f"{group} {name!r} has shape {values.shape}; expected ({n},) like time")
            labels.append(name)
            blocks.append(values)
    for name, value in parameters.items():
        column = np.full(n, np.nan)
        column[0] = value
        labels.append(name)
        blocks.append(column)
    data = np.column_stack(blocks) if blocks else np.zeros((n, 0))

    metadata = {k: v for k, v in (getattr(traj, "metadata", None) or {}).items() if k not in TRAJECTORY_COUNT_KEYS}
    if hasattr(traj, "goal_values") and hasattr(traj, "status"):  # a Solution
        metadata.update(_solution_metadata(traj))
    counts = dict(zip(TRAJECTORY_COUNT_KEYS, (*(len(t) for t in groups.values()), len(parameters))))
    metadata.update(counts)
    _write(path, traj.time, labels, data, metadata)


def read_trajectory_columns(path: PathLike) -> tuple[np.ndarray, dict[str, dict[str, Any]], dict[str, Any]]:
    """Read a Moco trajectory file into its column groups (see :func:`moco_lab.results.read_trajectory`).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    time : ndarray (n,)
    groups : dict
        ``"states"``, ``"controls"``, ``"input_controls"``, ``"multipliers"``,
        ``"derivatives"``, ``"slacks"``: ``{name: (n,) array}``;
        ``"parameters"``: ``{name: float}`` (read from the first row, as Moco does).
    metadata : dict
        Every header key/value, typed as in :func:`read_table`.

    Raises
    ------
    StoFormatError
        A malformed file, a header without Moco's ``num_*`` counts (use
        :func:`read_table` for plain tables), or counts that disagree with the
        columns.
    """
    time, labels, data, metadata, labels_line = _parse(path)
    if not is_trajectory_header(metadata):
        raise StoFormatError(path, None, "not a Moco trajectory: the header has no num_states/num_controls/... "
                                         "counts (use moco_lab.results.sto.read_table for plain tables)")
    counts = []
    for key in TRAJECTORY_COUNT_KEYS:
        count = metadata.get(key, 0)
        if not isinstance(count, int) or count < 0:
            raise StoFormatError(path, None, f"invalid {key}={count!r} in the header")
        counts.append(count)
    if sum(counts) != len(labels):
        listing = ", ".join(f"{k}={c}" for k, c in zip(TRAJECTORY_COUNT_KEYS, counts))
        raise StoFormatError(path, labels_line, f"the header counts ({listing}) add up to {sum(counts)} "
                                                f"but there are {len(labels)} columns besides time")

    groups: dict[str, dict[str, Any]] = {}
    start = 0
    for (group, _), count in zip(_BLOCKS, counts):
        names = labels[start:start + count]
        if group == "parameters":
            if count and data.shape[0] == 0:
                raise StoFormatError(path, labels_line, "parameters need at least one row of data")
            groups[group] = {name: float(data[0, start + j]) for j, name in enumerate(names)}
        else:
            groups[group] = {name: data[:, start + j].copy() for j, name in enumerate(names)}
        start += count
    return time, groups, metadata
