"""Stage 2: every structural check, its message, its failure type and their order."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.models import Citation, FailureType, ValidationResult
from citecal.source import DirectoryStore
from citecal.verify import validate_citation

F: FailureType = "invalid_file"
R: FailureType = "invalid_range"

MakeRepo = Callable[[dict[str, str | bytes]], Path]

FILES: dict[str, str | bytes] = {
    "src/x.py": "".join(f"line_{i} = {i}\n" for i in range(1, 88)),  # 87 lines
    "src/one.js": "export default 1;",  # 1 line, no trailing newline
    "src/crlf.py": b"a = 1\r\nb = 2\r\nc = 3\r\n",
    "src/bom.py": b"\xef\xbb\xbfimport os\nimport sys\n",
    "empty.txt": "",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "docs/latin1.txt": b"ol\xe9\n",
}


@pytest.fixture
def store(make_repo: MakeRepo) -> DirectoryStore:
    return DirectoryStore(make_repo(FILES))


def check(store: DirectoryStore, path: str, start: int, end: int) -> ValidationResult:
    return validate_citation(Citation(path, start, end), store)


def test_valid_citation_carries_cited_lines_and_language(store: DirectoryStore) -> None:
    result = check(store, "src/x.py", 3, 5)
    assert result == ValidationResult(
        valid=True, cited_content="line_3 = 3\nline_4 = 4\nline_5 = 5", language="python"
    )


@pytest.mark.parametrize(
    ("path", "start", "end", "content"),
    [
        ("src/x.py", 87, 87, "line_87 = 87"),  # last line
        ("src/x.py", 1, 87, None),  # whole file
        ("src/one.js", 1, 1, "export default 1;"),
        ("src/crlf.py", 1, 3, "a = 1\nb = 2\nc = 3"),
        ("src/bom.py", 1, 1, "import os"),
        ("./src/crlf.py", 2, 2, "b = 2"),
    ],
)
def test_valid_edges(
    store: DirectoryStore, path: str, start: int, end: int, content: str | None
) -> None:
    result = check(store, path, start, end)
    assert result.valid, result.error
    assert result.error is None and result.failure_type is None
    if content is not None:
        assert result.cited_content == content
    else:
        assert result.cited_content is not None
        assert result.cited_content.count("\n") == end - start


@pytest.mark.parametrize(
    ("path", "start", "end", "error", "failure_type", "language"),
    [
        ("src/missing.py", 1, 5, "File not found: src/missing.py", F, "python"),
        ("src", 1, 1, "File not found: src (a directory)", F, None),
        ("../etc/passwd", 1, 1, "Path escapes the repository: ../etc/passwd", F, None),
        ("/etc/passwd", 1, 1, "Path escapes the repository: /etc/passwd", F, None),
        ("assets/logo.png", 1, 1, "Binary file: assets/logo.png", F, None),
        (
            "docs/latin1.txt",
            1,
            1,
            "File is not valid UTF-8 text (byte 2, line 1): docs/latin1.txt",
            F,
            None,
        ),
        ("src/x.py", 0, 5, "Invalid start line 0", R, "python"),
        ("src/x.py", -3, 5, "Invalid start line -3", R, "python"),
        ("src/x.py", 25, 10, "End line 10 before start line 25", R, "python"),
        ("src/x.py", 80, 120, "Line 120 out of range: src/x.py has 87 lines", R, "python"),
        ("src/x.py", 88, 88, "Line 88 out of range: src/x.py has 87 lines", R, "python"),
        ("src/x.py", 100, 120, "Lines 100-120 out of range: src/x.py has 87 lines", R, "python"),
        ("src/one.js", 1, 2, "Line 2 out of range: src/one.js has 1 line", R, "javascript"),
        ("empty.txt", 1, 1, "Line 1 out of range: empty.txt has 0 lines", R, None),
        ("./src/x.py", 1, 99, "Line 99 out of range: src/x.py has 87 lines", R, "python"),
    ],
)  # fmt: skip
def test_invalid_citations(
    store: DirectoryStore,
    path: str,
    start: int,
    end: int,
    error: str,
    failure_type: FailureType,
    language: str | None,
) -> None:
    result = check(store, path, start, end)
    assert result == ValidationResult(
        valid=False, error=error, failure_type=failure_type, language=language
    )


@pytest.mark.parametrize(
    ("path", "start", "end", "error"),
    [
        # file problems come before range problems
        ("nope.py", 0, -1, "File not found: nope.py"),
        ("assets/logo.png", 5, 1, "Binary file: assets/logo.png"),
        ("../x.py", 0, 0, "Path escapes the repository: ../x.py"),
        # then start, then order, then range
        ("src/x.py", 0, -5, "Invalid start line 0"),
        ("src/x.py", 200, 100, "End line 100 before start line 200"),
    ],
)
def test_check_order(store: DirectoryStore, path: str, start: int, end: int, error: str) -> None:
    assert check(store, path, start, end).error == error


def test_symlink_out_is_invalid_file(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo(FILES)
    secret = tmp_path / "secret.py"
    secret.write_text("KEY = 'x'\n")
    (root / "src" / "key.py").symlink_to(secret)
    result = check(DirectoryStore(root), "src/key.py", 1, 1)
    assert (result.valid, result.failure_type, result.cited_content) == (
        False,
        "invalid_file",
        None,
    )
    assert result.error == "Path escapes the repository: src/key.py"


def test_missing_file_cited_many_times_is_checked_once(make_repo: MakeRepo) -> None:
    root = make_repo(FILES)
    store = DirectoryStore(root)
    first = check(store, "src/late.py", 1, 1)
    (root / "src" / "late.py").write_text("now here\n")
    results = [check(store, "src/late.py", 1, 1) for _ in range(100)]
    assert all(r == first for r in results)
    assert first.error == "File not found: src/late.py"


def test_many_citations_are_fast(make_repo: MakeRepo) -> None:
    """2 000 files, 10 000 citations: reading once and slicing keeps this well under a second."""
    root = make_repo({f"pkg/m{i}.py": f"value_{i} = {i}\n" * 40 for i in range(2000)})
    store = DirectoryStore(root)
    citations = [Citation(f"pkg/m{i % 2000}.py", i % 40 + 1, i % 40 + 1) for i in range(10_000)]
    citations += [Citation(f"pkg/missing{i % 50}.py", 1, 2) for i in range(1000)]
    began = time.perf_counter()
    results = [validate_citation(c, store) for c in citations]
    elapsed = time.perf_counter() - began
    assert sum(r.valid for r in results) == 10_000
    assert results[4001].cited_content == "value_1 = 1"  # citation 4001 → m1.py line 2
    # generous bound for a shared 2-core machine; typical runs are ~10x faster
    assert elapsed < 5.0, f"{len(citations) / elapsed:.0f} citations/s"
