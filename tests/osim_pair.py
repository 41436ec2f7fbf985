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


def body_pose_errors(theirs, state, ours, q: list) -> tuple[float, float]:
    """The largest differences of every OpenSim body's origin (m) and rotation matrix between OpenSim's model at
    ``state`` and the engine's recursion on ``ours`` at the plant positions ``q`` (the same pose)."""
    import numpy as np

    from moco_lab.engine.multibody import SymbolicMultibody

    tree = ours.tree()
    mb = SymbolicMultibody(tree, [float(v) for v in q], [0.0] * len(q))
    origin = rotation = 0.0
    for i, b in tree.bodies.items():
        if b.name in ours.frame_bodies:
            continue
        T = theirs.getBodySet().get(b.name).getTransformInGround(state)
        origin = max(origin, float(np.abs(np.array(mb.p[i], float) - [T.p()[j] for j in range(3)]).max()))
        R = [[T.R().get(r, c) for c in range(3)] for r in range(3)]
        rotation = max(rotation, float(np.abs(np.array(mb.R[i], float) - R).max()))
    return origin, rotation
