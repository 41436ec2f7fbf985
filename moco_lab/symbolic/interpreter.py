"""Evaluating a compilation's statements without compiling them: a small interpreter, used until the compiler is done.

Compiling the generated C of a large model takes seconds (the squat's dynamics Jacobian, 117,000 statements: about
5 s at -O0) to minutes (its exact Hessian, 380,000 statements: 24 s); a first solve used to wait for it. Instead,
:func:`tape_function` turns the same statements — same order, same storage, same operations on the same operands —
into a *tape* of integer instructions that one small C function, compiled once per machine in a fraction of a
second, runs over the nodes. Each instruction is the C statement the code generator would have written, evaluated
by the same C arithmetic and the same C library calls (the interpreter is compiled without contraction into fused
multiply-adds and without built-in math functions, as the generated code's optimized build), so it computes the
generated code's numbers bit for bit — ``tests/test_codegen.py`` checks it on every operation — and a function can
switch from the tape to the compiled library between two evaluations without the solve noticing.

Each instruction is applied to :data:`LANES` (32) nodes at once, and the interpreter is compiled with ``-O3``, which
vectorizes those loops over the lanes (no reassociation and no contraction: the same numbers); the cost of decoding an
instruction is shared by 32 nodes. ``benchmarks/interpreter.md`` measures it against its build until 2026-11-30 (16
lanes, ``-O2``) and against the compiled code, on the squat's dynamics Jacobian (117,000 statements, 101 nodes) and
its exact Hessian (380,000): about twice as fast as that build and as fast as the code compiled at ``-O1``.

Layout of the value array ``v`` (one per call): the node inputs ``x`` (rewritten for every node), the shared inputs
``P``, the constants, the shared statements' results, the node statements' storage slots, the outputs ``y`` (copied
to the row of ``Y`` after each node). An instruction is five ``int32``: operation code (those of
:mod:`moco_lab.symbolic.expr`, plus ``COPY``), destination, up to three operands, all indices into ``v``; a power's
exponent is a constant's index.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .expr import CONST, POWC, VAR, Expr

__all__ = ["INTERPRETER_SOURCE", "INTERPRETER_FLAGS", "LANES", "Tape", "build_library", "interpreter_library",
           "tape_from_plan", "tape_function", "tape_statements"]

#: Not an operation of the graph: ``v[dst] = v[a]`` (outputs, which must outlive their slot's reuse).
COPY = 100

#: The interpreter. Its operation codes are :mod:`moco_lab.symbolic.expr`'s (``tests/test_codegen.py`` checks).
INTERPRETER_SOURCE = r"""
#include <math.h>
#include <string.h>

enum {ADD = 2, SUB, MUL, DIV, NEG, POWC, SIN, COS, TAN, EXP, LOG, SQRT, TANH, SINH, COSH, ASIN, ACOS, ATAN, ATAN2,
      ABS, SIGN, SELECT, COPY = 100};
#define LANES 32

