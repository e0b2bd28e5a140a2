"""Seed 002's twelve cases: item → location → excerpt, status and confidence degradation.

Each case evaluates a small answer against a context directory, as
``citecal eval ANSWER --context DIR`` does, and checks the seed's fields:
``excerpt_status`` (verified / unverified / failed), ``excerpt_confidence``
(high / medium / low) and ``excerpt_verified``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.config import Config
from citecal.models import CitationResult
from citecal.pipeline import evaluate_report
from citecal.source import open_store

MakeRepo = Callable[[dict[str, str | bytes]], Path]


def notes() -> str:
    lines = ["# Meeting notes", "", "## Introduction", ""]
    lines += ["This meeting reviewed the launch plan.", "We want to improve onboarding."]
    while len(lines) < 41:
        lines.append(f"Logistics item number {len(lines) + 1}.")
    lines.append("The project deadline is March 15th, confirmed by John Doe.")
    while len(lines) < 60:
        lines.append(f"Follow-up item number {len(lines) + 1}.")
    lines += ["## Budget", "", "The quarterly budget is 40,000 dollars.", "Hiring is paused."]
    return "\n".join(lines) + "\n"


@pytest.fixture
def context(make_repo: MakeRepo) -> Path:
    return make_repo(
        {
            "ctx-001.md": notes(),
            "talks/review.vtt": "WEBVTT\n\n00:00:00.000 --> 00:02:00.000\nWelcome.\n\n"
            "00:02:00.000 --> 00:02:30.000\nRevenue grew by twelve percent this quarter.\n",
        }
    )


def check(context: Path, answer: str) -> list[CitationResult]:
    store = open_store(context)
    return evaluate_report(answer, store, Config(), no_judge_reason="--no-llm").citations


def status(r: CitationResult) -> tuple[str | None, str | None, bool | None]:
    return r.excerpt_status, r.excerpt_confidence, r.excerpt_verified


def test_01_existing_item_is_verified(context: Path) -> None:
    [r] = check(context, 'John Doe said "The project deadline is March 15th" [[ctx-001]].\n')
    assert status(r) == ("verified", "high", True)
    assert (r.file_path, r.start_line, r.end_line, r.located) == (
        "ctx-001.md",
        1,
        64,
        "whole item (lines 1-64)",
    )


def test_02_missing_item_fails(context: Path) -> None:
    [r] = check(context, 'The deadline is "March 15th" [[ctx-404]].\n')
    assert status(r) == ("failed", "low", False)
    assert (r.valid, r.failure_type) == (False, "invalid_file")
    assert r.error is not None and r.error.startswith("Item not found: ctx-404")


def test_03_single_line_location(context: Path) -> None:
    [r] = check(context, '"The project deadline is March 15th" [[ctx-001:L42]].\n')
    assert status(r) == ("verified", "high", True)
    assert (r.start_line, r.end_line, r.location, r.citation) == (42, 42, "L42", "[[ctx-001:L42]]")
    assert r.excerpt_match is not None and r.excerpt_match.start_line == 42


def test_04_line_range_location(context: Path) -> None:
    [r] = check(context, '"We want to improve onboarding" [[ctx-001:L5-10]].\n')
    assert status(r) == ("verified", "high", True)
    assert (r.start_line, r.end_line) == (5, 10)
    [wrong] = check(context, '"We want to improve onboarding" [[ctx-001:L10-15]].\n')
    assert status(wrong) == ("unverified", "low", False)
    # the best span says where the excerpt really is
    assert wrong.excerpt_match is not None
    assert (wrong.excerpt_match.start_line, wrong.excerpt_match.score) == (6, 1.0)


def test_05_out_of_range_line_fails(context: Path) -> None:
    [r] = check(context, '"March 15th" [[ctx-001:L400]].\n')
    assert status(r) == ("failed", "low", False)
    assert r.error == "Line 400 out of range: ctx-001.md has 64 lines"
    assert r.failure_type == "invalid_range"


def test_06_page_location(context: Path) -> None:
    [r] = check(context, 'The notes say "The quarterly budget is 40,000 dollars" [[ctx-001:p2]].\n')
    assert status(r) == ("verified", "high", True)
    assert (r.start_line, r.end_line, r.located) == (51, 64, "page 2 (lines 51-64)")
    [p9] = check(context, '"budget" [[ctx-001:p9]].\n')
    assert p9.error == "Page 9 out of range: ctx-001.md has 64 lines (2 pages of 50 lines)"


def test_07_section_location(context: Path) -> None:
    [r] = check(context, '"This meeting reviewed the launch plan" [[ctx-001:sec-intro]].\n')
    assert status(r) == ("verified", "high", True)
    assert (r.start_line, r.end_line) == (3, 60)  # up to the next level-2 heading
    assert r.located == "section 'Introduction' (lines 3-60)"


def test_08_exact_quote(context: Path) -> None:
    [r] = check(context, 'Notes: "Hiring is   paused" [[ctx-001:sec-budget]].\n')
    assert status(r) == ("verified", "high", True)
    assert (r.excerpt, r.excerpt_quoted, r.excerpt_score) == ("Hiring is paused", True, 1.0)


def test_09_paraphrase_with_80_percent_word_overlap(context: Path) -> None:
    # significant words: project deadline march 15th confirmed celebrated: 5 of 6 are on line 42
    answer = "The project deadline of March 15th was confirmed and celebrated [[ctx-001:L42]].\n"
    [r] = check(context, answer)
    assert status(r) == ("verified", "high", True)
    assert r.excerpt_quoted is False and r.excerpt_score == pytest.approx(5 / 6, abs=1e-4)


def test_10_excerpt_that_does_not_match(context: Path) -> None:
    [r] = check(context, "The launch was cancelled over legal concerns [[ctx-001:sec-budget]].\n")
    assert status(r) == ("unverified", "low", False)
    assert r.excerpt_score == 0.0


def test_11_citation_without_explicit_excerpt(context: Path) -> None:
    [r] = check(context, "The meeting had notes.\n\n[[ctx-001:L42]]\n")
    assert status(r) == ("unverified", "medium", False)
    assert r.excerpt is None and r.valid


def test_12_multiple_citations_in_one_answer(context: Path) -> None:
    answer = (
        "The deadline is March 15th [[ctx-001:L42]] and revenue grew by twelve percent "
        "[[review:2:15]] while hiring resumed [[ctx-001:sec-budget]].\n"
    )
    a, b, c = check(context, answer)
    # each marker checks only the text since the previous marker
    assert (a.excerpt, b.excerpt, c.excerpt) == (
        "The deadline is March 15th",
        "and revenue grew by twelve percent",
        "while hiring resumed",
    )
    assert [status(r)[0] for r in (a, b, c)] == ["verified", "verified", "unverified"]
    assert (b.file_path, b.start_line, b.end_line) == ("talks/review.vtt", 6, 7)
    assert b.located == "cue at 2:00 (lines 6-7)"
