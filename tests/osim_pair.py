"""Helpers shared by the tests that compare a model with OpenSim's reading of the same file (they take OpenSim
objects as arguments and never import OpenSim themselves)."""


def their_coordinates(theirs) -> dict:
    """OpenSim's coordinates by name."""
    return {c.getName(): c for c in theirs.getCoordinateSet()}


def mobility_order(theirs, state, ours) -> list[int]:
    """Index in OpenSim's generalized speeds of each of our coordinates (found by setting one speed)."""
    coords = their_coordinates(theirs)
    for c in ours.coordinates:
        coords[c.name].setSpeedValue(state, 0.0)
    order = []
    for c in ours.coordinates:
        coords[c.name].setSpeedValue(state, 1.0)
        u = state.getU()
        order.append(next(i for i in range(u.size()) if u.get(i) == 1.0))
        coords[c.name].setSpeedValue(state, 0.0)
    return order
