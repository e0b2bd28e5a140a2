"""Walks and label sets stay inside the directories they were given (README "Security").

``citecal chunks DIR`` followed a symlink out of DIR (and into ``.git/``) and
read a FIFO (blocking when nothing writes to it); a ground-truth label set's
``report`` and ``version`` named files outside the dataset and sources
directories.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli

SECRET = "The secret of the outside world is kept here."


def test_chunks_stays_in_the_walked_directory_and_never_reads_a_fifo(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "inside.md").write_text("# Inside\n\nThe cache is kept in SQLite.\n")
    (tmp_path / "outside.md").write_text(SECRET + "\n")
    (docs / "out.md").symlink_to("../outside.md")
    (docs / ".git").mkdir()
    (docs / ".git" / "description.md").write_text(SECRET + "\n")
    (docs / "desc.md").symlink_to(".git/description.md")
    fifo = docs / "pipe.md"
    os.mkfifo(fifo)

    def writer() -> None:  # a run that reads the pipe gets the secret (and the test fails)
        with fifo.open("w") as fh:
            fh.write(SECRET + "\n")

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        t0 = time.monotonic()
        res = CliRunner().invoke(cli, ["chunks", str(docs), "-f", "json"])
        assert time.monotonic() - t0 < 30
    finally:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # release a writer nobody read
        time.sleep(0.05)
        os.close(fd)
        thread.join(5)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["sources"] == [f"{docs.as_posix()}/inside.md"]
    assert SECRET not in res.stdout
    assert f"warning: skipped {docs.as_posix()}/pipe.md: source file is a FIFO" in res.stderr


def test_chunks_refuses_a_file_in_a_git_directory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[http]\n\textraheader = AUTHORIZATION: x\n")
    res = CliRunner().invoke(cli, ["chunks", str(tmp_path / ".git" / "config")])
    assert res.exit_code == 2
    assert "which is never evidence" in res.stderr and "extraheader" not in res.output


def _label_set(root: Path, **fields: str) -> Path:
    d = root / "ds" / "tiny"
    d.mkdir(parents=True)
    (d / "report.md").write_text("The `load` function takes `path` [a.py:1-2].\n")
    labels = {
        "schema_version": 1,
        "package": "tiny",
        "version": "1",
        "language": "python",
        "citations": [
            {
                "id": "t-1",
                "citation": "[a.py:1-2]",
                "claim": "c",
                "structural": "valid",
                "human_score": 3,
                "category": "literal",
                "difficulty": "easy",
                "rationale": "r",
            }
        ],
        **fields,
    }
    (d / "labels.json").write_text(json.dumps(labels))
    src = root / "src" / "tiny-1"
    src.mkdir(parents=True)
    (src / "a.py").write_text("def load(path):\n    return open(path).read()\n")
    return root


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"report": "../../outside.md"}, "report '../../outside.md' leads out of"),
        ({"report": "/etc/hostname"}, "report '/etc/hostname' leads out of"),
        ({"version": "1/../../../elsewhere"}, "version must be a plain version string"),
        ({"version": "../x"}, "version must be a plain version string"),
    ],
    ids=["report-dotdot", "report-absolute", "version-slash", "version-dotdot"],
)
def test_bench_label_set_paths_stay_in_the_dataset_and_sources(
    tmp_path: Path, fields: dict[str, str], message: str
) -> None:
    root = _label_set(tmp_path, **fields)
    (tmp_path / "outside.md").write_text("The `load` function takes `path` [a.py:1-2].\n")
    (tmp_path / "elsewhere" / "a.py").parent.mkdir()
    (tmp_path / "elsewhere" / "a.py").write_text("def load(path):\n    return 1\n")
    res = CliRunner().invoke(
        cli,
        ["bench", "groundtruth", "--dataset", str(root / "ds"), "--sources", str(root / "src"),
         "--no-llm", "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert message in res.stderr and "Traceback" not in res.output


def test_bench_report_symlinked_out_of_the_dataset_is_refused(tmp_path: Path) -> None:
    root = _label_set(tmp_path, report="linked.md")
    (tmp_path / "outside.md").write_text("The `load` function takes `path` [a.py:1-2].\n")
    (root / "ds" / "tiny" / "linked.md").symlink_to(tmp_path / "outside.md")
    res = CliRunner().invoke(
        cli,
        ["bench", "groundtruth", "--dataset", str(root / "ds"), "--sources", str(root / "src"),
         "--no-llm"],
    )  # fmt: skip
    assert res.exit_code == 2 and "report 'linked.md' leads out of" in res.stderr
