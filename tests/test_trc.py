"""Marker files (.trc): moco_lab's reader and writer, against each other and against OpenSim's TRCFileAdapter when
OpenSim is installed (the optional extra)."""
from __future__ import annotations

import numpy as np
import pytest

from moco_lab.examples.synthetic import synthetic_markers, synthetic_walk
from moco_lab.results.trc import planar_markers, read_trc, write_trc


@pytest.fixture(scope="module")
def trial():
    return synthetic_markers(synthetic_walk(68.0, 1.75, rate=50.0, strides=1), seed=0)


def test_round_trip(tmp_path, trial):
    """Planar synthetic markers written in mm and read back in metres: equal to round-off (repr keeps every digit;
    the mm ↔ m scaling costs at most an ulp or two), z = 0, a missing sample stays missing."""
    data = {k: v.copy() for k, v in trial.data.items()}
    data["knee_r"][5] = np.nan
    path = tmp_path / "walk.trc"
    write_trc(path, trial.time, data)
    table = read_trc(path)
    assert table.units == "mm" and table.rate == pytest.approx(50.0) and list(table.markers) == list(data)
    assert np.allclose(table.time, trial.time, rtol=0, atol=1e-15)
    for name, values in data.items():
        back = planar_markers({name: table.markers[name]}, "x", "y")[name]
        assert np.allclose(back, values, rtol=1e-14, atol=1e-15, equal_nan=True), name
        assert np.all(table.markers[name][np.isfinite(values[:, 0]), 2] == 0.0)
    assert np.isnan(table.markers["knee_r"][5]).all()


def test_against_opensim(tmp_path):
    """OpenSim reads what moco_lab writes and moco_lab reads what OpenSim writes."""
    osim = pytest.importorskip("opensim")
    time = np.array([0.0, 0.01, 0.02])
    markers = {"RASI": np.array([[10.0, 950.0, 120.0], [22.5, 951.0, 121.0], [35.0, 952.5, 119.0]]) / 1000,
               "RHEE": np.array([[-80.0, 60.0, 90.0], [-80.0, 61.0, 90.5], [-79.5, 62.0, 91.0]]) / 1000}
    ours = tmp_path / "ours.trc"
    write_trc(ours, time, markers)
    table = osim.TimeSeriesTableVec3(str(ours))
    assert list(table.getColumnLabels()) == ["RASI", "RHEE"]
    for i in range(3):
        row = table.getRowAtIndex(i)
        for k, name in enumerate(("RASI", "RHEE")):
            assert [row[k][a] for a in range(3)] == pytest.approx(markers[name][i] * 1000, abs=1e-9)
    theirs = tmp_path / "theirs.trc"
    t = osim.TimeSeriesTableVec3()
    t.setColumnLabels(osim.StdVectorString(["RASI", "RHEE"]))
    for i in range(3):
        row = osim.RowVectorVec3(2)
        for k, name in enumerate(("RASI", "RHEE")):
            row[k] = osim.Vec3(*(markers[name][i] * 1000))
        t.appendRow(float(time[i]), row)
    t.addTableMetaDataString("DataRate", "100")
    t.addTableMetaDataString("Units", "mm")
    osim.TRCFileAdapter.write(t, str(theirs))
    back = read_trc(theirs)
    assert back.rate == 100.0 and np.allclose(back.time, time)
    for name in markers:
        assert np.allclose(back.markers[name], markers[name], atol=1e-12)


def test_planar_projection_and_bad_input(tmp_path):
    m = {"A": np.array([[1.0, 2.0, 3.0]])}
    assert np.array_equal(planar_markers(m, forward="-z", up="y")["A"], [[-3.0, 2.0]])
    with pytest.raises(ValueError, match="same axis"):
        planar_markers(m, "x", "x")
    with pytest.raises(ValueError, match="not x, y or z"):
        planar_markers(m, "w", "y")
    bad = tmp_path / "bad.trc"
    bad.write_text("hello\n")
    with pytest.raises(ValueError, match="not a .trc file"):
        read_trc(bad)
    inches = tmp_path / "in.trc"
    write_trc(inches, [0.0, 0.1], {"A": np.zeros((2, 3))})
    inches.write_text(inches.read_text().replace("\tmm\t", "\tin\t"))
    with pytest.raises(ValueError, match="units 'in'"):
        read_trc(inches)
    with pytest.raises(ValueError, match="shape"):
        write_trc(tmp_path / "x.trc", [0.0, 0.1], {"A": np.zeros((3, 3))})


def test_real_trial_with_padded_header():
    """The 3-D walking trial's file pads its header values with extra tabs (``100.0<tab><tab>100.0 ...``); read by
    its keys: 41 markers, 238 frames at 100 Hz, millimetres converted to metres (the first R.Shoulder sample,
    -652.630 mm, as written)."""
    from moco_lab.util.data import opensim_file

    table = read_trc(opensim_file("markers_walk.trc"))
    assert table.units == "mm" and table.rate == 100.0 and len(table.markers) == 41 and len(table.time) == 238
    assert table.markers["R.Shoulder"][0, 0] == pytest.approx(-0.652630, abs=1e-12)
    assert table.time[-1] == pytest.approx(2.37)


def test_fill_gaps():
    """Short inner gaps filled from a spline through the seen samples (a smooth path: a cubic is recovered to
    round-off, a sine to its spline error); long gaps and gaps at the ends stay NaN; bad input named."""
    from moco_lab.results.trc import fill_gaps

    t = np.linspace(0.0, 1.0, 101)
    cubic = np.column_stack([t ** 3 - t, 2 * t ** 2, np.sin(3 * t)])
    data = cubic.copy()
    data[40:45] = np.nan    # 0.06 s between the bounding samples: filled
    data[60:90] = np.nan    # 0.31 s: left
    data[:3] = np.nan       # at the start: left
    out = fill_gaps(t, {"A": data, "B": cubic}, max_gap=0.2)
    assert np.abs(out["A"][40:45] - cubic[40:45]).max() < 1e-4
    assert np.isnan(out["A"][60:90]).all() and np.isnan(out["A"][:3]).all()
    assert np.array_equal(out["B"], cubic) and out["A"] is not data
    with pytest.raises(ValueError, match="strictly increasing"):
        fill_gaps(t[::-1], {"A": data})
    with pytest.raises(ValueError, match="'A' has shape"):
        fill_gaps(t, {"A": data[:50]})
    with pytest.raises(ValueError, match="max_gap"):
        fill_gaps(t, {"A": data}, max_gap=-1)
