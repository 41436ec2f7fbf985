"""The side files of Moco's example3DWalking read with the full-body model (issue 31, point 1): 20
``ExpressionBasedCoordinateForce``s (OpenSim's expression language, ``moco_lab.modeling.lepton``), 12 contact
spheres with the floor's half space and their 12 ``SmoothSphereHalfSpaceForce``s, added as example3DWalking adds them
(``read_osim(..., side_files=[...])``); checked against OpenSim 4.6 on the same files."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from osim_pair import their_coordinates

from moco_lab.modeling.forces import ExpressionBasedCoordinateForce
from moco_lab.modeling.lepton import LeptonError, parse
from moco_lab.modeling.osim import OsimFormatError, read_osim
from moco_lab.util.data import opensim_file

MODEL = "subject_walk_scaled.osim"
SIDE = ["subject_walk_scaled_ContactGeometrySet.xml", "subject_walk_scaled_ContactForceSet.xml",
        "subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml"]


@pytest.mark.parametrize("text, expected", [
    ("-q^2", lambda q, qdot: -(q ** 2)),            # Lepton: unary minus below ^
    ("-q*qdot", lambda q, qdot: (-q) * qdot),
    ("2^3^2", lambda q, qdot: 2.0 ** 9.0),          # ^ groups to the right
    ("8/4/2", lambda q, qdot: 1.0),                 # / to the left
    ("1-2-3", lambda q, qdot: -4.0),
    ("2.5e-1*q+.5", lambda q, qdot: 0.25 * q + 0.5),
    ("square(q)+cube(qdot)-recip(2)", lambda q, qdot: q * q + qdot ** 3 - 0.5),
    ("max(q, qdot)-min(q,qdot)+abs(-q)", lambda q, qdot: abs(q - qdot) + abs(q)),
    ("sec(q)+csc(q)+cot(q)", lambda q, qdot: 1 / math.cos(q) + 1 / math.sin(q) + 1 / math.tan(q)),
    ("-2.44*exp(5.05*(q-1.81))+1.51*exp(-11.88*(q+0.50))-1.0*qdot",
     lambda q, qdot: -2.44 * math.exp(5.05 * (q - 1.81)) + 1.51 * math.exp(-11.88 * (q + 0.50)) - qdot),
    ("6.09*exp(33.94*(-q-0.13))-11.03*exp(-11.33*(-q+2.40))-0.1*qdot",
     lambda q, qdot: 6.09 * math.exp(33.94 * (-q - 0.13)) - 11.03 * math.exp(-11.33 * (-q + 2.40)) - 0.1 * qdot),
])
def test_expressions_follow_leptons_rules(text, expected):
    expression = parse(text, ("q", "qdot"))
    for q, qdot in ((0.3, -1.2), (-0.7, 2.5)):
        assert expression({"q": q, "qdot": qdot}) == pytest.approx(expected(q, qdot), rel=1e-15, abs=1e-15)


@pytest.mark.parametrize("text, match", [
    ("step(q)", "'step'.*not supported"),
    ("foo(q)", "'foo'.*not supported"),
    ("q+x", "unknown variable 'x'"),
    ("(q+1", r"expected '\)'"),
    ("q+", "ends early"),
    ("q q", "after a complete expression"),
    ("max(q)", "takes 2 argument"),
    ("q#2", "unexpected character"),
    ("", "empty"),
])
def test_bad_expressions_are_refused_by_name(text, match):
    with pytest.raises(LeptonError, match=match):
        parse(text, ("q", "qdot"), "/forceset/spring")


@pytest.fixture(scope="module")
def ours():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_osim(MODEL, replace_millard=True, side_files=SIDE)


def test_side_files_are_read_where_example3dwalking_puts_them(ours):
    expressions = [e for e in ours.force_elements if isinstance(e, ExpressionBasedCoordinateForce)]
    contacts = [e for e in ours.force_elements if type(e).__name__ == "SmoothSphereHalfSpaceForce"]
    assert len(expressions) == 20 and len(contacts) == 12
    import xml.etree.ElementTree as ET

    def names(file, tag):
        return {f"/{el.get('name')}" for el in ET.parse(opensim_file(file)).getroot().iter(tag)}

    assert {e.path for e in expressions} == names(SIDE[2], "ExpressionBasedCoordinateForce")  # components: /<name>
    assert {c.path for c in contacts} == names(SIDE[1], "SmoothSphereHalfSpaceForce")
    assert ours.spec["kwargs"]["side_files"] == SIDE
    with pytest.raises(TypeError, match="list of files"):
        read_osim(MODEL, side_files=SIDE[0])


def test_a_side_file_that_repeats_a_name_or_holds_another_set_is_refused(tmp_path):
    twice = tmp_path / "twice.xml"
    twice.write_text(opensim_file(SIDE[2]).read_text())
    with pytest.raises(OsimFormatError, match="already in"):
        read_osim(MODEL, replace_millard=True, side_files=[SIDE[2], twice])
    other = tmp_path / "markers.xml"
    other.write_text('<OpenSimDocument Version="40600"><MarkerSet name="m"><objects/></MarkerSet></OpenSimDocument>')
    with pytest.raises(OsimFormatError, match="MarkerSet"):
        read_osim(MODEL, replace_millard=True, side_files=[other])


@pytest.mark.opensim
def test_expression_forces_agree_with_opensim(ours):
    """Each of the 20 forces at 20 random values and speeds of its coordinate (within the coordinate's range, speeds
    ±5 rad/s, so that the exponential limits are exercised) against OpenSim's ``calcExpressionForce``: to 1e-12
    relative to the force's scale (the same double-precision formula; measured at round-off)."""
    opensim = pytest.importorskip("opensim")
    theirs = opensim.Model(str(opensim_file(MODEL)))
    forces = opensim.ForceSet(str(opensim_file(SIDE[2])))
    for i in range(forces.getSize()):
        theirs.addComponent(forces.get(i).clone())
    state = theirs.initSystem()
    coords = their_coordinates(theirs)
    rng = np.random.default_rng(31)
    worst = 0.0
    for element in (e for e in ours.force_elements if isinstance(e, ExpressionBasedCoordinateForce)):
        force = opensim.ExpressionBasedCoordinateForce.safeDownCast(theirs.getComponent(element.path))
        c = ours.coordinate(element.coordinate)
        lo, hi = max(c.range[0], -3.0), min(c.range[1], 3.0)
        for q, qdot in zip(rng.uniform(lo, hi, 20), rng.uniform(-5.0, 5.0, 20)):
            coords[c.name].setValue(state, float(q), False)
            coords[c.name].setSpeedValue(state, float(qdot))
            theirs.realizeVelocity(state)
            expected = force.calcExpressionForce(state)
            worst = max(worst, abs(element.force(q, qdot) - expected) / max(abs(expected), 1.0))
    print(f"worst {worst:.1e}")
    assert worst < 1e-12


