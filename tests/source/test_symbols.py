"""Symbol index: definitions with kinds, strings, comments per language; token fallback."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.source import Definition, SymbolIndex, build_symbol_index
from citecal.source._symbols import LANGUAGE_QUERIES, _compiled_query, normalize_language


def index(source: str, language: str | None) -> SymbolIndex:
    return build_symbol_index(textwrap.dedent(source).lstrip("\n"), language)


def defs(ix: SymbolIndex) -> set[tuple[str, str, int]]:
    return {(d.name, d.kind, d.name_line) for d in ix.definitions}


PYTHON = """
    \"\"\"Auth helpers.\"\"\"
    MAX_RETRIES = 3
    timeout = 30

    class AuthManager(Base):
        level: int = 1

        def __init__(self, secret):
            self.secret = secret  # the signing secret

        @staticmethod
        def validate_token(token):
            def inner():
                return "expired"
            return inner()

    def helper(x):
        return x
"""


def test_python_definitions_kinds_and_lines() -> None:
    ix = index(PYTHON, "python")
    assert ix.parsed is True
    assert ix.language == "python"
    assert defs(ix) == {
        ("MAX_RETRIES", "constant", 2),
        ("timeout", "variable", 3),
        ("AuthManager", "class", 5),
        ("level", "field", 6),
        ("__init__", "method", 8),
        ("secret", "field", 9),
        ("validate_token", "method", 12),
        ("inner", "function", 13),
        ("helper", "function", 17),
    }
    (cls,) = ix.find_definition("AuthManager")
    assert (cls.start_line, cls.end_line) == (5, 15)
    # The decorated method spans from its `def` line, not the decorator.
    (method,) = ix.find_definition("validate_token")
    assert (method.start_line, method.end_line) == (12, 15)


def test_python_strings_and_comments() -> None:
    ix = index(PYTHON, "python")
    assert [(s.start_line, s.end_line) for s in ix.strings] == [(1, 1), (14, 14)]
    assert [(c.start_line, c.end_line) for c in ix.comments] == [(9, 9)]
    assert ix.comments_in(1, 8) == []
    assert len(ix.comments_in(9, 9)) == 1
    assert len(ix.strings_in(10, 20)) == 1


def test_definitions_in_uses_the_name_line() -> None:
    ix = index(PYTHON, "python")
    assert [d.name for d in ix.definitions_in(8, 12)] == ["__init__", "secret", "validate_token"]
    assert ix.definitions_in(13, 13) == [Definition("inner", "function", 13, 14, 13)]
    assert ix.definitions_in(100, 200) == []
    assert ix.definitions_in(10, 9) == []


def test_find_definition_dotted_and_case() -> None:
    ix = index(PYTHON, "python")
    assert [d.name_line for d in ix.find_definition("self.secret")] == [9]
    assert ix.find_definition("authmanager") == []
    assert [d.kind for d in ix.find_definition("authmanager", case_sensitive=False)] == ["class"]


def test_tokens_and_lines_with() -> None:
    ix = index(PYTHON, "python")
    tokens = ix.tokens_in(8, 9)
    assert {"__init__", "self", "secret", "self.secret", "signing", "the"} <= tokens
    assert "validate_token" not in tokens
    assert ix.lines_with("secret") == [8, 9]
    assert ix.lines_with("SECRET") == [8, 9]
    assert ix.lines_with("self.secret") == [9]
    assert ix.lines_with("nowhere") == []


def test_javascript_definitions() -> None:
    ix = index(
        """
        // comment
        class Foo extends Bar {
          count = 0;
          constructor(a) { this.timeout = a; }
          run() { return "go"; }
        }
        function top() {}
        const arrow = (x) => x;
        axios.create = function create(cfg) {};
        const LIMIT = 10;
        """,
        "javascript",
    )
    assert defs(ix) == {
        ("Foo", "class", 2),
        ("count", "field", 3),
        ("constructor", "method", 4),
        ("timeout", "field", 4),
        ("run", "method", 5),
        ("top", "function", 7),
        ("arrow", "function", 8),
        ("create", "function", 9),
        ("LIMIT", "constant", 10),
    }
    assert [(s.start_line, s.end_line) for s in ix.strings] == [(5, 5)]
    assert [c.start_line for c in ix.comments] == [1]


def test_language_aliases_share_the_index() -> None:
    src = "export const handler = async (event) => { return 1; };\n"
    assert defs(build_symbol_index(src, "js")) == {("handler", "function", 1)}
    assert normalize_language("TS") == "typescript"
    assert normalize_language("rs") == "rust"
    assert normalize_language(None) is None


def test_typescript_interface_class_and_members() -> None:
    ix = index(
        """
        interface Options { retries: number; go(x: number): void; }
        type Alias = string;
        enum Color { Red }
        export class Service implements Options {
          private retries: number = 3;
          go(x: number): void { this.last = x; }
        }
        """,
        "typescript",
    )
    assert defs(ix) == {
        ("Options", "interface", 1),
        ("retries", "field", 1),
        ("go", "method", 1),
        ("Alias", "type", 2),
        ("Color", "enum", 3),
        ("Service", "class", 4),
        ("retries", "field", 5),
        ("go", "method", 6),
        ("last", "field", 6),
    }


def test_tsx_parses_jsx() -> None:
    ix = index(
        """
        export function Button(props: Props) {
          return <button onClick={props.onClick}>{"Save"}</button>;
        }
        """,
        "tsx",
    )
    assert ix.parsed is True
    assert defs(ix) == {("Button", "function", 1)}


def test_go_definitions() -> None:
    ix = index(
        """
        package main
        // Server holds config
        type Server struct {
        \tAddr string
        }
        type Handler interface { Serve(x int) error }
        const MaxRetries = 3
        func (s *Server) Start() error { return nil }
        func main() { _ = "hello" }
        """,
        "go",
    )
    assert defs(ix) == {
        ("Server", "struct", 3),
        ("Addr", "field", 4),
        ("Handler", "interface", 6),
        ("Serve", "method", 6),
        ("MaxRetries", "constant", 7),
        ("Start", "method", 8),
        ("main", "function", 9),
    }
    assert [c.start_line for c in ix.comments] == [2]
    assert [s.start_line for s in ix.strings] == [9]


def test_java_definitions() -> None:
    ix = index(
        """
        /** A user. */
        public class User {
          private String name = "x";
          public User(String n) { this.name = n; }
          public String getName() { return name; } // getter
          interface Listener { void changed(); }
        }
        """,
        "java",
    )
    assert defs(ix) == {
        ("User", "class", 2),
        ("name", "field", 3),
        ("User", "method", 4),
        ("getName", "method", 5),
        ("Listener", "interface", 6),
        ("changed", "method", 6),
    }
    assert [c.start_line for c in ix.comments] == [1, 5]


def test_rust_definitions() -> None:
    ix = index(
        """
        /// Settings.
        pub struct Config { pub timeout: u64 }
        trait Greet { fn hi(&self); }
        impl Config {
            pub fn new() -> Self { Config { timeout: 3 } }
        }
        fn helper() { let s = "str"; }
        """,
        "rust",
    )
    assert defs(ix) == {
        ("Config", "struct", 2),
        ("timeout", "field", 2),
        ("Greet", "trait", 3),
        ("hi", "method", 3),
        ("Config", "impl", 4),  # the impl block, named by its type (issue 21)
        ("new", "method", 5),
        ("helper", "function", 7),
    }
    # A `///` comment swallows its newline; it still ends on its own line.
    assert [(c.start_line, c.end_line) for c in ix.comments] == [(1, 1)]


def test_fallback_language_gives_tokens_only() -> None:
    ix = index(
        """
        function greet(name)
          print("hello " .. name)
        end
        """,
        "lua",
    )
    assert ix.parsed is False
    assert ix.language == "lua"
    assert ix.definitions == ()
    assert ix.definitions_in(1, 3) == []
    assert {"greet", "name", "print", "hello"} <= ix.tokens_in(1, 3)
    assert ix.lines_with("name") == [1, 2]
    assert build_symbol_index("x = 1\n", None).parsed is False


def test_line_counting_crlf_and_no_trailing_newline() -> None:
    ix = build_symbol_index("def a():\r\n    return 1\r\n\r\ndef b(): pass", "python")
    assert ix.line_count == 4
    assert ix.lines(1, 2) == ["def a():", "    return 1"]
    assert defs(ix) == {("a", "function", 1), ("b", "function", 4)}
    assert build_symbol_index("", "python").line_count == 0


def test_syntax_errors_still_index_what_parses() -> None:
    ix = build_symbol_index("def ok():\n    pass\n\ndef broken(:\n", "python")
    assert ix.parsed is True
    assert ("ok", "function", 1) in defs(ix)


@pytest.mark.parametrize("language", sorted(LANGUAGE_QUERIES))
def test_every_language_query_compiles(language: str) -> None:
    query, first_text_pattern = _compiled_query(language)
    assert 0 < first_text_pattern < query.pattern_count


def test_span_columns_text_and_kind_at() -> None:
    ix = index(PYTHON, "python")
    (comment,) = ix.comments_in(9, 9)
    assert ix.span_text(comment) == "# the signing secret"
    (string,) = ix.strings_in(14, 14)
    assert ix.span_text(string) == '"expired"'
    line = ix.lines(9, 9)[0]
    assert ix.text_kind_at(9, line.index("signing")) == "comment"
    assert ix.text_kind_at(9, line.index("secret")) is None  # `self.secret = secret`
    assert ix.text_kind_at(14, ix.lines(14, 14)[0].index("expired")) == "string"
    assert ix.text_kind_at(14, 0) is None


def test_multiline_string_span() -> None:
    ix = build_symbol_index('x = 1\ndoc = """first\nsecond\n"""\n', "python")
    (string,) = ix.strings
    assert (string.start_line, string.end_line) == (2, 4)
    assert ix.span_text(string) == '"""first\nsecond\n"""'
    assert ix.text_kind_at(3, 0) == "string"
    assert ix.text_kind_at(2, 0) is None


def test_enclosing_definitions() -> None:
    ix = index(PYTHON, "python")
    assert [d.name for d in ix.enclosing_definitions(14)] == [
        "AuthManager",
        "validate_token",
        "inner",
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "def f{n}(x):\n    return x\n",
                "class C{n}:\n    y = 1\n\n    def m{n}(self):\n        self.z = 2\n",
                "# note {n}\n",
                "s{n} = 'text {n}'\n",
                "\n",
            ]
        ),
        max_size=25,
    ),
    st.integers(min_value=-3, max_value=80),
    st.integers(min_value=0, max_value=30),
)
def test_range_queries_agree_with_a_linear_scan(blocks: list[str], start: int, width: int) -> None:
    source = "".join(block.format(n=i) for i, block in enumerate(blocks))
    ix = build_symbol_index(source, "python")
    end = start + width
    assert ix.definitions_in(start, end) == [
        d for d in ix.definitions if start <= d.name_line <= end
    ]
    for spans, query in ((ix.strings, ix.strings_in), (ix.comments, ix.comments_in)):
        expected = {
            (s.start_line, s.end_line) for s in spans if s.start_line <= end and s.end_line >= start
        }
        assert {(s.start_line, s.end_line) for s in query(start, end)} == expected
    line = max(start, 1)
    assert {d.name for d in ix.enclosing_definitions(line)} == {
        d.name for d in ix.definitions if d.start_line <= line <= d.end_line
    }
    assert ix.line_count == source.count("\n")


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        (
            "c",
            "#define MAX 3\nstruct point { int x; };\nstatic int helper(int a) { return a; }\n",
            {
                ("MAX", "constant", 1),
                ("point", "struct", 2),
                ("x", "field", 2),
                ("helper", "function", 3),
            },
        ),
        (
            "cpp",
            "class Server {\n public:\n  int port = 80;\n  void start();\n};\n"
            "void Server::start() {}\n",
            {
                ("Server", "class", 1),
                ("port", "field", 3),
                ("start", "method", 4),
                ("start", "method", 6),
            },
        ),
        (
            "ruby",
            "class Session\n  attr_reader :token\n  def initialize(t)\n    @token = t\n  end\n"
            "end\ndef helper; end\n",
            {
                ("Session", "class", 1),
                ("token", "field", 2),
                ("initialize", "method", 3),
                ("token", "field", 4),
                ("helper", "function", 7),
            },
        ),
        (
            "csharp",
            "public class User {\n  public int Age { get; set; }\n  public void Save() { }\n}\n",
            {("User", "class", 1), ("Age", "field", 2), ("Save", "method", 3)},
        ),
        (
            "swift",
            "protocol Loader { func load() }\n"
            "final class Disk: Loader {\n  var count = 0\n  init() {}\n  func load() {}\n}\n"
            "extension Disk { func extra() {} }\nenum Mode { case read, write }\n"
            "struct Point { let x: Double }\nfunc top() {}\n",
            {
                ("Loader", "interface", 1),
                ("load", "method", 1),
                ("Disk", "class", 2),
                ("count", "field", 3),
                ("init", "method", 4),
                ("load", "method", 5),
                ("Disk", "impl", 7),
                ("extra", "method", 7),
                ("Mode", "enum", 8),
                ("read", "constant", 8),
                ("write", "constant", 8),
                ("Point", "struct", 9),
                ("x", "field", 9),
                ("top", "function", 10),
            },
        ),
        (
            "objc",
            "#define MAX_KEYS 8\n@protocol Store <NSObject>\n- (void)clear;\n@end\n"
            "@interface Keychain : NSObject\n@property NSString *service;\n+ (BOOL)ready;\n@end\n"
            "@implementation Keychain\n+ (BOOL)ready { return YES; }\n"
            "RCT_EXPORT_METHOD(getItem:(NSString *)key resolver:(id)resolve)\n{\n}\n@end\n",
            {
                ("MAX_KEYS", "constant", 1),
                ("Store", "interface", 2),
                ("clear", "method", 3),
                ("Keychain", "class", 5),
                ("service", "field", 6),
                ("ready", "method", 7),
                ("Keychain", "impl", 9),
                ("ready", "method", 10),
                ("getItem", "method", 11),
            },
        ),
        (
            "clojure",
            '(ns my.cli "Docs.")\n(def ^:private defaults {:a 1})\n(defn- tokenize [args] args)\n'
            "(defn parse-opts\n  [args specs] nil)\n(defmacro with-x [& body] body)\n"
            "(defprotocol Shape (area [s]))\n(defrecord Circle [r])\n(defmethod render :a [x] x)\n",
            {
                ("my.cli", "module", 1),
                ("defaults", "variable", 2),
                ("tokenize", "function", 3),
                ("parse-opts", "function", 4),
                ("with-x", "function", 6),
                ("Shape", "interface", 7),
                ("Circle", "struct", 8),
                ("render", "method", 9),
            },
        ),
        (
            "groovy",
            "@CompileStatic(value = TypeCheckingMode.PASS)\nclass Builder {\n"
            "    static final int TIMEOUT = 30\n    def get(Closure c) { c.call() }\n"
            "    Object post(Map args) {\n        return pool.submit(args) { it }\n    }\n}\n"
            "interface Client { def request() }\n",
            {
                ("Builder", "class", 2),
                ("TIMEOUT", "field", 3),
                ("get", "function", 4),
                ("post", "function", 5),
                ("Client", "interface", 9),
            },
        ),
        (
            "bash",
            "BATS_VERSION=1.11\nexport BATS_ROOT=/x\nrun() {\n  local x=1\n}\n"
            "function other {\n  :\n}\n",
            {
                ("BATS_VERSION", "constant", 1),
                ("BATS_ROOT", "constant", 2),
                ("run", "function", 3),
                ("other", "function", 6),
            },
        ),
    ],
)
def test_more_languages(language: str, source: str, expected: set[tuple[str, str, int]]) -> None:
    ix = build_symbol_index(source, language)
    assert ix.parsed is True
    assert defs(ix) == expected


def test_huge_files_are_not_parsed() -> None:
    source = "def f():\n    return 1\n"
    assert build_symbol_index(source, "python", max_parse_chars=10).parsed is False
    small = build_symbol_index(source, "python", max_parse_chars=len(source))
    assert small.parsed is True
    assert defs(small) == {("f", "function", 1)}
