"""Fixtures for source-store tests: real git repositories made in tmp_path."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

GitRun = Callable[..., str]


@pytest.fixture
def git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRun:
    """Run git in a repo with an isolated config; returns stdout."""
    home = tmp_path / "home"
    home.mkdir()
    for key, value in {
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }.items():
        monkeypatch.setenv(key, value)

    def run(repo: Path, *args: str) -> str:
        res = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, check=True, env=os.environ.copy()
        )
        return res.stdout.decode()

    return run


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _cat_file_children() -> list[str]:
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\x00", b" ").decode()
        except OSError:
            continue
        ppid = stat.rsplit(")", 1)[1].split()[1]
        if ppid == me and "cat-file" in cmdline:
            found.append(cmdline)
    return found


@pytest.fixture
def write() -> Callable[[Path, dict[str, str | bytes]], None]:
    """Create files under a root from {relative path: content}."""
    return _write


@pytest.fixture
def cat_file_children() -> Callable[[], list[str]]:
    """Command lines of this process's children that run ``git cat-file``."""
    return _cat_file_children
