"""Structural patterns of a transcription's node functions, for declaring exact sparsity.

The transcription declares each binding's Jacobian (and, with the exact Hessian, each binding's Hessian) by
running its own assembly once on *patterns*: random positive numbers wherever a derivative can be non-zero
(the compiled kernels' structural entries), so that nothing cancels and the non-zeros found are the structure.
These functions stand in for :meth:`Transcription.node_dynamics` and :meth:`Transcription.node_data` during
such runs.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from ..ocp.goals import NodeData

__all__ = ["patterned", "kernel_to_block", "node_patterns", "pattern_dynamics", "output_patterns", "pattern_node_data"]


@contextmanager
def patterned(tr: Any, rng: np.random.Generator) -> Iterator[None]:
    """Within the block, ``tr.node_dynamics`` and ``tr.node_data`` return patterns (:func:`pattern_dynamics`,
    :func:`pattern_node_data`) instead of values: a binding's assembly run inside finds its structure."""
    saved = tr.node_dynamics, tr.node_data
    try:
        tr.node_dynamics = lambda idx, B, P, jac: pattern_dynamics(tr, idx, B.shape[0], rng)
        tr.node_data = lambda idx, B, P, t, jac: pattern_node_data(tr, idx, B, P, t, rng)
        yield
    finally:
        tr.node_dynamics, tr.node_data = saved


def kernel_to_block(tr: Any) -> np.ndarray:
    """Kernel input column (node inputs, then parameters) -> node block column; ``-1`` where the kernel input is
    data, not a variable (prescribed kinematics, time-dependent inputs, the accelerations in explicit mode), and
    parameters -> ``-1`` too (callers add them after the block)."""
    lay, klay = tr.layout, tr.kernel.layout
    out = np.full(klay.total + tr.npar, -1)
    groups = {"z": lay.z, "x": lay.x, "w": lay.w, "lam": lay.lam, "gam": lay.gam, "mu": lay.mu}
    if not lay.prescribed:
        groups.update(q=lay.q, u=lay.u)
        if lay.nacc:
            groups["a"] = lay.acc
    for name, sl in groups.items():
        ks = klay.slice(name)
        if ks.stop > ks.start and sl.stop > sl.start:
            out[ks] = np.arange(sl.start, sl.stop)
    return out


def node_patterns(tr: Any) -> dict:
    """Structural patterns (0/1 arrays) of the node functions' derivatives w.r.t. the node block and ``P``."""
    cache = tr.__dict__.get("_patterns")
    if cache is not None:
        return cache
    k, lay = tr.kernel, tr.layout
    klay = k.layout
    nb, npar, nq = tr.nb, tr.npar, tr.nq
    kin2blk = kernel_to_block(tr)

    def pattern(block, r: slice) -> tuple[np.ndarray, np.ndarray]:
        Pb = np.zeros((r.stop - r.start, nb))
        Pp = np.zeros((r.stop - r.start, npar))
        sel = (block.rows >= r.start) & (block.rows < r.stop)
        for row, col in zip(block.rows[sel] - r.start, block.cols[sel]):
            if col >= klay.total:
                Pp[row, col - klay.total] = 1.0
            elif kin2blk[col] >= 0:
                Pb[row, kin2blk[col]] = 1.0
        return Pb, Pp

    dj = k.block("dynamics_jacobian_prescribed" if lay.prescribed else "dynamics_jacobian")
    nz, nw = k.nz, k.nw
    pat = {}
    pat["R"] = pattern(dj, slice(0, nq))
    pat["Zd"] = pattern(dj, slice(nq, nq + nz))
    pat["Rw"] = pattern(dj, slice(nq + nz, nq + nz + nw))
    if tr.mode == "explicit" and not lay.prescribed:
        dyn = k.block("dynamics")
        Mp = np.zeros((nq, nq), bool)
        sel = dyn.rows < nq
        a0 = klay.offset["a"]
        Mp[dyn.rows[sel], dyn.cols[sel] - a0] = True
        closure = Mp | np.eye(nq, dtype=bool)
        while True:  # the inverse's pattern: everything connected through M's pattern
            nxt = (closure.astype(int) @ closure.astype(int)) > 0
            if np.array_equal(nxt, closure):
                break
            closure = nxt
        Rb, Rp = pat["R"]
        pat["udot"] = ((closure.astype(float) @ Rb) > 0).astype(float), ((closure.astype(float) @ Rp) > 0).astype(float)
    if tr.nkin:
        cb = k.block("constraints")
        nl = tr.nl
        o = 0
        for key, size in (("phi", nl), ("phid", nl), ("bias", nl), ("Ga", nl), ("GtG", nq)):
            pat[key] = pattern(cb, slice(o, o + size))
            o += size
    tr._patterns = pat
    return pat


