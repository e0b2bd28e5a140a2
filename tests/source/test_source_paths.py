"""Lexical path checks: everything that names a place outside the root is refused."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.source import FileMissing, UnsafePath
from citecal.source._paths import is_within, normalise_cited_path


@pytest.mark.parametrize(
    ("cited", "shown"),
    [
        ("../x.py", "../x.py"),
        ("..", ".."),
        ("a/../../x.py", "a/../../x.py"),
        ("./../x.py", "./../x.py"),
        ("src/./../../etc/passwd", "src/./../../etc/passwd"),
        ("/etc/passwd", "/etc/passwd"),
        ("//etc/passwd", "//etc/passwd"),
        ("\\\\server\\share\\x", "\\\\server\\share\\x"),
        ("~/.ssh/id_rsa", "~/.ssh/id_rsa"),
        ("~root/.bashrc", "~root/.bashrc"),
        ("C:\\Windows\\win.ini", "C:\\Windows\\win.ini"),
        ("c:/x.py", "c:/x.py"),
        ("a.py\x00../../etc/passwd", "a.py\\x00../../etc/passwd"),
    ],
)
def test_escaping_paths_are_unsafe(cited: str, shown: str) -> None:
    with pytest.raises(UnsafePath) as info:
        normalise_cited_path(cited)
    assert str(info.value) == f"Path escapes the repository: {shown}"


@pytest.mark.parametrize(
    ("cited", "normalised"),
    [
        ("src/a.py", "src/a.py"),
        ("./src/a.py", "src/a.py"),
        ("src//a.py", "src/a.py"),
        ("src/./a.py", "src/a.py"),
        ("src/../a.py", "a.py"),
        ("a/b/../../c.py", "c.py"),
        ("lib/@scope/x-y.test.js", "lib/@scope/x-y.test.js"),
        ("a:b.py", "a:b.py"),  # a colon is not a drive letter here
        ("src/~backup.py", "src/~backup.py"),  # "~" only matters at the start
        ("..foo/x.py", "..foo/x.py"),  # a name starting with dots is not ".."
        ("src/", "src"),
    ],
)
def test_inside_paths_are_normalised(cited: str, normalised: str) -> None:
    assert normalise_cited_path(cited) == normalised


@pytest.mark.parametrize("cited", ["", ".", "./", "a/.."])
def test_paths_naming_the_root_are_not_files(cited: str) -> None:
    with pytest.raises(FileMissing, match=r"^File not found: "):
        normalise_cited_path(cited)


def test_is_within_compares_whole_components() -> None:
    assert is_within("/srv/repo", "/srv/repo")
    assert is_within("/srv/repo", "/srv/repo/a.py")
    assert not is_within("/srv/repo", "/srv/repo2/a.py")
    assert not is_within("/srv/repo", "/srv")
    assert is_within("/", "/etc/passwd")


@settings(max_examples=500)
@given(
    st.lists(
        st.sampled_from(["..", ".", "", "a", "b.py", "~", "/", "\\", "C:", "\x00", "..x"]),
        max_size=8,
    ).map("/".join)
)
def test_a_normalised_path_never_leaves_the_root(cited: str) -> None:
    try:
        norm = normalise_cited_path(cited)
    except (UnsafePath, FileMissing):
        return
    assert not norm.startswith(("/", "../", "~")) and norm != ".."
    assert "\x00" not in norm
    root = "/srv/repo"
    assert is_within(root, posixpath.normpath(posixpath.join(root, norm)))
