"""pytest configuration shared by tests/, lessons/ and widgets/.

nbval compares every stored cell output with the freshly computed one, except the kinds it knows to be
unrepeatable: rendered images (image/png, image/jpeg) and widget model ids. A plotly figure's JSON is
the same kind of thing as a PNG: thousands of floats (many base64-packed) whose last bits change with
the CPU's vector instructions and the order of sums in BLAS and the sparse factorization, so a figure
whose numbers agree to 1e-15 still "differs". Figures are therefore not compared, like images; what a
figure shows is checked where it is computed (the notebooks' asserts and the unit tests), and the
printed text next to a figure is still compared.
"""
from __future__ import annotations

PLOTLY_MIME = "application/vnd.plotly.v1+json"


def pytest_collection_modifyitems(items):
    for item in items:
        notebook = item.parent
        skip = getattr(notebook, "skip_compare", None)  # nbval's IPyNbFile
        if skip is not None and PLOTLY_MIME not in skip:
            notebook.skip_compare = tuple(skip) + (PLOTLY_MIME,)
