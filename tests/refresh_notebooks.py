"""Re-execute notebooks in fast mode and store their outputs, as nbval checks them.

Usage (from the repository root, in the project's environment)::

    python tests/refresh_notebooks.py lessons/00_inside_direct_collocation.ipynb [more.ipynb ...]

Each notebook is executed with ``MOCO_LAB_FAST=1`` (the mode the test suite uses), its
outputs are stored, and execution metadata (``metadata.execution``, ``metadata.widgets``) is
removed so that the files stay small and diffs stay readable. Execution counts stay: nbval
treats a cell without one as never run.
"""
from __future__ import annotations

import os
import sys
import time

import nbformat
from nbclient import NotebookClient


def refresh(path: str, timeout: int = 1800) -> float:
    """Execute ``path`` in fast mode and write it back with clean metadata; returns the wall time (s)."""
    os.environ["MOCO_LAB_FAST"] = "1"
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}).execute()
    elapsed = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return elapsed


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        print(f"{p}: {refresh(p):.1f} s")
