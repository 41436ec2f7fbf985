"""Global switches read from the environment.

``MOCO_LAB_FAST=1`` makes lessons and dashboards use small meshes and capped
iterations, so the test suite can execute every notebook quickly. Learners get
the full-size problems by default.
"""
from __future__ import annotations

import os


def fast_mode() -> bool:
    """True when the environment variable ``MOCO_LAB_FAST`` is set to 1/true/yes."""
    return os.environ.get("MOCO_LAB_FAST", "").strip().lower() in ("1", "true", "yes", "on")


def mesh(full: int, fast: int) -> int:
    """``full`` mesh intervals normally, ``fast`` under ``MOCO_LAB_FAST=1``."""
    return fast if fast_mode() else full
