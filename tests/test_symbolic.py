"""The expression graphs, their derivatives and their compiled kernels (moco_lab.symbolic)."""
import math

import numpy as np
import pytest

from moco_lab.symbolic import Graph, codegen, compile_function, derivatives
from moco_lab.symbolic import expr as sx
from moco_lab.symbolic.expr import structural_hash

BACKENDS = ["numpy"] + (["c"] if codegen.c_compiler() else [])


def test_one_node_per_distinct_operation_and_folding():
    g = Graph()
    x, y = g.var("x"), g.var("y")
    assert (x * y) is (y * x) and (x + y) is (y + x)      # commutative operations are one node
    assert np.sin(x) is np.sin(x) and g.var("x") is x
    assert (x * 0.0).is_constant and (x * 0.0).value == 0.0
    assert (x * 1.0) is x and (x + 0.0) is x and (0.0 + x) is x and (x - x).value == 0.0
    neg = -x
    assert -neg is x and (x / 1.0) is x
    assert (g.const(2.0) * 3.0).value == 6.0 and np.exp(g.const(0.0)).value == 1.0
    assert (x ** 1) is x and (x ** 0).value == 1.0


def test_no_numeric_value_and_a_clear_message():
    g = Graph()
    x = g.var("x")
    with pytest.raises(TypeError, match="np.sin"):
        math.sin(x)
    with pytest.raises(TypeError, match="where"):
        bool(x > 0)
    with pytest.raises(TypeError, match="where"):
        float(x)


def _functions(xp):
    """Every operation, each as a function of (x, y, p) in namespace xp (numpy or moco_lab.symbolic)."""
    return {
        "arith": lambda x, y, p: (x * y - x / (y + 3.0)) * p - y,
        "pow": lambda x, y, p: x ** 2.5 + y ** 3 + x ** -1.5 + 1.0 / (x * x),
        "trig": lambda x, y, p: xp.sin(x) * xp.cos(y) + xp.tan(0.3 * x),
        "exp_log": lambda x, y, p: xp.exp(0.5 * x) + xp.log(x + y) + xp.sqrt(x * y),
        "hyper": lambda x, y, p: xp.tanh(x - y) + xp.sinh(0.5 * x) * xp.cosh(0.2 * y),
        "inverse_trig": lambda x, y, p: xp.arcsin(0.3 * x) + xp.arccos(0.2 * y) + xp.arctan(x * y),
        "atan2_abs": lambda x, y, p: xp.arctan2(y - 0.5, x - 0.4) + xp.abs(x - y),
        "select": lambda x, y, p: (sx.where(x - y, x * x * p, -y) if xp is sx
                                   else np.where(x - y > 0, x * x * p, -y)),
        "power_var": lambda x, y, p: x ** y + 2.0 ** (p * x),
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(_functions(np)))
def test_values_and_derivatives_against_numpy_and_finite_differences(name, backend):
    g = Graph()
    x, y, p = g.var("x"), g.var("y"), g.var("p")
    f_sym = _functions(sx)[name](x, y, p)
    f_np = _functions(np)[name]
    (d,) = derivatives([f_sym], [x, y, p])
    outputs = [f_sym] + [d.get(k, 0.0) for k in range(3)]
    fn = compile_function(outputs, [x, y], [p], name=f"t_{name}", backend=backend)
    rng = np.random.default_rng(3)
    X = rng.uniform(0.3, 1.2, size=(40, 2))
    pv = 0.7
    Y = fn(X, np.array([pv]))
    ref = f_np(X[:, 0], X[:, 1], pv)
    # values: same operations in the same order as numpy, so agreement to a few ulps
    assert np.allclose(Y[:, 0], ref, rtol=1e-13, atol=1e-13)
    h = 1e-6
    for k, (dx, dy, dp) in enumerate(((h, 0, 0), (0, h, 0), (0, 0, h))):
        fd = (f_np(X[:, 0] + dx, X[:, 1] + dy, pv + dp) - f_np(X[:, 0] - dx, X[:, 1] - dy, pv - dp)) / (2 * h)
        # central differences with h = 1e-6 are accurate to ~1e-8 on these O(1) smooth functions
        assert np.allclose(Y[:, 1 + k], fd, rtol=1e-6, atol=1e-7), (name, k)


