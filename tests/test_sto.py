"""Tests of ``moco_lab.results.sto``: OpenSim ``.sto`` files as Moco reads and writes them."""

import math
from pathlib import Path

import numpy as np
import pytest

from moco_lab.results.sto import (
    StoFormatError,
    read_table,
    write_table,
    write_trajectory,
)
from moco_lab.results.trajectory import Solution, Trajectory, read_trajectory

GROUPS = ("states", "controls", "multipliers", "derivatives")


def make_trajectory(n: int = 7, seed: int = 0, extreme: bool = True) -> Trajectory:
    """A trajectory of every kind of variable, with values that need 17 digits.

    With ``extreme``, it includes the largest double, which Moco cannot
    write: with its 16 digits it prints ``1.797693134862316e+308``, which
    overflows (OpenSim reads it back as nan).
    """
    largest = 1.7976931348623157e308 if extreme else 1.2345678901234567e300
    rng = np.random.default_rng(seed)
    time = np.sort(rng.uniform(0.0, 1.0, n))
    time[0] = 0.1 + 0.2  # 0.30000000000000004
    time = np.sort(time)
    return Trajectory(
        time,
        states={
            "/jointset/slider/position/value": rng.normal(size=n) / 3,
            "/jointset/slider/position/speed": np.array([1e-300, 5e-324, -0.0, largest,
                                                         2.0 / 3, -1e22, 123456789.0])[:n],
        },
        controls={"/forceset/actuator": rng.normal(size=n) * 1e-7},
        multipliers={"lambda_cid0_p0": rng.normal(size=n) * 1e5},
        derivatives={"/jointset/slider/position/accel": np.exp(rng.normal(size=n))},
        parameters={"mass": math.pi, "stiffness": 0.1 + 0.7, "zero": -0.0},
    )


def assert_identical(a: Trajectory, b: Trajectory) -> None:
    """Same names in the same order and bit-identical values."""
    assert np.array_equal(a.time, b.time)
    for group in GROUPS:
        ta, tb = getattr(a, group), getattr(b, group)
        assert list(ta) == list(tb), group
        for name in ta:
            assert np.array_equal(ta[name], tb[name], equal_nan=True), (group, name)
            # Also the sign of zeros.
            assert np.array_equal(np.signbit(ta[name]), np.signbit(tb[name])), (group, name)
    assert list(a.parameters) == list(b.parameters)
    for name, value in a.parameters.items():
        assert math.copysign(1, value) == math.copysign(1, b.parameters[name])
        assert value == b.parameters[name]


def make_solution(success: bool = True) -> Solution:
    return Solution(
        make_trajectory(),
        success=success,
        status="Solve_Succeeded" if success else "Maximum_Iterations_Exceeded",
        message="Optimal Solution Found." if success else "Maximum number of iterations\nexceeded.",
        objective=0.1 + 0.2,
        goal_values={"effort": 0.1, "final_time": 0.2 + 1e-17},
        nit=42,
        solve_time=1.0 / 3.0,
        solver="ipopt",
    )


# ------------------------------------------------------------------ round trip
def test_round_trip_is_exact(tmp_path):
    traj = make_trajectory()
    path = tmp_path / "traj.sto"
    write_trajectory(traj, path)
    back = read_trajectory(path)
    assert_identical(traj, back)
    assert type(back) is Trajectory


def test_trajectory_methods_delegate(tmp_path):
    traj = make_trajectory(n=5, seed=3)
    path = tmp_path / "traj.sto"
    traj.write_sto(path)
    assert_identical(traj, Trajectory.read_sto(str(path)))


def test_non_finite_values_round_trip(tmp_path):
    traj = Trajectory([0.0, 1.0, 2.0], states={"/q": [np.nan, np.inf, -np.inf]}, controls={"/u": [1, 2, 3]})
    write_trajectory(traj, tmp_path / "nonfinite.sto")
    assert_identical(traj, read_trajectory(tmp_path / "nonfinite.sto"))


