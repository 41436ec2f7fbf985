"""Teaching UI (ipywidgets): the dashboards' panels and the registry of demo problems.

Import the submodules directly (``moco_lab.ui.widgets``, ``moco_lab.ui.demos``,
``moco_lab.ui.moment_arms``); ``import moco_lab`` does not load ipywidgets.
"""