def test_backends_agree_bit_for_bit_on_plain_arithmetic():
    if "c" not in BACKENDS:
        pytest.skip("no C compiler")
    g = Graph()
    v = g.vars([f"v{i}" for i in range(6)])
    e = v[0]
    for k in range(1, 6):
        e = e * v[k] + v[k - 1] / (1.0 + v[k] * v[k])
    outs = [e] + list(derivatives([e], v)[0].values())
    X = np.random.default_rng(0).normal(size=(25, 6))
    a = compile_function(outs, v, name="agree", backend="numpy")(X)
    b = compile_function(outs, v, name="agree", backend="c")(X)
    assert np.array_equal(a, b)  # +, -, *, / are correctly rounded IEEE operations in both


def test_a_kernel_split_into_parts_computes_the_same_numbers(tmp_path, monkeypatch):
    """Beyond codegen.SINGLE_FUNCTION_OPS statements a C kernel is compiled as a driver and parts of PART_OPS
    (translation units compiled separately); the parts must compute exactly what the single function computes,
    shared statements included."""
    if "c" not in BACKENDS:
        pytest.skip("no C compiler")
    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    g = Graph()
    v = g.vars([f"v{i}" for i in range(6)])
    p = g.vars(["p0", "p1"])
    e = v[0] * (p[0] * p[0] + 1.0)
    for k in range(1, 6):
        e = e * v[k] + np.sin(v[k - 1] * p[1] + p[0] / (2.0 + p[1] * p[1])) / (1.0 + v[k] * v[k])
    outs = [e, p[0] * p[1], 2.0] + list(derivatives([e], v)[0].values())
    X = np.random.default_rng(1).normal(size=(7, 6))
    P = np.array([0.3, -1.2])
    whole = compile_function(outs, v, p, name="whole", backend="c")
    monkeypatch.setattr(codegen, "SINGLE_FUNCTION_OPS", 5)
    monkeypatch.setattr(codegen, "PART_OPS", 10)  # 11 translation units (5: 22, the same checks)
    parts = compile_function(outs, v, p, name="parts", backend="c")
    assert parts.source.count("next translation unit") > 5  # really split, shared statements too
    assert "_shared0" in parts.source and "_node1" in parts.source
    # both libraries built now (a first call runs the interpreter on the same statements, tests/test_codegen.py)
    libraries = {}
    for fn in (whole, parts):
        path = tmp_path / f"{fn.name}.so"
        proc = codegen.start_background_build(codegen.c_compiler(), fn.source.split(codegen._UNIT_SEPARATOR), path,
                                              optimize=False, wait=True)
        assert proc.returncode == 0
        libraries[fn.name] = codegen.load_library(path, fn.name, len(outs))
    assert np.array_equal(libraries["whole"](X, P), libraries["parts"](X, P))
    assert np.array_equal(whole(X, P), libraries["parts"](X, P))


def test_shared_inputs_and_constant_outputs():
    g = Graph()
    x, p = g.var("x"), g.var("p")
    for backend in BACKENDS:
        fn = compile_function([p * p, 3.0, x, x * p], [x], [p], name="shared", backend=backend)
        Y = fn(np.array([[1.0], [2.0]]), np.array([3.0]))
        assert np.array_equal(Y, [[9.0, 3.0, 1.0, 3.0], [9.0, 3.0, 2.0, 6.0]])
    with pytest.raises(ValueError, match="not an input"):
        compile_function([x * p], [x], name="missing")


