"""Re-execute notebooks and store their outputs: the lessons in learner mode, as a learner sees them.

Usage (from the repository root, in the project's environment)::

    python tests/refresh_notebooks.py lessons/00_inside_direct_collocation.ipynb [more.ipynb ...]
    python tests/refresh_notebooks.py --fast widgets/some_dashboard.ipynb

By default each notebook is executed in **learner mode** (the full meshes: ``MOCO_LAB_FAST`` unset), its outputs
are stored, and so that the test suite, which runs the notebooks in fast mode, can still compare text where text
is the guarantee, the notebook is executed a second time in fast mode and every code cell whose printed text is
the same in both modes is tagged ``nbval-check-output`` (the others keep their learner-mode text for the learner;
their ``assert`` lines are what the test suite checks). The notebook's metadata records
``{"moco_lab": {"stored_outputs": "learner"}}``; ``conftest.py`` then has nbval compare only the tagged cells.

``--fast`` stores fast-mode outputs instead, with every cell compared (the dashboards' notebooks, whose stored
outputs are empty). Execution metadata (``metadata.execution``, ``metadata.widgets``) is removed so that the files
stay small and diffs stay readable; execution counts stay (nbval treats a cell without one as never run).
"""
from __future__ import annotations

import configparser
import copy
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CHECK, IGNORE = "nbval-check-output", "nbval-ignore-output"
SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")
TEXT_MIME = "text/plain"


def _execute(nb: nbformat.NotebookNode, path: str, fast: bool, timeout: int) -> float:
    """Execute ``nb`` in place in the given mode; returns the wall time (s)."""
    before = os.environ.get("MOCO_LAB_FAST")
    if fast:
        os.environ["MOCO_LAB_FAST"] = "1"
    else:
        os.environ.pop("MOCO_LAB_FAST", None)
    try:
        start = time.perf_counter()
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}).execute()
        return time.perf_counter() - start
    finally:
        if before is None:
            os.environ.pop("MOCO_LAB_FAST", None)
        else:
            os.environ["MOCO_LAB_FAST"] = before


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    """The regular expressions of ``nbval_sanitize.cfg`` (what nbval masks before comparing)."""
    parser = configparser.ConfigParser()
    parser.read(SANITIZE, encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _text(cell: nbformat.NotebookNode, sanitizers: list) -> str:
    """The text a cell printed or returned (streams, text/plain results), sanitized as nbval sanitizes it."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(f"{out.get('name')}:{out.get('text', '')}")
        elif out.get("output_type") in ("execute_result", "display_data"):
            data = out.get("data", {})
            if set(data) - {TEXT_MIME}:       # a figure or a widget: not compared as text
                continue
            parts.append(data.get(TEXT_MIME, ""))
        elif out.get("output_type") == "error":
            parts.append(f"error:{out.get('ename')}")
    text = "".join(parts)
    for pattern, replace in sanitizers:
        text = pattern.sub(replace, text)
    return text


def _clean(nb: nbformat.NotebookNode) -> None:
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)


def refresh(path: str, fast: bool = False, timeout: int = 3600) -> float:
    """Execute ``path`` and write it back (module docstring); returns the wall time (s) of the stored run."""
    nb = nbformat.read(path, as_version=4)
    if fast:
        seconds = _execute(nb, path, True, timeout)
        nb.metadata.pop("moco_lab", None)
    else:
        quick = copy.deepcopy(nb)
        _execute(quick, path, True, timeout)
        seconds = _execute(nb, path, False, timeout)
        sanitizers = _sanitizers()
        for cell, twin in zip(nb.cells, quick.cells):
            if cell.cell_type != "code":
                continue
            tags = [t for t in cell.metadata.get("tags", []) if t != CHECK]
            text = _text(cell, sanitizers)
            if IGNORE not in tags and text and text == _text(twin, sanitizers):
                tags.append(CHECK)
            if tags:
                cell.metadata["tags"] = tags
            else:
                cell.metadata.pop("tags", None)
        nb.metadata["moco_lab"] = {"stored_outputs": "learner"}
    _clean(nb)
    nbformat.write(nb, path)
    return seconds


if __name__ == "__main__":
    args = sys.argv[1:]
    fast_mode = "--fast" in args
    paths = [a for a in args if a != "--fast"]
    if not paths:
        sys.exit(__doc__)
    for p in paths:
        print(f"{p}: {refresh(p, fast=fast_mode):.1f} s ({'fast' if fast_mode else 'learner'} mode stored)", flush=True)
