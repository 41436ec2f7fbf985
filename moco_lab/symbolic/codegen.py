"""Compile expression graphs into functions evaluated over many collocation nodes at once.

:func:`compile_function` turns outputs of a :class:`~moco_lab.symbolic.expr.Graph`
into ``f(X, P) -> Y``: ``X`` holds one row of *node inputs* per node (shape
``(n, nx)``), ``P`` the *shared inputs* (parameters, same for every node) and
``Y`` one row of outputs per node (``(n, ny)``). Each distinct operation is one
statement; operations that depend only on shared inputs are computed once, before
the loop over nodes; temporaries reuse storage once they are dead.

Two backends produce the same numbers:

``"c"``
    The statements run on a small interpreter (:mod:`moco_lab.symbolic.interpreter`: the same statements as integer
    instructions, applied to 32 nodes at a time by one C function compiled once per machine with the system's C
    compiler, ``$CC``, ``cc``, ``gcc`` or ``clang``); it computes the generated C code's numbers bit for bit and
    as fast as that code compiled with ``-O1`` (``benchmarks/interpreter.md``), so nothing needs compiling per
    model. The instructions are cached on disk (``<name>-<key>.tape.npz``) by a hash of what they compute (see
    :func:`cache_dir`), so a second process loads them without deriving anything; the cache is safe to share between
    processes (files are written atomically) and between versions (different statements, a different file). With
    ``MOCO_LAB_OPTIMIZE_KERNELS=1`` a detached, low-priority process also compiles the generated C code with
    :data:`OPTIMIZED_FLAGS` into ``<name>-<key>.<OPTIMIZED_TAG>.so`` (one build at a time, a build under way marked
    so that no second process starts it), and a function in use switches to it as soon as it exists (it looks at
    most once a second), in this process and in any later one. Until version 0.2 the generated code was compiled at
    ``-O0`` before a first solve could start: 5 s for the squat's equations, 24 s for its exact Hessian, minutes
    for the 3-D model's with wrapped paths.
``"numpy"``
    Python source with one numpy operation per statement on arrays of ``n``
    values. No compiler needed; slower for large graphs.

``MOCO_LAB_BACKEND=numpy`` (or ``c``) forces a backend; the default is ``c``
when a compiler is found, else ``numpy``.

The interpreter, the plain (``-O0``) and the optimized builds give the same numbers to the last bit: the optimized
flags keep every floating-point operation as written (no contraction into fused multiply-adds, every math function
a call to the C library as at -O0), the interpreter is compiled with the same rules and performs each statement's
single operation, which ``tests/test_codegen.py`` checks on every operation. The optimized library is rarely worth
its compile (seconds to minutes, a core taken meanwhile, which slowed the solve running beside it about twofold on
two cores): warm solves on the interpreter took 2.6 s against 2.5 s on the library for the squat, 9.5 and 4.7 s
against 9.1 and 4.6 s for the 2-D walking tracking (limited-memory and exact Hessians), the same for the 3-D inverse.
Kernels of more than :data:`OPTIMIZE_MAX_OPS` statements are never compiled.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .expr import (
    ABS,
    ACOS,
    ADD,
    ASIN,
    ATAN,
    ATAN2,
    CONST,
    COS,
    COSH,
    DIV,
    EXP,
    LOG,
    MUL,
    NEG,
    OPS,
    POWC,
    SELECT,
    SIGN,
    SIN,
    SINH,
    SQRT,
    SUB,
    TAN,
    TANH,
    VAR,
    Expr,
    ancestors,
)
from .interpreter import Tape, interpreter_library, tape_from_plan, tape_function, tape_statements
from .threads import evaluate_split

__all__ = ["CompiledFunction", "compile_function", "load_function", "write_atomic", "cache_dir", "c_compiler",
           "default_backend", "CODEGEN_VERSION", "load_library", "optimized_path", "optimize_in_background",
           "start_optimized_build", "start_background_build", "wait_for_optimized_builds"]

#: Changes whenever generated code changes meaning or form; part of every cache key (kernels are keyed on their
#: equations, so a cached kernel compiled by older code would otherwise be kept). "2": kernels up to
#: :data:`SINGLE_FUNCTION_OPS` statements are one function again.
CODEGEN_VERSION = "3"

#: Statements beyond which a kernel is split into parts, each its own translation unit of at most :data:`PART_OPS`.
#: Measured: one function of the 3-D full-body model's ~10⁶ statements was killed by the compiler (out of memory,
#: 23 GB) after 8 minutes at -O0; the squat's exact Hessian (380,000 statements) compiles as one function in 27 s
#: and 2.7 GB. Split code runs slower at -O0 (its intermediates live behind a pointer shared by the parts, one more
#: load per operand: that Hessian took 112 instead of 67 ms per evaluation), so kernels up to this size stay whole.
SINGLE_FUNCTION_OPS = 400_000
#: Statements per part of a split kernel (parts compile in parallel, in little memory).
PART_OPS = 20000

_UNIT_SEPARATOR = "\n/* ---- next translation unit ---- */\n"

#: Flags of the optimized rebuild (module docstring). Measured on the squat's dynamics Jacobian (117,000
#: statements, 101 nodes): 11.7 ms per evaluation at -O0, 5.1 ms with these; compiling takes 22 s instead of 5 s
#: (-O2: 4.7 ms, 34 s). ``-ffp-contract=off``: GCC contracts a product and a sum of separate statements into one
#: fused multiply-add wherever the processor has one (ARM, x86 with -march flags), which rounds once instead of
#: twice; ``-fno-builtin``: sqrt, pow, sin ... stay calls to the C library, as at -O0 (GCC would otherwise inline
#: sqrt and rewrite pow(x, 2.0) as x * x, which the C library does not round the same way for every x).
OPTIMIZED_FLAGS = ("-O1", "-ffp-contract=off", "-fno-builtin")
#: Part of the optimized build's file name: a change of :data:`OPTIMIZED_FLAGS` must change it.
OPTIMIZED_TAG = "O1a"
#: Kernels beyond this many statements are not rebuilt optimized (at ~0.2 ms of compiler time per statement the
#: 3-D model's largest would keep a core busy for many minutes).
OPTIMIZE_MAX_OPS = 600_000

_C_UNARY = {SIN: "sin", COS: "cos", TAN: "tan", EXP: "exp", LOG: "log", SQRT: "sqrt", TANH: "tanh", SINH: "sinh",
            COSH: "cosh", ASIN: "asin", ACOS: "acos", ATAN: "atan", ABS: "fabs"}
_NP_UNARY = {SIN: "np.sin", COS: "np.cos", TAN: "np.tan", EXP: "np.exp", LOG: "np.log", SQRT: "np.sqrt",
             TANH: "np.tanh", SINH: "np.sinh", COSH: "np.cosh", ASIN: "np.arcsin", ACOS: "np.arccos",
             ATAN: "np.arctan", ABS: "np.abs", SIGN: "np.sign"}
_BINARY = {ADD: "+", SUB: "-", MUL: "*", DIV: "/"}


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$MOCO_LAB_CACHE`` or ``~/.cache/moco_lab``, subfolder ``kernels``."""
    root = os.environ.get("MOCO_LAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "moco_lab")
    return Path(root) / "kernels"


_COMPILER: list = []


def c_compiler() -> str | None:
    """Path of the C compiler used for the ``"c"`` backend, or None."""
    if not _COMPILER:
        found = None
        for name in filter(None, (os.environ.get("CC"), "cc", "gcc", "clang")):
            path = shutil.which(name)
            if path:
                found = path
                break
        version = ""
        if found:
            try:
                version = subprocess.run([found, "--version"], capture_output=True, text=True,
                                         timeout=30).stdout.splitlines()[0]
            except (OSError, subprocess.SubprocessError, IndexError):
                found = None
        _COMPILER.extend([found, version])
    return _COMPILER[0]


def default_backend() -> str:
    """``$MOCO_LAB_BACKEND`` if set, else ``"c"`` with a compiler, else ``"numpy"``."""
    forced = os.environ.get("MOCO_LAB_BACKEND", "").strip().lower()
    if forced in ("c", "numpy"):
        if forced == "c" and c_compiler() is None:
            raise RuntimeError("MOCO_LAB_BACKEND=c but no C compiler (cc, gcc, clang or $CC) was found")
        return forced
    if forced:
        raise ValueError(f"MOCO_LAB_BACKEND must be 'c' or 'numpy', got {forced!r}")
    return "c" if c_compiler() is not None else "numpy"


class CompiledFunction:
    """``f(X, P) -> Y`` over nodes; see the module docstring.

    Attributes
    ----------
    name : str
    backend : str
    num_inputs, num_shared, num_outputs : int
    num_operations : int
        Statements per node (after hoisting shared ones; loaded from the disk cache: the tape's instructions, which
        add a copy of each output); -1 if not known (a library cached without its tape).
    source : str
        The generated code.
    """

    def __init__(self, name: str, backend: str, nx: int, npar: int, ny: int, nops: int,
                 source: str | Callable[[], str], impl: Callable):
        self.name, self.backend, self._source = name, backend, source
        self.num_inputs, self.num_shared, self.num_outputs, self.num_operations = nx, npar, ny, nops
        self._impl = impl

    @property
    def source(self) -> str:
        """The generated code (C: its translation units joined by a separator), generated when first asked for."""
        if callable(self._source):
            self._source = self._source()
        return self._source

    def __call__(self, X: np.ndarray, P: np.ndarray | None = None) -> np.ndarray:
        """Evaluate at ``n`` nodes.

        Parameters
        ----------
        X : ndarray (n, num_inputs)
        P : ndarray (num_shared,), optional

        Returns
        -------
        ndarray (n, num_outputs)
        """
        X = np.ascontiguousarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.num_inputs:
            raise ValueError(f"{self.name}: X must have shape (n, {self.num_inputs}), got {X.shape}")
        P = np.zeros(0) if P is None else np.ascontiguousarray(P, dtype=float).reshape(-1)
        if P.size != self.num_shared:
            raise ValueError(f"{self.name}: P must have {self.num_shared} values, got {P.size}")
        if self.backend == "c":   # outside the GIL: the nodes split over threads (moco_lab.symbolic.threads)
            return evaluate_split(self._impl, X, P, self.num_outputs, self.num_operations)
        return self._impl(X, P)

    def __repr__(self) -> str:
        return (f"<CompiledFunction {self.name} ({self.backend}): {self.num_inputs} inputs, {self.num_shared} shared, "
                f"{self.num_outputs} outputs, {self.num_operations} operations>")


def compile_function(outputs: Sequence, node_inputs: Sequence[Expr], shared_inputs: Sequence[Expr] = (),
                     name: str = "kernel", backend: str | None = None, key: str | None = None) -> CompiledFunction:
    """Compile expressions into a function evaluated over nodes.

    Parameters
    ----------
    outputs : sequence of Expr or numbers
        One output column each.
    node_inputs : sequence of Expr
        Variables that take a value per node (columns of ``X``).
    shared_inputs : sequence of Expr
        Variables shared by all nodes (entries of ``P``).
    name : str
        Function name (letters, digits, underscores).
    backend : {"c", "numpy"}, optional
        Default :func:`default_backend`.
    key : str, optional
        Cache the compiled function on disk under this key (a hash of what
        it computes, see :func:`moco_lab.symbolic.expr.structural_hash`), so that
        :func:`load_function` finds it again without the expressions.

    Raises
    ------
    ValueError
        An output depends on a variable that is in neither input list.
    """
    backend = backend or default_backend()
    if not name.isidentifier():
        raise ValueError(f"function name must be an identifier, got {name!r}")
    plan = _Plan(outputs, node_inputs, shared_inputs)
    if backend == "c":
        impl = _c_function(plan, name, key)
        source = lambda: _UNIT_SEPARATOR.join(plan.c_sources(name))  # noqa: E731
    elif backend == "numpy":
        source = plan.numpy_source(name)
        if key is not None:
            write_atomic(cache_dir() / f"{name}-{key}.py", source)
        impl = _load_numpy(source, name, plan.ny)
    else:
        raise ValueError(f"backend must be 'c' or 'numpy', got {backend!r}")
    return CompiledFunction(name, backend, len(node_inputs), len(shared_inputs), plan.ny, plan.num_node_ops, source,
                            impl)


def load_function(name: str, key: str, num_inputs: int, num_shared: int, num_outputs: int,
                  backend: str | None = None) -> CompiledFunction | None:
    """A function compiled earlier with ``compile_function(..., key=key)``, or None if it is not cached."""
    backend = backend or default_backend()
    nops = -1
    if backend == "c":
        path = cache_dir() / f"{name}-{key}.so"
        tape, interim = _tape_path(path), None
        if tape.exists() and not optimized_path(path).exists():
            loaded = Tape.load(tape)
            interim, nops = tape_function(loaded, interpreter_library(_compiler(), path.parent)), len(loaded.node)
        elif not (optimized_path(path).exists() or path.exists()):
            return None
        elif tape.exists():
            nops = tape_statements(tape)
        impl = load_library(path, name, num_outputs, interim)
        source = ""
    else:
        path = cache_dir() / f"{name}-{key}.py"
        if not path.exists():
            return None
        source = path.read_text()
        impl = _load_numpy(source, name, num_outputs)
    return CompiledFunction(name, backend, num_inputs, num_shared, num_outputs, nops, source, impl)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file renamed), so concurrent processes never read half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class _Plan:
    """Statement order, hoisting and storage of a compilation."""

    def __init__(self, outputs, node_inputs, shared_inputs):
        self.ny = len(outputs)
        self.outputs = list(outputs)
        self.xin = {v.id: k for k, v in enumerate(node_inputs)}
        self.pin = {v.id: k for k, v in enumerate(shared_inputs)}
        nodes = ancestors([o for o in self.outputs if isinstance(o, Expr)])
        # shared: depends only on shared inputs and constants (one pass: a node's arguments come before it)
        xin, pin = self.xin, self.pin
        shared: set[int] = set()
        ops, shared_ops, node_ops = [], [], []
        for n in nodes:
            op = n.op
            if op == CONST:
                shared.add(n.id)
            elif op == VAR:
                if n.id in pin:
                    shared.add(n.id)
                elif n.id not in xin:
                    raise ValueError(f"an output depends on the variable {n.val!r}, which is not an input")
            else:
                ops.append(n)
                for a in n.args:
                    if a.id not in shared:
                        node_ops.append(n)
                        break
                else:
                    shared.add(n.id)
                    shared_ops.append(n)
        self.shared = shared
        self.ops, self.shared_ops, self.node_ops = ops, shared_ops, node_ops
        self.num_node_ops = len(self.node_ops)
        # outputs written right after the node computing them
        self.out_at: dict[int, list[int]] = {}
        for j, o in enumerate(self.outputs):
            if isinstance(o, Expr):
                self.out_at.setdefault(o.id, []).append(j)
        self.node_slot, self.num_node_slots = self._slots(self.node_ops)
        self.shared_slot = {n.id: k for k, n in enumerate(self.shared_ops)}

    @staticmethod
    def _slots(ops):
        """Storage slots with reuse: a slot is freed after the last statement reading it (each argument once)."""
        last = {}
        for k, n in enumerate(ops):
            for a in n.args:
                last[a.id] = k
        slot, free, count = {}, [], 0
        get, push, pop = slot.get, free.append, free.pop
        for k, n in enumerate(ops):
            args = n.args
            if len(args) == 2 and args[0] is args[1]:
                args = args[:1]
            elif len(args) == 3:
                args = tuple(dict.fromkeys(args))
            # free dead arguments first (a statement reads before it writes)
            for a in args:
                if last[a.id] == k:
                    s = get(a.id)
                    if s is not None:
                        push(s)
            if free:
                slot[n.id] = pop()
            else:
                slot[n.id] = count
                count += 1
        return slot, count

    # -- operands
    def _operand(self, n: Expr, style: str) -> str:
        if n.op == CONST:
            v = n.val
            if style == "c":
                if v != v:
                    return "NAN"
                if v in (float("inf"), float("-inf")):
                    return "INFINITY" if v > 0 else "(-INFINITY)"
                return f"({v!r})" if v < 0 else repr(v)
            return f"({v!r})" if v < 0 else (repr(v) if np.isfinite(v) else f"float('{v}')")
        if n.op == VAR:
            if n.id in self.xin:
                return f"x[{self.xin[n.id]}]" if style == "c" else f"x{self.xin[n.id]}"
            return f"P[{self.pin[n.id]}]" if style == "c" else f"P[{self.pin[n.id]}]"
        if n.id in self.shared:
            return f"s[{self.shared_slot[n.id]}]" if style == "c" else f"s{self.shared_slot[n.id]}"
        return f"t[{self.node_slot[n.id]}]" if style == "c" else f"t{self.node_slot[n.id]}"

    def _expression(self, n: Expr, style: str) -> str:
        a = [self._operand(x, style) for x in n.args]
        op = n.op
        if op in _BINARY:
            return f"{a[0]} {_BINARY[op]} {a[1]}"
        if op == NEG:
            return f"-{a[0]}"
        if op == POWC:
            return f"pow({a[0]}, {n.val!r})" if style == "c" else f"np.power({a[0]}, {n.val!r})"
        if op == ATAN2:
            return f"atan2({a[0]}, {a[1]})" if style == "c" else f"np.arctan2({a[0]}, {a[1]})"
        if op == SELECT:
            return f"({a[0]} > 0.0 ? {a[1]} : {a[2]})" if style == "c" else f"np.where({a[0]} > 0.0, {a[1]}, {a[2]})"
        if op == SIGN:
            return f"(double)(({a[0]} > 0.0) - ({a[0]} < 0.0))" if style == "c" else f"np.sign({a[0]})"
        table = _C_UNARY if style == "c" else _NP_UNARY
        if op in table:
            return f"{table[op]}({a[0]})"
        raise NotImplementedError(f"cannot compile {OPS[op]}")  # pragma: no cover

    # -- C
    def c_sources(self, name: str) -> list[str]:
        """The C translation units: one for a graph of at most :data:`SINGLE_FUNCTION_OPS` statements per loop
        (the source of :meth:`c_source`), else a driver and one unit per part of at most :data:`PART_OPS`
        statements, compiled separately (in parallel) — a single function of millions of statements exhausts the
        compiler's memory."""
        if len(self.node_ops) <= SINGLE_FUNCTION_OPS and len(self.shared_ops) <= SINGLE_FUNCTION_OPS:
            return [self.c_source(name)]
        nx, ny = len(self.xin), self.ny
        head = [f"/* moco_lab generated kernel {name} (codegen {CODEGEN_VERSION}, in parts) */", "#include <math.h>",
                ""]
        args = "const double* x, const double* P, double* s, double* t, double* y"
        units, calls, shared_calls = [], [], []
        for kind, ops in (("shared", self.shared_ops), ("node", self.node_ops)):
            for start in range(0, len(ops), PART_OPS):
                fname = f"{name}_{kind}{start // PART_OPS}"
                lines = [*head, f"void {fname}({args}) {{"]
                for n in ops[start:start + PART_OPS]:
                    lines.append(f"  {self._operand(n, 'c')} = {self._expression(n, 'c')};")
                    if kind == "node":
                        for j in self.out_at.get(n.id, ()):
                            lines.append(f"  y[{j}] = {self._operand(n, 'c')};")
                units.append("\n".join([*lines, "}", ""]))
                (shared_calls if kind == "shared" else calls).append(fname)
        driver = [*head, "#include <stdlib.h>", ""]
        driver += [f"void {f}({args});" for f in shared_calls + calls]
        driver += ["", f"void {name}(int n, const double* X, const double* P, double* Y) {{",
                   f"  double* s = (double*)malloc(sizeof(double) * {max(1, len(self.shared_ops))});",
                   f"  double* t = (double*)malloc(sizeof(double) * {max(1, self.num_node_slots)});",
                   "  if (!s || !t) { free(s); free(t); return; }"]
        driver += [f"  {f}(0, P, s, t, 0);" for f in shared_calls]
        driver += ["  for (int k = 0; k < n; ++k) {",
                   f"    const double* x = X + (long)k * {max(nx, 1)};",
                   f"    double* y = Y + (long)k * {max(ny, 1)};"]
        for j, o in enumerate(self.outputs):  # outputs that need no per-node statement
            if not isinstance(o, Expr):
                driver.append(f"    y[{j}] = {float(o)!r};")
            elif o.op in (CONST, VAR) or o.id in self.shared:
                driver.append(f"    y[{j}] = {self._operand(o, 'c')};")
        driver += [f"    {f}(x, P, s, t, y);" for f in calls]
        driver += ["  }", "  free(s);", "  free(t);", "}", ""]
        return ["\n".join(driver), *units]

    def c_source(self, name: str) -> str:
        nx, ny = len(self.xin), self.ny
        lines = [f"/* moco_lab generated kernel {name} (codegen {CODEGEN_VERSION}) */", "#include <math.h>", "",
                 f"void {name}(int n, const double* X, const double* P, double* Y) {{"]
        if self.shared_ops:
            lines.append(f"  double s[{len(self.shared_ops)}];")
        for n in self.shared_ops:
            lines.append(f"  {self._operand(n, 'c')} = {self._expression(n, 'c')};")
        lines.append(f"  double t[{max(1, self.num_node_slots)}];")
        lines.append("  for (int k = 0; k < n; ++k) {")
        lines.append(f"    const double* x = X + (long)k * {max(nx, 1)};")
        lines.append(f"    double* y = Y + (long)k * {max(ny, 1)};")
        for j, o in enumerate(self.outputs):  # outputs that need no per-node statement
            if not isinstance(o, Expr):
                lines.append(f"    y[{j}] = {float(o)!r};")
            elif o.op in (CONST, VAR) or o.id in self.shared:
                lines.append(f"    y[{j}] = {self._operand(o, 'c')};")
        for n in self.node_ops:
            lines.append(f"    {self._operand(n, 'c')} = {self._expression(n, 'c')};")
            for j in self.out_at.get(n.id, ()):
                lines.append(f"    y[{j}] = {self._operand(n, 'c')};")
        lines += ["  }", "}", ""]
        return "\n".join(lines)

    # -- numpy
    def numpy_source(self, name: str) -> str:
        lines = [f"def {name}(X, P):", "    n = X.shape[0]", "    XT = X.T"]
        for k in range(len(self.xin)):
            lines.append(f"    x{k} = XT[{k}]")
        lines.append(f"    Y = np.empty(({self.ny}, n))")
        for n in self.shared_ops:
            lines.append(f"    {self._operand(n, 'py')} = {self._expression(n, 'py')}")
        for j, o in enumerate(self.outputs):
            if not isinstance(o, Expr):
                lines.append(f"    Y[{j}] = {float(o)!r}")
            elif o.op in (CONST, VAR) or o.id in self.shared:
                lines.append(f"    Y[{j}] = {self._operand(o, 'py')}")
        for n in self.node_ops:
            lines.append(f"    {self._operand(n, 'py')} = {self._expression(n, 'py')}")
            for j in self.out_at.get(n.id, ()):
                lines.append(f"    Y[{j}] = {self._operand(n, 'py')}")
        lines.append("    return Y.T")
        return "\n".join(lines) + "\n"




