"""File name → tree-sitter language name, and the extensions that mean binary.

Language names are those accepted by ``tree_sitter_language_pack.get_language``
(so ``"csharp"``, not ``"c_sharp"``), which lets the symbol index pass them on
unchanged. Unknown files map to ``None``: they are still valid citation
targets, only verified with plain identifier tokens.
"""

from __future__ import annotations

import posixpath

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


def language_for_path(path: str) -> str | None:
    """Tree-sitter language name for ``path`` (by file name, then extension), or None."""
    name = posixpath.basename(path).lower()
    by_name = _FILE_NAMES.get(name)
    if by_name is not None:
        return by_name
    if name.startswith("dockerfile."):
        return "dockerfile"
    return _EXTENSIONS.get(extension(path))
