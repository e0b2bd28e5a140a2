"""File output that never leaves a half-written file behind.

Every writer goes through :func:`atomic_write`: it writes to a temporary file
in the destination directory and renames it over the target, so an error or an
interrupt mid-write loses nothing and leaves no partial output.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from citecal.errors import InputError


@contextlib.contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it over ``target`` on success."""
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"output directory does not exist: {directory}")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def atomic_write(target: Path | str, writer: Callable[[IO[bytes]], object]) -> None:
    """Call ``writer`` with a binary file handle, then atomically publish it."""
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        writer(fh)


def atomic_write_text(target: Path | str, text: str) -> None:
    """Write ``text`` as UTF-8 atomically."""
    atomic_write(target, lambda fh: fh.write(text.encode("utf-8")))


def read_text_file(path: Path | str, what: str = "file") -> str:
    """Read a UTF-8 text file, turning every expected failure into one-line InputError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found: {p}") from None
    except IsADirectoryError:
        raise InputError(f"{what} is a directory, not a file: {p}") from None
    except PermissionError:
        raise InputError(f"{what} is not readable (permission denied): {p}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not valid UTF-8 ({p}, byte {exc.start}): re-encode it as UTF-8"
        ) from None
