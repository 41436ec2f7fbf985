"""The same arithmetic on every processor (moco_lab.symbolic.batched).

What must hold:

* ``batched.solve`` and ``batched.matmul`` give numpy's answers (``numpy.linalg.solve``, ``numpy.matmul``) to
  rounding, with numpy's shapes and errors; the compiled functions and their numpy forms give the same bits.
* ``batched.solve_banded`` gives LAPACK's answer for banded systems, and ``interpolating_spline`` (which uses it)
  SciPy's ``make_interp_spline`` spline: reference tables' splines were the one part of a tracking program whose
  bits followed OpenBLAS' AVX-512 (SkylakeX) kernels.
* The program IPOPT sees — objective, its gradient, constraints, their Jacobian and the exact Hessian of the
  Lagrangian, evaluated as the optimizer evaluates them — is bit for bit the same under two different BLAS kernels
  (the processor's widest family, SkylakeX where it has AVX-512, against Nehalem's) and numpy's two instruction-set
  variants. A control computed in the same two processes (a matrix product and
  ``numpy.linalg.solve`` through OpenBLAS) must differ, so that the two processes really round differently.

Tolerances: ``solve`` against LAPACK on systems with condition numbers below ~10³: 1e-12 relative (partial
pivoting's backward error is a few ulps times the growth factor, here below 10; forward error adds the condition
number); ``matmul`` 1e-14 relative to the product of the operands' magnitudes (sums of at most 40 terms, each
rounded to 1.1e-16).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from moco_lab.symbolic import batched


def _well_conditioned(rng, n, m):
    return rng.standard_normal((n, m, m)) + m * np.eye(m)


@pytest.mark.parametrize("m", [1, 2, 9, 31])
def test_solve_matches_lapack_and_its_numpy_form(m):
    rng = np.random.default_rng(m)
    A = _well_conditioned(rng, 40, m)
    A[::3] = A[::3][:, ::-1]            # row permutations: pivoting needed
    A0 = A.copy()
    for B in (rng.standard_normal((40, m)), rng.standard_normal((40, m, 5))):
        x = batched.solve(A, B)
        ref = np.linalg.solve(A, B[:, :, None])[:, :, 0] if B.ndim == 2 else np.linalg.solve(A, B)
        assert x.shape == B.shape
        assert np.max(np.abs(x - ref)) <= 1e-12 * np.max(np.abs(ref))
        assert np.array_equal(x, batched.solve(A, B, compiled=False))
    assert np.array_equal(A, A0)   # the caller's arrays are left as they were


def test_solve_refuses_singular_and_mismatched_systems():
    A = np.repeat(np.eye(3)[None], 3, axis=0)
    A[2, 1] = A[2, 0]                   # two equal rows: singular
    for compiled in (True, False):
        with pytest.raises(np.linalg.LinAlgError, match="system 2 of 3"):
            batched.solve(A, np.ones((3, 3)), compiled=compiled)
    with pytest.raises(ValueError, match="A must have shape"):
        batched.solve(np.ones((3, 2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="B must have shape"):
        batched.solve(np.ones((3, 2, 2)), np.ones((3, 3)))


@pytest.mark.parametrize("sa, sb", [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)),
                                    ((7, 3, 5), (7, 5, 4)), ((7, 3, 5), (5, 4)), ((2, 1, 3, 40), (4, 40, 2)),
                                    ((5,), (2, 5, 4)), ((2, 3, 5), (5,)), ((3, 0), (0, 4)), ((0, 3, 5), (5, 4))])
def test_matmul_matches_numpy(sa, sb):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    got, ref = batched.matmul(a, b), np.matmul(a, b)
    assert np.shape(got) == np.shape(ref)
    scale = np.matmul(np.abs(a), np.abs(b))
    assert np.all(np.abs(got - ref) <= 1e-14 * scale + 1e-300)
    assert np.array_equal(got, batched.matmul(a, b, compiled=False))


def test_matmul_refuses_what_numpy_refuses():
    for sa, sb in [((5,), (4,)), ((3, 5), (4,)), ((3, 5), (4, 2))]:
        with pytest.raises(ValueError, match="do not match"):
            batched.matmul(np.ones(sa), np.ones(sb))
    with pytest.raises(ValueError, match="scalar"):
        batched.matmul(np.float64(2.0), np.ones(3))


# ------------------------------------------------------------------------------- banded systems, splines
@pytest.mark.parametrize("n,w,below", [(1, 1, 0), (7, 3, 1), (60, 6, 2), (250, 6, 3), (40, 5, 4), (30, 4, 0)])
def test_solve_banded_matches_lapack(n, w, below):
    """A banded system given row by row (``w`` entries from column ``first[i]``, up to ``below`` rows under the
    diagonal) against ``numpy.linalg.solve`` of the dense matrix: equal to 1e-9 relative. The bound: the random
    matrices' condition numbers (up to ~1e5 here) times double precision, with room; an error in the band's
    bookkeeping or a pivot swap gives O(1) differences."""
    from moco_lab.symbolic.batched import solve_banded
    r = np.random.default_rng(n + w)
    first = np.clip(np.arange(n) - below, 0, max(0, n - w))
    rows = r.standard_normal((n, w))
    A = np.zeros((n, n))
    for i in range(n):
        for c in range(w):
            if first[i] + c < n:
                A[i, first[i] + c] = rows[i, c]
            else:
                rows[i, c] = 0.0
    B = r.standard_normal((n, 3))
    X = solve_banded(first, rows, B)
    ref = np.linalg.solve(A, B)
    assert np.abs(X - ref).max() <= 1e-9 * np.abs(ref).max()
    np.testing.assert_allclose(solve_banded(first, rows, B[:, 0]), X[:, 0], rtol=0, atol=0)


def test_solve_banded_refuses_singular_and_misfit_input():
    from moco_lab.symbolic.batched import solve_banded
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        solve_banded([0, 0], [[1.0, 2.0], [2.0, 4.0]], np.ones(2))
    with pytest.raises(ValueError, match="do not fit"):
        solve_banded([0, 0, 1], [[1.0, 2.0], [2.0, 4.0]], np.ones(2))


@pytest.mark.parametrize("ends", ["natural", "not-a-knot"])
@pytest.mark.parametrize("rows", [2, 4, 5, 6, 9, 300])
def test_interpolating_spline_is_scipys_spline(ends, rows):
    """``interpolating_spline`` builds ``make_interp_spline``'s spline (natural: derivatives m .. 2m − 2 zero at both
    ends, Moco's GCV spline with zero smoothing; or not-a-knot) with its own banded solve: the same knots, and
    coefficients equal to 1e-12 of their size (both solve one well-conditioned collocation system in double
    precision: measured up to 7e-15)."""
    from scipy.interpolate import make_interp_spline

    from moco_lab.results.tables import interpolating_spline
    r = np.random.default_rng(rows)
    t = np.cumsum(r.uniform(0.5, 1.5, rows))
    y = r.standard_normal((rows, 3))
    s = interpolating_spline(t, y, 5, ends)
    k, m = s.k, (s.k + 1) // 2
    natural = ends == "natural" and k > 1
    bc = ([(j, np.zeros(3)) for j in range(m, 2 * m - 1)],) * 2 if natural else None
    ref = make_interp_spline(t, y, k=k, bc_type=bc)
    assert k == {2: 1, 4: 3, 5: 3}.get(rows, 5)   # degree 5 unless fewer than 6 rows: rows − 1 rounded down to odd
    np.testing.assert_array_equal(s.t, ref.t)
    assert np.abs(s.c - ref.c).max() <= 1e-12 * np.abs(ref.c).max()
    np.testing.assert_allclose(s(t), y, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------- the program on two kernels
_EVALUATE = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    import moco_lab as ml
    from moco_lab.solve.ipopt_mumps import _Program
    from test_transcription_jacobians import leg_model, leg_problem, random_point

    def studies():
        s = ml.Study()                   # muscles, contact, every kind of goal; explicit dynamics (mass matrices)
        s.problem = leg_problem(leg_model(contact=True), goals=True)
        s.solver.num_mesh_intervals, s.solver.chunk_size = 3, 2
        yield "leg, explicit", s
        s = ml.examples.parabola_study("move", w_lambda=0.5)   # kinematic constraints: a KKT system per node
        s.solver.kinematic_constraint_method = "Bordalba2023"
        s.solver.num_mesh_intervals = 4
        yield "parabola, Bordalba2023", s

    out = {{}}
    for name, study in studies():
        study.solver.optim_linear_solver = "mumps"
        study.solver.optim_hessian_approximation = "exact"
        tr = study.transcribe()
        P = _Program(tr.prog, tr.exact_callbacks, hessian=True)
        rng = np.random.default_rng(5)
        x = random_point(tr, rng)
        lam = rng.standard_normal(P.m)
        P.new_point(x)
        f, g = P.objective(x, True)
        c, J, H = np.zeros(P.m), np.zeros(P.nnz), np.zeros(P.hess_nnz)
        P.constraints_at(x, c)
        P.jacobian_at(x, J)
        P.hessian_at(x, 0.7, lam, H)
        out[name] = [v.hex() for v in np.concatenate([[f], g, c, J, H])]
    r = np.random.default_rng(0)    # the control: BLAS and LAPACK as numpy calls them
    M = r.standard_normal((200, 200))
    A = r.standard_normal((50, 9, 9)) + 9 * np.eye(9)
    ctrl = np.concatenate([(M @ M).ravel(), np.linalg.solve(A, r.standard_normal((50, 9, 1))).ravel()])
    out["control"] = [v.hex() for v in ctrl]
    print(json.dumps(out))
""")


