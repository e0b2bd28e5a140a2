"""A source store over one revision of a git repository, read without a checkout.

The working tree is never looked at: file contents come from the commit.
Construction resolves the revision to a commit (so an unknown revision fails
at once, in one line); the first read lists the commit's tree once with
``git ls-tree -r -z -l`` and starts **one** long-lived ``git cat-file
--batch`` process that serves every blob of the run. Blobs are requested by
object id, never by path, so file names with newlines or spaces cannot break
the batch protocol.

Symlinks are blobs of mode ``120000`` whose content is the target. They are
followed inside the tree (for files and for directories on the way), and a
target that is absolute or climbs above the repository root is
:class:`UnsafePath`; nothing outside the tree is ever read.

When ``repo`` is a subdirectory of a work tree, paths are relative to that
subdirectory at the revision, as they would be in a checkout.
"""

from __future__ import annotations

import contextlib
import posixpath
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from citecal.config import ValidationConfig
from citecal.errors import StoreError
from citecal.source._errors import FileMissing, SourceFileError, UnsafePath, display_path
from citecal.source._files import SourceFile, index_bytes, read_exact, spool_and_index
from citecal.source._gitcmd import check_git_dir, find_git, is_safe_revision, run_git, start_git
from citecal.source._languages import language_for_path
from citecal.source._store import CachingStore

_SYMLINK = "120000"
_MAX_LINK_HOPS = 40


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: str
    kind: str  # "blob" or "commit" (a submodule)
    oid: str
    size: int


def _first_line(raw: bytes) -> str:
    lines = raw.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else ""


