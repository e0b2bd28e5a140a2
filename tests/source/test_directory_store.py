"""DirectoryStore: reading, caching, symlinks, special files, listing."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.config import ValidationConfig
from citecal.errors import StoreError
from citecal.source import (
    DirectoryStore,
    FileMissing,
    SourceStore,
    UnreadableFile,
    UnsafePath,
)

Write = Callable[[Path, dict[str, str | bytes]], None]


@pytest.fixture
def repo(tmp_path: Path, write: Write) -> Path:
    root = tmp_path / "repo"
    write(
        root,
        {
            "src/app.py": "import os\n\n\ndef main():\n    return 1\n",
            "src/util.js": "export const x = 1;\r\nexport const y = 2;\r\n",
            "README.md": "# Demo\n",
            ".git/config": "[core]\n",
            "docs/.hidden.txt": "h\n",
        },
    )
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOP SECRET\n")
    return root


def test_read_returns_indexed_file(repo: Path) -> None:
    store = DirectoryStore(repo)
    assert isinstance(store, SourceStore)
    f = store.read("src/app.py")
    assert (f.path, f.line_count, f.language) == ("src/app.py", 5, "python")
    assert f.lines(4, 5) == "def main():\n    return 1"
    js = store.read("./src/util.js")
    assert (js.path, js.line_count, js.language) == ("src/util.js", 2, "javascript")
    assert store.name == str(repo)
    assert store.rev is None


def test_same_file_object_for_every_spelling_of_a_path(repo: Path) -> None:
    store = DirectoryStore(repo)
    f = store.read("src/app.py")
    assert store.read("src/app.py") is f
    assert store.read("./src/app.py") is f
    assert store.read("src/../src/app.py") is f


def test_file_is_read_once_per_store(repo: Path) -> None:
    store = DirectoryStore(repo)
    before = store.read("README.md")
    (repo / "README.md").write_text("# Changed\nsecond line\n")
    assert store.read("README.md").line_count == before.line_count == 1
    assert DirectoryStore(repo).read("README.md").line_count == 2  # a new run sees the change


def test_missing_file_is_checked_once(repo: Path) -> None:
    store = DirectoryStore(repo)
    for _ in range(100):
        with pytest.raises(FileMissing) as info:
            store.read("src/x.py")
        assert str(info.value) == "File not found: src/x.py"
    (repo / "src" / "x.py").write_text("late\n")
    with pytest.raises(FileMissing):  # the failure was cached, not re-checked
        store.read("src/x.py")
    assert DirectoryStore(repo).read("src/x.py").line_count == 1


def test_cached_errors_are_fresh_exceptions(repo: Path) -> None:
    store = DirectoryStore(repo)
    errors = []
    for _ in range(3):
        with pytest.raises(FileMissing) as info:
            store.read("nope.py")
        errors.append(info.value)
    assert errors[0] is not errors[1]
    assert {str(e) for e in errors} == {"File not found: nope.py"}


@pytest.mark.parametrize(
    ("cited", "message"),
    [
        ("src", "File not found: src (a directory)"),
        ("src/", "File not found: src (a directory)"),
        ("src/app.py/x", "File not found: src/app.py/x"),
    ],
)
def test_not_a_file(repo: Path, cited: str, message: str) -> None:
    with pytest.raises(FileMissing) as info:
        DirectoryStore(repo).read(cited)
    assert str(info.value) == message


def test_symlink_to_a_file_outside_is_unsafe(repo: Path, tmp_path: Path) -> None:
    (repo / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    with pytest.raises(UnsafePath) as info:
        DirectoryStore(repo).read("leak.txt")
    assert str(info.value) == "Path escapes the repository: leak.txt"


def test_symlinked_directory_outside_is_unsafe(repo: Path, tmp_path: Path) -> None:
    (repo / "vendor").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(UnsafePath, match=r"escapes the repository: vendor/secret\.txt$"):
        DirectoryStore(repo).read("vendor/secret.txt")
    # a dangling link pointing out is refused the same way, not reported as missing
    (repo / "dangling").symlink_to(tmp_path / "outside" / "nothing.txt")
    with pytest.raises(UnsafePath):
        DirectoryStore(repo).read("dangling")


def test_absolute_symlink_into_the_repository_is_fine(repo: Path) -> None:
    (repo / "lib").symlink_to(repo / "src", target_is_directory=True)
    (repo / "main.py").symlink_to("src/app.py")
    store = DirectoryStore(repo)
    assert store.read("lib/app.py").line_count == 5
    assert store.read("main.py").lines(1, 1) == "import os"


def test_repository_root_reached_through_a_symlink(repo: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(repo, target_is_directory=True)
    store = DirectoryStore(alias)
    assert store.read("src/app.py").line_count == 5
    with pytest.raises(UnsafePath):
        store.read("../outside/secret.txt")


def test_symlink_loop_is_missing(repo: Path) -> None:
    (repo / "a").symlink_to("b")
    (repo / "b").symlink_to("a")
    with pytest.raises(FileMissing, match=r"^File not found: a \(symlink loop\)$"):
        DirectoryStore(repo).read("a")


def _read_with_timeout(read: Callable[[], object], seconds: float = 5.0) -> BaseException | None:
    """Run ``read`` in a thread; fail if it blocks (as opening a FIFO would)."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            read()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, "the read blocked: the path was opened"
    return outcome[0]


