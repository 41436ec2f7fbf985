"""Teaching UI (ipywidgets): the dashboards' panels and the registry of demo problems.

Import the submodules directly (``moco_lab.ui.solve_panel``, ``moco_lab.ui.convergence_panel``,
``moco_lab.ui.demos``,
``moco_lab.ui.moment_arms``); ``import moco_lab`` does not load ipywidgets.
"""
