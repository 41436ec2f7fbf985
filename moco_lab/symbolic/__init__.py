"""Symbolic expressions for deriving a model's equations once: graphs, exact derivatives, compiled kernels.

:mod:`.expr` (hash-consed expression graphs, forward-mode symbolic
differentiation, a math namespace usable as ``xp``), :mod:`.codegen`
(compilation into C or numpy functions over collocation nodes, cached on disk).
No pydrake here.
"""
from . import codegen, expr
from .codegen import CompiledFunction, compile_function
from .expr import Expr, Graph, derivatives, maximum, minimum, where

__all__ = ["codegen", "expr", "CompiledFunction", "compile_function", "Expr", "Graph", "derivatives", "maximum",
           "minimum", "where"]
