"""Cited paths → safe, normalised repository-relative paths.

Two layers keep a citation from reading outside the repository:

1. :func:`normalise_cited_path` rejects, *lexically*, anything that names a
   place outside the root whatever the file system holds: absolute paths,
   ``~`` (a home directory), NUL bytes and ``..`` components that climb above
   the root (``a/../../x``).
2. :func:`resolve_inside` resolves the remaining path with
   :func:`os.path.realpath` (every symlink, including symlinked directories)
   and checks that the result is still under the resolved root.

Both run before anything is opened, so an escaping path is never read.

A third rule keeps git's own files out of the evidence (README "Security"):
a ``.git`` component (:func:`normalise_cited_path`), or a resolved path inside
a directory laid out as a git directory (:func:`inside_git_dir`: the target
of a ``gitdir:`` pointer file, a bare repository), is :class:`GitMetadata`
(an :class:`UnsafePath`).
``.git/config`` can hold a credential (``http.extraheader``); it is never
read, put in a result or sent to a judge.
"""

from __future__ import annotations

import os
import posixpath
import re

from citecal.source._errors import FileMissing, GitMetadata, UnsafePath, display_path

_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:(?:[/\\]|$)")


def escape_error(path: str) -> UnsafePath:
    """The error for a path that leaves the repository."""
    return UnsafePath(f"Path escapes the repository: {display_path(path)}")


def git_metadata_error(path: str) -> GitMetadata:
    """The error for a path into git's own files."""
    return GitMetadata(
        f"Path is inside a git directory (.git/), which is never evidence: {display_path(path)}"
    )


def names_git_metadata(path: str) -> bool:
    """True if a component of POSIX ``path`` is ``.git`` (any case: case-insensitive disks)."""
    return any(part.casefold() == ".git" for part in path.split("/"))


def normalise_cited_path(path: str) -> str:
    """Return ``path`` as a normalised repo-relative POSIX path.

    Leading ``./`` and inner ``.``/``..`` components are folded lexically
    (``src/../a.py`` → ``a.py``). Folding ``x/..`` lexically can only keep a
    path *inside* the root, so a symlinked ``x`` cannot be used to escape.

    Raises:
        UnsafePath: absolute path, ``~`` prefix, NUL byte, ``..`` above the
            root, or a ``.git`` component.
        FileMissing: empty path, or a path that names the root itself.
    """
    if "\x00" in path:
        raise escape_error(path)
    if path.startswith(("/", "\\", "~")) or _WINDOWS_DRIVE.match(path):
        # "/etc/passwd", "\\server\share", "~/.ssh/id_rsa", "~user/x", "C:\Windows", "C:/x"
        raise escape_error(path)
    norm = posixpath.normpath(path) if path else ""
    if norm == ".." or norm.startswith(("../", "~")):  # "./~/x" is still a home directory
        raise escape_error(path)
    if norm in ("", "."):
        raise FileMissing(f"File not found: {display_path(path) or '(empty path)'}")
    if names_git_metadata(norm.replace("\\", "/")):
        raise git_metadata_error(path)
    return norm


def real_root(root: str | os.PathLike[str]) -> str:
    """The fully resolved root directory (symlinks followed)."""
    return os.path.realpath(root)


def resolve_inside(root_real: str, rel: str) -> str:
    """Resolve ``rel`` (already normalised) under ``root_real``; refuse escapes.

    Returns:
        The resolved absolute path, guaranteed to lie under ``root_real``.

    Raises:
        UnsafePath: a symlink on the way points outside the root.
    """
    full = os.path.realpath(os.path.join(root_real, rel))
    if not is_within(root_real, full):
        raise escape_error(rel)
    return full


def _is_git_dir(directory: str) -> bool:
    """git's own test, roughly: a ``HEAD`` file and ``objects``/``refs``, or ``commondir``."""
    if not os.path.isfile(os.path.join(directory, "HEAD")):
        return False
    if os.path.isfile(os.path.join(directory, "commondir")):
        return True
    return os.path.isdir(os.path.join(directory, "objects")) and os.path.isdir(
        os.path.join(directory, "refs")
    )


def inside_git_dir(root_real: str, full: str) -> bool:
    """True if resolved ``full`` (under ``root_real``) lies in a git directory.

    A ``.git`` component after symlinks were resolved, or any directory from
    the root down to ``full``'s parent laid out as a git directory (the
    target of a ``.git`` file's ``gitdir:``, a bare repository, the root
    itself when it is one).
    """
    rel = os.path.relpath(full, root_real)
    parts = [] if rel == "." else rel.split(os.sep)
    if names_git_metadata("/".join(parts)):
        return True
    directory = root_real
    for part in ["", *parts[:-1]]:
        directory = os.path.join(directory, part) if part else directory
        if _is_git_dir(directory):
            return True
    return False


def is_within(root_real: str, full: str) -> bool:
    """True if resolved ``full`` is ``root_real`` or lies under it."""
    if full == root_real:
        return True
    prefix = root_real if root_real.endswith(os.sep) else root_real + os.sep
    return full.startswith(prefix)
