"""Every definition kind the correction index needs, on a small real file per language (issue 21).

The files under ``data/definitions/`` are copied unchanged (or cut at a line
boundary) from the pinned ground-truth packages (datasets/groundtruth/sources.json):
semver, chi, gson, okio, scopt, axios, query-core, requests and bzip2. A claim
about ``impl Ord for Prerelease`` or a Go method with a receiver can only be
relocated when the index knows where these are (README "`citecal correct`").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from citecal.source import build_symbol_index, open_store

DATA = Path(__file__).parent / "data" / "definitions"

CASES: list[tuple[str, str, set[tuple[str, str, int]]]] = [
    # Rust: inherent and trait impl blocks, named by the type they implement for.
    (
        "impls.rs",
        "rust",
        {
            ("Identifier", "impl", 9),  # impl Default for Identifier
            ("Identifier", "impl", 15),  # impl Eq for Identifier {}
            ("Prerelease", "impl", 51),  # impl Ord for Prerelease
            ("cmp", "method", 52),
            ("Target", "type", 24),
        },
    ),
    # Go: methods with receivers (value and pointer), functions, structs.
    (
        "chain.go",
        "go",
        {
            ("Chain", "function", 6),
            ("Handler", "method", 12),  # func (mws Middlewares) Handler
            ("ServeHTTP", "method", 30),  # func (c *ChainHandler) ServeHTTP
            ("ChainHandler", "struct", 24),
        },
    ),
    # Java: an interface with an inner enum and its constants.
    (
        "ReflectionAccessFilter.java",
        "java",
        {
            ("ReflectionAccessFilter", "interface", 45),
            ("FilterResult", "enum", 51),
            ("check", "method", 227),
        },
    ),
    # Kotlin: a class, its methods and its private inner classes.
    (
        "FileHandle.kt",
        "kotlin",
        {
            ("FileHandle", "class", 35),
            ("read", "method", 63),
            ("FileHandleSink", "class", 388),
            ("FileHandleSource", "class", 418),
            ("timeout", "method", 431),
        },
    ),
    # Scala: a sealed trait, its companion object with case classes, abstract methods.
    (
        "OEffect.scala",
        "scala",
        {
            ("OEffect", "trait", 3),
            ("OEffect", "class", 4),
            ("DisplayToOut", "class", 5),
            ("displayToOut", "method", 13),
            ("DefaultOEffectSetup", "class", 20),
            ("terminate", "method", 33),
        },
    ),
    # JavaScript: arrow functions assigned to names, object members, class methods.
    (
        "adapters.js",
        "javascript",
        {
            ("renderReason", "function", 24),
            ("isResolvedHandle", "function", 26),
            ("getAdapter", "method", 29),
        },
    ),
    (
        "ZlibHeaderTransformStream.js",
        "javascript",
        {
            ("ZlibHeaderTransformStream", "class", 5),
            ("__transform", "method", 6),
            ("_transform", "method", 11),
        },
    ),
    # TypeScript: an abstract class and its methods.
    (
        "removable.ts",
        "typescript",
        {("Removable", "class", 10), ("destroy", "method", 19), ("scheduleGc", "method", 27)},
    ),
    # Python: functions nested in a method, and properties.
    (
        "auth.py.txt",
        "python",
        {
            ("HTTPDigestAuth", "class", 107),
            ("build_digest_header", "method", 126),
            ("md5_utf8", "function", 145),
            ("sha512_utf8", "function", 169),
        },
    ),
    (
        "cookies.py.txt",
        "python",
        {("MockRequest", "class", 23), ("unverifiable", "method", 91), ("host", "method", 99)},
    ),
    # C: functions (also named inside an export macro: `int BZ_API(BZ2_bzCompress) (...)`)
    # and typedef'd structs.
    (
        "bzlib.c",
        "c",
        {
            ("BZ2_bzCompress", "function", 8),
            ("BZ2_bzCompressEnd", "function", 69),
            ("BZ2_bzDecompressInit", "function", 93),
        },
    ),
    ("bzlib_private.h", "c", {("EState", "struct", 77), ("BZ2_blockSort", "function", 84)}),
    # Swift (issue 31): a class, its initialiser, methods and computed properties.
    (
        "FileSystemDirectory.swift",
        "swift",
        {
            ("FileSystemDirectory", "class", 4),
            ("init", "method", 5),
            ("validateType", "method", 9),
            ("create", "method", 20),
            ("size", "field", 34),
            ("exists", "field", 52),
            ("listAsRecords", "method", 64),
            ("info", "method", 82),
            ("needsCreation", "method", 106),
        },
    ),
    # Objective-C: the @implementation, class and instance methods, C functions and
    # macros, and React Native's RCT_EXPORT_METHOD methods (each parsed differently).
    (
        "RNKeychainManager.m",
        "objc",
        {
            ("RNKeychainManager", "impl", 19),
            ("requiresMainQueueSetup", "method", 24),
            ("messageForError", "function", 35),
            ("kAuthenticationType", "constant", 156),
            ("authPolicy", "function", 173),
            ("insertKeychainEntry", "method", 212),
            ("canCheckAuthentication", "method", 384),
            ("isPasscodeAuthAvailable", "method", 402),
            ("getSupportedBiometryType", "method", 418),
            ("setGenericPasswordForOptions", "method", 445),
            ("getGenericPasswordForOptions", "method", 466),
        },
    ),
    # Groovy: a class behind an annotation with arguments, and its methods.
    (
        "KanbanTray.groovy",
        "groovy",
        {
            ("KanbanTray", "class", 33),
            ("bind", "function", 39),
            ("release", "function", 51),
            ("take", "function", 62),
            ("toString", "function", 68),
        },
    ),
    # Clojure: the namespace, a private def, defn names with - and ?.
    (
        "wrapped.clj",
        "clojure",
        {
            ("clojure.core.cache.wrapped", "module", 9),
            ("default-wrapper-fn", "variable", 25),
            ("lookup", "function", 27),
            ("lookup-or-miss", "function", 38),
            ("has?", "function", 88),
            ("through-cache", "function", 153),
            ("soft-cache-factory", "function", 220),
        },
    ),
    # Shell: functions in a library file, and in a script without an extension
    # (`bin/n`, read as bash by its #! line) with its settings.
    (
        "semaphore.bash",
        "bash",
        {
            ("bats_run_under_flock", "function", 3),
            ("bats_semaphore_setup", "function", 21),
            ("bats_semaphore_get_free_slot_count", "function", 108),
        },
    ),
    (
        "n",
        "bash",
        {
            ("log", "function", 9),
            ("trace", "function", 38),
            ("n_grep", "function", 56),
            ("VERSION", "constant", 64),
            ("N_PREFIX", "constant", 66),
            ("set_arch", "function", 171),
            ("display_masked_url", "function", 201),
        },
    ),
    # C++ in a .h header (read as C++ by its content): a class template in a namespace,
    # constructors, destructor, methods returning pointers, a pointer field.
    (
        "scoped-array.h",
        "cpp",
        {
            ("marisa", "module", 7),
            ("scoped_array", "class", 10),
            ("scoped_array", "method", 12),
            ("~scoped_array", "method", 15),
            ("reset", "method", 19),
            ("get", "method", 28),
            ("array_", "field", 40),
        },
    ),
]


@pytest.mark.parametrize(("name", "language", "expected"), CASES, ids=[c[0] for c in CASES])
def test_definition_kinds_on_real_files(
    name: str, language: str, expected: set[tuple[str, str, int]]
) -> None:
    ix = build_symbol_index((DATA / name).read_text(encoding="utf-8"), language)
    assert ix.parsed
    got = {(d.name, d.kind, d.name_line) for d in ix.definitions}
    assert expected <= got, sorted(expected - got)


@pytest.mark.parametrize(
    ("name", "language"),
    [("n", "bash"), ("scoped-array.h", "cpp"), ("RNKeychainManager.m", "objc")],
)
def test_the_language_of_real_files_is_read_from_their_name_or_content(
    tmp_path: Path, name: str, language: str
) -> None:
    (tmp_path / name).write_bytes((DATA / name).read_bytes())
    with open_store(tmp_path) as store:
        assert store.read(name).language == language


def test_an_exported_react_native_method_spans_its_body() -> None:
    ix = build_symbol_index((DATA / "RNKeychainManager.m").read_text(encoding="utf-8"), "objc")
    (method,) = [d for d in ix.definitions if d.name == "isPasscodeAuthAvailable"]
    assert (method.start_line, method.end_line) == (402, 414)


def test_rust_impl_block_spans_its_body() -> None:
    """`impl Ord for Prerelease` is one definition from its `impl` line to its closing brace."""
    ix = build_symbol_index((DATA / "impls.rs").read_text(encoding="utf-8"), "rust")
    (block,) = [d for d in ix.definitions if d.kind == "impl" and d.name_line == 51]
    assert (block.name, block.start_line, block.end_line) == ("Prerelease", 51, 104)
    assert ix.lines(51, 51) == ["impl Ord for Prerelease {"]


def test_kotlin_enum_class_and_interface() -> None:
    source = "enum class Mode { READ, WRITE }\ninterface Source { fun read(n: Long): Long }\n"
    ix = build_symbol_index(source, "kotlin")
    got = {(d.name, d.kind) for d in ix.definitions}
    assert {("Mode", "enum"), ("READ", "constant"), ("Source", "interface")} <= got
    assert ("read", "method") in got
