"""A stable identity for the evaluated repository: where it lives and which commit was read.

The annotation table keeps this next to each record (README "Annotation
table") so that a claim–code pair can be found again after the checkout
moved: a path given as ``../shop`` means nothing on another machine, a
remote URL plus a commit does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from citecal.errors import PrerequisiteError, StoreError
from citecal.source._gitcmd import check_git_dir, is_safe_revision, run_git


def _git(repo: Path, subcommand: str, *options: str, revs: tuple[str, ...] = ()) -> str | None:
    try:
        res = run_git(repo, subcommand, *options, revs=revs, timeout=10)
    except (OSError, subprocess.TimeoutExpired, PrerequisiteError, StoreError):
        return None
    out = res.stdout.decode("utf-8", "surrogateescape").strip()
    return out if res.returncode == 0 and out else None


def _without_credentials(url: str) -> str:
    """``url`` without a user name or token (``https://tok@host/x`` → ``https://host/x``)."""
    parts = urlsplit(url)
    if not parts.netloc or "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def repository_identity(repo: str, rev: str | None = None) -> tuple[str, str | None]:
    """(remote URL or absolute path, commit sha or None) of the repository at ``repo``.

    In a git work tree with an ``origin`` remote the identity is that URL
    (credentials removed, a subdirectory after ``#``), else the absolute path;
    the commit is ``rev`` (or ``HEAD``) resolved. A path that does not exist
    here is returned as given, without a commit.
    """
    path = Path(repo)
    if not path.is_dir():
        return repo, None
    absolute = path.resolve()
    try:
        check_git_dir(absolute)
    except StoreError:
        return str(absolute), None
    if rev is not None and not is_safe_revision(rev):
        rev = None
    commit = _git(absolute, "rev-parse", "--verify", "-q", revs=(f"{rev or 'HEAD'}^{{commit}}",))
    if commit is None:
        return str(absolute), None
    remote = _git(absolute, "config", "--get", "remote.origin.url")
    if remote is None:
        return str(absolute), commit
    prefix = (_git(absolute, "rev-parse", "--show-prefix") or "").rstrip("/")
    url = _without_credentials(remote)
    return (f"{url}#{prefix}" if prefix else url), commit