def _cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def _numpy_has(feature: str) -> bool:
    from numpy._core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get(feature))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="OpenBLAS' x86-64 kernels")
def test_the_program_is_evaluated_the_same_on_two_kernels():
    """Two processes, two BLAS kernels (and numpy without its AVX2 variants in the second): the same bits."""
    flags = _cpu_flags()   # the processor's widest kernel family against Nehalem's (SSE only)
    first = ("SkylakeX" if "avx512f" in flags else "Haswell" if {"avx2", "fma"} <= flags
             else "Sandybridge" if "avx" in flags else None)
    if first is None:
        pytest.skip("a processor with one OpenBLAS kernel family only")
    second = {"OPENBLAS_CORETYPE": "Nehalem"}
    if _numpy_has("X86_V3"):
        second["NPY_DISABLE_CPU_FEATURES"] = "X86_V3"
    script = _EVALUATE.format(tests=str(Path(__file__).parent))
    runs = []
    for extra in ({"OPENBLAS_CORETYPE": first}, second):
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")}
        proc = subprocess.run([sys.executable, "-c", script], env={**env, **extra}, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    a, b = runs
    assert a["control"] != b["control"], "the two processes rounded BLAS products alike: the check would be empty"
    for name in a:
        if name == "control":
            continue
        va, vb = a[name], b[name]
        assert len(va) == len(vb)
        differ = [k for k, (p, q) in enumerate(zip(va, vb)) if p != q]
        assert not differ, f"{name}: {len(differ)} of {len(va)} numbers differ, first at {differ[:5]}"
