"""The one place citecal runs git (README "Security": git).

Every git process of citecal is started here, so three rules hold for all of
them:

1. **Revisions and paths are never options.** A revision comes from the
   command line or from a report's revision line (``<!-- citecal-rev: ... -->``),
   a path from a citation: text citecal does not trust. They are passed after
   ``--end-of-options`` (revisions) and ``--`` (paths), and a revision that
   starts with ``-`` (or holds a NUL or newline) is refused before git runs,
   so ``--output=victim.txt`` can never reach git as ``--output``.
2. **The evaluated repository configures no program.** Its ``.git/config``
   is written by whoever wrote the repository; the ``-c`` overrides below
   turn off everything in it that runs a program or reaches the network
   (``core.fsmonitor``, hooks, the pager, external diff drivers and textconv,
   promisor fetches and every transport), the system config is not read
   (``GIT_CONFIG_NOSYSTEM``), and no ``GIT_*`` variable of the caller's
   environment (``GIT_DIR``, ``GIT_EXTERNAL_DIFF``, ``GIT_CONFIG_PARAMETERS``
   ...) reaches git. citecal only reads objects of commits: no command it
   runs touches the work tree or the index, so clean/smudge filters never run.
3. **git reads the repository directory's own repository.** A ``.git`` file
   (``gitdir: ../elsewhere/.git``) that points out of the directory holding
   it is not followed (:func:`check_git_dir`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from citecal.errors import PrerequisiteError, StoreError

SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    f"core.hooksPath={os.devnull}",
    "core.pager=cat",
    "credential.helper=",
    "protocol.allow=never",
    "submodule.recurse=false",
    "log.showSignature=false",
)
"""``-c`` overrides given to every git call: they win over the repository's config."""

_SUBCOMMAND_FLAGS: dict[str, tuple[str, ...]] = {
    # external diff drivers (diff.external, diff.<driver>.command) and textconv run programs
    "diff": ("--no-ext-diff", "--no-textconv", "--no-color"),
    "grep": ("--no-textconv", "--no-recurse-submodules"),
}
"""Flags added after the subcommand name: per-command switches for the same rule."""

_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "LC_ALL": "C",
    "LANGUAGE": "C",
}


class UnsafeGitArgument(StoreError):
    """A revision or path that git could read as an option; it is never passed."""


def find_git() -> str:
    """The git executable.

    Raises:
        PrerequisiteError: git is not on PATH.
    """
    git = shutil.which("git")
    if git is None:
        raise PrerequisiteError("git is not installed; it is needed to read a revision (--rev)")
    return git


def git_env() -> dict[str, str]:
    """The environment of a git process: the caller's without ``GIT_*``, plus the rules above."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_ENV)
    return env


def is_safe_revision(rev: str) -> bool:
    """True if ``rev`` may be handed to git as a revision (never an option, one line)."""
    return bool(rev) and not rev.startswith("-") and "\n" not in rev and "\x00" not in rev


def git_command(
    repo: Path,
    subcommand: str,
    *options: str,
    revs: Sequence[str] = (),
    paths: Sequence[str] | None = None,
) -> list[str]:
    """The argument vector of one git call.

    ``options`` are citecal's own (literals, and values of options such as
    ``-e PATTERN``); ``revs`` go after ``--end-of-options``, ``paths`` after
    ``--``.

    Raises:
        UnsafeGitArgument: a revision starts with ``-`` or holds a NUL or
            newline, or a path holds a NUL.
        PrerequisiteError: git is not installed.
    """
    for rev in revs:
        if not is_safe_revision(rev):
            raise UnsafeGitArgument(f"not a revision: {rev!r} (a revision never starts with '-')")
    for path in paths or ():
        if "\x00" in path:
            raise UnsafeGitArgument(f"not a path: {path!r}")
    argv = [find_git(), "--no-pager"]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    argv += ["-C", str(repo), subcommand, *_SUBCOMMAND_FLAGS.get(subcommand, ()), *options]
    if revs:
        argv += ["--end-of-options", *revs]
    if paths is not None:
        argv += ["--", *paths]
    return argv


def run_git(
    repo: Path,
    subcommand: str,
    *options: str,
    revs: Sequence[str] = (),
    paths: Sequence[str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command in ``repo`` and capture its output (see :func:`git_command`).

    Raises:
        UnsafeGitArgument, PrerequisiteError: from :func:`git_command`.
        subprocess.TimeoutExpired: ``timeout`` passed.
    """
    return subprocess.run(
        git_command(repo, subcommand, *options, revs=revs, paths=paths),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=git_env(),
        check=False,
        timeout=timeout,
    )


def start_git(repo: Path, subcommand: str, *options: str) -> subprocess.Popen[bytes]:
    """A long-lived git process (``cat-file --batch``) with pipes for stdin and stdout."""
    return subprocess.Popen(
        git_command(repo, subcommand, *options),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_env(),
    )


def check_git_dir(repo: Path) -> None:
    """Refuse a ``.git`` file that points out of the directory holding it.

    git finds a repository by looking for ``.git`` in ``repo`` and its
    parents; a ``.git`` *file* (``gitdir: ../elsewhere/.git``) sends it to
    another repository, whose objects would then be read as this one's. The
    nearest ``.git`` entry is checked: a directory is fine, a file must point
    inside the directory that holds it.

    Raises:
        StoreError: the pointer leads out of its directory.
    """
    here = Path(os.path.realpath(repo))
    for directory in (here, *here.parents):
        dot_git = directory / ".git"
        if dot_git.is_symlink():
            target = os.path.realpath(dot_git)
        elif dot_git.is_file():
            target = _pointer_target(dot_git)
        elif dot_git.exists():
            return
        else:
            continue
        inside = str(directory).rstrip(os.sep) + os.sep
        if not target.startswith(inside):
            raise StoreError(
                f"{dot_git} points to a git directory outside {directory} ({target}); "
                "citecal does not follow it"
            )
        return


def _pointer_target(dot_git: Path) -> str:
    """The resolved directory a ``gitdir:`` file names (an unreadable file names nothing)."""
    try:
        with dot_git.open("rb") as fh:
            first = fh.read(4096).split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
    except OSError:
        return os.sep  # not readable: treat as pointing nowhere inside
    name = first.removeprefix("gitdir:").strip()
    return os.path.realpath(dot_git.parent / name)


__all__ = [
    "SAFE_CONFIG",
    "UnsafeGitArgument",
    "check_git_dir",
    "find_git",
    "git_command",
    "git_env",
    "is_safe_revision",
    "run_git",
    "start_git",
]
