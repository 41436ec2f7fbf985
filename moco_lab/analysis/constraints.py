"""Checks of kinematic constraints along a trajectory, with the compiled dynamics."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..engine.kernel import kernel_for

if TYPE_CHECKING:
    from ..modeling.model import Model
    from ..results.trajectory import Trajectory

__all__ = ["constraint_violations"]


def constraint_violations(model: Model, trajectory: Trajectory) -> dict[str, np.ndarray]:
    """Kinematic-constraint errors along a trajectory: position, velocity and acceleration level.

    ``φ(q)``, ``φ̇ = G u`` and ``φ̈ = G u̇ + Ġu`` at every time point. The
    accelerations ``u̇`` are the trajectory's ``…/accel`` derivatives
    (implicit-mode solutions) or, if it has none, the model's forward dynamics
    with the trajectory's controls, muscle states and multipliers (explicit
    mode), so ``φ̈`` checks the multipliers too.

    Parameters
    ----------
    model : Model
    trajectory : Trajectory or Solution
        Needs the model's states; for the acceleration level also its controls
        (and multipliers ``/constraintset/<name>/lambda_<i>``, zero if absent).

    Returns
    -------
    dict
        ``"time"`` (n,), ``"position"``, ``"velocity"``, ``"acceleration"``
        (n, m) with columns in :meth:`Model.multiplier_names` order, and
        ``"names"`` (the constraint path of each column).
    """
    kernel = kernel_for(model)
    t = np.asarray(trajectory.time, float)
    states = trajectory.states
    Q = np.column_stack([states[c.value_path] for c in model.coordinates])
    U = np.column_stack([states[c.speed_path] for c in model.coordinates])
    names = model.multiplier_names()
    if not names:
        empty = np.zeros((t.size, 0))
        return {"time": t, "position": empty, "velocity": empty, "acceleration": empty, "names": []}
    c = kernel.constraints(Q, U)
    derivs = trajectory.derivatives
    if all(co.accel_path in derivs for co in model.coordinates):
        A = np.column_stack([derivs[co.accel_path] for co in model.coordinates])
    else:
        controls = trajectory.controls
        X = np.column_stack([controls[n] for n in model.control_names()]) if model.control_names() \
            else np.zeros((t.size, 0))
        aux = model.auxiliary_state_names()
        Z = np.column_stack([states[n] for n in aux]) if aux else None
        mult = trajectory.multipliers
        L = np.column_stack([mult.get(n, np.zeros(t.size)) for n in names])
        A = kernel.evaluate(Q, U, X, np.zeros(0), Z=Z, L=L)["A"]
    acc = np.einsum("nlq,nq->nl", c["G"], A) + c["bias"]
    labels = [cons.path for cons in model.constraints for _ in range(cons.num_equations)]
    return {"time": t, "position": c["phi"], "velocity": c["phid"], "acceleration": acc, "names": labels}
