"""Choosing which citations annotators see: all, uncertain-first, stratified."""

from __future__ import annotations

import pytest
from annotate_factories import make_citation

from citecal.annotate._sampling import rule_judge_conflict, select_citations, uncertainty
from citecal.models import CitationResult, EscalationRecord


def pool() -> list[CitationResult]:
    return [
        make_citation(id="sure", verdict="supports", confidence="high", score=1.0),
        make_citation(id="half", verdict="partial", confidence="low", score=0.5),
        make_citation(
            id="conflict",
            method="llm",
            mode="abstractive",
            verdict="not_supports",
            confidence="high",
            score=0.0,
            matched_terms=["Cart", "items", "dict", "keys", "sku"],
            missing_terms=[],
        ),
        make_citation(id="lean", verdict="supports", confidence="low", score=0.67),
        make_citation(id="no", verdict="not_supports", confidence="high", score=0.0),
        make_citation(id="abs", mode="abstractive", method="llm", verdict="supports", score=0.9),
    ]


def ids(cs: list[CitationResult]) -> list[str]:
    return [c.id for c in cs]


def test_no_sample_keeps_everything_in_order() -> None:
    assert ids(select_citations(pool(), None, "uncertain")) == ids(pool())
    assert ids(select_citations(pool(), 100, "all")) == ids(pool())


def test_uncertain_puts_conflicts_then_low_confidence_first() -> None:
    chosen = select_citations(pool(), 3, "uncertain")
    assert set(ids(chosen)) == {"conflict", "half", "lean"}
    assert ids(chosen) == ["half", "conflict", "lean"]  # report order is kept


def test_conflicts_and_uncertainty() -> None:
    p = {c.id: c for c in pool()}
    assert rule_judge_conflict(p["conflict"])
    assert not rule_judge_conflict(p["sure"])  # extractive: rule and verdict are the same
    few_terms = make_citation(
        method="llm", verdict="supports", matched_terms=["a"], missing_terms=["b", "c"]
    )
    assert rule_judge_conflict(few_terms)
    escalated = make_citation(
        method="llm",
        verdict="supports",
        escalated_from=EscalationRecord(
            model="m", verdict="not_supports", confidence="low", score=None, reasoning=""
        ),
    )
    assert rule_judge_conflict(escalated)
    assert uncertainty(p["half"]) == 1.0
    assert uncertainty(p["sure"]) == 0.0
    assert uncertainty(p["lean"]) == pytest.approx(0.66)


def test_all_is_a_seeded_random_sample() -> None:
    a = select_citations(pool(), 3, "all", seed=1)
    assert ids(a) == ids(select_citations(pool(), 3, "all", seed=1))
    assert len(a) == 3
    seeds = {tuple(ids(select_citations(pool(), 3, "all", seed=s))) for s in range(20)}
    assert len(seeds) > 1


def test_stratified_covers_every_mode_and_verdict_group() -> None:
    chosen = select_citations(pool(), 4, "stratified", seed=0)
    groups = {(c.mode, c.verdict) for c in chosen}
    assert len(groups) == 4  # one from each of 4 of the 5 (mode, verdict) groups
    assert len(chosen) == 4


def test_zero_sample() -> None:
    assert select_citations(pool(), 0, "all") == []
