"""Shared by the examples that track OpenSim's reference files."""
from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def rounded_times_resampled() -> Iterator[None]:
    """Silence :func:`~moco_lab.results.tables.filter_lowpass`' warning that a table is resampled before filtering.

    OpenSim's reference files write their times with 8 decimals, so the steps are not uniform to OpenSim's tolerance
    and ``TabOpLowPassFilter`` resamples them first, as moco_lab's filter does; for those files that is expected.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "filter_lowpass: the table is not uniformly", UserWarning)
        yield
