"""pytest configuration shared by tests/, lessons/ and widgets/.

nbval compares every stored cell output with the freshly computed one, except the kinds it knows to be
unrepeatable: rendered images (image/png, image/jpeg) and widget model ids. A plotly figure's JSON is
the same kind of thing as a PNG: thousands of floats (many base64-packed) whose last bits change with
the CPU's vector instructions and the order of sums in BLAS and the sparse factorization, so a figure
whose numbers agree to 1e-15 still "differs". Figures are therefore not compared, like images; what a
figure shows is checked where it is computed (the notebooks' asserts and the unit tests), and the
printed text next to a figure is still compared.

The lessons store the outputs a learner sees (learner mode, full meshes; ``tests/refresh_notebooks.py`` records
``{"moco_lab": {"stored_outputs": "learner"}}`` in the notebook's metadata), while the test suite runs them in fast
mode. In such a notebook nbval compares only the cells tagged ``nbval-check-output``: those whose printed text is
the same in both modes (the refresh script tags them). Every cell still runs, and its ``assert`` lines still count.

The optional builds of the equations' C code in the background (``moco_lab.symbolic.codegen``) stay off under the
tests even where a user turned them on (``MOCO_LAB_OPTIMIZE_KERNELS=0``, inherited by the notebooks' kernels): they
would take the cores the tests run on, and they change no number — every test runs the equations on the interpreter
(``moco_lab.symbolic.interpreter``), which ``tests/test_codegen.py`` checks bit for bit against the compiled
libraries it builds explicitly.
"""
from __future__ import annotations

import os

os.environ["MOCO_LAB_OPTIMIZE_KERNELS"] = "0"

PLOTLY_MIME = "application/vnd.plotly.v1+json"
CHECK_TAG = "nbval-check-output"


def _learner_outputs(notebook) -> bool:
    nb = getattr(notebook, "nb", None)
    meta = getattr(nb, "metadata", None) or {}
    return (meta.get("moco_lab") or {}).get("stored_outputs") == "learner"


def pytest_collection_modifyitems(items):
    for item in items:
        notebook = item.parent
        skip = getattr(notebook, "skip_compare", None)  # nbval's IPyNbFile
        if skip is not None and PLOTLY_MIME not in skip:
            notebook.skip_compare = tuple(skip) + (PLOTLY_MIME,)
        options = getattr(item, "options", None)     # nbval's IPyNbCell
        if options is not None and _learner_outputs(notebook):
            options["check"] = CHECK_TAG in (item.cell.metadata.get("tags") or [])
