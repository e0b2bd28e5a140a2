"""File output that never leaves a half-written file and never replaces what it should not.

Every ``-o`` writer goes through :func:`atomic_path` (README "Security"):

* a **new path or a regular file** is written to a temporary file in the same
  directory and renamed over the target, so an error or an interrupt loses
  nothing and leaves no partial output. A new file gets the mode the umask
  gives (0644 under umask 022); an existing file keeps its mode (and, where
  the process may, its owner).
* a **symlink** is followed: its final target is written by these same rules,
  and the link itself stays (as a shell's ``>`` does).
* a **character or block device or a FIFO** (``-o /dev/null``, a named pipe)
  is written through, never replaced: the output is staged in a private
  temporary file and then copied in.
* a directory, a socket or anything else is refused with one line.

Temporary files are named ``.NAME.citecal-PID-RANDOM.tmp``. One left behind
by a killed write (its process is gone) is removed by the next write into
that directory, so none lingers.

:func:`check_output` runs the same checks, plus a real test that the
directory accepts a new file, before a command does any work: a bad ``-o``
is one ``Error:`` line (exit 2) before any file is read or judge call paid.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from citecal.errors import InputError

_TMP_MARK = ".citecal-"

MAX_JSON_BYTES = 512 * 2**20
"""Largest JSON input read whole (an eval JSON of 20 000 citations and 64 MB of carried text
fits with room; README "Security")."""


def _tmp_name(target: Path) -> Path:
    return target.parent / f".{target.name}{_TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}.tmp"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return True


def clean_stale_temps(target: Path) -> list[Path]:
    """Remove temporary files of ``target`` left by writers that no longer run."""
    removed: list[Path] = []
    prefix = f".{target.name}{_TMP_MARK}"
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) :].split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _resolve(target: Path) -> tuple[Path, os.stat_result | None]:
    """The path to write (symlinks followed) and what is there now (None: nothing)."""
    path = Path(os.path.realpath(target)) if target.is_symlink() else target
    try:
        return path, os.stat(path)
    except FileNotFoundError:
        return path, None
    except NotADirectoryError:
        raise InputError(f"output directory is not a directory: {path.parent}") from None
    except OSError as exc:
        raise InputError(f"cannot use output path {target}: {exc.strerror}") from None


def _kind(st: os.stat_result | None) -> str:
    if st is None or stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return "stream"
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    return "other"


def _check(target: Path, probe: bool) -> tuple[Path, os.stat_result | None, str]:
    path, st = _resolve(target)
    kind = _kind(st)
    if kind == "directory":
        raise InputError(f"output path is a directory, not a file: {target}")
    if kind == "other":
        raise InputError(f"output path is neither a file, a device nor a FIFO: {target}")
    if kind == "stream":
        if not os.access(path, os.W_OK):
            raise InputError(f"output {target} is not writable (permission denied)")
        return path, st, kind
    directory = path.parent
    if not directory.exists():
        raise InputError(f"output directory does not exist: {directory}")
    if not directory.is_dir():
        raise InputError(f"output directory is not a directory: {directory}")
    if probe:
        tmp = _tmp_name(path)
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise InputError(
                f"cannot write to output directory {directory}: {exc.strerror}"
            ) from None
        os.unlink(tmp)
    return path, st, kind


def check_output(target: Path | str | None) -> None:
    """Raise :class:`InputError` now if ``target`` cannot be written later.

    Commands call this before any work, so a missing or unwritable directory
    costs nothing (no evaluation, no judge call, no download).
    """
    if target is not None:
        _check(Path(target), probe=True)


def same_file(a: Path | str, b: Path | str) -> bool:
    """Whether ``a`` and ``b`` name one file: one real path (symlinks resolved) or one inode.

    Two paths that do not exist yet are the same file when they resolve to the
    same place; a hard link is caught by its device and inode number.
    """
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(sa.st_mode) and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


Named = tuple[str, Path | str | None]
"""An option or argument name (``-o``, ``ANNOTATIONS``) and the path it was given."""


def _is_stream(path: Path | str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)


def refuse_clobber(outputs: Iterable[Named], inputs: Iterable[Named]) -> None:
    """Refuse, before any work, an output that is one of the command's inputs or outputs.

    README "Security": ``calibrate T --write-cascade T`` or ``align A -o A`` would
    replace the annotation table people's labels are in; the paths are compared as
    :func:`same_file` does (symlinks and hard links too). A device or FIFO output
    (``-o /dev/stdout``) is written through, never replaced, and is left alone.
    Directories (a directory of eval JSON) and non-paths (``--cascade default``)
    are not compared.

    Raises:
        InputError: naming both options and the file; nothing has been written.
    """
    outs = [(n, Path(p)) for n, p in outputs if p is not None and not _is_stream(p)]
    ins = [(n, Path(p)) for n, p in inputs if p is not None and not Path(p).is_dir()]
    for i, (name, out) in enumerate(outs):
        for other, path in ins:
            if same_file(out, path):
                raise InputError(
                    f"{name} {out} is the input {other} ({path}): writing it would replace "
                    "the input; choose another output file (nothing was written)"
                )
        for other, path in outs[:i]:
            if same_file(out, path):
                raise InputError(
                    f"{name} {out} and {other} {path} are the same file: give each output "
                    "its own file (nothing was written)"
                )


def check_replace(target: Path | str | None, force: bool, what: str, flag: str) -> None:
    """Refuse to write over an existing ``target`` unless ``force`` (a cascade, a label set).

    Raises:
        InputError: ``target`` exists and ``force`` is not set.
    """
    if target is None or force or _is_stream(target):
        return
    if os.path.lexists(target):
        raise InputError(
            f"{flag} {target}: the file exists; pass --force to replace it with the new "
            f"{what} (nothing was written)"
        )


def _publish(tmp: Path, path: Path, st: os.stat_result | None) -> None:
    if st is not None:  # keep the existing file's mode and, where allowed, its owner
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        with contextlib.suppress(OSError):
            if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                os.chown(tmp, st.st_uid, st.st_gid)
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path to write; on success publish it at ``target`` (see module doc)."""
    target = Path(target)
    path, st, kind = _check(target, probe=False)
    if kind == "stream":
        fd, staged = tempfile.mkstemp(prefix="citecal-", suffix=".out")
        os.close(fd)
        tmp = Path(staged)
        try:
            yield tmp
            # Written through, never replaced: O_TRUNC is ignored by devices and FIFOs.
            with tmp.open("rb") as src, path.open("wb") as dst:
                shutil.copyfileobj(src, dst)
        except OSError as exc:
            # /dev/full (ENOSPC), a FIFO whose reader left (EPIPE): one line, not a traceback.
            raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        return
    clean_stale_temps(path)
    tmp = _tmp_name(path)
    try:
        # Created with 0666 so the kernel applies the umask, as for any new file.
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except OSError as exc:
        raise InputError(
            f"cannot write to output directory {path.parent}: {exc.strerror}"
        ) from None
    try:
        yield tmp
        _publish(tmp, path, st)
    except OSError as exc:
        # A write that fails half-way (disk full, file-size limit, quota, I/O error): the
        # target keeps its old content, the part written is removed, and the CLI prints
        # one line instead of a traceback.
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def atomic_write(target: Path | str, writer: Callable[[IO[bytes]], object]) -> None:
    """Call ``writer`` with a binary file handle, then publish it (see :func:`atomic_path`)."""
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        writer(fh)


