"""open_store: the right store, or one StoreError line for a bad repository."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.config import ValidationConfig
from citecal.errors import InputError, PrerequisiteError, StoreError
from citecal.source import DirectoryStore, GitStore, open_store

GitRun = Callable[..., str]


def test_directory_by_default(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    config = ValidationConfig(max_file_bytes=1234)
    with open_store(tmp_path, config=config) as store:
        assert isinstance(store, DirectoryStore)
        assert store.config is config
        assert store.read("a.py").line_count == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_revision(tmp_path: Path, git: GitRun) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "a.py").write_text("x = 2\ny = 3\n")
    with open_store(tmp_path, "HEAD") as store:
        assert isinstance(store, GitStore)
        assert store.read("a.py").text == "x = 1\n"


@pytest.mark.parametrize("rev", [None, "HEAD"])
def test_missing_repository(tmp_path: Path, rev: str | None) -> None:
    with pytest.raises(StoreError) as info:
        open_store(tmp_path / "missing", rev)
    assert str(info.value) == f"repository not found: {tmp_path / 'missing'}"
    assert isinstance(info.value, InputError)  # the CLI exits 2


@pytest.mark.parametrize("rev", [None, "HEAD"])
def test_repository_is_a_file(tmp_path: Path, rev: str | None) -> None:
    (tmp_path / "report.md").write_text("# r\n")
    with pytest.raises(StoreError, match=r"^repository is not a directory: .*report\.md$"):
        open_store(tmp_path / "report.md", rev)


def test_rev_on_a_plain_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as info:
        open_store(tmp_path, "main")
    assert str(info.value) == f"not a git repository: {tmp_path}"


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_unknown_revision(tmp_path: Path, git: GitRun) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-q", "-m", "one")
    with pytest.raises(StoreError) as info:
        open_store(tmp_path, "xyz")
    assert str(info.value) == f"unknown revision 'xyz' in {tmp_path}"


def test_git_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(PrerequisiteError, match=r"^git is not installed"):
        open_store(tmp_path, "HEAD")
    assert isinstance(open_store(tmp_path), DirectoryStore)  # no git needed without --rev
