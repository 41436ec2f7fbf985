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


def their_accelerations(state, order: list[int]) -> list[float]:
    """OpenSim's generalized accelerations at a realized ``state``, in our coordinates' order (:func:`mobility_order`)."""
    udot = state.getUDot()
    return [udot.get(mi) for mi in order]


def their_reactions(theirs, state, joints, frames=("ground",)) -> dict:
    """OpenSim's joint reaction loads at a state realized to accelerations: ``{(joint, side, frame): [mx, my, mz, fx,
    fy, fz]}`` for each joint (name, or OpenSim's Joint objects), side ``"parent"``/``"child"`` (OpenSim's
    ``Joint::calcReactionOn{Parent,Child}ExpressedInGround``) and frame ``"ground"`` or ``"own"`` (re-expressed in
    the joint frame on that side). Joints given as objects are keyed by their absolute path, names by name."""
    ground = theirs.getGround()
    out = {}
    for j in joints:
        joint, key = (theirs.getJointSet().get(j), j) if isinstance(j, str) else (j, j.getAbsolutePathString())
        for side in ("parent", "child"):
            sv = (joint.calcReactionOnParentExpressedInGround if side == "parent"
                  else joint.calcReactionOnChildExpressedInGround)(state)
            own = joint.getParentFrame() if side == "parent" else joint.getChildFrame()
            for frame in frames:
                vecs = [sv.get(0), sv.get(1)] if frame == "ground" else \
                    [ground.expressVectorInAnotherFrame(state, sv.get(i), own) for i in (0, 1)]
                out[(key, side, frame)] = [v.get(i) for v in vecs for i in range(3)]
    return out


def largest_relative_difference(ours: dict, names: dict, theirs: list[dict]) -> float:
    """The largest difference between our outputs ``ours[names[key]]`` (n, 6) and OpenSim's loads ``theirs[k][key]``
    over the n states, each relative to the larger of 1 and that load's largest component."""
    import numpy as np

    worst = 0.0
    for key, name in names.items():
        for k, loads in enumerate(theirs):
            t = np.array(loads[key])
            worst = max(worst, float(np.abs(ours[name][k] - t).max() / max(1.0, np.abs(t).max())))
    return worst
