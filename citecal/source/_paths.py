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
"""

from __future__ import annotations

import os
import posixpath
import re

from citecal.source._errors import FileMissing, UnsafePath, display_path

_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:(?:[/\\]|$)")


def escape_error(path: str) -> UnsafePath:
    """The error for a path that leaves the repository."""
    return UnsafePath(f"Path escapes the repository: {display_path(path)}")


def normalise_cited_path(path: str) -> str:
    """Return ``path`` as a normalised repo-relative POSIX path.

    Leading ``./`` and inner ``.``/``..`` components are folded lexically
    (``src/../a.py`` → ``a.py``). Folding ``x/..`` lexically can only keep a
    path *inside* the root, so a symlinked ``x`` cannot be used to escape.

    Raises:
        UnsafePath: absolute path, ``~`` prefix, NUL byte, or ``..`` above the root.
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


def is_within(root_real: str, full: str) -> bool:
    """True if resolved ``full`` is ``root_real`` or lies under it."""
    if full == root_real:
        return True
    prefix = root_real if root_real.endswith(os.sep) else root_real + os.sep
    return full.startswith(prefix)
