"""Fixtures for eval-batch: a 2-worker LocalCluster shared by the module, generated batches."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_factories import Row, make_batch, write_manifest


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A LocalCluster of 2 worker processes (one thread each); yields its address."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    ) as lc:
        yield lc.scheduler_address


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Row]]:
    """Twelve reports over three repositories (git tag and HEAD too) and two bad rows."""
    root = tmp_path_factory.mktemp("batch")
    rows = make_batch(root)
    bad = [
        {"id": "missing-report", "report": "reports/nope.md", "repo": "repos/alpha", "rev": ""},
        {"id": "bad-rev", "report": "reports/alpha-dir-0.md", "repo": "repos/gamma", "rev": "v9"},
    ]
    return write_manifest(root / "manifest.csv", rows, bad), rows
