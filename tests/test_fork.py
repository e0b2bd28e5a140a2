"""``fork_map``: the same list as the in-process map, in order, forked or not."""

from __future__ import annotations

import os

import pytest

from citecal._fork import can_fork, fork_map


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_are_in_order(workers: int) -> None:
    items = list(range(103))
    got = fork_map(_square_and_pid, items, workers)
    assert [v for v, _ in got] == [x * x for x in items]
    pids = {p for _, p in got}
    if workers > 1 and can_fork():
        assert os.getpid() not in pids  # the work was done in forked workers
    else:
        assert pids == {os.getpid()}


def test_short_lists_and_errors() -> None:
    assert fork_map(_square_and_pid, [], 2) == []
    assert [v for v, _ in fork_map(_square_and_pid, [3], 2)] == [9]  # too short to fork
    with pytest.raises(ZeroDivisionError):
        fork_map(lambda x: 1 // x, [1, 2, 0, 4] * 10, 2)
