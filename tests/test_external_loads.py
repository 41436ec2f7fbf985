"""OpenSim external-loads files and the net planar ground reaction (moco_lab.results.external_loads)."""
from __future__ import annotations

import numpy as np
import pytest

from moco_lab.results.external_loads import (
    external_force_data,
    planar_ground_reaction,
    read_external_loads,
)
from moco_lab.results.sto import read_table, write_table
from moco_lab.util.data import opensim_file


def test_read_the_shipped_external_loads():
    """Moco's testMocoTrack GRF files: two forces (right and left calcaneus) in ground, their columns found."""
    loads = read_external_loads(opensim_file("walk_gait1018_subject01_grf.xml"))
    assert [(f.name, f.applied_to_body) for f in loads.forces] == [("right", "calcn_r"), ("left", "calcn_l")]
    assert loads.datafile == opensim_file("walk_gait1018_subject01_grf.mot")
    time, columns, _ = read_table(loads.datafile)
    parts = external_force_data(loads, columns)
    assert parts["left"]["force"].shape == (1501, 3) and parts["right"]["torque"].shape == (1501, 3)
    with pytest.raises(KeyError, match="no column '1_ground_force_vx'"):
        external_force_data(loads, {k: v for k, v in columns.items() if k != "1_ground_force_vx"})


def test_net_reaction_of_the_shipped_walk():
    """Over the 2.5 s of walking the mean vertical force is the subject's weight (72.6 kg in the model file, the
    sum of its bodies; within 3 %: the trial is not a whole number of gait cycles); the net centre of pressure
    lies on the plates' floor (y = −0.0075 m), between the two plates' own centres of pressure (to 2 cm: the
    free torques move it a little) in every frame where both carry load."""
    import xml.etree.ElementTree as ET

    time, forces, cop = planar_ground_reaction(opensim_file("walk_gait1018_subject01_grf.xml"))
    root = ET.parse(opensim_file("walk_gait1018_subject01.osim")).getroot()
    mass = sum(float(b.findtext("mass")) for b in root.iter("Body"))
    assert mass == pytest.approx(72.6, abs=0.1)
    ok = np.isfinite(forces[:, 1])
    assert ok.mean() > 0.95
    assert np.nanmean(forces[:, 1]) == pytest.approx(mass * 9.80665, rel=0.03)
    assert np.all(cop[ok, 1] == -0.0075)
    _, columns, _ = read_table(opensim_file("walk_gait1018_subject01_grf.mot"))
    x = np.column_stack([columns["ground_force_px"], columns["1_ground_force_px"]])
    loaded = (columns["ground_force_vy"] > 50) & (columns["1_ground_force_vy"] > 50) & ok
    assert loaded.sum() > 100
    assert np.all(cop[loaded, 0] > x[loaded].min(axis=1) - 0.02) and np.all(cop[loaded, 0] < x[loaded].max(axis=1)
                                                                            + 0.02)


def _plates(tmp_path, F1, p1, t1, F2, p2, t2):
    time = np.arange(len(F1)) * 0.01
    cols = {}
    for pre, F, p, t in (("", F1, p1, t1), ("1_", F2, p2, t2)):
        for a, idx in zip("xyz", range(3)):
            cols[f"{pre}ground_force_v{a}"] = F[:, idx]
            cols[f"{pre}ground_force_p{a}"] = p[:, idx]
            cols[f"{pre}ground_torque_{a}"] = t[:, idx]
    write_table(tmp_path / "grf.mot", time, cols)
    xml = opensim_file("walk_gait1018_subject01_grf.xml").read_text().replace(
        "walk_gait1018_subject01_grf.mot", "grf.mot")
    (tmp_path / "grf.xml").write_text(xml)
    return tmp_path / "grf.xml"


def test_net_centre_of_pressure_is_the_point_of_equal_moment(tmp_path):
    """Two plates with forces, centres of pressure and free torques: the net force is their sum, and the net force at
    the net centre of pressure has, about any point of the plane, the moment of the two plates (their forces at
    their points plus their free torques) — checked about two points, to round-off."""
    rng = np.random.default_rng(2)
    T = 50
    F1, F2 = rng.normal([20, 400, 5], [30, 100, 5], (T, 3)), rng.normal([-10, 300, -5], [30, 100, 5], (T, 3))
    p1 = np.column_stack([rng.uniform(0, 1, T), np.zeros(T), rng.uniform(-0.1, 0.1, T)])
    p2 = np.column_stack([rng.uniform(0.5, 1.5, T), np.zeros(T), rng.uniform(-0.1, 0.1, T)])
    t1, t2 = rng.normal(0, 5, (T, 3)), rng.normal(0, 5, (T, 3))
    _, forces, cop = planar_ground_reaction(_plates(tmp_path, F1, p1, t1, F2, p2, t2))
    assert np.allclose(forces, (F1 + F2)[:, :2], atol=1e-9)
    for q in (np.zeros(2), np.array([0.7, 1.1])):
        def moment(F, p):
            return (p[:, 0] - q[0]) * F[:, 1] - (p[:, 1] - q[1]) * F[:, 0]
        plates = moment(F1[:, :2], p1[:, :2]) + moment(F2[:, :2], p2[:, :2]) + t1[:, 2] + t2[:, 2]
        assert np.allclose(moment(forces, cop), plates, atol=1e-9)
    # a frame without vertical force has no centre of pressure
    F1[3, 1], F2[3, 1] = 0.0, 5.0
    _, forces, cop = planar_ground_reaction(_plates(tmp_path, F1, p1, t1, F2, p2, t2))
    assert np.all(np.isnan(forces[3])) and np.all(np.isnan(cop[3])) and np.isfinite(cop[4]).all()
    with pytest.raises(ValueError, match="two different axes"):
        planar_ground_reaction(tmp_path / "grf.xml", forward="y", up="y")
