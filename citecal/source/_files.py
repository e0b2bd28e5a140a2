"""Source files as text with a line index, built once per file.

A :class:`SourceFile` is what structural validation and the verifiers see:
a normalised path, a line count and the cited lines. Two backings hide behind
it:

* **in memory** (:func:`index_bytes`) for ordinary files: the raw bytes plus a
  NumPy array of the byte offsets of every ``\\n``. ``lines(a, b)`` slices
  the bytes between two offsets and decodes only that slice, so it costs
  O(range) and the file is decoded as a whole only to validate it.
* **streamed** (:class:`LineIndexer` + :class:`HugeContent`) for files above
  ``ValidationConfig.max_file_bytes``: one pass over fixed 1 MiB chunks counts
  the newlines per chunk and validates UTF-8 incrementally; nothing but the
  per-chunk counts is kept. ``lines(a, b)`` finds the chunk holding each
  boundary by bisection and reads just those bytes back with ``pread``. A
  1 GB file thus costs one sequential read and about 8 KB of index.

Line rules (the same everywhere): lines end at ``\\n``; a ``\\r`` right
before it (CRLF) is not part of the line; a final line without a newline
still counts; an empty file has 0 lines; a UTF-8 byte order mark is skipped.
A lone ``\\r`` (classic Mac OS) does not end a line, as in git and GitHub.

Binary rule (:func:`sniff`), applied to the first ``binary_sniff_bytes``
only: a UTF-16/32 byte order mark means "not UTF-8"; a NUL byte means
binary; a file with a known binary extension (``.png``, ``.pdf``, ``.so``,
...) is binary unless that first chunk is plausibly text (valid UTF-8 and
at most 30% control characters), so a text file that merely has such a name,
e.g. a Git LFS pointer, stays citable.
"""

from __future__ import annotations

import bisect
import codecs
import os
import tempfile
from array import array
from dataclasses import dataclass, field
from typing import IO, Protocol

import numpy as np
import numpy.typing as npt

from citecal.source._errors import BinaryFile, UndecodableFile, display_path
from citecal.source._languages import BINARY_EXTENSIONS, extension, refine_language

CHUNK_BYTES = 1 << 20
"""Chunk size of the streamed index (one count per chunk)."""

_BOM = codecs.BOM_UTF8
_WIDE_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # UTF-32 LE starts like UTF-16 LE
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f\b\x1b") + b"\x7f"
_MAX_CONTROL_RATIO = 0.3


