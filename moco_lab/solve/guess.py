"""Initial guesses: Moco's guess from bounds, or any trajectory interpolated onto the grid."""
from __future__ import annotations

import math
import re

import numpy as np

from ..engine.transcription import Transcription
from ..results.trajectory import Solution, Trajectory
from ..symbolic.batched import matmul

__all__ = ["guess_from_bounds", "guess_from_trajectory", "set_guess"]


def guess_from_bounds(tr: Transcription) -> dict:
    """Moco's default guess: midpoint of each variable's bounds (fixed values at fixed ends)."""
    p, ng = tr.problem, tr.grid.num_points
    if tr.prescribed is not None:
        g = {"t0": tr.prescribed.initial_time, "tf": tr.prescribed.final_time}
    else:
        g = {"t0": p.time_initial.midpoint_guess(), "tf": p.time_final.midpoint_guess()}
    for key, infos in (("Y", tr.state_infos), ("X", tr.control_infos)):
        M = np.zeros((ng, len(infos)))
        for k, info in enumerate(infos):
            M[:, k] = info.bounds.midpoint_guess()
            if info.initial is not None:
                M[0, k] = info.initial.midpoint_guess()
            if info.final is not None:
                M[-1, k] = info.final.midpoint_guess()
        g[key] = M
    values = getattr(tr.settings, "guess_values", None) or {}
    for pattern, value in values.items():
        regex = re.compile(pattern)
        matched = False
        for key, names in (("Y", tr.state_names), ("X", tr.control_names)):
            for k, name in enumerate(names):
                if regex.fullmatch(name):
                    g[key][:, k] = float(value)
                    matched = True
        if not matched:
            raise ValueError(f"guess_values: the pattern {pattern!r} matches no state or control of the problem")
    g["A"] = np.zeros(tr.A.shape)
    g["P"] = np.array([par.bounds.midpoint_guess() for par in p.parameters])
    if g["tf"] <= g["t0"]:
        g["tf"] = g["t0"] + max(1e-3, p.time_final.upper - g["t0"]) if math.isfinite(p.time_final.upper) else g["t0"] + 1
    return g


def guess_from_trajectory(tr: Transcription, traj: Trajectory) -> dict:
    """Interpolate ``traj`` (any grid) onto the transcription's grid; fill gaps from bounds."""
    g = guess_from_bounds(tr)
    if isinstance(traj, Solution):
        traj = traj._data()  # a failed solve is still a usable guess; the caller's solution stays sealed
    p = tr.problem
    if tr.prescribed is None:
        g["t0"] = float(np.clip(traj.initial_time, p.time_initial.lower, p.time_initial.upper))
        g["tf"] = float(np.clip(traj.final_time, p.time_final.lower, p.time_final.upper))
    t = g["t0"] + tr.grid.tau * (g["tf"] - g["t0"]) if tr.prescribed is not None else \
        traj.initial_time + tr.grid.tau * (traj.final_time - traj.initial_time)
    for key, names, table in (("Y", tr.state_names, traj.states), ("X", tr.control_names, traj.controls)):
        for k, name in enumerate(names):
            if name in table:
                g[key][:, k] = np.interp(t, traj.time, table[name])
    lay = tr.layout
    algebraic = {**traj.derivatives, **traj.multipliers}
    for k, name in enumerate(tr.algebraic_names):
        if name in algebraic:
            g["A"][:, k] = np.interp(t, traj.time, algebraic[name])
    if lay.nacc:
        acc = lay.in_algebraic(lay.acc)
        for c in tr.model.coordinates:
            if c.accel_path in traj.derivatives:
                continue
            if c.speed_path in traj.states and traj.num_times > 2:
                g["A"][:, acc.start + c.q_index] = np.interp(t, traj.time,
                                                             np.gradient(traj.states[c.speed_path], traj.time))
    for k, par in enumerate(p.parameters):
        if par.name in traj.parameters:
            g["P"][k] = traj.parameters[par.name]
    return g


def set_guess(tr: Transcription, g: dict) -> None:
    """Set a guess (a dict of ``t0``, ``tf``, ``Y``, ``X``, ``A``, ``P``) on the transcription's program."""
    prog, lay = tr.prog, tr.layout
    if tr.bordalba:  # projected end states start at the states themselves
        A = np.asarray(g["A"], float).copy()
        pn = tr.projection_nodes
        A[pn, lay.in_algebraic(lay.xt)] = np.asarray(g["Y"], float)[pn, :lay.nxt]
        g = dict(g, A=A)
    prog.SetInitialGuess(tr.t0, g["t0"])
    prog.SetInitialGuess(tr.tf, g["tf"])
    for key in ("Y", "X", "A"):
        V = getattr(tr, key)
        if V.size:
            prog.SetInitialGuess(V.reshape(-1), np.asarray(g[key], float).reshape(-1))
    if tr.npar:
        prog.SetInitialGuess(tr.P, g["P"])
    # goal integrals: start at the integrals of the guess
    if tr.integral_goals:
        B = np.hstack([np.asarray(g["Y"], float), np.asarray(g["X"], float), np.asarray(g["A"], float)])
        P = np.asarray(g["P"], float)
        T = g["t0"] + tr.grid.tau * (g["tf"] - g["t0"])
        for c in tr.chunks:
            data, _ = tr.node_data(c.g, B[c.g], P, T[c.g], False)
            for b in tr.integral_goals:
                part = (g["tf"] - g["t0"]) * float(matmul(c.quad, b.integrand(data, False)[0]))
                prog.SetInitialGuess(c.partial[b.name], part)
        data, _ = tr.node_data(np.arange(tr.grid.num_points), B, P, T, False)
        q = tr.grid.quadrature * (g["tf"] - g["t0"])
        for b in tr.integral_goals:
            prog.SetInitialGuess(tr.I[b.name], float(matmul(q, b.integrand(data, False)[0])))