def test_header_layout_matches_moco(tmp_path):
    traj = make_trajectory(n=3)
    path = tmp_path / "traj.sto"
    write_trajectory(traj, path)
    lines = path.read_text().split("\n")
    end = lines.index("endheader")
    assert lines[:end] == [
        "inDegrees=no",
        "num_controls=1",
        "num_derivatives=1",
        "num_input_controls=0",
        "num_multipliers=1",
        "num_parameters=3",
        "num_slacks=0",
        "num_states=2",
        "DataType=double",
        "version=3",
        lines[end - 1],
    ]
    assert lines[end - 1].startswith("OpenSimVersion=")
    assert lines[end + 1].split("\t") == [
        "time", "/jointset/slider/position/value", "/jointset/slider/position/speed", "/forceset/actuator",
        "lambda_cid0_p0", "/jointset/slider/position/accel", "mass", "stiffness", "zero",
    ]
    # Parameters: value in the first row, nan below (as Moco writes them).
    rows = [line.split("\t") for line in lines[end + 2:] if line]
    assert len(rows) == 3
    assert rows[0][-3:] == [repr(math.pi), repr(0.1 + 0.7), "-0"]
    assert all(row[-3:] == ["nan", "nan", "nan"] for row in rows[1:])
    assert path.read_bytes().endswith(b"\n") and b"\r" not in path.read_bytes()


def test_integral_values_are_written_like_opensim(tmp_path):
    traj = Trajectory([0.0, 0.5, 1.0], states={"/q": [0.0, -2.0, 1e16]})
    write_trajectory(traj, tmp_path / "t.sto")
    rows = tmp_path.joinpath("t.sto").read_text().split("endheader\n")[1].splitlines()[1:]
    assert [r.split("\t") for r in rows] == [["0", "0"], ["0.5", "-2"], ["1", "1e+16"]]


def test_empty_groups_and_no_parameters(tmp_path):
    traj = Trajectory([0.0, 1.0], states={"/q": [1.0, 2.0]})
    write_trajectory(traj, tmp_path / "t.sto")
    back = read_trajectory(tmp_path / "t.sto")
    assert_identical(traj, back)
    assert back.controls == {} and back.parameters == {}
    assert back.input_controls == {} and back.slacks == {}


def test_parameters_need_a_row(tmp_path):
    traj = Trajectory(np.zeros(0), parameters={"mass": 1.0})
    with pytest.raises(ValueError, match="parameters"):
        write_trajectory(traj, tmp_path / "t.sto")


def test_unwritable_names(tmp_path):
    with pytest.raises(ValueError, match="tab"):
        write_trajectory(Trajectory([0.0], states={"a\tb": [1.0]}), tmp_path / "t.sto")
    with pytest.raises(ValueError, match="time"):
        write_trajectory(Trajectory([0.0], controls={"time": [1.0]}), tmp_path / "t.sto")
    with pytest.raises(ValueError, match="twice"):
        write_trajectory(Trajectory([0.0], states={"/q": [1.0]}, controls={"/q": [1.0]}), tmp_path / "t.sto")


# -------------------------------------------------------------------- metadata
def test_solution_metadata_round_trips(tmp_path):
    solution = make_solution()
    path = tmp_path / "solution.sto"
    write_trajectory(solution, path)
    back = read_trajectory(path)
    assert_identical(solution, back)
    meta = back.metadata
    assert meta["success"] is True
    assert meta["status"] == "Solve_Succeeded"
    assert meta["objective"] == 0.1 + 0.2  # exact, unlike Moco's 6 decimals
    assert meta["objective_effort"] == 0.1
    assert meta["objective_final_time"] == 0.2 + 1e-17
    assert meta["num_iterations"] == 42
    assert meta["solver_duration"] == 1.0 / 3.0
    assert meta["solver"] == "ipopt"
    assert meta["message"] == "Optimal Solution Found."
    assert meta["num_states"] == 2 and meta["num_parameters"] == 3
    text = path.read_text()
    assert "success=true\n" in text and "status=Solve_Succeeded\n" in text


def test_metadata_survives_read_write_read(tmp_path):
    write_trajectory(make_solution(), tmp_path / "a.sto")
    first = read_trajectory(tmp_path / "a.sto")
    write_trajectory(first, tmp_path / "b.sto")
    second = read_trajectory(tmp_path / "b.sto")
    assert_identical(first, second)
    assert list(second.metadata) == list(first.metadata)
    for key, value in first.metadata.items():
        assert second.metadata[key] == value or (math.isnan(value) and math.isnan(second.metadata[key])), key


