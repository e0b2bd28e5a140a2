"""Choose and open the store for a run: a directory, or a git revision of it."""

from __future__ import annotations

from pathlib import Path

from citecal.config import ValidationConfig
from citecal.errors import StoreError
from citecal.source._directory import DirectoryStore
from citecal.source._git import GitStore
from citecal.source._store import CachingStore


def open_store(
    repo: Path, rev: str | None = None, config: ValidationConfig | None = None
) -> CachingStore:
    """The store for ``repo``: its files on disk, or its files at git revision ``rev``.

    The result is a :class:`~citecal.source.SourceStore` and a context
    manager (``with open_store(...) as store:``) that releases its resources.

    Raises:
        StoreError: ``repo`` is missing or not a directory; with ``rev``: not a
            git repository, no commits, or an unknown revision.
        PrerequisiteError: ``rev`` given and git is not installed.
    """
    repo = Path(repo)
    if not repo.exists():
        raise StoreError(f"repository not found: {repo}")
    if not repo.is_dir():
        raise StoreError(f"repository is not a directory: {repo}")
    if rev is None:
        return DirectoryStore(repo, config)
    return GitStore(repo, rev, config)
