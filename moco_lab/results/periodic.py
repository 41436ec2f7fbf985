"""A full gait cycle from a half cycle (Moco's ``createPeriodicTrajectory``).

A symmetric walk is solved over half a cycle: at its end the right leg is where the left one was at its start. The
second half of the cycle is the first half with the sides swapped, one half-period later, the body further on. Pure
data: no model.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .trajectory import Trajectory

__all__ = ["create_periodic_trajectory", "ADD_PATTERNS", "NEGATE_PATTERNS", "NEGATE_AND_SHIFT_PATTERNS",
           "SYMMETRY_PATTERNS"]

#: Moco's defaults: columns that advance by their change over the half cycle (the forward position).
ADD_PATTERNS = (r".*pelvis_tx/value",)
#: Columns that change sign in the second half (out-of-plane pelvis and trunk motion of 3-D models).
NEGATE_PATTERNS = (r".*pelvis_list(?!/value).*", r".*pelvis_rotation.*", r".*pelvis_tz(?!/value).*",
                   r".*lumbar_bending(?!/value).*", r".*lumbar_rotation.*")
#: Columns mirrored about their final value in the second half.
NEGATE_AND_SHIFT_PATTERNS = (r".*pelvis_list/value", r".*pelvis_tz/value", r".*lumbar_bending/value")
#: ``(pattern, substitution)``: a column matching ``pattern`` is copied, in the second half, to the column its name
#: becomes by the substitution (``hip_r`` ↔ ``hip_l``, ``soleus_r`` ↔ ``soleus_l``).
SYMMETRY_PATTERNS = ((r"_r(/|_|$)", r"_l\1"), (r"_l(/|_|$)", r"_r\1"))


def create_periodic_trajectory(half: Trajectory, add_patterns: Sequence[str] = ADD_PATTERNS,
                               negate_patterns: Sequence[str] = NEGATE_PATTERNS,
                               negate_and_shift_patterns: Sequence[str] = NEGATE_AND_SHIFT_PATTERNS,
                               symmetry_patterns: Sequence[tuple[str, str]] = SYMMETRY_PATTERNS) -> Trajectory:
    """The full cycle of a symmetric half cycle, as OpenSim Moco's ``createPeriodicTrajectory`` builds it.

    Parameters
    ----------
    half : Trajectory
        ``n`` times over half a cycle (e.g. a solution of :func:`moco_lab.examples.walking_2d_prediction`).
    add_patterns, negate_patterns, negate_and_shift_patterns : sequence of str
        Regular expressions matched against whole column names; Moco's defaults.
    symmetry_patterns : sequence of (pattern, substitution)
        Searched anywhere in a name (``re.search``); the substitution (``re.sub``) names the opposite column.

    Returns
    -------
    Trajectory
        ``2n − 1`` times: the half cycle, then its times ``[1:]`` shifted by its duration. In the second half each
        state, control and derivative column is, by the first pattern it matches: the first half's values plus
        their change over it (``add``), negated (``negate``), negated plus twice the final value
        (``negate_and_shift``), or the *opposite* column's first-half values (``symmetry``: a matching column
        writes its opposite's second half); otherwise repeated.
        Multipliers and parameters are not carried over (as in Moco).

    Raises
    ------
    KeyError
        A column matches a symmetry pattern but the trajectory has no opposite column (named).
    TypeError, ValueError
        ``half`` is not a trajectory of at least 2 times; a pattern list is a single string or holds an invalid
        regular expression (named).
    """
    if not isinstance(half, Trajectory):
        raise TypeError(f"create_periodic_trajectory: half must be a Trajectory or Solution, got {type(half).__name__}")
    if half.num_times < 2:
        raise ValueError(f"create_periodic_trajectory: the half cycle needs at least 2 times, got {half.num_times}")
    for label, patterns in (("add_patterns", add_patterns), ("negate_patterns", negate_patterns),
                            ("negate_and_shift_patterns", negate_and_shift_patterns),
                            ("symmetry_patterns", symmetry_patterns)):
        if isinstance(patterns, (str, bytes)):
            raise TypeError(f"create_periodic_trajectory: {label} must be a list of patterns, got the string "
                            f"{patterns!r} (one pattern: [{patterns!r}])")
        for item in patterns:
            if label == "symmetry_patterns" and (isinstance(item, str) or len(tuple(item)) != 2):
                raise ValueError(f"create_periodic_trajectory: symmetry_patterns holds {item!r}, not a pair "
                                 "(pattern, substitution) such as ('_r(/|_|$)', '_l\\1')")
            pattern = item[0] if label == "symmetry_patterns" else item
            try:
                re.compile(pattern)
            except (re.error, TypeError) as err:
                raise ValueError(f"create_periodic_trajectory: {label} holds {pattern!r}, not a regular "
                                 f"expression ({err})") from None
    n = half.num_times
    duration = half.final_time - half.initial_time
    time = np.concatenate([half.time, half.time[1:] + duration])

    def process(group: str, table: dict) -> dict:
        names = list(table)
        out = {name: np.concatenate([v, np.empty(n - 1)]) for name, v in table.items()}
        for name, v in table.items():  # in Moco's order; a name may match several kinds
            matched = False
            if any(re.fullmatch(p, name) for p in add_patterns):
                out[name][n:], matched = v[1:] + (v[-1] - v[0]), True
            if any(re.fullmatch(p, name) for p in negate_patterns):
                out[name][n:], matched = -v[1:], True
            if any(re.fullmatch(p, name) for p in negate_and_shift_patterns):
                out[name][n:], matched = -v[1:] + 2 * v[-1], True
            for pattern, substitution in symmetry_patterns:
                if re.search(pattern, name):
                    opposite = re.sub(pattern, substitution, name)
                    if opposite not in table:
                        raise KeyError(f"create_periodic_trajectory: the {group} {name!r} has no opposite "
                                       f"{opposite!r} (columns: {names})")
                    out[opposite][n:], matched = v[1:], True
                    break
            if not matched:
                out[name][n:] = v[1:]
        return out

    return Trajectory(time, states=process("state", half.states), controls=process("control", half.controls),
                      derivatives=process("derivative", half.derivatives), quantities=half.quantities)
