"""Resolving location specifiers (items, sections, timestamps, sentences) and excerpt matching."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.config import Config, ExcerptConfig, ValidationConfig
from citecal.models import CitationResult
from citecal.pipeline import evaluate_report
from citecal.source import open_store
from citecal.verify._excerpt import best_span, match_excerpt, significant_words, word_overlap
from citecal.verify._locations import find_item, slug

MakeRepo = Callable[[dict[str, str | bytes]], Path]
CFG = ExcerptConfig()

RST = """Design
======

Overview
--------

The cache keys verdicts by model.

Storage
-------

Verdicts live in SQLite.
"""
SRT = """1
00:00:01,000 --> 00:00:04,000
Hello and welcome.

2
01:02:10,500 --> 01:02:20,000
The budget doubled last year.
"""
CODE = "import os\n\n\ndef validate_token(token):\n    return token.ok\n\n\nclass Cart:\n    pass\n"
MD = "# Title\n\n```md\n# Not a heading\n```\n\nSetext heading\n--------------\n\nText under it.\n"


def run(
    repo: Path, report: str, context: Path | None = None, **cfg: object
) -> list[CitationResult]:
    store = open_store(repo)
    ctx = open_store(context) if context is not None else None
    config = Config(**cfg)  # type: ignore[arg-type]
    return evaluate_report(report, store, config, no_judge_reason="-", context=ctx).citations


def where(r: CitationResult) -> tuple[bool, int, int, str | None]:
    return r.valid, r.start_line, r.end_line, r.located if r.valid else r.error


def test_rst_and_markdown_sections(make_repo: MakeRepo) -> None:
    repo = make_repo({"design.rst": RST, "notes/readme.md": MD})
    a, b, c, d = run(
        repo,
        "x [[design:sec-storage]] y [[design:sec-design]] "
        "z [[readme:sec-setext-heading]] w [[readme:sec-not-a-heading]]\n",
    )
    assert where(a) == (True, 9, 12, "section 'Storage' (lines 9-12)")
    assert where(b) == (True, 1, 12, "section 'Design' (lines 1-12)")  # level 1 holds the rest
    assert where(c) == (True, 7, 10, "section 'Setext heading' (lines 7-10)")
    assert where(d) == (
        False,
        0,
        0,
        "Section 'not-a-heading' not found in notes/readme.md (headings: Title, Setext heading)",
    )


def test_sections_in_code_are_definitions(make_repo: MakeRepo) -> None:
    repo = make_repo({"auth.py": CODE})
    a, b = run(repo, "x [auth.py:sec-validate_token] y [auth.py:sec-missing]\n")
    assert where(a) == (True, 4, 5, "function validate_token (lines 4-5)")
    assert b.error == (
        "Section 'missing' not found in auth.py: no definition of that name "
        "(defines Cart, validate_token, …)"
    )


def test_srt_timestamps_with_hours(make_repo: MakeRepo) -> None:
    repo = make_repo({"talk.srt": SRT, "notes.md": "Text.\n"})
    a, b, c, d = run(repo, "a [[talk:1:02:15]] b [[talk:0:03]] c [[talk:5:00]] d [[notes:2:15]]\n")
    assert where(a) == (True, 6, 7, "cue at 1:02:10 (lines 6-7)")
    assert where(b) == (True, 2, 3, "cue at 0:01 (lines 2-3)")
    assert c.error == "Timestamp 5:00 not found in talk.srt (cues 0:01-1:02:20)"
    assert d.error == "Timestamp 2:15 needs a .vtt or .srt transcript: notes.md"


def test_sentence_chunk_citations(make_repo: MakeRepo) -> None:
    doc = "# Cache\n\nThe cache is keyed by model. It stores verdicts in SQLite.\n"
    repo = make_repo({"docs/cache.md": doc})
    a, b = run(
        repo, "Verdicts are stored in SQLite [docs/cache.md:S:2]. Nope [docs/cache.md:S:3].\n"
    )
    assert where(a) == (True, 3, 3, "sentence 2 (line 3)")
    assert a.cited_code == "It stores verdicts in SQLite."  # the sentence, not the whole line
    assert a.verdict == "unverified"  # a behaviour claim: the judge decides (README "Routing")
    assert b.error == "Sentence 3 out of range: docs/cache.md has 3 chunks (S:0-S:2)"


def test_unknown_specifier_empty_file_and_items(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {"a/notes.md": "x\n", "b/notes.txt": "y\n", "empty.md": "", "docs/plan.md": "Plan.\n"}
    )
    a, b, c, d, e = run(
        repo,
        "one [[plan:wat]] two [[notes]] three [[empty]] "
        "four [[docs/plan.md]] five [[plan.md:L1]]\n",
    )
    assert a.error == "Unknown location 'wat': use L42, L42-67, p12, sec-name, 2:15, S:3 or general"
    assert b.error == "Ambiguous item id 'notes': a/notes.md, b/notes.txt"
    assert c.error == "Empty file: empty.md"
    assert (d.valid, d.file_path, e.valid, e.file_path) == (
        True,
        "docs/plan.md",
        True,
        "docs/plan.md",
    )


def test_find_item_prefers_the_exact_path(make_repo: MakeRepo) -> None:
    store = open_store(make_repo({"ctx": "a\n", "ctx.md": "b\n"}))
    assert find_item("ctx", store) == "ctx"
    assert find_item("ctx.md", store) == "ctx.md"
    with pytest.raises(LookupError, match="Item not found: nope"):
        find_item("nope", store)


def test_context_directory_holds_items_and_located_paths(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = make_repo({"a.py": "def f():\n    return 1\n", "notes.md": "Repo notes.\n"})
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "notes.md").write_text("Context notes say hello.\n")
    a, b, c = run(
        repo,
        'f returns "return 1" [a.py:2]. "Context notes" [[notes]]. "hello" [notes.md:general].\n',
        context=context,
    )
    assert (a.valid, a.excerpt_status) == (True, "verified")  # a line citation: the repository
    assert b.cited_code == c.cited_code == "Context notes say hello."  # located: the context


def test_page_size_is_configurable(make_repo: MakeRepo) -> None:
    repo = make_repo({"long.txt": "".join(f"line {n}\n" for n in range(1, 26))})
    [r] = run(repo, '"line 12" [[long:p2]]\n', excerpt={"page_lines": 10})
    assert where(r) == (True, 11, 20, "page 2 (lines 11-20)")
    assert r.excerpt_status == "verified"


def test_parallel_workers_give_the_same_results(make_repo: MakeRepo) -> None:
    n_files = 120  # 240 citations: two workers (one per 100 citations, at most `workers`)
    files: dict[str, str | bytes] = {
        f"d{n}.md": f"# D{n}\n\nFact number {n} holds.\n" for n in range(n_files)
    }
    repo = make_repo(files)
    report = "".join(
        f'"Fact number {n} holds" [[d{n}:sec-d{n}]]. Fact [[d{n}:S:9]].\n' for n in range(n_files)
    )
    serial = run(repo, report)
    parallel_config = Config(validation=ValidationConfig(parallel_min_citations=1, workers=2))
    store = open_store(repo, None, parallel_config.validation)
    parallel = evaluate_report(report, store, parallel_config, no_judge_reason="-").citations
    assert [r.model_dump() for r in parallel] == [r.model_dump() for r in serial]
    assert sum(r.excerpt_status == "verified" for r in serial) == n_files


# --------------------------------------------------------------------------- matching


def test_significant_words_and_prefix_matching() -> None:
    assert significant_words('The "deadline", (is) March 15th!') == ["deadline", "march", "15th"]
    # improve ~ improvement (prefix), improvements ~ improve (reverse prefix), cat ≁ category
    assert word_overlap("improve", "an improvement plan", CFG) == 1.0
    assert word_overlap("improvements", "we improve", CFG) == 1.0
    assert word_overlap("improved", "an improvement plan", CFG) == 0.0  # neither is a prefix
    assert word_overlap("category", "a cat", CFG) == 0.0
    assert word_overlap("the a of", "anything", CFG) is None  # nothing significant to check


def test_match_threshold() -> None:
    content = "alpha bravo charlie delta echo"
    assert match_excerpt("alpha bravo charlie delta foxtrot", content, CFG) == (True, 0.8, "words")
    assert match_excerpt("alpha bravo charlie golf foxtrot", content, CFG) == (False, 0.6, "words")
    strict = ExcerptConfig(match_threshold=0.9)
    assert match_excerpt("alpha bravo charlie delta foxtrot", content, strict)[0] is False
    assert match_excerpt("bravo   charlie", content, CFG) == (True, 1.0, "exact")


def test_best_span_reports_lines() -> None:
    text = "first line\nsecond line here\nthe deadline is March 15th\nlast\n"
    span = best_span("deadline is March 16th", text, first_line=10)
    assert span is not None
    assert (span.start_line, span.end_line) == (12, 12)
    assert 0.9 < span.score < 1.0 and "March 15th" in span.text
    assert best_span("second line here the deadline", text).start_line == 2  # type: ignore[union-attr]


def test_slug() -> None:
    assert slug("2.1 Getting *Started*") == "2-1-getting-started"
    assert slug("validate_token") == "validate-token"