@pytest.mark.parametrize("how", ["dotdot", "symlink", "absolute"])
def test_escaping_path_is_never_opened(repo: Path, tmp_path: Path, how: str) -> None:
    # Opening a FIFO for reading blocks until a writer appears, so a store that
    # opened the outside path would hang here instead of raising.
    fifo = tmp_path / "outside" / "pipe"
    os.mkfifo(fifo)
    cited = {"dotdot": "../outside/pipe", "absolute": str(fifo), "symlink": "pipe-link"}[how]
    if how == "symlink":
        (repo / "pipe-link").symlink_to(fifo)
    store = DirectoryStore(repo)
    error = _read_with_timeout(lambda: store.read(cited))
    assert isinstance(error, UnsafePath)
    assert str(error) == f"Path escapes the repository: {cited}"


def test_fifo_inside_the_repository_is_not_opened(repo: Path) -> None:
    os.mkfifo(repo / "src" / "events")
    error = _read_with_timeout(lambda: DirectoryStore(repo).read("src/events"))
    assert isinstance(error, FileMissing)
    assert str(error) == "File not found: src/events (not a regular file)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(repo: Path) -> None:
    (repo / "locked.py").write_text("x = 1\n")
    (repo / "locked.py").chmod(0)
    with pytest.raises(UnreadableFile, match=r"^File cannot be read: locked.py \(Permission"):
        DirectoryStore(repo).read("locked.py")


def test_large_file_keeps_a_handle_until_close(repo: Path) -> None:
    (repo / "big.txt").write_text("line\n" * 1000)
    with DirectoryStore(repo, ValidationConfig(max_file_bytes=100)) as store:
        f = store.read("big.txt")
        assert f.line_count == 1000
        assert f.lines(999, 1000) == "line\nline"
    with pytest.raises(ValueError):  # handle released by close()
        f.lines(1, 1)
    assert store.read("big.txt").lines(1, 1) == "line"  # indexed anew after close
    store.close()


def test_list_files(repo: Path, tmp_path: Path) -> None:
    (repo / "main.py").symlink_to("src/app.py")
    (repo / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (repo / "vendor").symlink_to(tmp_path / "outside", target_is_directory=True)
    store = DirectoryStore(repo)
    files = store.list_files()
    assert files == ["README.md", "docs/.hidden.txt", "main.py", "src/app.py", "src/util.js"]
    files.append("mutated")
    assert "mutated" not in store.list_files()


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"^repository not found: "):
        DirectoryStore(tmp_path / "nope")
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match=r"^repository is not a directory: "):
        DirectoryStore(tmp_path / "file")


def test_directory_swapped_for_a_symlink_after_resolution_is_not_followed(
    repo: Path, tmp_path: Path
) -> None:
    # Simulate the race: the path was resolved while "vendor" was a real
    # directory; by the time it is opened, "vendor" links outside.
    (repo / "vendor").symlink_to(tmp_path / "outside", target_is_directory=True)
    store = DirectoryStore(repo)
    resolved_before_swap = os.path.join(os.path.realpath(repo), "vendor", "secret.txt")
    with pytest.raises(OSError) as info:
        store._open_regular(resolved_before_swap, "vendor/secret.txt")
    assert info.value.errno in (errno.ELOOP, errno.ENOTDIR)


def test_overlong_path_is_missing(repo: Path) -> None:
    cited = "src/" + "x" * 300 + ".py"
    with pytest.raises(FileMissing) as info:
        DirectoryStore(repo).read(cited)
    assert str(info.value) == f"File not found: {cited}"
