"""File name → tree-sitter language name, and the extensions that mean binary.

Language names are those accepted by ``tree_sitter_language_pack.get_language``
(so ``"csharp"``, not ``"c_sharp"``), which lets the symbol index pass them on
unchanged. Unknown files map to ``None``: they are still valid citation
targets, only verified with plain identifier tokens.
"""

from __future__ import annotations

import posixpath
import re

_EXTENSIONS: dict[str, str] = {
    # the languages the symbol index understands in depth
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "java": "java",
    "rs": "rust",
    # other languages with a bundled grammar
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hh": "cpp",
    "hpp": "cpp",
    "hxx": "cpp",
    "cu": "cuda",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "scala": "scala",
    "sc": "scala",
    "swift": "swift",
    "m": "objc",
    "mm": "objc",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "lua": "lua",
    "r": "r",
    "pl": "perl",
    "pm": "perl",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "mli": "ocaml_interface",
    "clj": "clojure",
    "dart": "dart",
    "zig": "zig",
    "jl": "julia",
    "groovy": "groovy",
    "pyx": "cython",
    "pxd": "cython",
    "pxi": "cython",
    "bats": "bash",
    "gradle": "groovy",
    "sql": "sql",
    "proto": "proto",
    "vue": "vue",
    "svelte": "svelte",
    "html": "html",
    "htm": "html",
    "css": "css",
    "scss": "scss",
    "json": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "xml": "xml",
    "md": "markdown",
    "markdown": "markdown",
    "rst": "rst",
    "tf": "hcl",
    "hcl": "hcl",
    "nix": "nix",
    "cmake": "cmake",
    "ps1": "powershell",
    "fish": "fish",
    "graphql": "graphql",
    "sol": "solidity",
}

_FILE_NAMES: dict[str, str] = {
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "dockerfile",
    "cmakelists.txt": "cmake",
    "gemfile": "ruby",
    "rakefile": "ruby",
    "build": "starlark",
    "build.bazel": "starlark",
    "workspace": "starlark",
    ".bashrc": "bash",
    ".zshrc": "bash",
}

_BINARY_EXTENSION_LIST = """
png jpg jpeg gif bmp tif tiff ico icns webp avif heic psd svgz
pdf doc docx xls xlsx ppt pptx odt ods odp epub
zip gz tgz bz2 xz zst lz4 7z rar tar jar war ear whl egg apk deb rpm dmg iso
so dylib dll exe o a lib obj bin class pyc pyo pyd wasm node
woff woff2 ttf otf eot
mp3 mp4 m4a wav ogg flac avi mov mkv webm
sqlite sqlite3 db parquet feather arrow npy npz pkl pickle h5 hdf5 onnx pt pth
"""
BINARY_EXTENSIONS: frozenset[str] = frozenset(_BINARY_EXTENSION_LIST.split())
"""Extensions whose files are binary unless their content proves otherwise."""


def extension(path: str) -> str:
    """Lower-case extension of ``path`` without the dot ("" when none)."""
    name = posixpath.basename(path)
    _, dot, ext = name.rpartition(".")
    return ext.lower() if dot and _ else ""


_OBJC_HEADER = re.compile(rb"^\s*(?:@interface|@protocol|@implementation|#import)\b", re.M)
_CPP_HEADER = re.compile(
    rb"^\s*(?:namespace\s+\w+\s*\{|template\s*<|class\s+\w+[^;(]*\{|"
    rb"(?:public|private|protected)\s*:|#include\s*<(?:string|vector|memory|cstdint|utility)>)",
    re.M,
)


_INTERPRETERS: dict[bytes, str] = {
    b"sh": "bash",
    b"bash": "bash",
    b"zsh": "bash",
    b"dash": "bash",
    b"ksh": "bash",
    b"python": "python",
    b"node": "javascript",
    b"ruby": "ruby",
    b"perl": "perl",
}


def _interpreter_language(head: bytes) -> str | None:
    """``#!/usr/bin/env bash`` → bash, ``#!/usr/bin/python3`` → python."""
    words = head[2:].split(b"\n", 1)[0].split()
    if words and posixpath.basename(words[0].decode("latin-1")) == "env":
        words = [w for w in words[1:] if not w.startswith(b"-")]
    if not words:
        return None
    name = posixpath.basename(words[0].decode("latin-1")).rstrip("0123456789.")
    return _INTERPRETERS.get(name.encode())


def refine_language(language: str | None, head: bytes) -> str | None:
    """The language of a file whose name does not say it, by its first bytes.

    A script without an extension (``bin/n``) by its ``#!`` line; a ``.h`` file as
    C, C++ or Objective-C.

    A header's extension does not say which of the three it is; parsing an
    Objective-C ``@interface`` with the C grammar finds none of its methods,
    and then nothing may conclude that a method is absent (docs/explanation/routing.md).
    Any other language is returned as it is.
    """
    if language is None and head.startswith(b"#!"):
        return _interpreter_language(head)
    if language != "c":
        return language
    if _OBJC_HEADER.search(head):
        return "objc"
    if _CPP_HEADER.search(head):
        return "cpp"
    return language


NO_GRAMMAR: frozenset[str] = frozenset({"cython"})
"""Languages recognised by name that ``tree-sitter-language-pack`` 0.13 has no grammar for:
their files are code, searched as text (docs/explanation/routing.md, "Languages")."""

DATA_LANGUAGES: frozenset[str] = frozenset(
    {"markdown", "rst", "json", "yaml", "toml", "xml", "html", "css", "scss", "graphql"}
)
"""Documents and data, not code: nothing in them is a definition a claim could name."""


def is_code_language(language: str | None) -> bool:
    """True for a programming language (indexed by tree-sitter or not), False for data."""
    return language is not None and language not in DATA_LANGUAGES


def language_for_path(path: str) -> str | None:
    """Tree-sitter language name for ``path`` (by file name, then extension), or None."""
    name = posixpath.basename(path).lower()
    by_name = _FILE_NAMES.get(name)
    if by_name is not None:
        return by_name
    if name.startswith("dockerfile."):
        return "dockerfile"
    return _EXTENSIONS.get(extension(path))