def test_structural_hash_depends_on_equations_not_names():
    def build(c, names):
        g = Graph()
        a, b = g.var(names[0]), g.var(names[1])
        return [np.sin(a) * b + c], [a, b]

    out1, in1 = build(2.0, ("a", "b"))
    out2, in2 = build(2.0, ("x", "y"))
    out3, in3 = build(2.5, ("a", "b"))
    assert structural_hash(out1, in1) == structural_hash(out2, in2)
    assert structural_hash(out1, in1) != structural_hash(out3, in3)
    assert structural_hash(out1, in1) != structural_hash(out1, in1[::-1])     # input order matters
    assert structural_hash(out1, in1, "x") != structural_hash(out1, in1, "y")
    # the walk is kept per graph and outputs: nodes made later (derivatives) change nothing, and a graph that
    # made other nodes first (other ids) hashes the same equations the same
    first = structural_hash(out1, in1)
    derivatives(out1, in1)
    assert structural_hash(out1, in1) == first
    g = Graph()
    a, b = g.var("a"), g.var("b")
    np.cos(b) * a
    assert structural_hash([np.sin(a) * b + 2.0], [a, b]) == first
    assert structural_hash([np.sin(a) * b + 2.0, 1.5], [a, b]) != first             # a number among the outputs
    assert structural_hash(out1 + out1, in1) != first                               # the same output twice


def test_disk_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    g = Graph()
    x = g.var("x")
    for backend in BACKENDS:
        assert codegen.load_function("cached", "k1", 1, 0, 1, backend) is None
        fn = compile_function([np.cos(x)], [x], name="cached", backend=backend, key="k1")
        again = codegen.load_function("cached", "k1", 1, 0, 1, backend)
        X = np.linspace(0, 1, 7)[:, None]
        assert again is not None and np.array_equal(again(X), fn(X))
    assert any(tmp_path.rglob("cached-k1.*"))


def test_derivative_graph_stays_linear_in_a_chain():
    """A product chain of depth n: derivatives of the last node w.r.t. all inputs add O(n) nodes each."""
    sizes = []
    for n in (20, 40, 80):
        g = Graph()
        v = g.vars([f"v{i}" for i in range(n)])
        e = v[0]
        for k in range(1, n):
            e = np.sin(e) * v[k]
        before = len(g)
        derivatives([e], v)
        sizes.append(len(g) - before)
    # n inputs, each derivative re-using the chain: at most quadratic, and far from 2^n
    assert sizes[2] < 5 * sizes[1] < 25 * sizes[0]


def test_jet_math_functions_have_exact_derivatives():
    """Each elementary function of ``jet_math`` (used by OpenSim expressions on Jets): its first and second
    derivatives against central differences of its value (step 1e-4: error ~1e-8 relative, checked to 1e-6)."""
    from moco_lab.symbolic.jet import Jet, jet_math

    points = {"sqrt": 1.7, "exp": 0.3, "log": 1.7, "sin": 0.4, "cos": 0.4, "tan": 0.4, "arcsin": 0.3, "arccos": 0.3,
              "arctan": 0.8, "sinh": 0.6, "cosh": 0.6, "tanh": 0.6}
    h = 1e-4
    for name, v in points.items():
        f = getattr(jet_math, name)
        (x,) = Jet.variables([v])
        y = f(x)
        value = lambda z: float(f(z))  # noqa: E731  (plain numbers take numpy's path)
        assert y.value == pytest.approx(value(v), rel=1e-15), name
        assert y.gradient(1)[0] == pytest.approx((value(v + h) - value(v - h)) / (2 * h), rel=1e-6), name
        assert y.hessian(1)[0, 0] == pytest.approx((value(v + h) - 2 * value(v) + value(v - h)) / h ** 2,
                                                   rel=1e-6), name
    (x,) = Jet.variables([1.3])
    y = 2.0 ** x
    assert y.gradient(1)[0] == pytest.approx(2.0 ** 1.3 * np.log(2.0), rel=1e-14)
    assert abs(-x).gradient(1)[0] == pytest.approx(1.0)