/* v holds LANES values per entry (entry i, lane k at v[i * LANES + k]): each instruction is applied to m lanes */
static void run(const int* code, long count, double* v, int m) {
  for (long i = 0; i < count; ++i, code += 5) {
    double* r = v + (long)code[1] * LANES;
    const double* a = v + (long)code[2] * LANES;
    const double* b = v + (long)code[3] * LANES;
    const double* c = v + (long)code[4] * LANES;
    int k;
    switch (code[0]) {
      case ADD: for (k = 0; k < m; ++k) r[k] = a[k] + b[k]; break;
      case SUB: for (k = 0; k < m; ++k) r[k] = a[k] - b[k]; break;
      case MUL: for (k = 0; k < m; ++k) r[k] = a[k] * b[k]; break;
      case DIV: for (k = 0; k < m; ++k) r[k] = a[k] / b[k]; break;
      case NEG: for (k = 0; k < m; ++k) r[k] = -a[k]; break;
      case POWC: for (k = 0; k < m; ++k) r[k] = pow(a[k], b[k]); break;
      case SIN: for (k = 0; k < m; ++k) r[k] = sin(a[k]); break;
      case COS: for (k = 0; k < m; ++k) r[k] = cos(a[k]); break;
      case TAN: for (k = 0; k < m; ++k) r[k] = tan(a[k]); break;
      case EXP: for (k = 0; k < m; ++k) r[k] = exp(a[k]); break;
      case LOG: for (k = 0; k < m; ++k) r[k] = log(a[k]); break;
      case SQRT: for (k = 0; k < m; ++k) r[k] = sqrt(a[k]); break;
      case TANH: for (k = 0; k < m; ++k) r[k] = tanh(a[k]); break;
      case SINH: for (k = 0; k < m; ++k) r[k] = sinh(a[k]); break;
      case COSH: for (k = 0; k < m; ++k) r[k] = cosh(a[k]); break;
      case ASIN: for (k = 0; k < m; ++k) r[k] = asin(a[k]); break;
      case ACOS: for (k = 0; k < m; ++k) r[k] = acos(a[k]); break;
      case ATAN: for (k = 0; k < m; ++k) r[k] = atan(a[k]); break;
      case ATAN2: for (k = 0; k < m; ++k) r[k] = atan2(a[k], b[k]); break;
      case ABS: for (k = 0; k < m; ++k) r[k] = fabs(a[k]); break;
      case SIGN: for (k = 0; k < m; ++k) r[k] = (double)((a[k] > 0.0) - (a[k] < 0.0)); break;
      case SELECT: for (k = 0; k < m; ++k) r[k] = a[k] > 0.0 ? b[k] : c[k]; break;
      default: for (k = 0; k < m; ++k) r[k] = a[k]; break;  /* COPY */
    }
  }
}

/* v: (size, LANES) with the shared inputs and constants in lane 0 of their entries; entries [nx, t0) and the
   outputs [y0, y0 + ny) are spread to every lane after the shared statements ran once (in lane 0) */
