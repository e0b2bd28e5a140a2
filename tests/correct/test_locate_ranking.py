"""The locator's ranking rules (README "`citecal correct`", Locate), one test each."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from citecal.config import Config
from citecal.correct import Locator, RepoIndex
from citecal.correct._locate import (
    Found,
    definition_share,
    distinct_places,
    is_overload_stub,
    support_score,
)
from citecal.correct._query import claim_query
from citecal.models import Citation, Verdict
from citecal.source import open_store

MakeRepo = Callable[[dict[str, str | bytes]], Path]


def _locate(repo: Path, claim: str, original: Citation) -> list[Citation]:
    with open_store(repo) as store:
        found, _ = Locator(RepoIndex.build(store), Config()).locate(claim, original)
    return [f.location for f in found]


def _found(path: str, lo: int, hi: int, rank: float) -> Found:
    verdict = Verdict(verdict="unverified", method="extractive", confidence="low", score=0.5)
    return Found(Citation(path, lo, hi), verdict, rank, True, "name")


def test_the_subject_opens_the_main_clause_after_a_leading_condition() -> None:
    query = claim_query("When no `proxy` is set, `setProxy` reads it from the environment")
    assert query.subject == "setproxy"
    # No name right after the comma: the first name stands.
    query = claim_query("With `Policy.STRING`, the adapter writes `value.toString`")
    assert query.subject == "string"
    assert claim_query("`getAdapter` throws `AxiosError`").subject == "getadapter"


def test_a_place_and_the_lines_inside_it_are_one_place() -> None:
    kept = distinct_places(
        [_found("a.py", 4, 4, 2.0), _found("a.py", 3, 20, 1.99), _found("b.py", 1, 5, 1.0)]
    )
    assert [str(f.location) for f in kept] == ["[a.py:4]", "[b.py:1-5]"]


def test_a_name_enclosing_the_place_counts_as_found_in_the_rank() -> None:
    verdict = Verdict(
        verdict="unverified",
        method="extractive",
        confidence="low",
        score=0.5,
        matched_terms=("With",),
        missing_terms=("Group",),
    )
    kinds = {"Group": "code_span", "With": "code_span"}
    # Weights 3 + 3: giving back `Group` (it encloses the place) makes the score whole.
    assert support_score(verdict, kinds, frozenset({"Group"})) == 1.0
    assert support_score(verdict, kinds, frozenset()) == 0.5


def test_lines_inside_the_named_definition_beat_a_mention_elsewhere(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {
            "pkg/mux.py": (
                "def with_(x):\n    return x\n\n\n"
                "# group builds on with_ and an inline router\n"
                "X = with_\n\n\n"
                "def group(fn):\n    im = with_()\n    fn(im)\n    return im\n"
            ),
            "pkg/other.py": "Y = 1\n",
        }
    )
    claim = "`group` is built on `with_`: it creates the inline router by calling `with_()`"
    found = _locate(repo, claim, Citation("pkg/other.py", 1, 1))
    assert found and found[0].file_path == "pkg/mux.py" and 9 <= found[0].start_line <= 12


def test_a_leading_condition_does_not_choose_the_subject(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {
            "lib/http.js": (
                "function proxy(p) {\n  return setProxy(p, null);\n}\n\n"
                "function setProxy(options, configProxy) {\n  let proxy = configProxy;\n"
                "  if (!proxy) {\n    proxy = getProxyForUrl(options.href);\n  }\n"
                "  return proxy;\n}\n"
            ),
            "lib/other.js": "const x = 1;\n",
        }
    )
    claim = "When no `proxy` is configured, `setProxy` looks the proxy up from the environment."
    found = _locate(repo, claim, Citation("lib/other.js", 1, 1))
    assert found and found[0].file_path == "lib/http.js" and 5 <= found[0].start_line <= 11


def test_a_call_with_arguments_is_kept_whole_and_beats_the_definition(
    make_repo: MakeRepo,
) -> None:
    query = claim_query("It is made by calling `createInstance(defaults)` once")
    assert [t.text for t in query.strong] == ["createInstance", "createInstance(defaults)"]
    repo = make_repo(
        {
            "lib/axios.js": (
                "function createInstance(config) {\n  const context = new Axios(config);\n"
                "  return context;\n}\n\nconst axios = createInstance(defaults);\n"
                "export default axios;\n"
            ),
            "lib/other.js": "const x = 1;\n",
        }
    )
    claim = "The exported singleton is produced by calling `createInstance(defaults)`."
    found = _locate(repo, claim, Citation("lib/other.js", 1, 1))
    assert found and found[0] == Citation("lib/axios.js", 6, 6)


def test_a_word_written_as_a_call_is_a_name_and_its_arguments_are_search_words() -> None:
    query = claim_query("value(Number) checks the toString() of its argument")
    assert [t.text for t in query.strong] == ["toString", "value"]
    assert query.subject == "value"  # the claim opens with it
    assert "number" in query.words


def test_a_name_defined_in_many_places_says_less_about_which(make_repo: MakeRepo) -> None:
    body = "def to_string():\n    return 'a'\n"
    files: dict[str, str | bytes] = {f"pkg/m{n}.py": body for n in range(6)}
    files["pkg/headers.py"] = body
    with open_store(make_repo(files)) as store:
        index = RepoIndex.build(store)
    mine = next(c for c in index.chunks if c.name == "to_string" and c.path == "pkg/m0.py")
    theirs = next(c for c in index.chunks if c.name == "to_string" and c.path == "pkg/headers.py")
    plain = claim_query("`to_string` renders it").locators
    # 7 definitions share the name: being one of them counts 3/7 of the boost.
    assert math.isclose(definition_share(index, mine, plain), 3 / 7, abs_tol=1e-12)
    # Qualified by its module (or a class around it), the name says which one.
    qualified = claim_query("`headers.to_string` renders it").locators
    assert definition_share(index, theirs, qualified) == 1.0
    assert math.isclose(definition_share(index, mine, qualified), 3 / 7, abs_tol=1e-12)


def test_an_overload_signature_is_a_stub_not_a_place(make_repo: MakeRepo) -> None:
    code = (
        "import typing as t\n\n\n"
        "@t.overload\ndef make(salt: bytes = b'itsdangerous') -> bytes: ...\n\n\n"
        "def make(salt=b'itsdangerous'):\n    return salt\n"
    )
    repo = make_repo({"pkg/s.py": code, "pkg/other.py": "X = 1\n"})
    with open_store(repo) as store:
        index = RepoIndex.build(store)
    stubs = {(c.start_line, is_overload_stub(index, c)) for c in index.chunks if c.name == "make"}
    assert stubs == {(4, True), (8, False)}
    found = _locate(repo, "The default salt is `b'itsdangerous'`.", Citation("pkg/other.py", 1, 1))
    assert found and found[0].start_line >= 8  # the implementation, not a tie with its stub


def test_a_claim_about_documentation_may_move_to_the_doc_comment(make_repo: MakeRepo) -> None:
    code = (
        "/// Parse a requirement.\n///\n/// Fails on `>=1.0 <2.0` (a missing comma).\n"
        "pub fn parse(text: &str) -> Result<(), ()> {\n    Ok(())\n}\n\n"
        'pub fn helper() {\n    parse("x");\n}\n'
    )
    repo = make_repo({"src/lib.rs": code})
    original = Citation("src/lib.rs", 4, 6)  # the definition of the subject: kept in its file
    documented = "The documented failures of `parse` include `>=1.0 <2.0`."
    assert Citation("src/lib.rs", 1, 3) in _locate(repo, documented, original)
    behaviour = "`parse` fails on `>=1.0 <2.0`."
    assert Citation("src/lib.rs", 1, 3) not in _locate(repo, behaviour, original)