class _Content(Protocol):
    def lines(self, start: int, end: int) -> str: ...

    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A text file of the evaluated repository, indexed by line.

    ``path`` is the normalised repo-relative POSIX path, ``line_count`` the
    number of lines under the rules of this module, ``language`` the
    tree-sitter language name guessed from the file name (None if unknown).
    """

    path: str
    line_count: int
    language: str | None
    _content: _Content = field(repr=False, compare=False)

    def lines(self, start: int, end: int) -> str:
        """Lines ``start``..``end`` (1-indexed, inclusive) joined by ``\\n``, CRs removed.

        Raises:
            ValueError: the range is empty or outside ``1..line_count``.
        """
        if not 1 <= start <= end <= self.line_count:
            raise ValueError(f"lines {start}-{end} outside 1-{self.line_count} of {self.path}")
        return self._content.lines(start, end)

    @property
    def text(self) -> str:
        """The whole text with ``\\r\\n`` normalised to ``\\n`` (decoded on each call)."""
        return self._content.text()


def _clean(raw: bytes) -> str:
    """Decode a slice that ends just before a ``\\n`` (or at EOF); drop CRs of CRLF."""
    text = raw.decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):
            text = text[:-1]
    return text


# --------------------------------------------------------------------------- checks


def sniff(path: str, head: bytes) -> None:
    """Reject binary and non-UTF-8-encoded content from its first bytes (module docstring).

    Raises:
        UndecodableFile: a UTF-16/UTF-32 byte order mark.
        BinaryFile: a NUL byte, or a binary extension with non-text content.
    """
    if head.startswith(_WIDE_BOMS):
        raise UndecodableFile(
            f"File is not valid UTF-8 text (UTF-16/32 byte order mark): {display_path(path)}"
        )
    if b"\x00" in head or (extension(path) in BINARY_EXTENSIONS and not _looks_like_text(head)):
        raise BinaryFile(f"Binary file: {display_path(path)}")


def _looks_like_text(head: bytes) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    control = len(head) - len(head.translate(None, _CONTROL))
    return control <= _MAX_CONTROL_RATIO * len(head)


def _undecodable(path: str, byte: int, line: int) -> UndecodableFile:
    return UndecodableFile(
        f"File is not valid UTF-8 text (byte {byte}, line {line}): {display_path(path)}"
    )


# --------------------------------------------------------------------------- in memory


class _MemoryContent:
    """Raw bytes + newline offsets; lines are decoded on demand."""

    __slots__ = ("_base", "_data", "_newlines")

    def __init__(self, data: bytes, base: int, newlines: npt.NDArray[np.intp]) -> None:
        self._data = data
        self._base = base
        self._newlines = newlines

    def lines(self, start: int, end: int) -> str:
        nl = self._newlines
        begin = self._base if start == 1 else int(nl[start - 2]) + 1
        stop = int(nl[end - 1]) if end - 1 < len(nl) else len(self._data)
        return _clean(self._data[begin:stop])

    def text(self) -> str:
        return self._data[self._base :].decode("utf-8").replace("\r\n", "\n")


HEADER_SNIFF_BYTES = 64 * 1024
"""Bytes of a ``.h`` file read to tell C, C++ and Objective-C apart."""


def index_bytes(path: str, data: bytes, language: str | None, sniff_bytes: int) -> SourceFile:
    """Check ``data`` (binary, UTF-8) and index its lines.

    Raises:
        BinaryFile: see :func:`sniff`.
        UndecodableFile: the bytes are not UTF-8 (the message gives byte offset and line).
    """
    sniff(path, data[:sniff_bytes])
    base = len(_BOM) if data.startswith(_BOM) else 0
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _undecodable(path, exc.start, data.count(b"\n", 0, exc.start) + 1) from None
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    unterminated = len(data) > base and data[-1] != 0x0A
    return SourceFile(
        path=path,
        line_count=len(newlines) + unterminated,
        language=refine_language(language, data[:HEADER_SNIFF_BYTES]),
        _content=_MemoryContent(data, base, newlines),
    )


# --------------------------------------------------------------------------- streamed


class LineIndexer:
    """One pass over a file in :data:`CHUNK_BYTES` chunks: newline counts + UTF-8 check.

    Feed every chunk in order (each exactly ``CHUNK_BYTES`` long except the
    last), then call :meth:`finish`. Memory use is one counter per chunk.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.cumulative = array("q", [0])  # newlines before chunk i
        self.size = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, chunk: bytes) -> None:
        """Account for the next chunk.

        Raises:
            UndecodableFile: the chunk breaks UTF-8 (absolute byte offset and line in the message).
        """
        pending = len(self._decoder.getstate()[0])
        try:
            if pending or not chunk.isascii():  # ASCII is valid UTF-8: skip the decode
                self._decoder.decode(chunk, final=False)
        except UnicodeDecodeError as exc:
            byte = self.size - pending + exc.start
            line = self.newlines + chunk.count(b"\n", 0, max(0, byte - self.size)) + 1
            raise _undecodable(self.path, byte, line) from None
        self.cumulative.append(self.cumulative[-1] + chunk.count(b"\n"))
        self.size += len(chunk)

    def finish(self) -> None:
        """Check that the file does not end inside a multi-byte character."""
        pending = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise _undecodable(self.path, self.size - pending, self.newlines + 1) from None

    @property
    def newlines(self) -> int:
        """Newlines seen so far."""
        return self.cumulative[-1]


