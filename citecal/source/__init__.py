"""Read-only access to the evaluated repository: files, lines, languages.

Stores (:class:`DirectoryStore`, :class:`GitStore`, chosen by
:func:`open_store`) hand out :class:`SourceFile` objects indexed by line and
raise :class:`SourceFileError` subclasses for files a citation cannot point
at (missing, outside the repository, binary, not UTF-8).
"""

from citecal.source._directory import DirectoryStore
from citecal.source._errors import (
    BinaryFile,
    FileMissing,
    GitMetadata,
    SourceFileError,
    UndecodableFile,
    UnreadableFile,
    UnsafePath,
)
from citecal.source._files import SourceFile
from citecal.source._git import GitStore
from citecal.source._identity import repository_identity
from citecal.source._languages import is_code_language, language_for_path
from citecal.source._open import open_store
from citecal.source._project import file_names, project_names
from citecal.source._store import CachingStore, SourceStore
from citecal.source._symbols import (
    Definition,
    SymbolIndex,
    build_symbol_index,
    has_symbol_index,
)

__all__ = [
    "BinaryFile",
    "CachingStore",
    "Definition",
    "DirectoryStore",
    "FileMissing",
    "GitMetadata",
    "GitStore",
    "SourceFile",
    "SourceFileError",
    "SourceStore",
    "SymbolIndex",
    "UndecodableFile",
    "UnreadableFile",
    "UnsafePath",
    "build_symbol_index",
    "file_names",
    "has_symbol_index",
    "is_code_language",
    "language_for_path",
    "open_store",
    "project_names",
    "repository_identity",
]
