"""How heavy is the real subject? AddBiomechanics' linear total-mass fit (``moco_lab.tools.mass_fit``) in 3-D on the
real walking trial (issue 36, point 1): the centre of mass of the full-body model at the IK poses (against OpenSim
4.6), the net ground reaction force of the two plates, the fitted mass against the model's 85.27 kg."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.results.external_loads import net_ground_force, read_external_loads
from moco_lab.tools.mass_fit import com_positions, fit_mass, linear_residual_forces
from moco_lab.util.data import opensim_file

GRAVITY = (0.0, -9.80665, 0.0)
PLATES = (0.45, 1.8)  # s: both feet's forces measured (the trial's id_walk.sto span)


@pytest.fixture(scope="module")
def trial():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ml.read_osim(opensim_file("subject_walk_scaled.osim"), replace_millard=True)
    ik, time = ml.examples.walking_3d_ik(model)
    return model, ik, time


def test_centre_of_mass_against_opensim(trial):
    """The whole-body COM at five IK poses equals OpenSim's ``calcMassCenterPosition`` to round-off (1e-12 m: the
    bodies' poses agree to 1e-15 m, tests/test_osim3d.py; 22 bodies' mass-weighted sum)."""
    opensim = pytest.importorskip("opensim")
    model, ik, _ = trial
    theirs = opensim.Model(str(opensim_file("subject_walk_scaled.osim")))
    state = theirs.initSystem()
    coords = {c.getName(): c for c in theirs.getCoordinateSet()}
    frames = [0, 50, 100, 150, 237]
    ours = com_positions(model, ik.q[frames])
    for row, frame in enumerate(frames):
        for c in model.coordinates:
            coords[c.name].setValue(state, float(ik.q[frame, c.q_index]), False)
        theirs.realizePosition(state)
        p = theirs.calcMassCenterPosition(state)
        assert np.abs(ours[row] - [p.get(0), p.get(1), p.get(2)]).max() < 1e-12


def test_net_ground_force():
    """The two plates' forces summed in the lab frame; standing on them the subject's weight is carried (the
    vertical force's mean over the plates window within 3 % of the model's 836 N: walking adds no net vertical
    impulse over whole steps, only the window's ends are not whole steps)."""
    time, force = net_ground_force(opensim_file("grf_walk.xml"))
    assert force.shape == (time.size, 3)
    inside = (time >= PLATES[0]) & (time <= PLATES[1])
    assert np.mean(force[inside, 1]) == pytest.approx(85.27 * 9.80665, rel=0.03)
    assert force[inside, 1].min() > 500  # never off both plates in the window (double and single support)
    loads = read_external_loads(opensim_file("grf_walk.xml"))
    loads = dataclasses.replace(loads, forces=[dataclasses.replace(loads.forces[0], force_expressed_in_body="calcn_r"),
                                               *loads.forces[1:]])
    with pytest.raises(ValueError, match="not expressed in ground"):
        net_ground_force(loads, opensim_file("grf_walk.mot"))


def test_fitted_mass_is_the_models(trial):
    """The linear fit of (c₀, v₀, 1/m) to the COM path under the measured forces: 85.07 kg against the model's
    85.27 kg (measured; within 0.5 %: AddBiomechanics fitted this model's mass to this trial), the fit's COM path
    within 6 mm of the kinematics' (3.3 mm RMS), and on that path no residual force is left (by construction)."""
    model, ik, time = trial
    t_grf, force = net_ground_force(opensim_file("grf_walk.xml"))
    inside = (time >= PLATES[0]) & (time <= PLATES[1])
    F = np.column_stack([np.interp(time[inside], t_grf, force[:, k]) for k in range(3)])
    com = com_positions(model, ik.q[inside])
    fit = fit_mass(com, F, 0.01, GRAVITY)
    model_mass = model.body_weight() / 9.80665
    assert model_mass == pytest.approx(85.27, abs=0.01)
    assert fit.mass == pytest.approx(model_mass, rel=0.005)
    assert fit.position_rms < 0.005 and fit.position_max < 0.01
    residual = linear_residual_forces(fit.com, F, fit.mass, 0.01, GRAVITY)
    assert np.abs(residual).max() < 1e-6 * model.body_weight()  # the fitted path: residual-free by construction
