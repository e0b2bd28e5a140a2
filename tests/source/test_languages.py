"""Language names from file names, usable with the bundled tree-sitter grammars."""

from __future__ import annotations

import pytest
import tree_sitter_language_pack as tslp

from citecal.source import language_for_path
from citecal.source._languages import _EXTENSIONS, _FILE_NAMES, BINARY_EXTENSIONS


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("web/index.JS", "javascript"),
        ("web/app.mjs", "javascript"),
        ("web/Button.jsx", "javascript"),
        ("web/api.ts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/Main.java", "java"),
        ("src/lib.rs", "rust"),
        ("native/x.c", "c"),
        ("native/x.hpp", "cpp"),
        ("app/models/user.rb", "ruby"),
        ("index.php", "php"),
        ("Program.cs", "csharp"),
        ("Main.kt", "kotlin"),
        ("Main.scala", "scala"),
        ("App.swift", "swift"),
        ("scripts/build.sh", "bash"),
        ("Makefile", "make"),
        ("docker/Dockerfile", "dockerfile"),
        ("Dockerfile.dev", "dockerfile"),
        ("README.md", "markdown"),
        ("LICENSE", None),
        ("data.unknownext", None),
        (".gitignore", None),
        ("archive.tar.gz", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_every_language_name_loads_a_bundled_grammar() -> None:
    # the symbol index passes these names to tree-sitter unchanged, offline
    for name in sorted(set(_EXTENSIONS.values()) | set(_FILE_NAMES.values())):
        assert tslp.get_language(name) is not None, name  # type: ignore[arg-type]


def test_no_extension_is_both_source_and_binary() -> None:
    assert not set(_EXTENSIONS) & BINARY_EXTENSIONS