def test_failed_solution_is_sealed_until_unsealed(tmp_path):
    solution = make_solution(success=False)
    path = tmp_path / "failed.sto"
    with pytest.raises(RuntimeError, match="sealed"):
        write_trajectory(solution, path)
    write_trajectory(solution.unseal(), path)
    meta = read_trajectory(path).metadata
    assert meta["success"] is False
    assert meta["status"] == "Maximum_Iterations_Exceeded"
    assert meta["message"] == "Maximum number of iterations exceeded."  # kept on one line


def test_table_round_trip(tmp_path):
    time = np.linspace(0.0, 1.0, 11) ** 2
    columns = {"/jointset/j/q/value": np.sin(time) / 7, "ground_force_vy": np.cos(time) * 1e3}
    metadata = {"header": "tracking reference", "inDegrees": False, "note": "a = b", "count": 3, "w": 0.1 + 0.2}
    path = tmp_path / "table.sto"
    write_table(path, time, columns, metadata)
    t, cols, meta = read_table(path)
    assert np.array_equal(t, time)
    assert list(cols) == list(columns)
    assert all(np.array_equal(cols[k], columns[k]) for k in columns)
    assert meta["header"] == "tracking reference"
    assert meta["inDegrees"] == "no"
    assert meta["note"] == "a = b"
    assert meta["count"] == "3" and float(meta["w"]) == 0.1 + 0.2  # unknown keys stay strings
    assert path.read_text().startswith("tracking reference\ninDegrees=no\n")


def test_read_table_of_a_trajectory(tmp_path):
    traj = make_trajectory(n=4)
    write_trajectory(traj, tmp_path / "t.sto")
    time, columns, meta = read_table(tmp_path / "t.sto")
    assert np.array_equal(time, traj.time)
    assert np.array_equal(columns["mass"][1:], np.full(3, np.nan), equal_nan=True)
    assert meta["num_parameters"] == 3


def test_reads_legacy_storage_files(tmp_path):
    # The layout of OpenSim's Storage::print (version=1, padded numbers).
    path = tmp_path / "legacy.sto"
    path.write_text(
        "Forward simulation\nversion=1\nnRows=2\nnColumns=3\ninDegrees=yes\nendheader\n"
        "time\tq\tu\n      0.00000000\t      1.50000000\t     -2.00000000\n"
        "      0.10000000\t      1.25000000\t      0.66666667\n"
    )
    time, columns, meta = read_table(path)
    assert np.array_equal(time, [0.0, 0.1])
    assert np.array_equal(columns["u"], [-2.0, 0.66666667])
    assert meta == {"header": "Forward simulation", "version": 1, "nRows": 2, "nColumns": 3, "inDegrees": "yes"}


def test_reads_input_controls_and_slacks(tmp_path):
    # Moco 4.6 column order: states, controls, input controls, multipliers,
    # derivatives, slacks, parameters.
    path = tmp_path / "moco46.sto"
    path.write_text(
        "inDegrees=no\nnum_controls=1\nnum_derivatives=0\nnum_input_controls=1\nnum_multipliers=0\n"
        "num_parameters=1\nnum_slacks=1\nnum_states=1\nDataType=double\nversion=3\nOpenSimVersion=4.6\n"
        "endheader\ntime\t/q\t/u\t/input\tgamma\tp\n0\t1\t2\t3\t4\t5\n1\t1.5\t2.5\t3.5\t4.5\tnan\n"
    )
    traj = read_trajectory(path)
    assert list(traj.states) == ["/q"] and list(traj.controls) == ["/u"]
    assert np.array_equal(traj.input_controls["/input"], [3.0, 3.5])
    assert np.array_equal(traj.slacks["gamma"], [4.0, 4.5])
    assert traj.parameters == {"p": 5.0}
    write_trajectory(traj, tmp_path / "again.sto")
    again = read_trajectory(tmp_path / "again.sto")
    assert_identical(traj, again)
    assert np.array_equal(again.input_controls["/input"], [3.0, 3.5])
    assert np.array_equal(again.slacks["gamma"], [4.0, 4.5])


