"""OpenSim's expressions (the Lepton parser's language) read into a tree that evaluates with numbers or the engine's
expressions.

OpenSim's ``ExpressionBasedCoordinateForce`` (and other ``Expression*`` components) store a formula as text, e.g.
``-2.44*exp(5.05*(q-1.81))+1.51*exp(-11.88*(q+0.50))-1.0*qdot``, which OpenSim parses with Lepton. :func:`parse`
reads the same language with Lepton's rules — numbers (``1``, ``.5``, ``2.5e-3``), variables, ``+ - * / ^``
(``^`` binds tightest and groups to the right; a leading ``-`` negates what follows up to the next ``+ - * /``, so
``-q^2`` is ``-(q²)``), parentheses and the smooth functions ``sqrt exp log sin cos tan sec csc cot asin acos atan
sinh cosh tanh square cube recip`` (and ``abs min max``) — into an :class:`Expression`; a function moco_lab cannot
differentiate as OpenSim evaluates it (``step``, ``delta``, ``erf``, ``erfc``, custom functions) or a variable the
caller does not provide is refused by name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

__all__ = ["Expression", "parse", "LeptonError"]


class LeptonError(ValueError):
    """An expression moco_lab cannot read (says what and where)."""


_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_PRECEDENCE = {"+": 0, "-": 0, "*": 1, "/": 1, "^": 3}

#: name -> (number of arguments, how to apply it with ``xp``)
_FUNCTIONS = {
    "sqrt": (1, lambda xp, a: xp.sqrt(a)), "exp": (1, lambda xp, a: xp.exp(a)), "log": (1, lambda xp, a: xp.log(a)),
    "sin": (1, lambda xp, a: xp.sin(a)), "cos": (1, lambda xp, a: xp.cos(a)), "tan": (1, lambda xp, a: xp.tan(a)),
    "sec": (1, lambda xp, a: 1.0 / xp.cos(a)), "csc": (1, lambda xp, a: 1.0 / xp.sin(a)),
    "cot": (1, lambda xp, a: 1.0 / xp.tan(a)), "asin": (1, lambda xp, a: xp.arcsin(a)),
    "acos": (1, lambda xp, a: xp.arccos(a)), "atan": (1, lambda xp, a: xp.arctan(a)),
    "sinh": (1, lambda xp, a: xp.sinh(a)), "cosh": (1, lambda xp, a: xp.cosh(a)),
    "tanh": (1, lambda xp, a: xp.tanh(a)), "square": (1, lambda xp, a: a * a), "cube": (1, lambda xp, a: a * a * a),
    "recip": (1, lambda xp, a: 1.0 / a), "abs": (1, lambda xp, a: abs(a)),
    "min": (2, lambda xp, a, b: xp.minimum(a, b)), "max": (2, lambda xp, a, b: xp.maximum(a, b)),
}
_REFUSED = ("step", "delta", "erf", "erfc")


@dataclass(frozen=True)
class Expression:
    """A parsed expression: ``text`` as given, ``tree`` its syntax tree (tuples), ``variables`` the names it reads.

    ``expression(values, xp=np)`` evaluates it with ``values`` (name -> number, array or engine expression).
    """

    text: str
    tree: tuple
    variables: frozenset

    def __call__(self, values: Mapping[str, Any], xp: Any = np) -> Any:
        missing = sorted(self.variables - set(values))
        if missing:
            raise LeptonError(f"the expression {self.text!r} needs a value for {missing}")
        return _evaluate(self.tree, values, xp)


def _evaluate(node: tuple, values: Mapping[str, Any], xp: Any) -> Any:
    kind = node[0]
    if kind == "number":
        return node[1]
    if kind == "variable":
        return values[node[1]]
    if kind == "negate":
        return -_evaluate(node[1], values, xp)
    if kind == "call":
        return _FUNCTIONS[node[1]][1](xp, *(_evaluate(a, values, xp) for a in node[2]))
    a, b = _evaluate(node[1], values, xp), _evaluate(node[2], values, xp)
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "/":
        return a / b
    return a ** b  # "^"


def _tokens(text: str, where: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        c = text[pos]
        if c.isspace():
            pos += 1
            continue
        if c in "(),":
            out.append((c, c))
            pos += 1
        elif c in _PRECEDENCE:
            out.append(("operator", c))
            pos += 1
        elif c.isdigit() or c == ".":
            m = _NUMBER.match(text, pos)
            if m is None:
                raise LeptonError(f"{where}: cannot read a number at position {pos} of {text!r}")
            out.append(("number", m.group(0)))
            pos = m.end()
        else:
            m = _NAME.match(text, pos)
            if m is None:
                raise LeptonError(f"{where}: unexpected character {c!r} at position {pos} of {text!r}")
            pos = m.end()
            out.append(("function" if pos < len(text) and text[pos] == "(" else "variable", m.group(0)))
            if out[-1][0] == "function":
                pos += 1  # the "(" belongs to the call
    return out


def parse(text: str, variables: tuple[str, ...] | None = None, where: str = "expression") -> Expression:
    """Read ``text`` (module docstring); ``variables``: the names it may use (others are refused), None for any;
    ``where`` names the expression's owner in messages."""
    if not isinstance(text, str) or not text.strip():
        raise LeptonError(f"{where}: the expression is empty")
    tokens = _tokens(text, where)
    pos = 0
    used: set[str] = set()

    def expect(kind: str) -> None:
        nonlocal pos
        if pos >= len(tokens) or tokens[pos][0] != kind:
            got = "the end" if pos >= len(tokens) else repr(tokens[pos][1])
            raise LeptonError(f"{where}: expected {kind!r} but found {got} in {text!r}")
        pos += 1

    def operand() -> tuple:
        nonlocal pos
        if pos >= len(tokens):
            raise LeptonError(f"{where}: the expression {text!r} ends early")
        kind, value = tokens[pos]
        if kind == "number":
            pos += 1
            return ("number", float(value))
        if kind == "variable":
            pos += 1
            if variables is not None and value not in variables:
                raise LeptonError(f"{where}: unknown variable {value!r} in {text!r} (it may use {list(variables)})")
            used.add(value)
            return ("variable", value)
        if kind == "(":
            pos += 1
            node = precedence(0)
            expect(")")
            return node
        if kind == "function":
            pos += 1
            if value in _REFUSED or value not in _FUNCTIONS:
                raise LeptonError(f"{where}: the function {value!r} in {text!r} is not supported (moco_lab reads "
                                  f"{', '.join(sorted(_FUNCTIONS))})")
            args = [precedence(0)]
            while pos < len(tokens) and tokens[pos][0] == ",":
                pos += 1
                args.append(precedence(0))
            expect(")")
            if len(args) != _FUNCTIONS[value][0]:
                raise LeptonError(f"{where}: {value} takes {_FUNCTIONS[value][0]} argument(s), got {len(args)} in "
                                  f"{text!r}")
            return ("call", value, tuple(args))
        if kind == "operator" and value == "-":
            pos += 1
            return ("negate", precedence(2))
        raise LeptonError(f"{where}: unexpected {value!r} in {text!r}")

    def precedence(level: int) -> tuple:
        nonlocal pos
        node = operand()
        while pos < len(tokens) and tokens[pos][0] == "operator":
            op = tokens[pos][1]
            if _PRECEDENCE[op] < level:
                return node
            pos += 1
            node = (op, node, precedence(_PRECEDENCE[op] + (1 if op != "^" else 0)))
        return node

    tree = precedence(0)
    if pos != len(tokens):
        raise LeptonError(f"{where}: unexpected {tokens[pos][1]!r} after a complete expression in {text!r}")
    return Expression(text, tree, frozenset(used))