def atomic_write_text(target: Path | str, text: str) -> None:
    """Write ``text`` as UTF-8 (see :func:`atomic_path`)."""
    atomic_write(target, lambda fh: fh.write(text.encode("utf-8")))


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _input_kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular_file(path: Path | str, what: str = "file") -> None:
    """Refuse anything but a regular file (following symlinks), before it is opened.

    Raises:
        InputError: missing, a directory, a FIFO, device or socket (README "Security").
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{what} not found: {p}") from None
    except PermissionError:
        raise InputError(f"{what} is not readable (permission denied): {p}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what} is a directory, not a file: {p}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"{what} is {_input_kind(st.st_mode)}, not a regular file: {p} "
            "(citecal reads input only from regular files)"
        )


def _size_text(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,} bytes"


def too_big(what: str, path: Path | str, size: int, limit: int) -> InputError:
    """The one-line error for an input over its size bound (README "Security")."""
    return InputError(
        f"{what} is {_size_text(size)}, more than the {_size_text(limit)} citecal reads: {path}"
    )


@contextlib.contextmanager
def open_regular(
    path: Path | str, what: str = "file", max_bytes: int | None = None
) -> Iterator[IO[bytes]]:
    """A binary handle on a regular file of at most ``max_bytes``; anything else one line.

    README "Security": a named pipe would block the run and a device
    (``/dev/zero``, ``/dev/urandom``) would never end, so input files must be
    regular files, and a file past its bound is refused before it is read.
    The path is ``stat``-ed first, then opened with ``O_NONBLOCK`` (a FIFO
    swapped in meanwhile does not block) and checked again with ``fstat``.

    Raises:
        InputError: missing, not a regular file, unreadable, or over ``max_bytes``.
    """
    p = Path(path)
    check_regular_file(p, what)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{what} not found: {p}") from None
    except IsADirectoryError:
        raise InputError(f"{what} is a directory, not a file: {p}") from None
    except PermissionError:
        raise InputError(f"{what} is not readable (permission denied): {p}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{what} is {_input_kind(st.st_mode)}, not a regular file: {p}")
        if max_bytes is not None and st.st_size > max_bytes:
            raise too_big(what, p, st.st_size, max_bytes)
        yield fh


def read_regular_bytes(path: Path | str, what: str = "file", max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file (:func:`open_regular`): no FIFO, device or socket, bounded.

    A file that grows past ``max_bytes`` while it is read is refused too.

    Raises:
        InputError: missing, not a regular file, unreadable, over ``max_bytes``.
    """
    p = Path(path)
    with open_regular(p, what, max_bytes) as fh:
        try:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
        except OSError as exc:
            raise InputError(f"cannot read {what} {p}: {exc.strerror}") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise too_big(what, p, len(data), max_bytes)
    return data


def read_text_file(path: Path | str, what: str = "file", max_bytes: int | None = None) -> str:
    """Read a UTF-8 text file (a regular file), turning every expected failure into one line.

    Raises:
        InputError: see :func:`read_regular_bytes`; not UTF-8.
    """
    return decode_text(read_regular_bytes(path, what, max_bytes), path, what)


def decode_text(data: bytes, path: Path | str, what: str = "file") -> str:
    """``data`` decoded as UTF-8 (a BOM dropped), or one-line InputError naming ``path``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not valid UTF-8 ({path}, byte {exc.start}): re-encode it as UTF-8"
        ) from None