def _load_numpy(source: str, name: str, ny: int):
    namespace = {"np": np}
    exec(compile(source, f"<moco_lab kernel {name}>", "exec"), namespace)
    fn = namespace[name]

    def impl(X, P):
        with np.errstate(all="ignore"):  # the C backend does not trap either; NaN/inf propagate
            out = fn(X, P)
        return np.ascontiguousarray(out)

    return impl


_LOAD_LOCK = threading.Lock()
_LIBRARIES: dict[str, ctypes.CDLL] = {}


def _c_function(plan: _Plan, name: str, key: str | None) -> Callable:
    """The ``"c"`` backend's ``impl(X, P)``: the optimized library if it is built, else the interpreter running
    ``plan``'s statements (its tape kept on disk under ``key``) while a background process compiles the optimized
    library, if background builds are on (module docstring)."""
    compiler = _compiler()
    units = None
    if key is None:
        units = plan.c_sources(name)
        key = hashlib.sha256("\0".join([CODEGEN_VERSION, _COMPILER[1], *units]).encode()).hexdigest()[:32]
    folder = cache_dir()
    path = folder / f"{name}-{key}.so"
    with _LOAD_LOCK:
        if optimized_path(path).exists() or str(optimized_path(path)) in _LIBRARIES:
            return load_library(path, name, plan.ny)
        tape = tape_from_plan(plan)
        tape.save(_tape_path(path))
        interim = tape_function(tape, interpreter_library(compiler, folder))
        nops = plan.num_node_ops + len(plan.shared_ops)
        if optimize_in_background() and nops <= OPTIMIZE_MAX_OPS and not _build_running(path):
            start_background_build(compiler, units or plan.c_sources(name), path, plain=False)
    return load_library(path, name, plan.ny, interim)


