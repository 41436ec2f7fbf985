"""Scalar expression graphs: hash-consed, constant-folded, differentiated as a graph.

moco_lab derives a model's equations of motion, muscle and contact forces once,
as an expression graph in the scalar variables of one collocation node
(``q``, ``u``, ``u̇``, muscle states, controls, parameters). Every distinct
operation exists once in a :class:`Graph` (hash-consing), so shared
subexpressions stay shared and the cost of building, differentiating and
compiling grows with the number of *distinct* operations, not with the size of
the expression written out as a tree (which grows exponentially with the depth
of a joint chain).

Expressions behave like floats for arithmetic and for numpy's elementary
functions on object arrays (``np.sin(q)``, ``np.sqrt(...)``, ``q ** 2``), so
user-written functions of ``q`` (holonomic constraints, coordinate forces)
and the muscle model (written for any math namespace ``xp``; this module is
one) build graphs without change. They never turn into floats: comparisons
and ``math.sin`` raise a ``TypeError`` that says what to use instead
(:func:`where`, ``np.sin``).

>>> g = Graph()
>>> x, y = g.var("x"), g.var("y")
>>> f = x * y + np.sin(x)
>>> (x * y) is (y * x)            # one node per distinct operation
True
>>> derivatives([f], [x, y])[0]    # {input index: derivative}
{0: <Expr add ...>, 1: <Expr var y>}
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["Graph", "Expr", "derivatives", "second_derivatives", "substitute", "structural_hash", "ancestors", "where", "maximum",
           "minimum", "is_expr",
           "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "asin", "arcsin", "acos", "arccos",
           "atan", "arctan", "atan2", "arctan2", "abs", "sign", "OPS"]

# operation codes (stable: they enter structural hashes of compiled kernels)
CONST, VAR, ADD, SUB, MUL, DIV, NEG, POWC, SIN, COS, TAN, EXP, LOG, SQRT, TANH, SINH, COSH, ASIN, ACOS, ATAN, \
    ATAN2, ABS, SIGN, SELECT = range(24)
#: Operation names by code.
OPS = ("const", "var", "add", "sub", "mul", "div", "neg", "powc", "sin", "cos", "tan", "exp", "log", "sqrt", "tanh",
       "sinh", "cosh", "asin", "acos", "atan", "atan2", "abs", "sign", "select")
_UNARY = {SIN: math.sin, COS: math.cos, TAN: math.tan, EXP: math.exp, LOG: math.log, SQRT: math.sqrt, TANH: math.tanh,
          SINH: math.sinh, COSH: math.cosh, ASIN: math.asin, ACOS: math.acos, ATAN: math.atan, ABS: abs,
          SIGN: lambda v: float(np.sign(v))}

_NO_FLOAT = ("a moco_lab symbolic expression has no numeric value while the model's equations are being derived; "
             "write the function with arithmetic and numpy functions (np.sin, np.sqrt, ...) and use "
             "moco_lab.symbolic.where(condition, a, b) / maximum / minimum instead of if/comparisons")


class Graph:
    """The store of expression nodes: one node per distinct operation.

    Nodes are numbered in creation order, which is a topological order (a
    node's arguments always exist before it).
    """

    def __init__(self):
        self.nodes: list[Expr] = []
        self._table: dict[tuple, Expr] = {}
        self._vars: dict[str, Expr] = {}
        self.zero = self.const(0.0)
        self.one = self.const(1.0)

    def __len__(self) -> int:
        return len(self.nodes)

    # -- node creation (hash-consed)
    def _node(self, op: int, args: tuple, val=None) -> "Expr":
        k = len(args)   # the same key as tuple(a.id for a in args), without a generator (a million calls per Hessian)
        key = (op, (args[0].id, args[1].id) if k == 2 else (args[0].id,) if k == 1 else tuple(a.id for a in args), val)
        node = self._table.get(key)
        if node is None:
            node = Expr(self, op, args, val, len(self.nodes))
            self.nodes.append(node)
            self._table[key] = node
        return node

    def const(self, value: float) -> "Expr":
        """A constant node (``-0.0`` is stored as ``0.0``)."""
        v = float(value)
        if v == 0.0:
            v = 0.0
        return self._node(CONST, (), v)

    def var(self, name: str) -> "Expr":
        """The variable named ``name`` (the same node for the same name)."""
        node = self._vars.get(name)
        if node is None:
            node = self._node(VAR, (), str(name))
            self._vars[name] = node
        return node

    def vars(self, names: Iterable[str]) -> list["Expr"]:
        """One variable per name (existing variables of the same name are reused)."""
        return [self.var(n) for n in names]

    def lift(self, x: Any) -> "Expr":
        """``x`` as a node of this graph (numbers become constants)."""
        if isinstance(x, Expr):
            if x.g is not self:
                raise ValueError("expressions from two different graphs cannot be combined")
            return x
        if isinstance(x, (int, float, np.integer, np.floating)):
            return self.const(float(x))
        raise TypeError(f"cannot combine a moco_lab expression with {type(x).__name__}")

    # -- folded constructors
    def add(self, a: "Expr", b: "Expr") -> "Expr":
        """``a + b``, folded (constants, zeros) and hash-consed."""
        aop, bop = a.op, b.op
        if aop != CONST and bop != CONST and aop != NEG and bop != NEG:   # nothing to fold: most calls
            return self._node(ADD, (a, b) if a.id < b.id else (b, a))
        if a.op == CONST:
            if b.op == CONST:
                return self.const(a.val + b.val)
            if a.val == 0.0:
                return b
        elif b.op == CONST and b.val == 0.0:
            return a
        if b.op == NEG:
            return self.sub(a, b.args[0])
        if a.op == NEG:
            return self.sub(b, a.args[0])
        if a.id > b.id:
            a, b = b, a
        return self._node(ADD, (a, b))

    def sub(self, a: "Expr", b: "Expr") -> "Expr":
        """``a − b``, folded and hash-consed."""
        if a is b:
            return self.zero
        if b.op == CONST:
            if a.op == CONST:
                return self.const(a.val - b.val)
            if b.val == 0.0:
                return a
        if a.op == CONST and a.val == 0.0:
            return self.neg(b)
        if b.op == NEG:
            return self.add(a, b.args[0])
        return self._node(SUB, (a, b))

    def mul(self, a: "Expr", b: "Expr") -> "Expr":
        """``a × b``, folded (constants, zeros, ones) and hash-consed."""
        aop, bop = a.op, b.op
        if aop != CONST and bop != CONST and aop != NEG and bop != NEG:   # nothing to fold: most calls
            return self._node(MUL, (a, b) if a.id < b.id else (b, a))
        if a.op != CONST and b.op == CONST:
            a, b = b, a
        if a.op == CONST:
            if b.op == CONST:
                return self.const(a.val * b.val)
            if a.val == 0.0:
                return self.zero
            if a.val == 1.0:
                return b
            if a.val == -1.0:
                return self.neg(b)
            if b.op == NEG:
                return self.mul(self.const(-a.val), b.args[0])
        if a.op == NEG and b.op == NEG:
            return self.mul(a.args[0], b.args[0])
        if a.op == NEG:
            return self.neg(self.mul(a.args[0], b))
        if b.op == NEG:
            return self.neg(self.mul(a, b.args[0]))
        if a.op != CONST and a.id > b.id:
            a, b = b, a
        return self._node(MUL, (a, b))

    def div(self, a: "Expr", b: "Expr") -> "Expr":
        """``a / b``, folded and hash-consed."""
        if b.op == CONST:
            if b.val == 0.0:
                raise ZeroDivisionError("division by a constant zero in a moco_lab expression")
            if a.op == CONST:
                return self.const(a.val / b.val)
            if b.val == 1.0:
                return a
            return self.mul(self.const(1.0 / b.val), a)
        if a.op == CONST and a.val == 0.0:
            return self.zero
        if a is b:
            return self.one
        return self._node(DIV, (a, b))

    def neg(self, a: "Expr") -> "Expr":
        """``−a``, folded and hash-consed."""
        if a.op == CONST:
            return self.const(-a.val)
        if a.op == NEG:
            return a.args[0]
        return self._node(NEG, (a,))

    def powc(self, a: "Expr", c: float) -> "Expr":
        """``a ** c`` for a constant exponent ``c`` (``c = 0.5`` becomes ``sqrt``)."""
        c = float(c)
        if c == 0.0:
            return self.one
        if c == 1.0:
            return a
        if a.op == CONST:
            return self.const(a.val ** c)
        if c == 0.5:
            return self.unary(SQRT, a)
        return self._node(POWC, (a,), c)

    def unary(self, op: int, a: "Expr") -> "Expr":
        """An elementary function (``SIN``, ``EXP``, ...) of ``a``, folded for constants."""
        if a.op == CONST:
            return self.const(_UNARY[op](a.val))
        if op == ABS and a.op in (ABS, SQRT, EXP):
            return a
        return self._node(op, (a,))

    def atan2(self, y: "Expr", x: "Expr") -> "Expr":
        """``atan2(y, x)``, folded for constants."""
        if y.op == CONST and x.op == CONST:
            return self.const(math.atan2(y.val, x.val))
        return self._node(ATAN2, (y, x))

    def select(self, c: "Expr", a: "Expr", b: "Expr") -> "Expr":
        """``a`` where ``c > 0``, else ``b``."""
        if c.op == CONST:
            return a if c.val > 0 else b
        if a is b:
            return a
        return self._node(SELECT, (c, a, b))


class Expr:
    """A node of a :class:`Graph`: an operation on earlier nodes, a variable or a constant.

    Attributes
    ----------
    op : int
        Operation code (:data:`OPS` gives its name).
    args : tuple of Expr
    val : float, str or None
        The value of a constant, the name of a variable, the exponent of ``powc``.
    id : int
        Position in the graph (creation order).
    """

    __slots__ = ("g", "op", "args", "val", "id")
    __array_priority__ = 1000  # numpy defers binary operators to us

    def __init__(self, g: Graph, op: int, args: tuple, val: float | None, id_: int):
        self.g, self.op, self.args, self.val, self.id = g, op, args, val, id_

    def __repr__(self) -> str:
        if self.op == CONST:
            return f"<Expr const {self.val!r}>"
        if self.op == VAR:
            return f"<Expr var {self.val}>"
        return f"<Expr {OPS[self.op]} ...>"

    def __hash__(self) -> int:
        return self.id

    @property
    def is_constant(self) -> bool:
        """True for a constant node."""
        return self.op == CONST

    @property
    def value(self) -> float:
        """The value of a constant node (``ValueError`` for any other node)."""
        if self.op != CONST:
            raise ValueError("only constant expressions have a value")
        return self.val

    # arithmetic
    def __add__(self, o):
        return self.g.add(self, self.g.lift(o))

    def __radd__(self, o):
        return self.g.add(self.g.lift(o), self)

    def __sub__(self, o):
        return self.g.sub(self, self.g.lift(o))

    def __rsub__(self, o):
        return self.g.sub(self.g.lift(o), self)

    def __mul__(self, o):
        return self.g.mul(self, self.g.lift(o))

    def __rmul__(self, o):
        return self.g.mul(self.g.lift(o), self)

    def __truediv__(self, o):
        return self.g.div(self, self.g.lift(o))

    def __rtruediv__(self, o):
        return self.g.div(self.g.lift(o), self)

    def __neg__(self):
        return self.g.neg(self)

    def __pos__(self):
        return self

    def __pow__(self, o):
        if isinstance(o, Expr):
            if o.op == CONST:
                return _pow(self, o.val)
            return self.g.unary(EXP, o * self.g.unary(LOG, self))
        return _pow(self, o)

    def __rpow__(self, o):
        base = self.g.lift(o)
        if base.op == CONST and base.val > 0:
            return self.g.unary(EXP, self * math.log(base.val))
        return self.g.unary(EXP, self * self.g.unary(LOG, base))

    def __abs__(self):
        return self.g.unary(ABS, self)

    # numpy's elementary functions on object arrays call these methods
    def sin(self) -> Expr:
        """``np.sin(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(SIN, self)

    def cos(self) -> Expr:
        """``np.cos(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(COS, self)

    def tan(self) -> Expr:
        """``np.tan(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(TAN, self)

    def exp(self) -> Expr:
        """``np.exp(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(EXP, self)

    def log(self) -> Expr:
        """``np.log(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(LOG, self)

    def sqrt(self) -> Expr:
        """``np.sqrt(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(SQRT, self)

    def tanh(self) -> Expr:
        """``np.tanh(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(TANH, self)

    def sinh(self) -> Expr:
        """``np.sinh(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(SINH, self)

    def cosh(self) -> Expr:
        """``np.cosh(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(COSH, self)

    def arcsin(self) -> Expr:
        """``np.arcsin(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(ASIN, self)

    def arccos(self) -> Expr:
        """``np.arccos(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(ACOS, self)

    def arctan(self) -> Expr:
        """``np.arctan(expr)``: numpy calls this method on an object array element."""
        return self.g.unary(ATAN, self)

    def arctan2(self, x: Any) -> Expr:
        """``np.arctan2(expr)``: numpy calls this method on an object array element."""
        return self.g.atan2(self, self.g.lift(x))

    def square(self) -> Expr:
        """``np.square(expr)``: numpy calls this method on an object array element."""
        return self * self

    def conjugate(self) -> Expr:
        """``np.conjugate(expr)``: numpy calls this method on an object array element."""
        return self

    def absolute(self) -> Expr:
        """``np.absolute(expr)``: numpy calls this method on an object array element."""
        return abs(self)

    # no numeric value, no ordering
    def __float__(self):
        raise TypeError(_NO_FLOAT)

    __int__ = __index__ = __float__

    def __bool__(self):
        raise TypeError(_NO_FLOAT)

    def __lt__(self, o):
        raise TypeError(_NO_FLOAT)

    __le__ = __gt__ = __ge__ = __lt__


def _pow(a: Expr, c) -> Expr:
    c = float(c)
    if c == 2.0:
        return a * a
    if c == 3.0:
        return a * a * a
    if c == -1.0:
        return 1.0 / a
    return a.g.powc(a, c)


def is_expr(x: Any) -> bool:
    """True for a moco_lab expression node."""
    return isinstance(x, Expr)


# -------------------------------------------------- functions (a math namespace ``xp``)
def _apply(op: int, fn):
    def f(x):
        if isinstance(x, Expr):
            return x.g.unary(op, x)
        if isinstance(x, np.ndarray):
            return np.vectorize(f, otypes=[object])(x) if x.dtype == object else fn(x)
        return fn(x)

    f.__name__ = OPS[op]
    return f


sin = _apply(SIN, np.sin)
cos = _apply(COS, np.cos)
tan = _apply(TAN, np.tan)
exp = _apply(EXP, np.exp)
log = _apply(LOG, np.log)
sqrt = _apply(SQRT, np.sqrt)
tanh = _apply(TANH, np.tanh)
sinh = _apply(SINH, np.sinh)
cosh = _apply(COSH, np.cosh)
asin = arcsin = _apply(ASIN, np.arcsin)
acos = arccos = _apply(ACOS, np.arccos)
atan = arctan = _apply(ATAN, np.arctan)
abs = _apply(ABS, np.abs)
sign = _apply(SIGN, np.sign)


def atan2(y: Any, x: Any) -> Any:
    """``atan2(y, x)`` for expressions or numbers."""
    if isinstance(y, Expr) or isinstance(x, Expr):
        g = y.g if isinstance(y, Expr) else x.g
        return g.atan2(g.lift(y), g.lift(x))
    return np.arctan2(y, x)


arctan2 = atan2


def where(condition: Any, a: Any, b: Any) -> Any:
    """``a`` where ``condition > 0``, else ``b`` (smoothness is the caller's business).

    ``condition`` is an expression or number whose sign decides; for numpy
    arrays this is ``np.where(condition > 0, a, b)``.
    """
    if any(isinstance(v, Expr) for v in (condition, a, b)):
        g = next(v.g for v in (condition, a, b) if isinstance(v, Expr))
        return g.select(g.lift(condition), g.lift(a), g.lift(b))
    return np.where(np.asarray(condition) > 0, a, b)


def maximum(a: Any, b: Any) -> Any:
    """``max(a, b)`` (a select on ``a - b``)."""
    return where(a - b, a, b)


def minimum(a: Any, b: Any) -> Any:
    """``min(a, b)`` (a select on ``b - a``)."""
    return where(b - a, a, b)


# -------------------------------------------------------------------- derivatives
def ancestors(outputs: Sequence[Expr]) -> list[Expr]:
    """Every node the outputs depend on, in topological (id) order."""
    exprs = [o for o in outputs if isinstance(o, Expr)]
    if not exprs:
        return []
    nodes = exprs[0].g.nodes   # a node's id is its place in its graph's list; arguments have smaller ids
    top = max(o.id for o in exprs)
    seen = bytearray(top + 1)
    for o in exprs:
        seen[o.id] = 1
    for i in range(top, -1, -1):   # one sweep down the ids marks every argument of a marked node
        if seen[i]:
            for a in nodes[i].args:
                seen[a.id] = 1
    return [nodes[i] for i in np.flatnonzero(np.frombuffer(seen, np.uint8)).tolist()]


def substitute(outputs: Sequence, values: dict[Expr, Any]) -> list:
    """``outputs`` with each variable in ``values`` replaced by its value (an expression or a number), rebuilt
    through the folding constructors (so ``x * 0`` folds away); non-expressions pass through."""
    exprs = [o for o in outputs if isinstance(o, Expr)]
    if not exprs:
        return list(outputs)
    g = exprs[0].g
    by_id = {v.id: g.lift(x) for v, x in values.items()}
    binary = {ADD: g.add, SUB: g.sub, MUL: g.mul, DIV: g.div, ATAN2: g.atan2}
    new: dict[int, Expr] = {}
    for n in ancestors(exprs):
        if n.op in (CONST, VAR):
            new[n.id] = by_id.get(n.id, n)
            continue
        args = [new[a.id] for a in n.args]
        if all(a is b for a, b in zip(args, n.args)):
            new[n.id] = n
        elif n.op in binary:
            new[n.id] = binary[n.op](*args)
        elif n.op == NEG:
            new[n.id] = g.neg(args[0])
        elif n.op == POWC:
            new[n.id] = g.powc(args[0], n.val)
        elif n.op == SELECT:
            new[n.id] = g.select(*args)
        else:
            new[n.id] = g.unary(n.op, args[0])
    return [new[o.id] if isinstance(o, Expr) else o for o in outputs]


def derivatives(outputs: Sequence, inputs: Sequence[Expr]) -> list[dict[int, Expr]]:
    """Exact first derivatives of ``outputs`` with respect to the variables ``inputs``.

    Forward accumulation over the graph, each node carrying only the
    derivatives it structurally has (a sparse map), so the work is the
    number of (node, dependent input) pairs; the derivative nodes are added to
    the same graph (shared with the values and with each other).

    Parameters
    ----------
    outputs : sequence of Expr or numbers
    inputs : sequence of Expr
        Variable nodes.

    Returns
    -------
    list of dict
        For each output, ``{input index: derivative expression}`` holding
        the structurally non-zero entries.
    """
    nodes = ancestors(outputs)
    if not nodes:
        return [{} for _ in outputs]
    g = nodes[0].g
    index = {v.id: k for k, v in enumerate(inputs)}
    for v in inputs:
        if not isinstance(v, Expr) or v.op != VAR:
            raise TypeError("derivatives(): inputs must be variable nodes")
    # how many consumers each needed node has, to free gradients early
    uses: dict[int, int] = {}
    for n in nodes:
        for a in n.args:
            uses[a.id] = uses.get(a.id, 0) + 1
    keep = {o.id for o in outputs if isinstance(o, Expr)}
    grad: dict[int, dict[int, Expr]] = {}
    empty: dict[int, Expr] = {}
    for n in nodes:
        op = n.op
        if op == CONST:
            d = empty
        elif op == VAR:
            d = {index[n.id]: g.one} if n.id in index else empty
        elif op in (ADD, SUB):
            ga, gb = grad[n.args[0].id], grad[n.args[1].id]
            if not gb:
                d = ga
            elif not ga:
                d = gb if op == ADD else {k: g.neg(v) for k, v in gb.items()}
            else:
                d = dict(ga)
                for k, v in gb.items():
                    w = d.get(k)
                    if op == ADD:
                        d[k] = v if w is None else g.add(w, v)
                    else:
                        d[k] = g.neg(v) if w is None else g.sub(w, v)
        elif op == MUL:
            a, b = n.args
            ga, gb = grad[a.id], grad[b.id]
            d = {k: g.mul(v, b) for k, v in ga.items()}
            for k, v in gb.items():
                t = g.mul(a, v)
                w = d.get(k)
                d[k] = t if w is None else g.add(w, t)
        elif op == DIV:
            a, b = n.args
            ga, gb = grad[a.id], grad[b.id]
            d = {k: g.div(v, b) for k, v in ga.items()}
            if gb:
                f = g.div(n, b)  # (a/b)/b
                for k, v in gb.items():
                    t = g.mul(f, v)
                    w = d.get(k)
                    d[k] = g.neg(t) if w is None else g.sub(w, t)
        elif op == NEG:
            d = {k: g.neg(v) for k, v in grad[n.args[0].id].items()}
        elif op == SELECT:
            c, a, b = n.args
            ga, gb = grad[a.id], grad[b.id]
            d = {k: g.select(c, ga.get(k, g.zero), gb.get(k, g.zero)) for k in set(ga) | set(gb)}
        elif op == ATAN2:
            y, x = n.args
            gy, gx = grad[y.id], grad[x.id]
            r2 = g.add(g.mul(x, x), g.mul(y, y))
            fy, fx = g.div(x, r2), g.neg(g.div(y, r2))
            d = {k: g.mul(fy, v) for k, v in gy.items()}
            for k, v in gx.items():
                t = g.mul(fx, v)
                w = d.get(k)
                d[k] = t if w is None else g.add(w, t)
        else:  # unary with a local derivative factor
            a = n.args[0]
            ga = grad[a.id]
            if not ga or op == SIGN:
                d = empty
            else:
                f = _local_derivative(g, n, a)
                d = {k: g.mul(f, v) for k, v in ga.items()}
        grad[n.id] = d
        for a in n.args:
            uses[a.id] -= 1
            if uses[a.id] == 0 and a.id not in keep:
                grad.pop(a.id, None)
    return [dict(grad[o.id]) if isinstance(o, Expr) else {} for o in outputs]


def second_derivatives(outputs: Sequence, weights: Sequence[Expr], inputs: Sequence[Expr]) -> dict[tuple[int, int], Expr]:
    """Exact second derivatives of the weighted sum ``Σ_k weights[k] · outputs[k]``: its Hessian's lower triangle.

    The weighted sum is formed in the graph (the weights are variables, e.g. the optimizer's multipliers of the
    outputs), differentiated once by :func:`derivatives` (which reuses the first derivatives already in the
    graph), and each non-zero entry of that gradient is differentiated again. Only structurally non-zero entries
    are returned.

    Parameters
    ----------
    outputs : sequence of Expr or numbers
    weights : sequence of Expr
        One variable per output (not among ``inputs``).
    inputs : sequence of Expr
        Variable nodes.

    Returns
    -------
    dict
        ``{(i, j): expr}`` with ``i >= j`` (input indices): ``∂² (Σ w o) / ∂ inputs[i] ∂ inputs[j]``.
    """
    terms = [(w, o) for w, o in zip(weights, outputs) if isinstance(o, Expr) and o.op != CONST]
    if not terms:
        return {}
    g = terms[0][1].g
    total = g.zero
    for w, o in terms:
        total = g.add(total, g.mul(w, o))
    gradient = derivatives([total], inputs)[0]
    keys = sorted(gradient)
    second = derivatives([gradient[i] for i in keys], inputs)
    out: dict[tuple[int, int], Expr] = {}
    for i, row in zip(keys, second):
        for j, e in row.items():
            if j <= i:
                out[(i, j)] = e
    return out


def _local_derivative(g: Graph, n: Expr, a: Expr) -> Expr:
    """d n / d a for a unary node ``n = op(a)``."""
    op = n.op
    if op == SIN:
        return g.unary(COS, a)
    if op == COS:
        return g.neg(g.unary(SIN, a))
    if op == TAN:
        return g.add(g.one, g.mul(n, n))
    if op == EXP:
        return n
    if op == LOG:
        return g.div(g.one, a)
    if op == SQRT:
        return g.div(g.const(0.5), n)
    if op == TANH:
        return g.sub(g.one, g.mul(n, n))
    if op == SINH:
        return g.unary(COSH, a)
    if op == COSH:
        return g.unary(SINH, a)
    if op == ASIN:
        return g.div(g.one, g.unary(SQRT, g.sub(g.one, g.mul(a, a))))
    if op == ACOS:
        return g.neg(g.div(g.one, g.unary(SQRT, g.sub(g.one, g.mul(a, a)))))
    if op == ATAN:
        return g.div(g.one, g.add(g.one, g.mul(a, a)))
    if op == ABS:
        return g.unary(SIGN, a)
    if op == POWC:
        c = n.val
        return g.mul(g.const(c), g.powc(a, c - 1.0))
    raise NotImplementedError(f"no derivative rule for {OPS[op]}")  # pragma: no cover


def structural_hash(outputs: Sequence, inputs: Sequence[Expr], extra: str = "") -> str:
    """A hash of what ``outputs`` compute from ``inputs`` (in this order): the same for the same equations.

    Walks the nodes the outputs depend on once per graph and set of outputs (the walk's digest is kept on the
    graph: a model's Jacobian and Hessian blocks hash the same equations). Variables are identified by their
    position in ``inputs`` (names do not matter); an output may be a number.

    Returns
    -------
    str
        Hex SHA-256.
    """
    import hashlib

    exprs = [o for o in outputs if isinstance(o, Expr)]
    structure, variables, local = _structure(exprs) if exprs else ("", [], {})
    position = {v.id: k for k, v in enumerate(inputs)}
    h = hashlib.sha256()
    h.update(extra.encode())
    h.update(b"|structure|" + structure.encode())
    h.update(b"|variables|")
    h.update(";".join(str(position[v.id]) if v.id in position else repr(v.val) for v in variables).encode())
    h.update(b"|out|")
    h.update(";".join(str(local[o.id]) if isinstance(o, Expr) else repr(float(o)) for o in outputs).encode())
    return h.hexdigest()


def _structure(exprs: list[Expr]) -> tuple[str, list[Expr], dict[int, int]]:
    """The operations ``exprs`` depend on, in topological order with local numbering (variables as ``v``, their
    identity left to the caller): ``(hex digest, the variables in order, output id -> local number)``, computed
    once per graph and set of outputs."""
    import hashlib

    memo = exprs[0].g.__dict__.setdefault("_structure_memo", {})
    key = tuple(o.id for o in exprs)
    found = memo.get(key)
    if found is not None:
        return found
    nodes = ancestors(exprs)
    local = {n.id: k for k, n in enumerate(nodes)}
    h = hashlib.sha256()
    parts, variables = [], []
    for n in nodes:
        if n.op == VAR:
            parts.append("v")
            variables.append(n)
        elif n.op == CONST:
            parts.append(f"c{n.val!r}")
        else:
            parts.append(f"{n.op}:{','.join(str(local[a.id]) for a in n.args)}"
                         + (f":{n.val!r}" if n.val is not None else ""))
        if len(parts) > 4096:
            h.update(";".join(parts).encode())
            parts = []
    h.update(";".join(parts).encode())
    found = memo[key] = (h.hexdigest(), variables, {o.id: local[o.id] for o in exprs})
    return found
