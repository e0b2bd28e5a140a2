"""GitStore: files at a revision, read with one ``git cat-file --batch`` process."""

from __future__ import annotations

import gc
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.config import ValidationConfig
from citecal.errors import StoreError
from citecal.source import (
    BinaryFile,
    FileMissing,
    GitStore,
    SourceStore,
    UndecodableFile,
    UnsafePath,
)

GitRun = Callable[..., str]
Write = Callable[[Path, dict[str, str | bytes]], None]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@pytest.fixture
def repo(tmp_path: Path, git: GitRun, write: Write) -> Path:
    """Two commits; the working tree then differs from both."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(
        root,
        {
            "src/app.py": "def main():\n    return 1\n",
            "src/old.py": "OLD = True\n",
            "crlf.txt": b"a\r\nb\r\nc",
            "latin1.txt": b"caf\xe9\n",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "sub/inner.py": "x = 1\n",
        },
    )
    (root / "lib").symlink_to("src", target_is_directory=True)
    (root / "main.py").symlink_to("src/app.py")
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "up.txt").symlink_to("../outside.txt")
    (root / "ext").symlink_to("..", target_is_directory=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    git(root, "tag", "v1")
    write(root, {"src/app.py": "def main():\n    return 2\n\n\ndef extra():\n    pass\n"})
    git(root, "rm", "-q", "src/old.py")
    git(root, "commit", "-q", "-am", "second")
    write(root, {"src/app.py": "# uncommitted\n"})  # working tree only
    (tmp_path / "outside.txt").write_text("outside\n")
    return root


def test_reads_the_revision_not_the_working_tree(repo: Path, git: GitRun) -> None:
    first = git(repo, "rev-parse", "HEAD~1").strip()
    with GitStore(repo, "HEAD~1") as old, GitStore(repo, "HEAD") as new:
        assert isinstance(old, SourceStore)
        assert (old.name, old.rev, old.commit) == (str(repo), "HEAD~1", first)
        assert old.read("src/app.py").text == "def main():\n    return 1\n"
        assert old.read("src/old.py").lines(1, 1) == "OLD = True"
        assert new.read("src/app.py").line_count == 6
        assert new.read("src/app.py").lines(5, 6) == "def extra():\n    pass"
        with pytest.raises(FileMissing, match=r"^File not found: src/old\.py$"):
            new.read("src/old.py")
    for rev in ("v1", first, first[:10], "main~1"):
        with GitStore(repo, rev) as store:
            assert store.read("src/app.py").lines(2, 2) == "    return 1"


def test_content_checks_match_the_directory_store(repo: Path) -> None:
    with GitStore(repo, "HEAD") as store:
        crlf = store.read("crlf.txt")
        assert (crlf.line_count, crlf.lines(1, 3)) == (3, "a\nb\nc")
        with pytest.raises(UndecodableFile, match=r"\(byte 3, line 1\): latin1\.txt$"):
            store.read("latin1.txt")
        with pytest.raises(BinaryFile, match=r"^Binary file: logo\.png$"):
            store.read("logo.png")
        with pytest.raises(FileMissing, match=r"^File not found: src \(a directory\)$"):
            store.read("src")
        assert store.read("src/app.py") is store.read("./src/app.py")


def test_symlinks_inside_are_followed(repo: Path) -> None:
    with GitStore(repo, "HEAD~1") as store:
        assert store.read("main.py").lines(2, 2) == "    return 1"
        assert store.read("lib/app.py").text == store.read("src/app.py").text
        assert store.read("lib/../sub/inner.py").line_count == 1


@pytest.mark.parametrize(
    ("cited", "target"),
    [
        ("passwd", "/etc/passwd"),
        ("up.txt", "../outside.txt"),
        ("ext/outside.txt", ".."),
        ("ext/repo/src/app.py", ".."),
    ],
)
def test_symlink_blobs_pointing_outside_are_unsafe(repo: Path, cited: str, target: str) -> None:
    with GitStore(repo, "HEAD") as store, pytest.raises(UnsafePath) as info:
        store.read(cited)
    assert str(info.value) == f"Path escapes the repository: {cited} (symlink to {target})"


def test_lexically_escaping_paths_are_unsafe(repo: Path) -> None:
    with GitStore(repo, "HEAD") as store:
        for cited in ("../outside.txt", "/etc/passwd", "src/../../x"):
            with pytest.raises(UnsafePath, match=r"^Path escapes the repository: "):
                store.read(cited)


def test_one_batch_process_serves_many_files(
    tmp_path: Path, git: GitRun, write: Write, cat_file_children: Callable[[], list[str]]
) -> None:
    root = tmp_path / "many"
    root.mkdir()
    git(root, "init", "-q")
    write(root, {f"pkg/m{i:03}.py": f"VALUE = {i}\n" * (i % 7 + 1) for i in range(300)})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "many")
    store = GitStore(root, "HEAD")
    assert cat_file_children() == []  # nothing started by the constructor
    for i in range(300):
        f = store.read(f"pkg/m{i:03}.py")
        assert (f.line_count, f.lines(1, 1)) == (i % 7 + 1, f"VALUE = {i}")
    assert len(cat_file_children()) == 1
    assert len(store.list_files()) == 300
    store.close()
    assert cat_file_children() == []
    store.close()  # idempotent


def test_batch_process_is_stopped_when_the_store_is_collected(
    repo: Path, cat_file_children: Callable[[], list[str]]
) -> None:
    store = GitStore(repo, "HEAD")
    store.read("src/app.py")
    assert len(cat_file_children()) == 1
    del store
    gc.collect()
    assert cat_file_children() == []


def test_large_blobs_are_streamed_and_the_protocol_stays_in_sync(
    tmp_path: Path, git: GitRun, write: Write
) -> None:
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q")
    text = "".join(f"line {i}\r\n" for i in range(1, 200_001))
    write(
        root,
        {
            "a.bin": b"\x00" * 3_000_000,
            "b.txt": text,
            "c.txt": b"ok\n" * 100_000 + b"\xff\n" + b"ok\n" * 100_000,
            "d.py": "small = True\n",
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "big")
    with GitStore(root, "HEAD", ValidationConfig(max_file_bytes=1000)) as store:
        with pytest.raises(BinaryFile):
            store.read("a.bin")  # drained, not stored
        f = store.read("b.txt")
        assert f.line_count == 200_000
        assert f.lines(199_999, 200_000) == "line 199999\nline 200000"
        assert f.lines(1, 2) == "line 1\nline 2"
        with pytest.raises(UndecodableFile, match=r"\(byte 300000, line 100001\): c\.txt$"):
            store.read("c.txt")
        assert store.read("d.py").lines(1, 1) == "small = True"  # still in sync


def test_odd_file_names_are_read_by_object_id(tmp_path: Path, git: GitRun, write: Write) -> None:
    root = tmp_path / "odd"
    root.mkdir()
    git(root, "init", "-q")
    write(root, {"we ird\nname.py": "a = 1\n", "ünï côdé.md": "# t\n", "-rf": "x\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd")
    with GitStore(root, "HEAD") as store:
        assert store.read("we ird\nname.py").lines(1, 1) == "a = 1"
        assert store.read("ünï côdé.md").line_count == 1
        assert store.read("-rf").line_count == 1
        assert store.list_files() == ["-rf", "we ird\nname.py", "ünï côdé.md"]


def test_subdirectory_of_a_work_tree(repo: Path) -> None:
    with GitStore(repo / "src", "HEAD~1") as store:
        assert store.read("app.py").lines(2, 2) == "    return 1"
        assert store.list_files() == ["app.py", "old.py"]
    (repo / "newdir").mkdir()  # exists on disk, not at the revision
    with pytest.raises(StoreError) as info:
        GitStore(repo / "newdir", "HEAD~1")
    assert str(info.value) == f"newdir does not exist at revision 'HEAD~1' in {repo / 'newdir'}"


def test_bare_repository(repo: Path, tmp_path: Path, git: GitRun) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    with GitStore(bare, "main~1") as store:
        assert store.read("src/app.py").lines(2, 2) == "    return 1"


def test_list_files(repo: Path) -> None:
    with GitStore(repo, "HEAD") as store:
        # regular blobs plus symlinks that resolve to a blob inside; no escaping links
        assert store.list_files() == [
            "crlf.txt",
            "latin1.txt",
            "logo.png",
            "main.py",
            "src/app.py",
            "sub/inner.py",
        ]


def test_unknown_revision(repo: Path) -> None:
    for rev in ("nope", "HEAD~99", "", "--output=/tmp/citecal-injected", "v1:src/app.py"):
        with pytest.raises(StoreError) as info:
            GitStore(repo, rev)
        assert str(info.value) == f"unknown revision '{rev}' in {repo}"
    assert not Path("/tmp/citecal-injected").exists()


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(StoreError) as info:
        GitStore(plain, "HEAD")
    assert str(info.value) == f"not a git repository: {plain}"


def test_empty_repository(tmp_path: Path, git: GitRun) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(StoreError) as info:
        GitStore(empty, "HEAD")
    assert str(info.value) == f"empty git repository (no commits yet): {empty}"
