"""Package size buckets for the ground-truth figures (issue 31)."""

from __future__ import annotations

from pathlib import Path

from citecal.bench._size import LARGE_LINES, SMALL_LINES, code_lines, package_size, size_of


def test_size_buckets_at_their_edges() -> None:
    assert size_of(0) == "small"
    assert size_of(SMALL_LINES - 1) == "small"
    assert size_of(SMALL_LINES) == "medium"
    assert size_of(LARGE_LINES - 1) == "medium"
    assert size_of(LARGE_LINES) == "large"


def test_only_code_lines_count(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "src" / "b.clj").write_text("(ns b)\n")
    (tmp_path / "README.md").write_text("# many\n" * 10_000)
    (tmp_path / "data.json").write_text("{}\n" * 10_000)
    assert code_lines(tmp_path) == 3
    assert package_size(tmp_path) == "small"