def _compiler() -> str:
    compiler = c_compiler()
    if compiler is None:
        raise RuntimeError("the 'c' backend needs a C compiler (cc, gcc, clang or $CC); use backend='numpy'")
    return compiler


def _tape_path(path: Path) -> Path:
    return path.with_name(f"{path.name[:-3]}.tape.npz")


def optimized_path(path: Path) -> Path:
    """Where the optimized build of the library at ``path`` (``<name>-<key>.so``) goes (module docstring)."""
    return path.with_name(f"{path.name[:-3]}.{OPTIMIZED_TAG}.so")


def optimize_in_background() -> bool:
    """Whether a new function's library is compiled in the background (``$MOCO_LAB_OPTIMIZE_KERNELS``, default no)."""
    value = os.environ.get("MOCO_LAB_OPTIMIZE_KERNELS", "0").strip().lower()
    if value not in ("0", "1", "no", "yes", "false", "true", "off", "on"):
        raise ValueError(f"MOCO_LAB_OPTIMIZE_KERNELS must be 1 or 0, got {value!r}")
    return value in ("1", "yes", "true", "on")


def start_optimized_build(compiler: str, units: list[str], path: Path, wait: bool = False) -> subprocess.Popen:
    """Compile ``units`` with :data:`OPTIMIZED_FLAGS` into :func:`optimized_path` of ``path``, by a detached,
    low-priority shell process (it outlives this one; the library appears atomically when done). ``wait``: return
    only when it is done (tests). Returns the process."""
    return start_background_build(compiler, units, path, plain=False, wait=wait)


