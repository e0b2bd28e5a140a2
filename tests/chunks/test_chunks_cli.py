"""``citecal chunks`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.chunks import ChunksResult
from citecal.cli import cli


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nOne sentence. Two sentences.\n")
    (tmp_path / "docs" / "b.py").write_text("def f():\n    return 1\n")
    (tmp_path / "docs" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    (tmp_path / "docs" / ".hidden.md").write_text("Hidden.\n")
    (tmp_path / "docs" / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_directory_json(tree: Path) -> None:
    result = CliRunner().invoke(cli, ["chunks", "docs", "-f", "json"])
    assert result.exit_code == 0, result.output
    parsed = ChunksResult.model_validate_json(result.stdout)
    assert parsed.sources == ["docs/a.md", "docs/b.py"]
    assert [c.id for c in parsed.chunks] == [
        "docs/a.md:S:0",
        "docs/a.md:S:1",
        "docs/a.md:S:2",
        "docs/b.py:1-2",
    ]
    assert result.stderr.startswith(
        "warning: skipped docs/latin1.txt: source file is not valid UTF-8"
    )


def test_jsonl_and_output_file(tree: Path) -> None:
    result = CliRunner().invoke(cli, ["chunks", "docs/a.md", "-f", "jsonl", "-o", "c.jsonl"])
    assert result.exit_code == 0
    assert result.stderr == "wrote 3 chunks of 1 files to c.jsonl\n"
    rows = [json.loads(line) for line in (tree / "c.jsonl").read_text().splitlines()]
    assert [r["content"] for r in rows] == ["# A", "One sentence.", "Two sentences."]
    assert rows[1]["previous_id"] == "docs/a.md:S:0" and rows[1]["next"] == "Two sentences."


def test_table(tree: Path) -> None:
    result = CliRunner().invoke(cli, ["chunks", "docs/b.py"])
    assert "docs/b.py:1-2" in result.stdout and "definition f" in result.stdout


def test_errors_are_one_line(tree: Path) -> None:
    missing = CliRunner().invoke(cli, ["chunks", "nope.md"])
    assert (missing.exit_code, missing.stderr) == (2, "Error: source file not found: nope.md\n")
    latin = CliRunner().invoke(cli, ["chunks", "docs/latin1.txt"])
    assert latin.exit_code == 2
    assert latin.stderr.startswith("Error: source file is not valid UTF-8 (docs/latin1.txt")
