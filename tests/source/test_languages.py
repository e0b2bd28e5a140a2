"""Language names from file names, usable with the bundled tree-sitter grammars."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter_language_pack as tslp

from citecal.source import language_for_path, open_store
from citecal.source._languages import (
    _EXTENSIONS,
    _FILE_NAMES,
    BINARY_EXTENSIONS,
    NO_GRAMMAR,
    refine_language,
)


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
    for name in sorted((set(_EXTENSIONS.values()) | set(_FILE_NAMES.values())) - NO_GRAMMAR):
        assert tslp.get_language(name) is not None, name  # type: ignore[arg-type]


def test_languages_without_a_grammar_really_have_none() -> None:
    # cython files are code searched as text: if a grammar ever ships, index them
    for name in NO_GRAMMAR:
        with pytest.raises(LookupError):
            tslp.get_language(name)  # type: ignore[arg-type]


def test_no_extension_is_both_source_and_binary() -> None:
    assert not set(_EXTENSIONS) & BINARY_EXTENSIONS


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#ifndef A_H\n#define A_H\nint f(void);\n#endif\n", "c"),
        (b"#import <Foundation/Foundation.h>\n@interface RNKeychain : NSObject\n@end\n", "objc"),
        (b"#pragma once\n@protocol RNDelegate <NSObject>\n@end\n", "objc"),
        (b"#pragma once\nnamespace marisa {\nclass Trie;\n}\n", "cpp"),
        (b"template <typename T>\nstruct Box { T v; };\n", "cpp"),
        (b"struct s { int a; };\n/* class Foo { in a comment line */\n", "c"),
    ],
)
def test_a_header_is_c_cpp_or_objective_c_by_its_content(head: bytes, language: str) -> None:
    assert refine_language("c", head) == language


def test_only_headers_are_refined() -> None:
    assert refine_language("python", b"@interface X\n") == "python"
    assert refine_language(None, b"namespace a {\n") is None


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/usr/bin/env bash\nset -e\n", "bash"),
        (b"#!/bin/sh\n", "bash"),
        (b"#!/usr/bin/python3\n", "python"),
        (b"#!/usr/bin/env -S node --no-warnings\n", "javascript"),
        (b"#!/usr/bin/env python3.11 -u\n", "python"),
        (b"#!/opt/unknown-shell\n", None),
        (b"#!\n", None),
        (b"plain text\n", None),
    ],
)
def test_a_script_without_an_extension_by_its_shebang(head: bytes, language: str | None) -> None:
    assert refine_language(None, head) == language


def test_a_script_without_an_extension_reads_as_its_language(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "n").write_text("#!/usr/bin/env bash\nn_install() {\n  :\n}\n")
    with open_store(tmp_path) as store:
        assert store.read("bin/n").language == "bash"
