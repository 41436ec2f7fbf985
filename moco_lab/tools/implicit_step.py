"""Time stepping of a model's implicit equations f(x, ẋ, u) = 0 (e.g. gait2d's muscles), by Newton's method.

Drake's ``Simulator`` (:func:`moco_lab.tools.simulate.simulate`) needs explicit state derivatives; a
model whose force elements have implicit derivatives (gait2d's contractile-element velocity, Moco's
implicit tendon dynamics) gives residuals instead. :func:`simulate_implicit` integrates such a model
the way the gait2d manual's own tests do: a θ-method on the whole implicit system, solved at every step
with Newton's method and the compiled, exact Jacobians.

With step ``h``, the state at the end of the step ``y1 = (q1, u1, z1)`` and the implicit derivatives
``w`` (at the evaluation point) are the unknowns of::

    (q1 − q0)/h = u_θ                                  kinematics
    M(q_θ) (u1 − u0)/h + c(q_θ, u_θ) − τ(q_θ, u_θ, z_θ, w, x_θ) = 0   equations of motion
    (z1 − z0)/h = ż(q_θ, u_θ, z_θ, w, x_θ)             auxiliary states (activations, fiber lengths)
    r(q_θ, u_θ, z_θ, w, x_θ) = 0                       implicit residuals (the muscles' force balance)

with ``y_θ = (1 − θ) y0 + θ y1``: ``θ = 1`` is backward Euler, ``θ = ½`` the implicit midpoint rule (the
manual's IMstep).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from ..engine.kernel import kernel_for
from ..modeling.model import Model
from ..results.trajectory import Trajectory

__all__ = ["simulate_implicit", "METHODS"]

#: The θ of each method.
METHODS = {"backward_euler": 1.0, "midpoint": 0.5}


def simulate_implicit(model: Model, initial_state: Mapping[str, float], t_final: float, step: float, *,
                      controls: Mapping[str, float | Callable[[float], float]] | None = None,
                      method: str = "backward_euler", tolerance: float = 1e-9, max_iterations: int = 25,
                      progress: Callable[[float, float], None] | None = None) -> Trajectory:
    """Integrate ``model`` from ``initial_state`` over ``[0, t_final]`` with fixed steps of an implicit method.

    Parameters
    ----------
    model : Model
        Any moco_lab model without kinematic constraints.
    initial_state : dict of state name -> value
        States not given start at the model's default (coordinates and speeds 0, activations 0, fiber
        lengths and the like as each element says).
    t_final, step : float
        End time and step (s).
    controls : dict of control name -> number or function of time, optional
        Controls not given are 0.
    method : {"backward_euler", "midpoint"}
    tolerance : float
        Newton stops when the largest update of an unknown is below ``tolerance`` (in the unknown's units).
    max_iterations : int
        Newton iterations per step; a step whose Newton iteration does not converge is taken as two half steps
        (down to 1/256 of ``step``, then ``RuntimeError`` naming the time).
    progress : callable, optional
        ``progress(t, t_final)`` after each step.

    Returns
    -------
    Trajectory
        States and controls at every step; ``trajectory.info`` holds ``"newton_iterations"`` (per step),
        ``"evaluations"`` (calls of the compiled dynamics) and ``"halved_steps"``.
    """
    if method not in METHODS:
        raise ValueError(f"simulate_implicit: method must be one of {list(METHODS)}, got {method!r}")
    if not (math.isfinite(t_final) and t_final > 0 and math.isfinite(step) and 0 < step <= t_final):
        raise ValueError(f"simulate_implicit: need 0 < step <= t_final, got step {step} and t_final {t_final}")
    if model.constraints:
        raise ValueError("simulate_implicit: models with kinematic constraints are not supported "
                         f"({[c.name for c in model.constraints]})")
    theta = METHODS[method]
    k = kernel_for(model)
    nq, nz, nw, nx = k.nq, k.nz, k.nw, k.nx
    q_names = [c.value_path for c in model.coordinates]
    u_names = [c.speed_path for c in model.coordinates]
    z_names = model.auxiliary_state_names()
    x_names = model.control_names()
    known = set(q_names) | set(u_names) | set(z_names)
    unknown = set(initial_state) - known
    if unknown:
        from ..util.names import did_you_mean

        raise KeyError("simulate_implicit: " + did_you_mean(sorted(unknown)[0], sorted(known), "state"))
    controls = dict(controls or {})
    bad = set(controls) - set(x_names)
    if bad:
        from ..util.names import did_you_mean

        raise KeyError("simulate_implicit: " + did_you_mean(sorted(bad)[0], x_names, "control"))

    y = np.array([float(initial_state[n]) if n in initial_state else model.default_state_value(n)
                  for n in q_names + u_names + z_names])

    def x_at(t: float) -> np.ndarray:
        return np.array([float(controls[n](t)) if callable(controls.get(n)) else float(controls.get(n, 0.0))
                         for n in x_names])

    n_steps = int(round(t_final / step))
    h = t_final / n_steps
    times = np.linspace(0.0, t_final, n_steps + 1)
    Y = np.empty((n_steps + 1, y.size))
    X = np.empty((n_steps + 1, nx))
    Y[0], X[0] = y, x_at(0.0)
    iq, iu, iz = slice(0, nq), slice(nq, 2 * nq), slice(2 * nq, 2 * nq + nz)
    cq, cu, cz, cw = slice(0, nq), slice(nq, 2 * nq), slice(2 * nq, 2 * nq + nz), slice(2 * nq + nz, None)
    n_unknown = 2 * nq + nz + nw
    counts = {"evaluations": 0, "halvings": 0}

    def newton(y0: np.ndarray, x_theta: np.ndarray, w: np.ndarray, dt: float):
        """One step of length dt: (y1, w, iterations), or None when Newton does not converge."""
        y1, w = y0.copy(), w.copy()
        for iteration in range(max_iterations):
            yt = (1 - theta) * y0 + theta * y1
            acc = (y1[iu] - y0[iu]) / dt
            r = k.evaluate(yt[iq][None], yt[iu][None], x_theta[None], None, Z=yt[iz][None], A=acc[None],
                           W=w[None], jac=True)
            counts["evaluations"] += 1
            F = np.concatenate([(y1[iq] - y0[iq]) / dt - yt[iu], r["R"][0], (y1[iz] - y0[iz]) / dt - r["Zd"][0],
                                r["Rw"][0]])
            if not np.all(np.isfinite(F)):
                return None
            J = np.zeros((n_unknown, n_unknown))  # rows: kinematics, motion, auxiliary states, implicit residuals
            J[cq, cq] = np.eye(nq) / dt
            J[cq, cu] = -theta * np.eye(nq)
            for rows, key in ((cu, "J"), (cz, "JZ"), (cw, "JW")):
                blocks = r[key]
                sign = -1.0 if key == "JZ" else 1.0  # the auxiliary rows are (z1 − z0)/dt − ż
                J[rows, cq] = sign * theta * blocks["dq"][0]
                J[rows, cu] = sign * theta * blocks["du"][0]
                J[rows, cz] = sign * theta * blocks["dz"][0]
                J[rows, cw] = sign * blocks["dw"][0]
            J[cu, cu] += r["J"]["da"][0] / dt
            J[cz, cz] += np.eye(nz) / dt
            try:
                delta = np.linalg.solve(J, -F)
            except np.linalg.LinAlgError:
                return None
            y1[iq] += delta[cq]
            y1[iu] += delta[cu]
            y1[iz] += delta[cz]
            w += delta[cw]
            if np.max(np.abs(delta)) < tolerance:
                return y1, w, iteration + 1
        return None

    def advance(y0: np.ndarray, w: np.ndarray, t0: float, dt: float, depth: int = 0):
        """Step from t0 by dt; where Newton fails, two half steps instead (at most 8 halvings)."""
        x_theta = (1 - theta) * x_at(t0) + theta * x_at(t0 + dt)
        done = newton(y0, x_theta, w, dt)
        if done is not None:
            return done
        if depth >= 8:
            raise RuntimeError(f"simulate_implicit: Newton did not converge at t = {t0 + dt:.6g} s even with steps "
                               f"of {dt:.3g} s (after {max_iterations} iterations each)")
        counts["halvings"] += 1
        y_half, w, n1 = advance(y0, w, t0, dt / 2, depth + 1)
        y1, w, n2 = advance(y_half, w, t0 + dt / 2, dt / 2, depth + 1)
        return y1, w, n1 + n2

    w = np.zeros(nw)
    iterations = []
    for s in range(n_steps):
        y1, w, n = advance(Y[s], w, times[s], h)
        iterations.append(n)
        Y[s + 1], X[s + 1] = y1, x_at(times[s + 1])
        if progress is not None:
            progress(float(times[s + 1]), float(t_final))
    traj = Trajectory(times, states={n: Y[:, i] for i, n in enumerate(q_names + u_names + z_names)},
                      controls={n: X[:, i] for i, n in enumerate(x_names)})
    traj.info = {"newton_iterations": np.array(iterations), "evaluations": counts["evaluations"],
                 "halved_steps": counts["halvings"], "method": method, "step": h}
    return traj
