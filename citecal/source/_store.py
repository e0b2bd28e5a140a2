"""The source-store protocol and the per-run cache every store shares.

A store answers two questions about the evaluated repository: "give me this
file, indexed by line" (:meth:`SourceStore.read`) and "which files exist"
(:meth:`SourceStore.list_files`, for relocating citations later). Reading is
cached per store instance, failures included: a report that cites the same
missing file a hundred times costs one ``stat``, and a file cited from ten
places is read and indexed once.
"""

from __future__ import annotations

import abc
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from citecal.config import ValidationConfig
from citecal.source._errors import SourceFileError
from citecal.source._files import SourceFile
from citecal.source._paths import normalise_cited_path


@runtime_checkable
class SourceStore(Protocol):
    """Read-only access to the files of one repository (directory or git revision)."""

    name: str
    """Display name: the repository path as given."""
    rev: str | None
    """The git revision as given, or None for a directory."""

    def read(self, path: str) -> SourceFile:
        """The file at cited ``path``; raises a :class:`SourceFileError` subclass."""
        ...

    def list_files(self) -> list[str]:
        """Every file of the repository as a sorted repo-relative POSIX path."""
        ...


class CachingStore(abc.ABC):
    """Base of the bundled stores: path normalisation, caching, context management.

    Subclasses implement :meth:`_load` (read one normalised path, uncached)
    and :meth:`_list` (all files, uncached).
    """

    def __init__(self, name: str, rev: str | None, config: ValidationConfig | None) -> None:
        self.name = name
        self.rev = rev
        self.config = config if config is not None else ValidationConfig()
        self._normalised: dict[str, str | SourceFileError] = {}
        self._files: dict[str, SourceFile | SourceFileError] = {}
        self._listing: list[str] | None = None

    def read(self, path: str) -> SourceFile:
        """The file at ``path`` as cited (``./a.py`` and ``a.py`` share one entry).

        Raises:
            FileMissing, UnsafePath, BinaryFile, UndecodableFile, UnreadableFile:
                cached too, so the same error comes back without touching the store.
        """
        key = self._normalised.get(path)
        if key is None:
            try:
                key = normalise_cited_path(path)
            except SourceFileError as exc:
                key = exc
            self._normalised[path] = key
        if isinstance(key, SourceFileError):
            raise _fresh(key)
        entry = self._files.get(key)
        if entry is None:
            try:
                entry = self._load(key)
            except SourceFileError as exc:
                entry = exc
            self._files[key] = entry
        if isinstance(entry, SourceFileError):
            raise _fresh(entry)
        return entry

    def list_files(self) -> list[str]:
        """Every file of the repository, sorted (computed once)."""
        if self._listing is None:
            self._listing = sorted(self._list())
        return list(self._listing)

    @abc.abstractmethod
    def reopen(self) -> Self:
        """A fresh store over the same repository with an empty cache.

        Worker processes call this after a fork: file handles and the git
        batch process of the parent must never be shared between processes.
        """

    @abc.abstractmethod
    def _load(self, path: str) -> SourceFile:
        """Read and index normalised ``path``."""

    @abc.abstractmethod
    def _list(self) -> list[str]:
        """All files, any order."""

    def close(self) -> None:
        """Release the file handles of large files (idempotent).

        Large files handed out before stop serving ``lines``; reading them
        again from this store indexes them anew.
        """
        for key, entry in list(self._files.items()):
            if isinstance(entry, SourceFile):
                close = getattr(entry._content, "close", None)
                if close is not None:
                    close()
                    del self._files[key]

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        rev = f", rev={self.rev!r}" if self.rev is not None else ""
        return f"{type(self).__name__}({self.name!r}{rev})"


def _fresh(error: SourceFileError) -> SourceFileError:
    """A new instance of a cached error, so tracebacks never pile up on one object."""
    return type(error)(*error.args)
