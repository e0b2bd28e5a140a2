"""A pure function mapped over a long list in forked processes, results in order.

The per-citation stages after the analysis (the injection screen, the local
verifier's features) cost a fraction of a millisecond each and a large report has
thousands: on a machine with several cores they run in forked workers that
inherit the items (nothing is pickled on the way in) and send back only the
results (docs/explanation/cascade.md, "Throughput"). Where ``fork`` is missing,
inside a daemonic process (a Dask worker: the cluster keeps the cores busy), or
for one worker, the map runs in-process; either way the results are the same.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNKS_PER_WORKER = 4
"""Contiguous slices per worker: items next to each other (one file's) stay together, and
the slowest slice does not leave a core idle for long."""

# The job a forked worker inherits: set just before the pool starts, cleared after.
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def can_fork() -> bool:
    """Whether worker processes may be forked here (not inside a daemonic process)."""
    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def _run(bounds: tuple[int, int]) -> list[Any]:
    assert _JOB is not None
    fn, items = _JOB
    return [fn(items[i]) for i in range(*bounds)]


def fork_map(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[fn(x) for x in items]``, computed by ``workers`` forked processes when worth it."""
    global _JOB
    n = len(items)
    if workers <= 1 or n < 2 * workers or not can_fork():
        return [fn(x) for x in items]
    k = workers * CHUNKS_PER_WORKER
    bounds = [(n * j // k, n * (j + 1) // k) for j in range(k)]
    _JOB = (fn, items)
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_run, bounds, chunksize=1)
    finally:
        _JOB = None
    return [r for part in parts for r in part]


__all__ = ["CHUNKS_PER_WORKER", "can_fork", "fork_map"]
