"""Small dense linear algebra over many nodes at once, rounded the same way on every processor.

numpy hands matrix products (``@``, ``np.dot``, ``np.matmul``) and ``np.linalg.solve`` to OpenBLAS, which picks its
kernels for the processor (``OPENBLAS_CORETYPE``: Sandybridge, Haswell, Zen, SkylakeX, ...); they order their sums
differently, so the same program evaluated on two computers differs in the last bits, and IPOPT, whose path is
sensitive to them, takes another path. Measured on Moco's 2-D walker (explicit multibody dynamics, 2026-11-30):
evaluated at the same point under the Haswell and Sandybridge kernels, 75 % of the constraint Jacobian's entries and
73 % of the Hessian's differed (relative differences up to 1e-10, through the mass matrix's inverse), and the
prediction took 70 iterations under one and 78 under the other.

The functions here do the same arithmetic in a fixed order with every operation rounded as written: compiled C
(the interpreter's flags, :data:`~moco_lab.symbolic.interpreter.INTERPRETER_FLAGS`: no fused multiply-adds, no
reassociation, no processor-specific instructions), or, without a C compiler, numpy's elementwise operations in
the same order (each the correctly rounded IEEE result) — the same numbers either way, which
``tests/test_batched.py`` checks. (MUMPS, in the ``casadi`` wheel's IPOPT, already rounds the same everywhere: that
wheel's OpenBLAS is built for one processor family, CORE2, and ignores ``OPENBLAS_CORETYPE``.)

* :func:`solve`: ``A[k] X[k] = B[k]`` by Gaussian elimination with partial pivoting (LAPACK's ``dgesv``
  algorithm), for the mass matrices and constrained-dynamics systems of every node.
* :func:`matmul`: ``numpy.matmul``'s semantics (broadcast batches, 1-D operands promoted), each entry's sum over
  the shared axis in increasing order.
* :func:`solve_banded`: one banded system ``A X = B`` (a spline's collocation system) by Gaussian elimination with
  partial pivoting within the band, numpy's elementwise operations in a fixed order. SciPy's
  ``make_interp_spline`` solves the same system with LAPACK's ``dgbsv`` on OpenBLAS, whose SkylakeX (AVX-512)
  kernels round it differently from the others: a reference table's spline, and with it every tracking solve's
  path, then depended on the learner's processor.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from .codegen import c_compiler, cache_dir, default_backend
from .interpreter import INTERPRETER_FLAGS, build_library

__all__ = ["BATCHED_SOURCE", "matmul", "solve", "solve_banded"]

#: The C functions (row-major arrays, one system or product after another).
BATCHED_SOURCE = r"""
#include <math.h>

/* A (n, m, m): each overwritten by its elimination; B (n, m, r): overwritten by the solutions.
   Returns 0, or 1 + the index of the first system with a zero pivot. */
long moco_lab_solve(long n, int m, int r, double* A, double* B) {
  for (long s = 0; s < n; ++s) {
    double* a = A + s * m * m;
    double* b = B + s * m * r;
    for (int j = 0; j < m; ++j) {
      int p = j;
      double best = fabs(a[j * m + j]);
      for (int i = j + 1; i < m; ++i) {
        double v = fabs(a[i * m + j]);
        if (v > best) { best = v; p = i; }
      }
      if (best == 0.0) return s + 1;
      if (p != j) {
        for (int k = 0; k < m; ++k) { double t = a[j * m + k]; a[j * m + k] = a[p * m + k]; a[p * m + k] = t; }
        for (int k = 0; k < r; ++k) { double t = b[j * r + k]; b[j * r + k] = b[p * r + k]; b[p * r + k] = t; }
      }
      const double pivot = a[j * m + j];
      for (int i = j + 1; i < m; ++i) {
        const double f = a[i * m + j] / pivot;
        for (int k = j + 1; k < m; ++k) a[i * m + k] -= f * a[j * m + k];
        for (int k = 0; k < r; ++k) b[i * r + k] -= f * b[j * r + k];
      }
    }
    for (int j = m - 1; j >= 0; --j) {
      const double d = a[j * m + j];
      for (int k = 0; k < r; ++k) b[j * r + k] /= d;
      for (int i = 0; i < j; ++i) {
        const double f = a[i * m + j];
        for (int k = 0; k < r; ++k) b[i * r + k] -= f * b[j * r + k];
      }
    }
  }
  return 0;
}

/* C[s] = A[s] B[s] for A (n, p, q), B (n, q, t), C (n, p, t): each entry's sum over q in increasing order, from
   its first product */