void moco_lab_tape(int n, const double* X, int nx, double* v, const int* shared, long nshared, const int* node,
                   long nnode, int ny, long t0, long y0, double* Y) {
  run(shared, nshared, v, 1);
  for (long i = nx; i < t0; ++i)
    for (int k = 1; k < LANES; ++k) v[i * LANES + k] = v[i * LANES];
  for (long i = y0; i < y0 + ny; ++i)
    for (int k = 1; k < LANES; ++k) v[i * LANES + k] = v[i * LANES];
  for (int k0 = 0; k0 < n; k0 += LANES) {
    const int m = n - k0 < LANES ? n - k0 : LANES;
    for (int k = 0; k < m; ++k)
      for (int j = 0; j < nx; ++j) v[(long)j * LANES + k] = X[(long)(k0 + k) * nx + j];
    run(node, nnode, v, m);
    for (int k = 0; k < m; ++k)
      for (int j = 0; j < ny; ++j) Y[(long)(k0 + k) * ny + j] = v[(y0 + j) * LANES + k];
  }
}
"""

#: Values per entry of the interpreter's array: each instruction is applied to this many nodes at once.
LANES = 32

#: The interpreter's compiler flags: optimized, but every floating-point operation as written (no fused
#: multiply-adds, the C library's math functions called as the generated code calls them).
INTERPRETER_FLAGS = ("-O3", "-ffp-contract=off", "-fno-builtin")

_LOCK = threading.Lock()
_LIBRARY: dict[str, ctypes.CDLL] = {}


def build_library(source: str, stem: str, compiler: str, folder: Path, flags: Sequence[str]) -> ctypes.CDLL:
    """C ``source`` compiled with ``compiler`` and ``flags`` into ``folder`` once (kept there as
    ``<stem>-<hash of source, flags and compiler>.so``) and loaded (once per process)."""
    flags = tuple(flags)
    digest = hashlib.sha256("\0".join([source, *flags, compiler]).encode()).hexdigest()[:20]
    path = Path(folder) / f"{stem}-{digest}.so"
    with _LOCK:
        lib = _LIBRARY.get(str(path))
        if lib is not None:
            return lib
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=f"moco_lab_{stem}_", dir=path.parent) as tmp:
                src, out = Path(tmp) / f"{stem}.c", Path(tmp) / f"{stem}.so"
                src.write_text(source)
                proc = subprocess.run([compiler, *flags, "-shared", "-fPIC", "-o", str(out), str(src),
                                       "-lm"], capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"compiling moco_lab's {stem} library failed:\n{proc.stderr[-4000:]}")
                os.replace(out, path)
        lib = _LIBRARY[str(path)] = ctypes.CDLL(str(path))
        return lib


def interpreter_library(compiler: str, folder: Path, lanes: int = LANES,
                        flags: Sequence[str] = INTERPRETER_FLAGS) -> Callable:
    """The interpreter's C function, compiled with ``compiler`` into ``folder`` once (kept there under a hash of its
    source, flags and compiler) and loaded. ``lanes`` and ``flags``: another build than moco_lab's (benchmarks; run
    its tapes with :func:`tape_function` and the same ``lanes``)."""
    source = INTERPRETER_SOURCE.replace(f"#define LANES {LANES}\n", f"#define LANES {int(lanes)}\n")
    fn = build_library(source, "interpreter", compiler, folder, flags).moco_lab_tape
    fn.restype = None
    fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long,
                   ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_long, ctypes.c_long, ctypes.c_void_p]
    return fn


@dataclass
class Tape:
    """A compilation's statements as instructions for the interpreter (module docstring).

    Attributes
    ----------
    shared, node : ndarray of int32, shape (count, 5)
        The statements run once per call (shared inputs and constants only) and at every node.
    values : ndarray, shape (size,)
        The value array's initial entries (the constants; zeros elsewhere).
    num_inputs, num_shared, num_outputs : int
    slots, outputs : int
        Where the node statements' storage and the outputs start in the value array.
    """

    shared: np.ndarray
    node: np.ndarray
    values: np.ndarray
    num_inputs: int
    num_shared: int
    num_outputs: int
    slots: int
    outputs: int

    def save(self, path: Path) -> None:
        """Write the tape to ``path`` (``.npz``) atomically."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".npz", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, shared=self.shared, node=self.node, values=self.values,
                     sizes=np.array([self.num_inputs, self.num_shared, self.num_outputs, self.slots, self.outputs]))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "Tape":
        """The tape :meth:`save` wrote to ``path``."""
        with np.load(path) as data:
            nx, npar, ny, t0, y0 = (int(v) for v in data["sizes"])
            return cls(data["shared"], data["node"], data["values"], nx, npar, ny, t0, y0)


def tape_statements(path: Path) -> int:
    """Node statements of the tape saved at ``path`` (:meth:`Tape.save`), read from its header alone."""
    with zipfile.ZipFile(path) as z, z.open("node.npy") as f:
        version = np.lib.format.read_magic(f)
        shape = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                 else np.lib.format.read_array_header_2_0(f))[0]
    return int(shape[0])


