"""A source store over a directory on disk (the default: a checkout).

Every read follows the same steps, and nothing is opened before the path is
known to be safe:

1. normalise the cited path lexically (:mod:`citecal.source._paths`),
2. resolve it with ``os.path.realpath`` and refuse anything outside the
   resolved root (this catches symlinked files *and* directories) or inside
   a git directory (``.git/``, the target of a ``gitdir:`` file),
3. ``stat`` the resolved path: only regular files go on (a FIFO or device is
   never opened, so it cannot block the run),
4. open it with ``O_NOFOLLOW | O_NONBLOCK`` and check with ``fstat`` that
   it is still the same regular file (a swap between the checks is refused),
5. read it whole if it is at most ``max_file_bytes``, otherwise index it by
   streaming (:func:`citecal.source._files.index_file`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from citecal.config import ValidationConfig
from citecal.errors import StoreError
from citecal.source._errors import FileMissing, UnreadableFile, display_path
from citecal.source._files import SourceFile, index_bytes, index_file
from citecal.source._languages import language_for_path
from citecal.source._paths import (
    git_metadata_error,
    inside_git_dir,
    is_within,
    real_root,
    resolve_inside,
)
from citecal.source._store import CachingStore

VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn"})
"""Directory names left out of :meth:`DirectoryStore.list_files`."""

_DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_HAVE_DIR_FD = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class DirectoryStore(CachingStore):
    """Files of a directory tree, read from disk.

    Construction only resolves the root; files are read on first use.

    Raises:
        StoreError: ``root`` does not exist or is not a directory.
    """

    def __init__(self, root: Path, config: ValidationConfig | None = None) -> None:
        root = Path(root)
        if not root.exists():
            raise StoreError(f"repository not found: {root}")
        if not root.is_dir():
            raise StoreError(f"repository is not a directory: {root}")
        super().__init__(str(root), None, config)
        self.root = root
        self._root_real = real_root(root)

    def reopen(self) -> DirectoryStore:
        """A fresh store on the same directory (see :meth:`CachingStore.reopen`)."""
        return DirectoryStore(self.root, self.config)

    def _load(self, path: str) -> SourceFile:
        full = resolve_inside(self._root_real, path)
        if inside_git_dir(self._root_real, full):  # README "Security": .git/ is never evidence
            raise git_metadata_error(path)
        shown = display_path(path)
        try:
            fd, st = self._open_regular(full, path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a loop, or a symlink swapped in after resolving
                resolve_inside(self._root_real, path)  # raises UnsafePath if it now escapes
                raise FileMissing(f"File not found: {shown} (symlink loop)") from None
            raise _os_error(shown, exc) from None
        fh = os.fdopen(fd, "rb")
        try:
            st2 = os.fstat(fd)
            if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(st2.st_mode):
                raise FileMissing(f"File not found: {shown} (changed while being read)")
            language = language_for_path(path)
            if st2.st_size > self.config.max_file_bytes:  # the SourceFile keeps the handle
                return index_file(path, fh, st2.st_size, language, self.config.binary_sniff_bytes)
            data = fh.read()
        except OSError as exc:
            fh.close()
            raise _os_error(shown, exc) from None
        except BaseException:
            fh.close()
            raise
        fh.close()
        return index_bytes(path, data, language, self.config.binary_sniff_bytes)

    def _open_regular(self, full: str, path: str) -> tuple[int, os.stat_result]:
        """Open resolved ``full`` read-only, following no symlink on the way.

        ``full`` has no symlinks left (it went through ``realpath``), so each
        directory below the root is opened with ``O_NOFOLLOW`` relative to its
        parent: a component swapped for a symlink after resolution fails with
        ``ELOOP`` instead of leading outside. The last component is
        ``lstat``-ed before it is opened, so FIFOs and devices are never opened.

        Raises:
            FileMissing: not a regular file.
            OSError: from the system calls (mapped by the caller).
        """
        shown = display_path(path)
        parts = os.path.relpath(full, self._root_real).split(os.sep)
        if parts == ["."]:
            raise FileMissing(f"File not found: {shown} (a directory)")
        if not _HAVE_DIR_FD:  # e.g. Windows: plain path-based checks
            st = os.stat(full, follow_symlinks=False)
            _require_regular(st, shown)
            return os.open(full, _OPEN_FLAGS), st
        dir_fd = os.open(self._root_real, _DIR_FLAGS)
        try:
            for part in parts[:-1]:
                child = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
                os.close(dir_fd)
                dir_fd = child
            st = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
            _require_regular(st, shown)
            return os.open(parts[-1], _OPEN_FLAGS, dir_fd=dir_fd), st
        finally:
            os.close(dir_fd)

    def _list(self) -> list[str]:
        files: list[str] = []
        root = self._root_real
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in VCS_DIRECTORIES]
            rel_dir = os.path.relpath(dirpath, root)
            prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            for name in filenames:
                full = os.path.join(dirpath, name)
                if os.path.islink(full) and not is_within(root, os.path.realpath(full)):
                    continue  # a link out of the repository is not one of its files
                files.append(prefix + name)
        return files


def _require_regular(st: os.stat_result, shown: str) -> None:
    if stat.S_ISLNK(st.st_mode):  # only left by realpath on a loop
        raise OSError(errno.ELOOP, "symlink loop")
    if stat.S_ISDIR(st.st_mode):
        raise FileMissing(f"File not found: {shown} (a directory)")
    if not stat.S_ISREG(st.st_mode):
        raise FileMissing(f"File not found: {shown} (not a regular file)")


def _os_error(shown: str, exc: OSError) -> FileMissing | UnreadableFile:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
        return FileMissing(f"File not found: {shown}")
    if exc.errno == errno.ELOOP:
        return FileMissing(f"File not found: {shown} (symlink loop)")
    reason = exc.strerror or type(exc).__name__
    return UnreadableFile(f"File cannot be read: {shown} ({reason})")