void moco_lab_matmul(long n, int p, int q, int t, const double* A, const double* B, double* C) {
  for (long s = 0; s < n; ++s) {
    const double* a = A + s * p * q;
    const double* b = B + s * q * t;
    double* c = C + s * p * t;
    for (int i = 0; i < p; ++i) {
      double* ci = c + i * t;
      if (q == 0) { for (int j = 0; j < t; ++j) ci[j] = 0.0; continue; }
      for (int j = 0; j < t; ++j) ci[j] = a[i * q] * b[j];
      for (int k = 1; k < q; ++k) {
        const double f = a[i * q + k];
        for (int j = 0; j < t; ++j) ci[j] += f * b[k * t + j];
      }
    }
  }
}
"""

_FUNCTIONS: list = []


def _library():
    """The compiled functions ``(solve, matmul)``, or None where the numpy backend is in use (no compiler)."""
    if not _FUNCTIONS:
        if default_backend() != "c":
            _FUNCTIONS.append(None)
        else:
            lib = build_library(BATCHED_SOURCE, "batched", c_compiler(), cache_dir(), INTERPRETER_FLAGS)
            fs, fm = lib.moco_lab_solve, lib.moco_lab_matmul
            fs.restype, fm.restype = ctypes.c_long, None
            fs.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
            fm.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p]
            _FUNCTIONS.append((fs, fm))
    return _FUNCTIONS[0]


def solve(A: np.ndarray, B: np.ndarray, compiled: bool = True) -> np.ndarray:
    """``X`` with ``A[k] @ X[k] = B[k]`` for every ``k``: Gaussian elimination with partial pivoting, batched.

    Parameters
    ----------
    A : ndarray, shape (n, m, m)
        The systems' matrices.
    B : ndarray, shape (n, m) or (n, m, r)
        Their right-hand sides (one, or ``r`` columns each).
    compiled : bool
        False: numpy's elementwise operations even where the compiled function is available (the same numbers;
        tests).

    Returns
    -------
    ndarray, the shape of ``B``
        The solutions (``numpy.linalg.solve``'s algorithm, its sums in another order), the same bits on every
        processor.

    Raises
    ------
    numpy.linalg.LinAlgError
        A matrix is singular (a zero pivot), as ``numpy.linalg.solve`` says. ``ValueError`` for mismatched shapes.
    """
    A = np.array(A, dtype=float, order="C")   # copies: eliminated in place
    B = np.array(B, dtype=float, order="C")
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"solve: A must have shape (n, m, m), got {A.shape}")
    vector = B.ndim == 2
    if vector:
        B = B[:, :, None].copy()
    if B.ndim != 3 or B.shape[:2] != A.shape[:2]:
        raise ValueError(f"solve: B must have shape {A.shape[:2]} or {A.shape[:2]} + (r,), got {B.shape}")
    n, m, r = B.shape
    lib = _library() if compiled else None
    if lib is not None:
        bad = lib[0](n, m, r, A.ctypes.data, B.ctypes.data)
        if bad:
            raise np.linalg.LinAlgError(f"Singular matrix (system {bad - 1} of {n})")
    else:
        _solve_numpy(A, B)
    return B[:, :, 0] if vector else B


def _solve_numpy(A: np.ndarray, B: np.ndarray) -> None:
    """:func:`solve` in place with numpy's elementwise operations, in the compiled function's order."""
    n, m = A.shape[:2]
    batch = np.arange(n)
    for j in range(m):
        p = j + np.argmax(np.abs(A[:, j:, j]), axis=1)   # the first largest, as the C loop's strict comparison
        pivot_abs = np.abs(A[batch, p, j])
        if np.any(pivot_abs == 0.0):
            raise np.linalg.LinAlgError(f"Singular matrix (system {int(np.flatnonzero(pivot_abs == 0.0)[0])} of {n})")
        moved = np.flatnonzero(p != j)
        if moved.size:
            k, pk = batch[moved], p[moved]
            A[k, j], A[k, pk] = A[k, pk], A[k, j].copy()
            B[k, j], B[k, pk] = B[k, pk], B[k, j].copy()
        if j + 1 < m:
            f = A[:, j + 1:, j] / A[:, j, j, None]                     # (n, m - j - 1)
            A[:, j + 1:, j + 1:] -= f[:, :, None] * A[:, None, j, j + 1:]
            B[:, j + 1:] -= f[:, :, None] * B[:, None, j]
    for j in range(m - 1, -1, -1):
        B[:, j] /= A[:, j, j, None]
        if j:
            B[:, :j] -= A[:, :j, j, None] * B[:, None, j]


def matmul(a: np.ndarray, b: np.ndarray, compiled: bool = True) -> np.ndarray:
    """``numpy.matmul(a, b)`` (``a @ b``) of float arrays, each entry's sum in an order fixed on every processor.

    Parameters
    ----------
    a : ndarray, shape (..., p, q) or (q,)
    b : ndarray, shape (..., q, t) or (q,)
        Batch dimensions broadcast; a 1-D operand is a row (``a``) or a column (``b``) and its axis is dropped from
        the result, as in numpy.
    compiled : bool
        As for :func:`solve`.

    Returns
    -------
    ndarray
        numpy's result shape. Products of two matrices (or stacks): each entry ``Σ_k a[.., i, k] b[.., k, j]``
        summed for k = 0, 1, ... (the compiled function, or numpy's elementwise operations in that order). With a
        1-D operand (dot products, weighted sums over nodes, called thousands of times a solve): ``numpy.einsum``,
        whose loops numpy compiles once for every x86-64 processor (no BLAS, no processor-specific variant).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: scalar operands are not allowed (as in numpy.matmul)")
    if a.ndim == 1 or b.ndim == 1:
        if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match in their shared axis")
        if a.ndim == 1 and b.ndim == 1:
            return np.einsum("k,k->", a, b)
        return np.einsum("k,...kj->...j", a, b) if a.ndim == 1 else np.einsum("...ik,k->...i", a, b)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match in their shared axis")
    p, q, t = a.shape[-2], a.shape[-1], b.shape[-1]
    # (the shapes' bookkeeping kept cheap: solves make tens of thousands of calls on a few nodes' small matrices)
    if a.ndim == 2 and b.ndim == 2:
        batch, n = (), 1
    else:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        n = math.prod(batch)
        if a.shape[:-2] != batch:
            a = np.broadcast_to(a, batch + (p, q))
        if b.shape[:-2] != batch:
            b = np.broadcast_to(b, batch + (q, t))
    a = np.ascontiguousarray(a).reshape(n, p, q)
    b = np.ascontiguousarray(b).reshape(n, q, t)
    lib = _library() if compiled else None
    if lib is not None:
        C = np.empty((n, p, t))
        lib[1](n, p, q, t, a.ctypes.data, b.ctypes.data, C.ctypes.data)
    elif q == 0:
        C = np.zeros((n, p, t))
    else:
        C = a[:, :, 0, None] * b[:, None, 0, :]
        for k in range(1, q):
            C += a[:, :, k, None] * b[:, None, k, :]
    return C.reshape(batch + (p, t))


def solve_banded(first: np.ndarray, rows: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``X`` with ``A @ X = B`` for one banded matrix ``A`` given row by row, the same bits on every processor.

    Gaussian elimination with partial pivoting (the pivot the first largest in magnitude among the rows that reach
    the column), as LAPACK's ``dgbsv``; every operation numpy's elementwise arithmetic, each sum in a fixed order.

    Parameters
    ----------
    first : ndarray of int, shape (n,)
        The column of each row's first stored entry.
    rows : ndarray, shape (n, w)
        Row ``i``'s entries in columns ``first[i] .. first[i] + w - 1`` (columns outside ``0 .. n-1`` must hold 0).
    B : ndarray, shape (n,) or (n, r)
        The right-hand side(s).

    Returns
    -------
    ndarray, the shape of ``B``

    Raises
    ------
    numpy.linalg.LinAlgError
        ``A`` is singular (a zero pivot). ``ValueError`` for mismatched shapes.
    """
    first = np.asarray(first, dtype=np.int64).reshape(-1)
    rows = np.asarray(rows, dtype=float)
    X = np.array(B, dtype=float)
    vector = X.ndim == 1
    if vector:
        X = X[:, None]
    n = first.size
    if rows.ndim != 2 or rows.shape[0] != n or X.ndim != 2 or X.shape[0] != n:
        raise ValueError(f"solve_banded: rows {rows.shape} and B {np.shape(B)} do not fit {n} first columns")
    w = rows.shape[1]
    idx = np.arange(n)
    kl = int(max(0, np.max(idx - first))) if n else 0           # below the diagonal
    ku = int(max(0, np.max(first + w - 1 - idx))) if n else 0   # above it
    L = kl + ku + 1                       # a pivot row's reach after fill: columns j .. j + kl + ku
    W = 2 * kl + ku + 1
    M = np.zeros((n, W))                  # M[i, c] = A[i, i - kl + c]
    for c in range(w):
        local = first + c - idx + kl
        keep = (local >= 0) & (local < W)
        if np.any(rows[~keep, c] != 0.0):
            raise ValueError("solve_banded: an entry lies outside the band its rows imply")
        M[idx[keep], local[keep]] = rows[keep, c]
    for j in range(n):
        last = min(n - 1, j + kl)
        below = np.arange(j, last + 1)
        p = j + int(np.argmax(np.abs(M[below, j - below + kl])))   # A[j:last+1, j]: the first largest
        if M[p, j - p + kl] == 0.0:
            raise np.linalg.LinAlgError(f"Singular matrix (no pivot in column {j} of {n})")
        if p != j:
            a, b = j - p + kl, kl
            M[j, b:b + L], M[p, a:a + L] = M[p, a:a + L].copy(), M[j, b:b + L].copy()
            X[[j, p]] = X[[p, j]]
        pivot_row = M[j, kl:kl + L]
        for r in range(j + 1, last + 1):
            a = j - r + kl
            f = M[r, a] / pivot_row[0]
            if f != 0.0:
                M[r, a + 1:a + L] -= f * pivot_row[1:]
                M[r, a] = 0.0
                X[r] -= f * X[j]
    for j in range(n - 1, -1, -1):
        acc = X[j].copy()
        for t in range(1, min(L, n - j)):
            if M[j, kl + t] != 0.0:
                acc -= M[j, kl + t] * X[j + t]
        X[j] = acc / M[j, kl]
    return X[:, 0] if vector else X