def tape_from_plan(plan: Any) -> Tape:
    """The statements of ``plan`` (a :class:`moco_lab.symbolic.codegen._Plan`: its shared and node statements,
    storage slots and outputs) as a :class:`Tape`: the same statements, in the same order, on the same storage."""
    nx, npar, ny = len(plan.xin), len(plan.pin), plan.ny
    constants: dict[str, int] = {}
    values: list[float] = []

    def constant(v: float) -> int:
        key = repr(float(v))
        k = constants.get(key)
        if k is None:
            k = constants[key] = len(values)
            values.append(float(v))
        return k

    # every constant first: their block's size fixes where the other blocks start
    const_at: dict[int, int] = {}   # constant node id -> its place among the constants
    for n in plan.shared_ops + plan.node_ops:
        if n.op == POWC:
            constant(n.val)
        for a in n.args:
            if a.op == CONST:
                const_at[a.id] = constant(a.val)
    for o in plan.outputs:
        if not isinstance(o, Expr):
            constant(o)
        elif o.op == CONST:
            const_at[o.id] = constant(o.val)
    c0 = nx + npar
    s0 = c0 + len(values)
    t0 = s0 + len(plan.shared_ops)
    y0 = t0 + plan.num_node_slots
    xin, pin, shared = plan.xin, plan.pin, plan.shared
    # every node's entry in the value array
    where = {i: k for i, k in xin.items()}
    where.update((i, nx + k) for i, k in pin.items())
    where.update((i, s0 + k) for i, k in plan.shared_slot.items())
    where.update((i, t0 + k) for i, k in plan.node_slot.items())
    where.update((i, c0 + k) for i, k in const_at.items())

    def code(ops: list, first: list, after: bool) -> np.ndarray:
        rows = list(first)
        out_at = plan.out_at if after else {}
        append = rows.append
        for n in ops:
            args = n.args
            dst = where[n.id]
            if len(args) == 2:
                append((n.op, dst, where[args[0].id], where[args[1].id], 0))
            elif n.op == POWC:
                append((POWC, dst, where[args[0].id], c0 + constants[repr(float(n.val))], 0))
            elif len(args) == 1:
                append((n.op, dst, where[args[0].id], 0, 0))
            else:
                append((n.op, dst, where[args[0].id], where[args[1].id], where[args[2].id]))
            if n.id in out_at:
                rows.extend((COPY, y0 + j, dst, 0, 0) for j in out_at[n.id])
        return np.array(rows, np.int32).reshape(-1, 5)

    # outputs that are no node statement: constants, shared values (once) and node inputs (at every node)
    once, each = [], []
    for j, o in enumerate(plan.outputs):
        if not isinstance(o, Expr):
            once.append((COPY, y0 + j, c0 + constants[repr(float(o))], 0, 0))
        elif o.op == VAR and o.id in xin:
            each.append((COPY, y0 + j, xin[o.id], 0, 0))
        elif o.op in (CONST, VAR) or o.id in shared:
            once.append((COPY, y0 + j, where[o.id], 0, 0))
    shared_code = np.concatenate([code(plan.shared_ops, [], False), np.array(once, np.int32).reshape(-1, 5)])
    node_code = code(plan.node_ops, each, True)
    v0 = np.zeros(y0 + ny)
    v0[c0:s0] = values
    return Tape(shared_code, node_code, v0, nx, npar, ny, t0, y0)


def tape_function(tape: Tape, run: Callable, lanes: int = LANES) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``impl(X, P) -> Y`` running ``tape`` with the interpreter function ``run`` (:func:`interpreter_library`, built
    with ``lanes``)."""
    nx, npar, ny = tape.num_inputs, tape.num_shared, tape.num_outputs
    shared, node = np.ascontiguousarray(tape.shared, np.int32), np.ascontiguousarray(tape.node, np.int32)
    constants = tape.values[nx + npar:tape.slots]

    def impl(X: np.ndarray, P: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=float)
        n = X.shape[0]
        # every entry is written before it is read: only the shared inputs and the constants need values here
        v = np.empty((tape.values.size, lanes))
        v[nx:nx + npar, 0] = P
        v[nx + npar:tape.slots, 0] = constants
        Y = np.empty((n, ny))
        if n:
            run(n, X.ctypes.data, nx, v.ctypes.data, shared.ctypes.data, shared.shape[0], node.ctypes.data,
                node.shape[0], ny, tape.slots, tape.outputs, Y.ctypes.data)
        return Y

    return impl
