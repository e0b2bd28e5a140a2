"""Per-file errors raised by source stores.

These are *per-citation* problems: structural validation turns each into an
invalid :class:`~citecal.models.ValidationResult` (``failure_type
"invalid_file"``) and the run goes on. Problems with the store as a whole
(missing repository, unknown revision) are :class:`citecal.errors.StoreError`
instead, which stop the run with one line.

The message of each error is the user-facing sentence, so callers can use
``str(exc)`` directly.
"""

from __future__ import annotations

from citecal.errors import CitecalError


class SourceFileError(CitecalError):
    """A cited file cannot be used as a citation target."""


class FileMissing(SourceFileError):
    """The path does not name a regular file in the repository (or at the revision)."""


class UnsafePath(SourceFileError):
    """The path resolves outside the repository root; it is never opened."""


class GitMetadata(UnsafePath):
    """The path is in a git directory (``.git/``): never evidence (README "Security")."""


class BinaryFile(SourceFileError):
    """The file holds binary data, not text."""


class UndecodableFile(SourceFileError):
    """The file is not valid UTF-8 text."""


class UnreadableFile(SourceFileError):
    """The operating system refused to read the file (permissions, I/O error)."""


def display_path(path: str) -> str:
    """``path`` made safe for a one-line message (control characters escaped)."""
    if path.isprintable():
        return path
    return path.encode("unicode_escape").decode("ascii")
