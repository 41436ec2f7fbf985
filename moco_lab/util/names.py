"""Names: "did you mean" messages and values addressed by name.

Pure Python and numpy (no pydrake), so every layer can use it.
"""
from __future__ import annotations

import difflib
from typing import Any, Iterable, Iterator, Sequence

__all__ = ["did_you_mean", "NamedValues", "StrictAttributes", "NameTable"]


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
    words = what.split(" ")   # the noun is the word before a preposition ("marker in the data"), else the last
    k = next((i - 1 for i, w in enumerate(words) if i and w in ("in", "among", "of", "from", "for", "on")), len(words) - 1)
    noun = words[k]
    words[k] = noun[:-1] + "ies" if noun.endswith("y") and not noun.endswith(("ay", "ey", "oy", "uy")) else noun + "s"
    plural = " ".join(words)
    return f"Unknown {what} {name!r}.{hint} Valid {plural}: {listing}."


class NameTable(dict):
    """A ``dict`` of named series whose missing keys raise a ``KeyError`` that suggests close names.

    ``solution.states["/jointset/knee/knee_angle/valu"]`` says which names exist instead of just the key.
    """

    def __init__(self, data: Any = (), what: str = "name"):
        super().__init__(data)
        self.what = what

    def __missing__(self, key: Any) -> Any:
        raise KeyError(did_you_mean(str(key), list(self), self.what))

    def __reduce__(self):
        return (type(self), (dict(self), self.what))


class StrictAttributes:
    """Refuses to set an attribute the object does not have, once it is built (a misspelt setting
    such as ``solver.num_mesh_interval = 10`` would otherwise be accepted and silently ignored).

    Call :meth:`_seal_attributes` at the end of ``__init__`` (or ``__post_init__``); attributes whose names
    start with ``_`` are not checked.
    """

    def _seal_attributes(self) -> None:
        object.__setattr__(self, "_attributes_sealed", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if (not name.startswith("_") and self.__dict__.get("_attributes_sealed", False)
                and not hasattr(type(self), name) and name not in self.__dict__):
            known = sorted({n for n in list(self.__dict__) + dir(type(self)) if not n.startswith("_")})
            raise AttributeError(f"{type(self).__name__}: " + did_you_mean(name, known, "setting"))
        object.__setattr__(self, name, value)


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
        """The names, in order."""
        return list(self.names)
