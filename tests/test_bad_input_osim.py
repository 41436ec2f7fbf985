"""Bad model files and bodies through the public API (``read_osim``, ``ModelBuilder.add_body``): each one a
:class:`~moco_lab.modeling.osim.OsimFormatError` (a ``ValueError``) whose message names the file and the element,
never a parser's or Drake's bare error.

Each case edits one thing in a shipped model file (``2D_gait.osim``) and asserts the class and the words that
name the culprit.
"""
import re
from pathlib import Path

import pytest

import moco_lab as ml
from moco_lab.modeling.osim import OsimFormatError
from moco_lab.util.data import opensim_file

GAIT = Path(opensim_file("2D_gait.osim")).read_text()


def write(tmp_path, text: str, name: str = "edited.osim") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_truncated_file_names_the_file_and_the_line(tmp_path):
    path = write(tmp_path, GAIT[:len(GAIT) // 2])
    with pytest.raises(OsimFormatError, match=r"edited\.osim: not a readable XML file \(line \d+, column \d+"):
        ml.read_osim(path)


def test_a_file_that_is_not_xml(tmp_path):
    path = write(tmp_path, "mass 75 kg\nheight 1.8 m\n", "notes.osim")
    with pytest.raises(OsimFormatError, match=r"notes\.osim: not a readable XML file \(line 1, column 0"):
        ml.read_osim(path)


def test_an_xml_file_that_is_not_a_model(tmp_path):
    """Another OpenSim document (external loads) is refused, not read as an empty model."""
    loads = Path(opensim_file("referenceGRF.xml")).read_text()
    path = write(tmp_path, loads, "loads.osim")
    with pytest.raises(OsimFormatError, match=r"loads\.osim: not an OpenSim model file \(its root element is "
                                              r"<OpenSimDocument>|loads\.osim: no <Model> element"):
        ml.read_osim(path)
    path = write(tmp_path, "<ExternalLoads name='x'/>", "loads2.osim")
    with pytest.raises(OsimFormatError, match=r"loads2\.osim: not an OpenSim model file \(its root element is "
                                              r"<ExternalLoads>"):
        ml.read_osim(path)


def test_a_spline_with_unequal_x_and_y_names_its_path_point(tmp_path):
    first_y = re.search(r"<SimmSpline>\s*<x>[^<]*</x>\s*<y>([^<]*)</y>", GAIT)
    shorter = " ".join(first_y.group(1).split()[:-1])
    text = GAIT[:first_y.start(1)] + shorter + GAIT[first_y.end(1):]
    with pytest.raises(OsimFormatError, match=r"edited\.osim: the SimmSpline at (/\w+)+/path/[\w-]+/x_location: "
                                              r"SimmSpline: 17 x values but 16 y values"):
        ml.read_osim(write(tmp_path, text))


def test_an_inverted_coordinate_range_names_the_coordinate(tmp_path):
    text = GAIT.replace("<range>-2.094395102393195 0.174532925199433</range>", "<range>0.17 -2.09</range>", 1)
    assert text != GAIT
    with pytest.raises(OsimFormatError, match=r"edited\.osim: the coordinate '\w+' has the range '0\.17 -2\.09': "
                                              r"it needs two numbers, lower <= upper"):
        ml.read_osim(write(tmp_path, text))


@pytest.mark.parametrize("mass", ["nan", "inf", "-3"])
def test_a_bad_body_mass_names_the_body(tmp_path, mass):
    first = re.search(r"<Body name=\"(\w+)\">.*?<mass>([^<]*)</mass>", GAIT, re.S)
    text = GAIT[:first.start(2)] + mass + GAIT[first.end(2):]
    with pytest.raises(OsimFormatError, match=rf"edited\.osim: /bodyset/{first.group(1)}: Body '{first.group(1)}': "
                                              r"mass must be a finite number >= 0"):
        ml.read_osim(write(tmp_path, text))


@pytest.mark.parametrize("kwargs, words", [
    (dict(mass=float("nan")), "mass must be a finite number >= 0"),
    (dict(mass=1.0, com=(0, float("inf"), 0)), "the centre of mass needs 3 finite values"),
    (dict(mass=1.0, com=(0, 0)), "the centre of mass needs 3 finite values"),
    (dict(mass=1.0, inertia=(1, float("nan"), 1)), "the inertia must be finite"),
])
def test_builder_bodies_are_checked_before_drake_sees_them(kwargs, words):
    b = ml.ModelBuilder("m")
    with pytest.raises(ValueError, match=rf"Body 'link': {re.escape(words)}"):
        b.add_body("link", **kwargs)


def test_external_loads_that_fail_on_a_later_force_leave_the_model_unchanged(tmp_path):
    """All or nothing: the second force names a body the model lacks; the first is not left behind, and the
    corrected file is then accepted (not refused as a duplicate)."""
    from moco_lab.modeling import operators as ops

    xml = Path(opensim_file("referenceGRF.xml")).read_text()
    (tmp_path / "referenceGRF.sto").write_text(Path(opensim_file("referenceGRF.sto")).read_text())
    bad = xml.replace("<applied_to_body>calcn_l</applied_to_body>", "<applied_to_body>calcn_x</applied_to_body>")
    assert bad != xml
    (tmp_path / "bad.xml").write_text(bad)
    (tmp_path / "good.xml").write_text(xml)
    model = ml.read_osim(opensim_file("2D_gait.osim"))
    before = [e.path for e in model.force_elements]
    with pytest.raises(KeyError, match="calcn_x"):
        ops.add_external_loads(model, tmp_path / "bad.xml")
    assert [e.path for e in model.force_elements] == before
    ops.add_external_loads(model, tmp_path / "good.xml")
    assert len(model.force_elements) == len(before) + 2


def test_a_saved_study_notices_that_its_force_data_changed(tmp_path):
    """A study file records the external-loads files' SHA-256: reloading after the force table changed is refused
    (as for a changed .osim), not silently another problem."""
    from moco_lab.modeling import operators as ops

    xml = tmp_path / "grf.xml"
    xml.write_text(Path(opensim_file("referenceGRF.xml")).read_text())
    sto = tmp_path / "referenceGRF.sto"
    sto.write_text(Path(opensim_file("referenceGRF.sto")).read_text())
    model = ops.add_external_loads(ml.read_osim(opensim_file("2D_gait.osim")), xml)
    study = ml.Study("loads")
    study.problem.set_model(model)
    study.problem.set_time_bounds(0, 0.4)
    study.save(tmp_path / "study.json")
    ml.Study.load(tmp_path / "study.json")   # unchanged: reloads
    sto.write_text(sto.read_text().replace("endheader", "endheader", 1) + "\n")
    with pytest.raises(ValueError, match=r"add_external_loads: \[.*referenceGRF\.sto'\] changed since they were "
                                         r"read for this study"):
        ml.Study.load(tmp_path / "study.json")


def test_an_external_loads_file_that_is_not_xml_names_the_file(tmp_path):
    from moco_lab.modeling import operators as ops

    bad = tmp_path / "grf.xml"
    bad.write_text(Path(opensim_file("referenceGRF.xml")).read_text()[:200])
    with pytest.raises(ValueError, match=r"grf\.xml: not a readable XML file \(line \d+, column \d+\)"):
        ops.add_external_loads(ml.read_osim(opensim_file("2D_gait.osim")), bad)


@pytest.mark.parametrize("operator, args", [
    ("scale_max_isometric_force", (2.0,)), ("ignore_passive_fiber_forces", ()), ("remove_muscles", ()),
    ("set_tendon_compliance", ("rigid",)), ("add_external_loads", ("grf.xml",)),
])
def test_model_operators_refuse_what_is_not_a_model(operator, args):
    """A path or an OpenSim model passed for the model: a TypeError naming the operator, not an AttributeError."""
    from moco_lab.modeling import operators as ops

    with pytest.raises(TypeError, match=rf"^{operator}: model must be a moco_lab Model, got str \(read a file with "
                                        r"ml\.read_osim\(path\)\)"):
        getattr(ops, operator)("2D_gait.osim", *args)


def test_planar_ground_reaction_checks_floor_and_threshold():
    from moco_lab.results.external_loads import planar_ground_reaction

    xml = opensim_file("referenceGRF.xml")
    with pytest.raises(ValueError, match=r"planar_ground_reaction: floor must be a finite height in m \(or None\), "
                                         r"got nan"):
        planar_ground_reaction(xml, floor=float("nan"))
    with pytest.raises(ValueError, match=r"planar_ground_reaction: min_vertical must be a force >= 0 N, got -1"):
        planar_ground_reaction(xml, min_vertical=-1)
    with pytest.raises(ValueError, match=r"planar_ground_reaction: forward and up must be two different axes"):
        planar_ground_reaction(xml, forward="y")