def pattern_dynamics(tr: Any, idx: np.ndarray, n: int, rng: np.random.Generator) -> tuple:
    """:meth:`Transcription.node_dynamics` with random positive entries where derivatives can be non-zero."""
    pat, lay = node_patterns(tr), tr.layout
    nq, ny, nb, npar, nl = tr.nq, tr.ny, tr.nb, tr.npar, tr.nl

    def rnd(p):
        return p * rng.uniform(0.5, 1.5, (n,) + p.shape)

    F = rng.uniform(0.5, 1.5, (n, ny))
    dF = np.zeros((n, ny, nb))
    dFp = np.zeros((n, ny, npar))
    zr = slice(ny - lay.nz, ny)
    dF[:, zr], dFp[:, zr] = rnd(pat["Zd"][0]), rnd(pat["Zd"][1])
    R = rng.uniform(0.5, 1.5, (n, tr.nres))
    if lay.prescribed:
        dR = np.concatenate([rnd(pat["R"][0]), rnd(pat["Rw"][0])], axis=1)
        dRp = np.concatenate([rnd(pat["R"][1]), rnd(pat["Rw"][1])], axis=1)
        return F, dF, dFp, R, dR, dRp, None
    dF[:, np.arange(nq), lay.u.start + np.arange(nq)] = 1.0
    if tr.mode == "explicit":
        dUdot, dUdotp = rnd(pat["udot"][0]), rnd(pat["udot"][1])
        dR, dRp = rnd(pat["Rw"][0]), rnd(pat["Rw"][1])
    else:
        dUdot = np.zeros((n, nq, nb))
        dUdot[:, np.arange(nq), lay.acc.start + np.arange(nq)] = 1.0
        dUdotp = np.zeros((n, nq, npar))
        dR = np.concatenate([rnd(pat["R"][0]), rnd(pat["Rw"][0])], axis=1)
        dRp = np.concatenate([rnd(pat["R"][1]), rnd(pat["Rw"][1])], axis=1)
    dF[:, nq:2 * nq], dFp[:, nq:2 * nq] = dUdot, dUdotp
    kin = None
    if tr.nkin:
        G = rnd(pat["phi"][0][:, lay.q])
        dK = np.zeros((n, tr.nkin, nb))
        dKp = np.zeros((n, tr.nkin, npar))
        dK[:, :nl, lay.q] = G
        dK[:, nl:2 * nl] = rnd(pat["phid"][0])
        dK[:, 2 * nl:] = np.einsum("nlq,nqb->nlb", G, dUdot) + rnd(pat["bias"][0]) + rnd(pat["Ga"][0])
        dKp[:, 2 * nl:] = np.einsum("nlq,nqp->nlp", G, dUdotp)
        if lay.ngam:
            dF[:, :nq] += rnd(pat["GtG"][0])
        kin = {"K": rng.uniform(0.5, 1.5, (n, tr.nkin)), "dK": dK, "dKp": dKp}
    return F, dF, dFp, R, dR, dRp, kin


def output_patterns(tr: Any) -> dict:
    """Structural patterns of the goals' outputs: ``{name: (bool (k, nb), bool (k, np))}``."""
    cache = tr.__dict__.get("_output_pats")
    if cache is not None:
        return cache
    lay, klay = tr.layout, tr.kernel.layout
    pats = {}
    if tr.outputs:
        blk, rows = tr.kernel.output_block(tr.outputs, lay.prescribed)
        groups = [("q", lay.q), ("u", lay.u), ("a", lay.acc), ("z", lay.z), ("x", lay.x), ("w", lay.w),
                  ("lam", lay.lam)]
        for name, r in rows.items():
            k = r.stop - r.start
            Pb, Pp = np.zeros((k, tr.nb), bool), np.zeros((k, tr.npar), bool)
            sel = (blk.rows >= r.start) & (blk.rows < r.stop)
            for row, col in zip(blk.rows[sel] - r.start, blk.cols[sel]):
                if col >= klay.total:
                    Pp[row, col - klay.total] = True
                    continue
                for gname, sl in groups:
                    ks = klay.slice(gname)
                    if ks.start <= col < ks.stop and sl.stop > sl.start:
                        Pb[row, sl.start + col - ks.start] = True
            pats[name] = (Pb, Pp)
    tr._output_pats = pats
    return pats


def pattern_node_data(tr: Any, idx: np.ndarray, B: np.ndarray, P: np.ndarray, t: np.ndarray,
                      rng: np.random.Generator) -> tuple[NodeData, dict]:
    """:meth:`Transcription.node_data` for structure: output derivatives random on their patterns."""
    lay = tr.layout
    n = B.shape[0]
    outs, douts = {}, {}
    for name, (Pb, Pp) in output_patterns(tr).items():
        k = Pb.shape[0]
        outs[name] = rng.uniform(0.5, 1.5, (n, k))
        douts[name] = (Pb * rng.uniform(0.5, 1.5, (n, k, tr.nb)), Pp * rng.uniform(0.5, 1.5, (n, k, tr.npar)))
    return NodeData(t, B[:, lay.y], B[:, lay.x], B[:, lay.a], P, outs), douts
