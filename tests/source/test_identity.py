"""The repository's stable identity kept with each annotation record (README "Annotation table")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from citecal.source import repository_identity


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def make_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "shop"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("x = 1\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    return repo, git(repo, "rev-parse", "HEAD")


def test_a_repository_without_a_remote_is_its_absolute_path_and_commit(tmp_path: Path) -> None:
    repo, head = make_repo(tmp_path)
    assert repository_identity(str(repo)) == (str(repo.resolve()), head)
    assert repository_identity(str(repo), "HEAD") == (str(repo.resolve()), head)


def test_the_remote_url_without_credentials_and_the_subdirectory(tmp_path: Path) -> None:
    repo, head = make_repo(tmp_path)
    git(repo, "remote", "add", "origin", "https://user:token@example.org/team/shop.git")
    assert repository_identity(str(repo)) == ("https://example.org/team/shop.git", head)
    assert repository_identity(str(repo / "src")) == ("https://example.org/team/shop.git#src", head)


def test_a_plain_directory_and_a_missing_path(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    # tmp_path is outside any git work tree: the absolute path, no commit
    assert repository_identity(str(plain)) == (str(plain.resolve()), None)
    assert repository_identity("elsewhere/shop", "abc") == ("elsewhere/shop", None)