# ------------------------------------------------------------------- malformed
def _write_lines(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


GOOD_HEADER = ("num_states=1\nnum_controls=1\nnum_multipliers=0\nnum_derivatives=0\nnum_slacks=0\n"
               "num_parameters=0\nendheader\n")


def test_missing_endheader(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", "num_states=1\nnum_controls=1\ntime\t/q\t/u\n0\t1\t2\n")
    with pytest.raises(StoFormatError, match=r"bad\.sto, line 4: no 'endheader'") as info:
        read_trajectory(path)
    assert info.value.path == str(path) and info.value.line == 4
    with pytest.raises(ValueError, match="endheader"):
        read_table(path)


def test_column_count_mismatch(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", GOOD_HEADER + "time\t/q\t/u\n0\t1\t2\n1\t1\n")
    with pytest.raises(StoFormatError, match=r"bad\.sto, line 10: expected 3 columns .* found 2") as info:
        read_trajectory(path)
    assert info.value.line == 10


def test_non_numeric_value(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", GOOD_HEADER + "time\t/q\t/u\n0\t1\t2\n1\tabc\t2\n")
    with pytest.raises(StoFormatError, match=r"bad\.sto, line 10: non-numeric value 'abc' in column '/q'"):
        read_trajectory(path)


def test_header_counts_disagree_with_columns(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", GOOD_HEADER + "time\t/q\t/u\t/extra\n0\t1\t2\t3\n")
    with pytest.raises(StoFormatError, match=r"line 8: the header counts .* add up to 2 but there are 3"):
        read_trajectory(path)


def test_plain_table_is_not_a_trajectory(tmp_path):
    path = tmp_path / "table.sto"
    write_table(path, [0.0, 1.0], {"a": [1.0, 2.0]}, {})
    with pytest.raises(StoFormatError, match="read_table"):
        read_trajectory(path)


def test_first_column_must_be_time(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", GOOD_HEADER + "t\t/q\t/u\n0\t1\t2\n")
    with pytest.raises(StoFormatError, match="line 8: the first column must be 'time'"):
        read_trajectory(path)


def test_time_must_increase(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", GOOD_HEADER + "time\t/q\t/u\n0\t1\t2\n0\t1\t2\n")
    with pytest.raises(StoFormatError, match=r"bad\.sto, line 10: time 0 does not increase \(the previous row, line 9"):
        read_trajectory(path)


def test_nrows_mismatch(tmp_path):
    path = _write_lines(tmp_path / "bad.sto", "nRows=3\nnColumns=2\nendheader\ntime\tq\n0\t1\n")
    with pytest.raises(StoFormatError, match="nRows=3 but the file has 1"):
        read_table(path)


def test_stale_column_count_is_read_with_a_warning(tmp_path):
    """Every row has one value per label but the header's nColumns is from before columns were added (OpenSim's
    MocoTrack writes such files): read as labelled, with a warning."""
    path = _write_lines(tmp_path / "stale.sto", "nRows=2\nnColumns=2\nendheader\ntime\tq\tu\n0\t1\t2\n1\t3\t4\n")
    with pytest.warns(UserWarning, match="nColumns=2 but every row has 3 values"):
        time, columns, _ = read_table(path)
    assert list(columns) == ["q", "u"] and columns["u"][1] == 4


# ------------------------------------------------- cross-validation with Moco
def _osim_names(names):
    import opensim as osim

    vec = osim.StdVectorString()
    for name in names:
        vec.append(name)
    return vec


def _osim_matrix(array):
    import opensim as osim

    array = np.asarray(array, dtype=float)
    matrix = osim.Matrix(array.shape[0], array.shape[1])
    for i in range(array.shape[0]):
        for j in range(array.shape[1]):
            matrix.set(i, j, float(array[i, j]))
    return matrix


def _to_osim(traj: Trajectory):
    """An ``osim.MocoTrajectory`` holding the same data as ``traj``."""
    import opensim as osim

    time = osim.Vector(traj.num_times, 0.0)
    for i, t in enumerate(traj.time):
        time[i] = float(t)
    params = osim.RowVector(len(traj.parameters), 0.0)
    for j, value in enumerate(traj.parameters.values()):
        params[j] = value
    return osim.MocoTrajectory(
        time,
        _osim_names(traj.states), _osim_names(traj.controls), _osim_names(traj.multipliers),
        _osim_names(traj.derivatives), _osim_names(traj.parameters),
        _osim_matrix(traj.matrix("states")), _osim_matrix(traj.matrix("controls")),
        _osim_matrix(traj.matrix("multipliers")), _osim_matrix(traj.matrix("derivatives")), params,
    )


def _from_osim(moco) -> dict:
    """Names and values of an ``osim.MocoTrajectory`` as plain Python/numpy."""
    n = moco.getNumTimes()

    def block(names, getter):
        return {name: np.asarray(getter(name), dtype=float).reshape(n) for name in names}

    return {
        "time": np.asarray(moco.getTimeMat(), dtype=float).reshape(n),
        "states": block(moco.getStateNames(), moco.getStateMat),
        "controls": block(moco.getControlNames(), moco.getControlMat),
        "multipliers": block(moco.getMultiplierNames(), moco.getMultiplierMat),
        "derivatives": block(moco.getDerivativeNames(), moco.getDerivativeMat),
        "parameters": dict(zip(moco.getParameterNames(),
                               np.asarray(moco.getParametersMat(), dtype=float).reshape(-1).tolist())),
    }


def test_opensim_reads_our_file_exactly(tmp_path):
    osim = pytest.importorskip("opensim")
    traj = make_trajectory(n=6, seed=7)
    path = tmp_path / "ours.sto"
    write_trajectory(traj, path)
    moco = osim.MocoTrajectory(str(path))
    assert list(moco.getStateNames()) == list(traj.states)
    assert list(moco.getControlNames()) == list(traj.controls)
    assert list(moco.getMultiplierNames()) == list(traj.multipliers)
    assert list(moco.getDerivativeNames()) == list(traj.derivatives)
    assert list(moco.getParameterNames()) == list(traj.parameters)
    assert np.array_equal(np.asarray(moco.getStatesTrajectoryMat()), traj.matrix("states"))
    assert np.array_equal(np.asarray(moco.getControlsTrajectoryMat()), traj.matrix("controls"))
    assert np.array_equal(np.asarray(moco.getMultipliersTrajectoryMat()), traj.matrix("multipliers"))
    assert np.array_equal(np.asarray(moco.getDerivativesTrajectoryMat()), traj.matrix("derivatives"))
    data = _from_osim(moco)
    assert np.array_equal(data["time"], traj.time)
    assert data["parameters"] == traj.parameters


def test_opensim_reads_our_solution_file(tmp_path):
    osim = pytest.importorskip("opensim")
    solution = make_solution(success=False).unseal()
    path = tmp_path / "solution.sto"
    write_trajectory(solution, path)
    data = _from_osim(osim.MocoTrajectory(str(path)))
    assert np.array_equal(data["time"], solution.time)
    for group in GROUPS:
        assert list(data[group]) == list(getattr(solution, group))
        assert all(np.array_equal(data[group][k], getattr(solution, group)[k]) for k in data[group])


def test_we_read_a_file_moco_writes(tmp_path):
    osim = pytest.importorskip("opensim")
    traj = make_trajectory(n=6, seed=11, extreme=False)
    path = tmp_path / "moco.sto"
    _to_osim(traj).write(str(path))
    ours = read_trajectory(path)
    theirs = _from_osim(osim.MocoTrajectory(str(path)))
    # Bit-identical to what OpenSim itself reads back from the file ...
    assert np.array_equal(ours.time, theirs["time"])
    for group in GROUPS:
        assert list(getattr(ours, group)) == list(theirs[group]) == list(getattr(traj, group))
        for name, values in getattr(ours, group).items():
            assert np.array_equal(values, theirs[group][name]), (group, name)
            # ... and to the original up to Moco's 16 printed digits.
            np.testing.assert_allclose(values, getattr(traj, group)[name], rtol=1e-15, atol=0)
    assert ours.parameters == theirs["parameters"]
    assert list(ours.parameters) == list(traj.parameters)
    assert ours.metadata["num_input_controls"] == 0
    assert ours.metadata["OpenSimVersion"].startswith("4.")


@pytest.fixture(scope="module")
def moco_solution_file(tmp_path_factory):
    """A (deliberately unconverged) MocoSolution of a sliding mass, written by Moco."""
    osim = pytest.importorskip("opensim")
    model = osim.Model()
    model.setName("slider")
    body = osim.Body("body", 2.0, osim.Vec3(0), osim.Inertia(0))
    model.addComponent(body)
    joint = osim.SliderJoint("slider", model.getGround(), body)
    joint.updCoordinate().setName("position")
    model.addComponent(joint)
    actuator = osim.CoordinateActuator()
    actuator.setCoordinate(joint.updCoordinate())
    actuator.setName("actuator")
    actuator.setOptimalForce(1.0)
    model.addComponent(actuator)

    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(model)
    problem.setTimeBounds(0, osim.MocoFinalBounds(0, 5))
    problem.setStateInfo("/slider/position/value", [-5, 5], 0, 1)
    problem.setStateInfo("/slider/position/speed", [-50, 50], 0, 0)
    problem.setControlInfo("/actuator", [-10, 10])
    problem.addGoal(osim.MocoFinalTimeGoal("time", 2.0))
    problem.addGoal(osim.MocoControlGoal("effort", 1e-3))
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(5)
    solver.set_optim_max_iterations(3)
    solver.set_verbosity(0)
    solution = study.solve()
    solution.unseal()
    path = tmp_path_factory.mktemp("moco") / "solution.sto"
    solution.write(str(path))
    return path, solution


def test_we_read_a_moco_solution(moco_solution_file):
    osim = pytest.importorskip("opensim")
    path, solution = moco_solution_file
    traj = read_trajectory(path)
    meta = traj.metadata
    assert meta["success"] is False
    assert meta["status"] == solution.getStatus() == "Maximum_Iterations_Exceeded"
    assert meta["num_iterations"] == solution.getNumIterations()
    # Moco writes the objective with 6 decimals.
    assert meta["objective"] == pytest.approx(solution.getObjective(), abs=1e-6)
    assert meta["objective_time"] + meta["objective_effort"] == pytest.approx(meta["objective"], abs=2e-6)
    assert meta["solver_duration"] == pytest.approx(solution.getSolverDuration(), abs=1e-6)
    theirs = _from_osim(osim.MocoTrajectory(str(path)))
    assert np.array_equal(traj.time, theirs["time"])
    assert list(traj.states) == ["/slider/position/value", "/slider/position/speed"]
    assert list(traj.controls) == ["/actuator"]
    for group in GROUPS:
        for name, values in getattr(traj, group).items():
            assert np.array_equal(values, theirs[group][name])


def test_tables_cross_validate_with_opensim(tmp_path):
    osim = pytest.importorskip("opensim")
    time = np.linspace(0.0, 2.0, 9) / 3
    columns = {"/jointset/j/q/value": np.cos(time) / 7, "/forceset/m/activation": np.exp(-time)}
    ours = tmp_path / "ours.sto"
    write_table(ours, time, columns, {"header": "reference", "inDegrees": False})
    table = osim.TimeSeriesTable(str(ours))
    assert list(table.getColumnLabels()) == list(columns)
    assert np.array_equal(np.asarray(table.getIndependentColumn()), time)
    for j, name in enumerate(columns):
        assert np.array_equal(table.getDependentColumnAtIndex(j).to_numpy(), columns[name])
    # A table OpenSim writes, read back by us (16 printed digits).
    theirs = tmp_path / "theirs.sto"
    osim.STOFileAdapter.write(table, str(theirs))
    t, cols, meta = read_table(theirs)
    assert meta["header"] == "reference" and meta["inDegrees"] == "no"
    assert list(cols) == list(columns)
    np.testing.assert_allclose(t, time, rtol=1e-15, atol=0)
    for name in columns:
        np.testing.assert_allclose(cols[name], columns[name], rtol=1e-15, atol=0)
