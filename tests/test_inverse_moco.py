"""moco_lab's Inverse against the real OpenSim Moco 4.6 ``MocoInverse`` (optional extra).

The suspended mass (problem (c)'s model) is driven by known smooth excitations
and time-stepped (``tests/test_inverse.py::_driven_suspended_mass``); both tools
then solve the inverse problem on the same coordinate values, mesh (50
intervals), scheme and tolerances.

Measured (trapezoidal and Hermite–Simpson alike): the objectives differ by
7.4e-4 (relative) and activations by up to 0.021 — moco_lab's objective is the
*lower* one. Moco's own solution, evaluated in moco_lab's program, is feasible
(violation ~1e-8) with exactly Moco's objective, so moco_lab's program admits
Moco's answer; started from moco_lab's solution, Moco moves back to its own
optimum, so Moco's program has a restriction ours lacks (not yet identified;
the splines match Moco's quintic natural GCV splines, and the residual agrees
to 1e-8 at Moco's solution). The assertions below check what is established:
Moco's solution is feasible in ours with Moco's objective, ours is no worse,
and the two agree to 2e-3 in objective and 0.03 in activation.
"""

import numpy as np
import pytest

pytest.importorskip("opensim")


from test_inverse import _driven_suspended_mass

from benchmarks import moco_reference as mr
from moco_lab.solve.optimizer import max_constraint_violation
from moco_lab.tools.inverse import Inverse

pytestmark = pytest.mark.opensim


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
def test_inverse_agrees_with_moco_inverse(scheme):
    model, motion, _ = _driven_suspended_mass()
    names = ["/jointset/tx/tx/value", "/jointset/ty/ty/value"]
    moco = mr.in_fresh_process("solve_suspended_mass_inverse", motion.time, {n: motion.states[n] for n in names},
                               mesh_interval=0.01, scheme=scheme, tol=1e-8)   # a process of its own: in_fresh_process
    assert moco["success"], moco["status"]
    inv = Inverse(model, motion, mesh_interval=0.01, transcription_scheme=scheme, convergence_tolerance=1e-8,
                  constraint_tolerance=1e-8)
    assert inv.num_mesh_intervals == moco["num_mesh_intervals"] == 50
    ours = inv.solve().solution
    assert ours.success, ours.message
    np.testing.assert_allclose(ours.time, moco["time"], atol=1e-12)

    # Moco's answer is a feasible point of our program, with Moco's objective
    ip = inv.transcribe()
    x = np.zeros(ip.prog.num_vars())
    def put(V, M):
        x[ip.prog.FindDecisionVariableIndices(V.reshape(-1))] = M.reshape(-1)

    put(ip.Y, np.column_stack([moco["states"][n] for n in ip.state_names]))
    put(np.array([ip.t0, ip.tf]), np.array([inv.initial_time, inv.final_time]))
    put(ip.X, np.column_stack([moco["controls"][n] for n in ip.control_names]))
    assert max_constraint_violation(ip.prog, x) < 1e-6
    ours_at_moco = sum(float(np.sum(ip.prog.EvalBinding(c, x))) for c in ip.prog.GetAllCosts())
    assert ours_at_moco == pytest.approx(moco["objective"], rel=1e-9)

    # ours is no worse, and close
    assert ours.objective <= moco["objective"] * (1 + 1e-9)
    assert ours.objective == pytest.approx(moco["objective"], rel=2e-3)
    for n in model.control_names():
        a = moco["states"][f"{n}/activation"]
        assert np.max(np.abs(ours.states[f"{n}/activation"] - a)) < 0.03
