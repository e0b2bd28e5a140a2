"""Pure record building: ids, fields, metadata, suggestions, blind mode, cited code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from annotate_factories import make_citation, make_eval

from citecal._markup import md_text
from citecal.annotate import build_records, load_spec
from citecal.annotate._push import repo_reader
from citecal.annotate._records import (
    code_window,
    judge_agent,
    record_id,
    render_cited_code,
    report_id,
)
from citecal.models import support_score

SPEC = load_spec()
# argilla-server's AGENT_REGEX
AGENT_RE = re.compile(r"^[a-zA-Z0-9-_:\.\/\s]*[a-zA-Z0-9][a-zA-Z0-9-_:\.\/\s]*$")


def llm_citation(**over: object) -> object:
    base = {
        "id": "j1",
        "mode": "abstractive",
        "method": "llm",
        "verdict": "not_supports",
        "confidence": "medium",
        "score": None,
        "reasoning": "The code never caches totals.",
        "model": "gpt-4o-mini",
        "prompt_version": "v1:3f2a9c",
        "matched_terms": [],
        "missing_terms": [],
    }
    base.update(over)
    return make_citation(**base)


def test_record_ids_are_stable_and_depend_on_report_claim_citation_rev() -> None:
    c = make_citation()
    a = build_records(make_eval([c]), SPEC).records[0]
    again = build_records(make_eval([make_citation()]), SPEC).records[0]
    assert a.id == again.id and len(a.id) == 32
    rid = report_id(make_eval([c]))
    assert a.id == record_id(rid, c, None)
    assert record_id(rid, c, "abc123") != a.id
    assert record_id(rid, make_citation(claim="Other claim"), None) != a.id
    assert record_id(rid, make_citation(citation="[shop/cart.py:10-13]"), None) != a.id
    other_report = report_id(make_eval([c], report="other.md"))
    assert other_report != rid and record_id(other_report, c, None) != a.id


def test_fields_and_metadata_follow_the_spec() -> None:
    c = llm_citation()
    rec = build_records(make_eval([c], repo="shop", rev="deadbeef"), SPEC).records[0]
    assert rec.fields["claim"] == md_text(c.claim)  # Markdown fields: escaped (README "Security")
    assert rec.fields["citation"] == "[shop/cart.py:10-12]"  # a text field: HTML-escaped
    assert rec.fields["judge_reasoning"] == md_text("The code never caches totals.")
    assert rec.fields["context"] == md_text(c.context)
    metadata = dict(rec.metadata)
    raw = metadata.pop("_citecal")  # the raw record data pull reads (README "Annotation table")
    assert raw["judge"] == {
        "verdict": "not_supports",
        "confidence": "medium",
        "score": 0.17,
        "model": "gpt-4o-mini",
        "prompt_version": "v1:3f2a9c",
        "reasoning": "The code never caches totals.",
        "method": "llm",
        # README "Judge confidence": not said, so the judge's own words (1 - 0.17)
        "confidence_source": "verbal",
        "confidence_value": pytest.approx(0.83),
    }
    assert raw["cited_code"] == c.cited_code and "▶" not in raw["cited_code"]
    assert (raw["start_line"], raw["end_line"], raw["rev"]) == (10, 12, "deadbeef")
    assert (raw["repository"], raw["claim"], raw["citation_id"]) == ("shop", c.claim, "j1")
    assert metadata == {
        "mode": "abstractive",
        "judge_model": "gpt-4o-mini",
        "prompt_version": "v1:3f2a9c",
        "report_id": report_id(make_eval([c], repo="shop")),
        "repo": "shop",
        "file": "shop/cart.py",
        "language": "python",
        "judge_score": 0.17,  # not_supports / medium (DESIGN.md mapping)
        # hidden from annotators, read back by pull
        "_verdict": "not_supports",
        "_confidence": "medium",
        "_method": "llm",
        "_rev": "deadbeef",
        "_citation_id": "j1",
        "_judge_reasoning": "The code never caches totals.",
    }


@pytest.mark.parametrize(
    ("verdict", "confidence", "expected"),
    [("supports", "high", 3), ("partial", "low", 2), ("not_supports", "high", 0)],
)
def test_verdict_becomes_a_rating_suggestion(verdict: str, confidence: str, expected: int) -> None:
    c = llm_citation(verdict=verdict, confidence=confidence)
    (s,) = build_records(make_eval([c]), SPEC).records[0].suggestions
    assert (s.question, s.value) == ("supports_claim", expected)
    assert s.score == support_score(verdict, confidence)
    assert s.agent == "gpt-4o-mini v1:3f2a9c"


def test_judge_score_is_used_when_given_and_unverified_gets_no_suggestion() -> None:
    c = llm_citation(verdict="supports", confidence="low", score=0.9)
    (s,) = build_records(make_eval([c]), SPEC).records[0].suggestions
    assert s.score == 0.9
    unverified = llm_citation(verdict="unverified", confidence="low")
    assert build_records(make_eval([unverified]), SPEC).records[0].suggestions == ()


def test_blind_mode_drops_suggestions_and_reasoning_but_keeps_hidden_metadata() -> None:
    rec = build_records(make_eval([llm_citation()]), SPEC, blind=True).records[0]
    assert rec.suggestions == ()
    assert "judge_reasoning" not in rec.fields
    assert rec.metadata["_verdict"] == "not_supports"
    assert rec.metadata["_judge_reasoning"] == "The code never caches totals."


def test_invalid_and_repeated_citations_are_skipped_with_a_reason() -> None:
    bad = make_citation(id="b", valid=False, error="File not found: x.py", verdict=None, mode=None)
    dup = make_citation()
    built = build_records(make_eval([make_citation(), bad, dup]), SPEC)
    assert len(built.records) == 1
    assert built.skipped == (
        ("[shop/cart.py:10-12]", "invalid citation: File not found: x.py"),
        ("[shop/cart.py:10-12]", "duplicate of an earlier record"),
    )


def test_a_rule_verdict_is_not_offered_as_the_judges() -> None:
    """--no-llm: no suggestion, a note saying there is no judge verdict, the rule kept apart."""
    c = make_citation(matched_terms=["Cart"], missing_terms=["dict"], verdict="partial")
    rec = build_records(make_eval([c]), SPEC).records[0]
    assert rec.fields["judge_reasoning"] == (
        "**No judge verdict.** The rule check decided it (partial). "
        "Term matching: found `Cart`; missing `dict`."
    )
    assert rec.suggestions == ()
    assert "judge_score" not in rec.metadata
    raw = rec.metadata["_citecal"]
    assert "judge" not in raw and raw["extractive_verdict"] == "partial"
    assert rec.metadata["_matched_terms"] == "Cart" and rec.metadata["_missing_terms"] == "dict"


def test_a_claim_the_judge_was_not_asked_about_says_so() -> None:
    c = llm_citation(verdict="unverified", confidence="low", model=None, prompt_version=None,
                     reasoning="LLM judge not used: --no-llm.")  # fmt: skip
    rec = build_records(make_eval([c]), SPEC).records[0]
    assert rec.fields["judge_reasoning"] == "**No judge verdict.** " + md_text(
        "LLM judge not used: --no-llm."
    )
    assert rec.suggestions == () and "judge" not in rec.metadata["_citecal"]


@pytest.mark.parametrize(
    ("model", "version", "expected"),
    [
        ("gpt-4o-mini", "v1:abc", "gpt-4o-mini v1:abc"),
        ("org/model@2024#1", "v2+x", "org/model-2024-1 v2-x"),
        ("ollama:llama3.1:8b", None, "ollama:llama3.1:8b"),
        ("模型", "β", "citecal judge"),
        (None, None, "citecal judge"),
        ("m" * 300, "v1", "m" * 200),
    ],
)
def test_agent_is_sanitised_to_what_argilla_accepts(
    model: str | None, version: str | None, expected: str
) -> None:
    agent = judge_agent(model, version)
    assert agent == expected
    assert AGENT_RE.match(agent) and len(agent) <= 200


def test_cited_code_marks_cited_lines_with_real_numbers() -> None:
    lines = code_window(["a", "b", "c", "d", "e"], 8, 10, 11)
    md = render_cited_code("shop/cart.py", "python", lines, 10, 11)
    assert md.splitlines() == [
        "`shop/cart.py`, lines 10–11 (▶ cited, 3 context lines)",
        "",
        "```python",
        "   8  a",
        "   9  b",
        "▶ 10  c",
        "▶ 11  d",
        "  12  e",
        "```",
    ]


def test_cited_code_fence_survives_backticks_in_code() -> None:
    md = render_cited_code("README.md", None, code_window(["```x", "y"], 1, 1, 2), 1, 2)
    assert md.splitlines()[2] == "````" and md.splitlines()[-1] == "````"


def test_without_the_repository_only_cited_lines_are_shown() -> None:
    rec = build_records(make_eval([make_citation()]), SPEC).records[0]
    assert "▶ 10  class Cart:" in rec.fields["cited_code"]
    assert "▶ 12          self.items = {}" in rec.fields["cited_code"]
    assert "context lines" not in rec.fields["cited_code"]


def test_repo_reader_adds_context_lines(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "cart.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    result = make_eval([make_citation()], repo=str(repo))
    with repo_reader(result) as read:
        assert read is not None
        built = build_records(result, SPEC, read_code=read)
    code = built.records[0].fields["cited_code"]
    assert "   7  line 7" in code and "▶ 10  line 10" in code and "  15  line 15" in code
    assert "line 6\n" not in code and "line 16" not in code


def test_repo_reader_is_none_when_the_recorded_repo_is_gone() -> None:
    with repo_reader(make_eval([make_citation()], repo="/nonexistent/x")) as read:
        assert read is None


def test_the_judges_confidence_travels_in_the_raw_metadata() -> None:
    """README "Judge confidence": push carries confidence_source and confidence_value."""
    numeric = llm_citation(verdict="supports", confidence="high", score=0.8,
                           confidence_source="consistency", confidence_value=0.8)  # fmt: skip
    old = llm_citation(id="j2", verdict="not_supports", confidence="medium", score=None)
    built = build_records(make_eval([numeric, old]), SPEC)
    first, second = (r.data for r in built.records)
    assert first is not None and first.judge is not None
    assert (first.judge.confidence_source, first.judge.confidence_value) == ("consistency", 0.8)
    assert first.columns()["confidence_value"] == 0.8
    # An evaluation written before confidence sources: the judge's own words (0.17 → 0.83).
    assert second is not None and second.judge is not None
    assert second.judge.confidence_source == "verbal"
    assert second.judge.confidence_value == pytest.approx(
        1 - support_score("not_supports", "medium")
    )
