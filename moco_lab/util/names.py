"""Names: "did you mean" messages and values addressed by name.

Pure Python and numpy (no pydrake), so every layer can use it.
"""
from __future__ import annotations

import difflib
from typing import Any, Iterable, Iterator, Sequence

__all__ = ["did_you_mean", "NamedValues"]


def did_you_mean(name: str, options: Iterable[str], what: str) -> str:
    """Message for an unknown ``name``, listing the closest valid ``options``.

    Parameters
    ----------
    name : str
        The name that was not found.
    options : iterable of str
        The valid names.
    what : str
        What kind of name it is ("state", "control", ...), used in the message.

    Returns
    -------
    str
        ``"Unknown state 'x'. Did you mean 'y'? Valid states: ..."``.
    """
    options = list(options)
    close = difflib.get_close_matches(name, options, n=3, cutoff=0.3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listing = ", ".join(repr(o) for o in options) if len(options) <= 12 else f"{len(options)} names"
    plural = what[:-1] + "ies" if what.endswith("y") and not what.endswith(("ay", "ey", "oy", "uy")) else what + "s"
    return f"Unknown {what} {name!r}.{hint} Valid {plural}: {listing}."


class NamedValues:
    """Values addressed by name or index: ``v["/slider/position/value"]``, ``v[0]``.

    Passed to user-written goals and path constraints; ``v.array`` is the
    underlying 1-D array (floats, or Drake ``AutoDiffXd`` while the solver
    takes derivatives).

    Parameters
    ----------
    names : sequence of str
        One name per entry of ``array``.
    array : sequence, shape (len(names),)
    """

    def __init__(self, names: Sequence[str], array: Any):
        self.names = list(names)
        self.array = array
        self._index = {n: i for i, n in enumerate(self.names)}

    def __getitem__(self, key: str | int) -> Any:
        if isinstance(key, str):
            if key not in self._index:
                raise KeyError(did_you_mean(key, self.names, "name"))
            return self.array[self._index[key]]
        return self.array[key]

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.array)

    def keys(self) -> list[str]:
        return list(self.names)
