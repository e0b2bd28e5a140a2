"""The locator's ranking rules (README "`citecal correct`", Locate), one test each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citecal.config import Config
from citecal.correct import Locator, RepoIndex
from citecal.correct._locate import (
    Found,
    claim_query,
    distinct_places,
    support_score,
)
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