class GitStore(CachingStore):
    """Files of ``repo`` as of revision ``rev`` (branch, tag, sha, ``HEAD~2``, ...).

    Use it as a context manager (or call :meth:`close`) to stop the
    ``git cat-file`` process; it is also stopped when the store is collected.

    Raises:
        PrerequisiteError: git is missing.
        StoreError: ``repo`` is missing, not a git repository, has no commits,
            or ``rev`` does not name a commit in it.
    """

    _proc: subprocess.Popen[bytes] | None = None  # class default: safe in __del__

    def __init__(self, repo: Path, rev: str, config: ValidationConfig | None = None) -> None:
        repo = Path(repo)
        if not repo.exists():
            raise StoreError(f"repository not found: {repo}")
        if not repo.is_dir():
            raise StoreError(f"repository is not a directory: {repo}")
        find_git()  # a missing git is one PrerequisiteError line, before anything else
        self.repo = repo
        check_git_dir(repo)
        prefix = self._check_repository()
        self.commit = self._resolve_commit(rev)
        self._treeish = f"{self.commit}:{prefix}" if prefix else self.commit
        if prefix and self._git_run("cat-file", "-e", revs=(self._treeish,)).returncode != 0:
            raise StoreError(f"{prefix.rstrip('/')} does not exist at revision '{rev}' in {repo}")
        super().__init__(str(repo), rev, config)
        self._lock = threading.RLock()
        self._tree: dict[str, _Entry] | None = None
        self._directories: frozenset[str] | None = None

    def reopen(self) -> GitStore:
        """A fresh store at the same commit, with its own git process."""
        fresh = GitStore(self.repo, self.commit, self.config)
        fresh.rev = self.rev
        return fresh

    # ----------------------------------------------------------------- git calls

    def _git_run(
        self, subcommand: str, *options: str, revs: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess[bytes]:
        return run_git(self.repo, subcommand, *options, revs=revs)

    def _check_repository(self) -> str:
        """Return the path prefix of ``repo`` inside its work tree ("" at the top)."""
        res = self._git_run("rev-parse", "--show-prefix")
        if res.returncode != 0:
            message = _first_line(res.stderr)
            if not message or "not a git repository" in message:
                raise StoreError(f"not a git repository: {self.repo}")
            raise StoreError(f"cannot read git repository {self.repo}: {message}")
        return res.stdout.decode("utf-8", "surrogateescape").strip()

    def _resolve_commit(self, rev: str) -> str:
        unknown = StoreError(f"unknown revision '{rev}' in {self.repo}")
        if not is_safe_revision(rev):
            raise unknown
        res = self._git_run("rev-parse", "--verify", "-q", revs=(rev + "^{commit}",))
        if res.returncode == 0:
            return res.stdout.decode().strip()
        if not self._git_run("rev-list", "-n", "1", "--all").stdout.strip():
            raise StoreError(f"empty git repository (no commits yet): {self.repo}")
        raise unknown

    def _entries(self) -> dict[str, _Entry]:
        if self._tree is None:
            res = self._git_run("ls-tree", "-r", "-z", "-l", "--full-tree", revs=(self._treeish,))
            if res.returncode != 0:
                raise StoreError(f"git ls-tree failed in {self.repo}: {_first_line(res.stderr)}")
            tree: dict[str, _Entry] = {}
            for record in res.stdout.split(b"\x00"):
                if not record:
                    continue
                meta, _, raw_path = record.partition(b"\t")
                mode, kind, oid, size = meta.decode().split()
                path = raw_path.decode("utf-8", "surrogateescape")
                tree[path] = _Entry(mode, kind, oid, int(size) if size != "-" else 0)
            self._tree = tree
        return self._tree

    def _is_directory(self, path: str) -> bool:
        if self._directories is None:
            dirs: set[str] = set()
            for name in self._entries():
                parent = posixpath.dirname(name)
                while parent and parent not in dirs:
                    dirs.add(parent)
                    parent = posixpath.dirname(parent)
            self._directories = frozenset(dirs)
        return path in self._directories

    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = start_git(self.repo, "cat-file", "--batch")
        return self._proc

    def _request(self, oid: str) -> tuple[IO[bytes], int]:
        """Ask the batch process for a blob; return its stream positioned at the content."""
        proc = self._batch()
        assert proc.stdin is not None and proc.stdout is not None  # set by PIPE
        try:
            proc.stdin.write(oid.encode("ascii") + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
        except OSError as exc:
            raise self._broken(exc) from None
        if len(header) != 3 or header[1] != b"blob":
            raise self._broken(f"unexpected answer {b' '.join(header)!r} for {oid}")
        return proc.stdout, int(header[2])

    def _broken(self, why: object) -> StoreError:
        self._stop()
        return StoreError(f"git cat-file failed in {self.repo}: {why}")

    def _blob_bytes(self, oid: str) -> bytes:
        stream, size = self._request(oid)
        data = read_exact(stream, size)
        if len(data) != size or stream.read(1) != b"\n":
            raise self._broken(f"short read of {oid}")
        return data

    # ----------------------------------------------------------------- reading

    def _load(self, path: str) -> SourceFile:
        with self._lock:
            entry = self._resolve(path, path, 0)
            if entry.kind != "blob":
                raise FileMissing(f"File not found: {display_path(path)} (a submodule)")
            return self._read_blob(path, entry)

    def _read_blob(self, path: str, entry: _Entry) -> SourceFile:
        language = language_for_path(path)
        sniff_bytes = self.config.binary_sniff_bytes
        if entry.size <= self.config.max_file_bytes:
            return index_bytes(path, self._blob_bytes(entry.oid), language, sniff_bytes)
        stream, size = self._request(entry.oid)
        error: SourceFileError | None = None
        result: SourceFile | None = None
        try:
            result = spool_and_index(path, stream, size, language, sniff_bytes)
        except SourceFileError as exc:  # the blob was drained: the protocol is in sync
            error = exc
        except (OSError, EOFError) as exc:
            raise self._broken(exc) from None
        if stream.read(1) != b"\n":
            raise self._broken(f"short read of {entry.oid}")
        if error is not None:
            raise error
        assert result is not None
        return result

    def _resolve(self, path: str, cited: str, hops: int) -> _Entry:
        """The tree entry at ``path``, following symlinks (files and directories) in the tree."""
        shown = display_path(cited)
        if hops > _MAX_LINK_HOPS:
            raise FileMissing(f"File not found: {shown} (symlink loop)")
        if path == ".":
            raise FileMissing(f"File not found: {shown} (a directory)")
        tree = self._entries()
        entry = tree.get(path)
        if entry is not None:
            if entry.mode != _SYMLINK:
                return entry
            return self._resolve(self._follow(path, entry, cited), cited, hops + 1)
        parts = path.split("/")
        for i in range(1, len(parts)):
            above = tree.get("/".join(parts[:i]))
            if above is None:
                continue
            if above.mode != _SYMLINK:
                break  # a file used as a directory
            target = self._follow("/".join(parts[:i]), above, cited)
            rest = posixpath.normpath(posixpath.join(target, *parts[i:]))
            if rest == ".." or rest.startswith("../"):
                raise _escape(cited, target)
            return self._resolve(rest, cited, hops + 1)
        if self._is_directory(path):
            raise FileMissing(f"File not found: {shown} (a directory)")
        raise FileMissing(f"File not found: {shown}")

    def _follow(self, link: str, entry: _Entry, cited: str) -> str:
        target = self._blob_bytes(entry.oid).decode("utf-8", "surrogateescape")
        if target.startswith("/") or "\x00" in target:
            raise _escape(cited, target)
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
        if joined == ".." or joined.startswith("../"):
            raise _escape(cited, target)
        return joined

    def _list(self) -> list[str]:
        with self._lock:
            files = []
            for path, entry in self._entries().items():
                if entry.mode != _SYMLINK:
                    if entry.kind == "blob":
                        files.append(path)
                    continue
                with contextlib.suppress(SourceFileError):
                    if self._resolve(path, path, 0).kind == "blob":
                        files.append(path)
            return files

    # ----------------------------------------------------------------- lifetime

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def close(self) -> None:
        """Stop the ``git cat-file`` process and release large-file handles (idempotent)."""
        self._stop()
        super().close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop()


def _escape(cited: str, target: str) -> UnsafePath:
    return UnsafePath(
        f"Path escapes the repository: {display_path(cited)} (symlink to {display_path(target)})"
    )