def start_background_build(compiler: str, units: list[str], path: Path, plain: bool = True, optimize: bool = True,
                           wait: bool = False) -> subprocess.Popen:
    """Compile ``units`` by a detached, low-priority shell process (it outlives this one): at -O0 into ``path``
    (``plain``), then with :data:`OPTIMIZED_FLAGS` into :func:`optimized_path` (``optimize``), each library
    appearing atomically when done. Builds wait for each other (``flock`` on a lock file in the cache, where the
    system has it), so that they take one core at most. While it waits or runs, ``path`` + ``.building`` holds its
    process number (so that no other process starts the same build). ``wait``: return only when it is done
    (tests). Returns the process."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="moco_lab_opt_", dir=folder))
    sources = []
    for k, text in enumerate(units):
        (tmp / f"unit{k}.c").write_text(text)
        sources.append(f"unit{k}")
    steps = []
    for flags, target in [(("-O0",), "$PLAIN")] * plain + [(OPTIMIZED_FLAGS, "$TARGET")] * optimize:
        f = " ".join(flags)
        steps += [f'"$CC" {f} -fPIC -c -o {u}.o {u}.c' for u in sources]  # one after another: one core at most
        steps += [f'"$CC" -shared -fPIC -o kernel.so {" ".join(u + ".o" for u in sources)} -lm',
                  f'mv -f kernel.so "{target}"']
    marker = _marker(path)
    script = f'cd "$TMP" && {" && ".join(steps)}; cd / && rm -rf "$TMP"; rm -f "$MARKER"'
    nice = [shutil.which("nice"), "-n", "15"] if shutil.which("nice") else []
    # one build at a time on this machine (they queue on a lock file), so that a solve keeps a core of its own
    queue = [shutil.which("flock"), str(folder / ".build.lock")] if shutil.which("flock") and not wait else []
    proc = subprocess.Popen([*nice, *queue, "sh", "-c", script],
                            env={**os.environ, "CC": compiler, "TMP": str(tmp), "PLAIN": str(path),
                                 "TARGET": str(optimized_path(path)), "MARKER": str(marker)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=not wait)
    write_atomic(marker, str(proc.pid))
    if wait:
        proc.wait()
    else:
        _STARTED.append(proc)
    return proc


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".building")


def _build_running(path: Path) -> bool:
    """Whether a background build of ``path`` is under way (in this process or another one)."""
    try:
        pid = int(_marker(path).read_text())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # alive, another user's
        return True
    return True


_STARTED: list[subprocess.Popen] = []


def wait_for_optimized_builds(timeout: float | None = None) -> int:
    """Wait until the optimized builds this process started are done (benchmarks: warm times with the code a
    learner has from the second session on); returns how many were still running. ``timeout``: seconds in all."""
    deadline = None if timeout is None else time.monotonic() + timeout
    running = [p for p in _STARTED if p.poll() is None]
    for proc in running:
        proc.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    _STARTED.clear()
    return len(running)


def load_library(path: Path, name: str, ny: int, interim: Callable | None = None) -> Callable:
    """``impl(X, P) -> Y`` running the function ``name`` (``ny`` outputs) of the best build there is of the library at
    ``path``: its optimized build (:func:`optimized_path`), else ``interim`` (the interpreter on the same statements),
    else the library itself; until the optimized build exists it looks for it at most once a second and switches to
    it (the same numbers, module docstring)."""
    def load(p: Path):
        with _LOAD_LOCK:
            lib = _LIBRARIES.get(str(p))
            if lib is None:
                lib = ctypes.CDLL(str(p))
                _LIBRARIES[str(p)] = lib
        fn = getattr(lib, name)
        fn.restype = None
        fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

        def run(X, P):
            n = X.shape[0]
            Y = np.empty((n, ny))
            if n and ny:
                fn(n, X.ctypes.data, P.ctypes.data if P.size else None, Y.ctypes.data)
            return Y

        return run

    better = optimized_path(path)
    #: [function, what runs (0 the interpreter, 1 the plain library, 2 the optimized one), when to look next]
    if better.exists():
        state = [load(better), 2, 0.0]
    elif interim is not None:
        state = [interim, 0, 0.0]
    else:
        state = [load(path), 1, 0.0]

    def impl(X, P):
        if state[1] < 2 and time.monotonic() >= state[2]:
            if better.exists():
                state[0], state[1] = load(better), 2
            else:
                state[2] = time.monotonic() + 1.0
        return state[0](X, P)

    impl.optimized = lambda: state[1] == 2  # type: ignore[attr-defined]
    impl.runs = lambda: ("interpreter", "plain", "optimized")[state[1]]  # type: ignore[attr-defined]
    return impl