@pytest.mark.opensim
def test_contact_and_expression_forces_in_the_model_agree_with_opensim(ours):
    """The model with its side files, as the engine derives it (the skeleton with its force elements: 12 contacts and
    20 expression forces), against OpenSim with the same files added as example3DWalking adds them, at 12 poses of the
    trial (``coordinates.sto``, every 110 ms, so that the feet are on and off the floor) with random speeds: every
    sphere's contact force to 1e-12 of body weight (the same closed forms; measured 1e-13, 89 sphere-poses in
    contact), every expression force's generalized force to 1e-12 relative. The spheres are read where the file puts
    them (example3DWalking raises them by 2 cm in its script: a choice of that example, not of the files)."""
    opensim = pytest.importorskip("opensim")
    from moco_lab.results.sto import read_table
    from moco_lab.results.trajectory import Trajectory
    from moco_lab.tools.analyze import analyze

    theirs = opensim.Model(str(opensim_file(MODEL)))
    forces = opensim.ForceSet(str(opensim_file(SIDE[2])))
    for i in range(forces.getSize()):
        theirs.addComponent(forces.get(i).clone())
    geometry = opensim.ContactGeometrySet(str(opensim_file(SIDE[0])))
    for i in range(geometry.getSize()):
        theirs.addContactGeometry(geometry.get(i).clone())
    contacts = opensim.ForceSet(str(opensim_file(SIDE[1])))
    for i in range(contacts.getSize()):
        theirs.addComponent(contacts.get(i).clone())
    theirs.finalizeConnections()
    state = theirs.initSystem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file's header miscounts its columns (read as labelled)
        time, table, _ = read_table(opensim_file("coordinates.sto"))
    rows = np.arange(0, time.size, 110)[:12]
    rng = np.random.default_rng(5)
    C = ours.coordinates
    Q = np.column_stack([table[c.value_path][rows] if c.value_path in table else np.zeros(rows.size) for c in C])
    for side in "rl":
        Q[:, [c.name for c in C].index(f"knee_angle_{side}_beta")] = Q[:, [c.name for c in C].index(f"knee_angle_{side}")]
    U = rng.normal(0.0, 1.0, size=Q.shape)
    skeleton = ours.skeleton(elements=True)
    states = {c.value_path: Q[:, i] for i, c in enumerate(C)} | {c.speed_path: U[:, i] for i, c in enumerate(C)}
    out = analyze(skeleton, Trajectory(np.arange(rows.size, dtype=float), states, {}),
                  [r".*/force", r".*/indentation", r".*/generalized_force"])
    coords = their_coordinates(theirs)
    weight = ours.body_weight()
    worst = {"contact": 0.0, "expression": 0.0}
    touching = 0
    for k in range(rows.size):
        for i, c in enumerate(C):
            coords[c.name].setValue(state, float(Q[k, i]), False)
            coords[c.name].setSpeedValue(state, float(U[k, i]))
        theirs.realizeDynamics(state)
        for e in skeleton.force_elements:
            if type(e).__name__ == "SmoothSphereHalfSpaceForce":
                values = opensim.SmoothSphereHalfSpaceForce.safeDownCast(theirs.getComponent(e.path)).getRecordValues(state)
                f = np.array([out[f"{e.path}/force_{a}"][k] for a in "xyz"])
                worst["contact"] = max(worst["contact"], np.abs(f - [values.get(j) for j in range(3)]).max() / weight)
                touching += out[f"{e.path}/indentation"][k] > 0
            elif isinstance(e, ExpressionBasedCoordinateForce):
                expected = opensim.ExpressionBasedCoordinateForce.safeDownCast(
                    theirs.getComponent(e.path)).calcExpressionForce(state)
                worst["expression"] = max(worst["expression"], abs(out[f"{e.path}/generalized_force"][k] - expected)
                                          / max(abs(expected), 1.0))
    print({k: f"{v:.1e}" for k, v in worst.items()}, f"{touching} sphere-poses in contact")
    assert touching >= 12 and all(v < 1e-12 for v in worst.values()), worst
