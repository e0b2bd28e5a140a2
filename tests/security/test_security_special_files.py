"""Inputs that are not regular files, and addresses that are not addresses (README "Security").

A named pipe given as a report blocks a run forever (nothing writes to it) or
feeds it whatever a writer sends; a device (``/dev/zero``) never ends. Reports
must be regular files: anything else is refused before it is opened for
reading. Each FIFO test keeps a writer waiting so that a run that did read the
pipe gets a report (and the test fails on the assertion, not on a hang).
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from citecal.batch import BatchOutput, BatchTask, JobSettings, ManifestEntry, run_task
from citecal.cli import cli
from citecal.config import config_layers

REPORT = "The `add` function returns a sum [app.py:1-2].\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    return root


@pytest.fixture
def special(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """(path, kind word in the error) of a FIFO with a waiting writer, a device or a socket."""
    kind = request.param
    if kind == "device":
        yield Path(os.devnull), "a character device"
        return
    if kind == "socket":
        with tempfile.TemporaryDirectory(dir="/tmp") as short:  # AF_UNIX paths are short
            path = Path(short) / "s"
            with socket.socket(socket.AF_UNIX) as s:
                s.bind(str(path))
                yield path, "a socket"
        return
    path = tmp_path / "report.md"
    os.mkfifo(path)

    def writer() -> None:
        with path.open("w") as fh:  # blocks until a reader opens the pipe
            fh.write(REPORT)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    yield path, "a FIFO"
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # release a writer nobody read
    time.sleep(0.05)
    os.close(fd)
    thread.join(5)


KINDS = ["fifo", "device", "socket"]


@pytest.mark.parametrize("special", KINDS, indirect=True)
@pytest.mark.parametrize("command", ["eval", "correct"])
def test_a_report_that_is_not_a_regular_file_is_refused(
    special: tuple[Path, str], repo: Path, command: str
) -> None:
    path, kind = special
    result = CliRunner().invoke(
        cli,
        [command, str(path), "--repo", str(repo), "--no-llm", "-f", "json"],
        env={"OPENAI_API_KEY": "", "CITECAL_CACHE_PATH": ""},
    )
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: report is {kind}, not a regular file: {path} "
        "(citecal reads input only from regular files)\n"
    )


@pytest.mark.parametrize("special", ["fifo"], indirect=True)
def test_an_eval_batch_row_that_is_a_fifo_is_an_error_row(
    special: tuple[Path, str], repo: Path, tmp_path: Path
) -> None:
    path, kind = special
    out = tmp_path / "out"
    BatchOutput(out).create()
    entry = ManifestEntry(id="r1", report=str(path), repo=str(repo), rev=None, row=1)
    job = JobSettings(
        output=str(out),
        below=config_layers(None, None, include_env=False),
        above=[],
        overrides={},
        no_llm=True,
    )
    result = run_task(BatchTask(key="k", repo=str(repo), rev=None, entries=(entry,)), job)
    assert (result.reports, result.errors) == (0, 1)
    errors = pq.read_table(out / "errors.parquet").to_pylist()
    assert [e["error"] for e in errors] == [
        f"report is {kind}, not a regular file: {path} "
        "(citecal reads input only from regular files)"
    ]


@pytest.mark.parametrize("special", ["fifo"], indirect=True)
def test_an_eval_batch_manifest_that_is_a_fifo_is_refused(
    special: tuple[Path, str], tmp_path: Path
) -> None:
    path, kind = special
    manifest = path.with_name("m.csv")
    path.rename(manifest)  # the FIFO, named like a manifest
    result = CliRunner().invoke(
        cli, ["eval-batch", str(manifest), "-o", str(tmp_path / "out"), "--no-llm"]
    )
    manifest.rename(path)  # for the fixture's clean-up
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: manifest is {kind}, not a regular file: {manifest} "
        "(citecal reads input only from regular files)\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address", ["not a url", "localhost:8786", "tcp://host", "foo://x:1"])
def test_a_scheduler_that_is_not_an_address_fails_at_once(
    address: str, repo: Path, tmp_path: Path
) -> None:
    manifest = tmp_path / "m.csv"
    (tmp_path / "r.md").write_text(REPORT)
    manifest.write_text(f"report,repo\nr.md,{repo}\n")
    t0 = time.monotonic()
    result = CliRunner().invoke(
        cli,
        ["eval-batch", str(manifest), "-o", str(tmp_path / "out"), "--scheduler", address],
        env={"OPENAI_API_KEY": ""},
    )
    assert time.monotonic() - t0 < 10
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --scheduler {address!r} is not a Dask scheduler address "
        "(e.g. tcp://10.0.0.5:8786)\n"
    )
    assert not (tmp_path / "out").exists()