def pread_exact(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes at ``offset`` (fewer only at end of file)."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        part = os.pread(fd, size - got, offset + got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def read_exact(stream: IO[bytes], size: int) -> bytes:
    """``size`` bytes from a stream (fewer only at end of stream)."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        part = stream.read(size - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


class HugeContent:
    """Lines of a large file read back with ``pread`` through a per-chunk newline count."""

    __slots__ = ("_base", "_cumulative", "_fh", "_recent", "_size", "_unterminated")

    def __init__(self, fh: IO[bytes], indexer: LineIndexer, head: bytes, last: bytes) -> None:
        self._fh = fh  # owned: closed when this object is collected, or by close()
        self._cumulative = indexer.cumulative
        self._size = indexer.size
        self._base = len(_BOM) if head.startswith(_BOM) else 0
        self._unterminated = self._size > self._base and last != b"\n"
        # newline offsets of the chunk read last (one tuple: replaced atomically)
        self._recent: tuple[int, npt.NDArray[np.intp]] = (-1, np.empty(0, dtype=np.intp))

    @property
    def line_count(self) -> int:
        """Number of lines (same rules as the in-memory index)."""
        return self._cumulative[-1] + self._unterminated

    def _newline_at(self, k: int) -> int:
        """Byte offset of the ``k``-th newline (0-based)."""
        chunk = bisect.bisect_right(self._cumulative, k) - 1
        begin = chunk * CHUNK_BYTES
        cached, positions = self._recent
        if cached != chunk:  # citations into one file cluster: keep the last chunk
            data = pread_exact(self._fh.fileno(), min(CHUNK_BYTES, self._size - begin), begin)
            positions = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
            self._recent = (chunk, positions)
        return begin + int(positions[k - self._cumulative[chunk]])

    def lines(self, start: int, end: int) -> str:
        begin = self._base if start == 1 else self._newline_at(start - 2) + 1
        stop = self._newline_at(end - 1) if end - 1 < self._cumulative[-1] else self._size
        return _clean(pread_exact(self._fh.fileno(), stop - begin, begin))

    def text(self) -> str:
        raw = pread_exact(self._fh.fileno(), self._size - self._base, self._base)
        return raw.decode("utf-8").replace("\r\n", "\n")

    def close(self) -> None:
        """Release the file handle."""
        self._fh.close()


def index_file(
    path: str, fh: IO[bytes], size: int, language: str | None, sniff_bytes: int
) -> SourceFile:
    """Index an open regular file of ``size`` bytes without holding it in memory.

    The handle is kept (and owned) by the returned file for later ``lines``
    calls; on error it is closed.

    Raises:
        BinaryFile: see :func:`sniff` (only the first ``sniff_bytes`` are read for it).
        UndecodableFile: invalid UTF-8 anywhere in the file.
    """
    fd = fh.fileno()
    try:
        head = pread_exact(fd, min(sniff_bytes, size), 0)
        sniff(path, head)
        indexer = LineIndexer(path)
        while indexer.size < size:
            chunk = pread_exact(fd, min(CHUNK_BYTES, size - indexer.size), indexer.size)
            if not chunk:  # the file shrank while we read it
                break
            indexer.feed(chunk)
        indexer.finish()
        last = pread_exact(fd, 1, indexer.size - 1) if indexer.size else b""
    except BaseException:
        fh.close()
        raise
    content = HugeContent(fh, indexer, head, last)
    return SourceFile(path, content.line_count, language, content)


def spool_and_index(
    path: str, stream: IO[bytes], size: int, language: str | None, sniff_bytes: int
) -> SourceFile:
    """Copy ``size`` bytes from a stream (a git blob) to a temporary file, indexing on the way.

    The bytes arrive once only, so they are checked while being copied. The
    stream is consumed to exactly ``size`` bytes even on a content error, so
    the caller's protocol (``git cat-file --batch``) stays in sync.

    Raises:
        BinaryFile: the first chunk is binary (the rest is skipped, not stored).
        UndecodableFile: invalid UTF-8.
        EOFError: the stream ended early.
    """
    spool = tempfile.TemporaryFile()  # noqa: SIM115 (owned by the returned file)
    indexer = LineIndexer(path)
    head = b""
    error: BinaryFile | UndecodableFile | None = None
    remaining = size
    try:
        while remaining > 0:
            chunk = read_exact(stream, min(CHUNK_BYTES, remaining))
            if not chunk:
                raise EOFError(f"stream ended {remaining} bytes early")
            remaining -= len(chunk)
            if error is not None:
                continue  # drain the rest of the blob
            try:
                if indexer.size == 0:
                    head = chunk[:sniff_bytes]
                    sniff(path, head)
                indexer.feed(chunk)
            except (BinaryFile, UndecodableFile) as exc:
                error = exc
                continue
            spool.write(chunk)
        if error is not None:
            raise error
        indexer.finish()
        spool.flush()
        last = pread_exact(spool.fileno(), 1, size - 1) if size else b""
    except BaseException:
        spool.close()
        raise
    content = HugeContent(spool, indexer, head, last)
    return SourceFile(path, content.line_count, language, content)
