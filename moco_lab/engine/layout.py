"""Where each variable lives in a collocation node: one named description used by the transcription, the
solver's guesses and packaging, and the prescribed-kinematics tool.

A grid point's *node block* is ``[states | controls | algebraic]``:

==============  ===========================================================================
block           contents (in this order)
==============  ===========================================================================
states ``y``    ``q`` (nq), ``u`` (nq), ``z`` (nz: force elements' states) — without ``q, u``
                when the kinematics are prescribed
controls ``x``  ``x`` (nx)
algebraic       ``acc`` (nq, implicit multibody dynamics: ``u̇`` as variables), ``w`` (nw:
                implicit derivatives, e.g. tendon force rates), ``lam`` (nl: constraint
                multipliers), ``gam`` (Hermite–Simpson velocity corrections), ``xt`` (2 nq:
                Bordalba's projected interval end states), ``mu`` (2 nl: projection slacks)
==============  ===========================================================================
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NodeLayout"]


@dataclass(frozen=True)
class NodeLayout:
    """Sizes of the variable groups of a node and their slices in the node block.

    Attributes
    ----------
    nq, nz, nx, nacc, nw, nl, ngam, nxt, nmu : int
        Sizes of the groups (``nacc`` is ``nq`` in implicit mode, else 0;
        ``ngam`` is ``nl`` for Hermite–Simpson with Posa's method, else 0;
        ``nxt = 2 nq`` and ``nmu = 2 nl`` with Bordalba's method, else 0).
    prescribed : bool
        ``q, u, u̇`` are data, not variables (``Inverse``).
    """

    nq: int
    nz: int
    nx: int
    nacc: int = 0
    nw: int = 0
    nl: int = 0
    ngam: int = 0
    nxt: int = 0
    nmu: int = 0
    prescribed: bool = False

    # -- sizes
    @property
    def ny(self) -> int:
        """Number of state variables per node."""
        return self.nz + (0 if self.prescribed else 2 * self.nq)

    @property
    def na(self) -> int:
        """Number of algebraic variables per node."""
        return self.nacc + self.nw + self.nl + self.ngam + self.nxt + self.nmu

    @property
    def size(self) -> int:
        """Length of a node block."""
        return self.ny + self.nx + self.na

    @property
    def nres(self) -> int:
        """Residual rows per node: the multibody residual (implicit or prescribed) and the implicit residuals."""
        return (self.nq if (self.nacc or self.prescribed) else 0) + self.nw

    # -- slices in the node block
    def _slice(self, start: int, n: int) -> slice:
        return slice(start, start + n)

    @property
    def y(self) -> slice:
        """Columns of the states ``[q, u, z]`` in the node block."""
        return slice(0, self.ny)

    @property
    def q(self) -> slice:
        """Columns of the coordinates (empty when the kinematics are prescribed)."""
        return slice(0, 0) if self.prescribed else slice(0, self.nq)

    @property
    def u(self) -> slice:
        """Columns of the speeds (empty when the kinematics are prescribed)."""
        return slice(0, 0) if self.prescribed else slice(self.nq, 2 * self.nq)

    @property
    def z(self) -> slice:
        """Columns of the force elements' states (activations, tendon forces)."""
        return slice(self.ny - self.nz, self.ny)

    @property
    def x(self) -> slice:
        """Columns of the controls."""
        return self._slice(self.ny, self.nx)

    @property
    def a(self) -> slice:
        """The whole algebraic group."""
        return self._slice(self.ny + self.nx, self.na)

    @property
    def acc(self) -> slice:
        """Columns of the implicit-mode accelerations ``u̇``."""
        return self._slice(self.ny + self.nx, self.nacc)

    @property
    def w(self) -> slice:
        """Columns of the implicit derivative variables (tendon-force rates)."""
        return self._slice(self.acc.stop, self.nw)

    @property
    def lam(self) -> slice:
        """Columns of the Lagrange multipliers of the kinematic constraints."""
        return self._slice(self.w.stop, self.nl)

    @property
    def gam(self) -> slice:
        """Columns of the Hermite–Simpson velocity corrections (Posa's method)."""
        return self._slice(self.lam.stop, self.ngam)

    @property
    def xt(self) -> slice:
        """Columns of Bordalba's projected interval end states ``[q, u]``."""
        return self._slice(self.gam.stop, self.nxt)

    @property
    def mu(self) -> slice:
        """Columns of Bordalba's projection slacks."""
        return self._slice(self.xt.stop, self.nmu)

    def in_algebraic(self, group: slice) -> slice:
        """A slice of the node block expressed relative to the algebraic group (columns of ``A``)."""
        o = self.ny + self.nx
        return slice(group.start - o, group.stop - o)
