"""Sampling weights: what push records so `citecal estimate`'s interval is valid."""

from __future__ import annotations

from typing import Any

from annotate_factories import make_citation, make_eval

from citecal.annotate import build_records, load_spec
from citecal.annotate._pull import annotation_rows
from citecal.annotate._push import with_sampling
from citecal.annotate._sampling import citation_group, sampling_weights, select_citations
from citecal.models import CitationResult


def pool() -> list[CitationResult]:
    # 6 extractive supports, 3 extractive not_supports, 1 abstractive supports.
    out = [make_citation(id=f"s{i}", claim=f"claim s{i}") for i in range(6)]
    out += [
        make_citation(id=f"n{i}", claim=f"claim n{i}", verdict="not_supports", score=0.0)
        for i in range(3)
    ]
    out.append(make_citation(id="a0", claim="claim a0", mode="abstractive", method="llm"))
    return out


def test_uniform_sample_weights_are_n_over_k() -> None:
    citations = pool()
    chosen = select_citations(citations, 4, "all", seed=1)
    weights, design = sampling_weights(citations, chosen, "all", citation_group)
    assert design == "all"
    assert weights == {id(c): 10 / 4 for c in chosen}  # N / n = 10 / 4


def test_stratified_weights_are_group_size_over_picks() -> None:
    # Round-robin over 3 groups with n = 5: picks 2, 2, 1 in sorted group order
    # (extractive/not_supports, extractive/supports, abstractive/supports → sorted:
    # abstractive/supports 1 of 1, extractive/not_supports 2 of 3, extractive/supports 2 of 6).
    citations = pool()
    chosen = select_citations(citations, 5, "stratified", seed=0)
    weights, design = sampling_weights(citations, chosen, "stratified", citation_group)
    assert design == "stratified" and weights is not None
    by_group = {citation_group(c): weights[id(c)] for c in chosen}
    assert by_group == {
        ("abstractive", "supports"): 1.0,  # 1 of 1
        ("extractive", "not_supports"): 3 / 2,  # 2 of 3
        ("extractive", "supports"): 6 / 2,  # 2 of 6
    }
    # The weights add up to the population: Σ w = N.
    assert sum(weights.values()) == len(citations)


def test_uncertain_has_no_weights_and_a_census_weighs_one() -> None:
    citations = pool()
    chosen = select_citations(citations, 3, "uncertain")
    assert sampling_weights(citations, chosen, "uncertain", citation_group) == (None, "uncertain")
    everything = select_citations(citations, None, "uncertain")
    weights, design = sampling_weights(citations, everything, "uncertain", citation_group)
    assert design == "census" and set(weights.values()) == {1.0}  # type: ignore[union-attr]


def test_records_carry_the_design_and_pull_brings_it_back() -> None:
    citations = pool()
    result = make_eval(citations)
    chosen = select_citations(citations, 4, "all", seed=1)
    weights, design = sampling_weights(citations, chosen, "all", citation_group)
    assert weights is not None
    built = build_records(result, load_spec(), citations=chosen)
    records = with_sampling(built.records, lambda c: weights.get(id(c)), design)
    assert all(r.metadata["_sampling_strategy"] == "all" for r in records)
    assert all(r.metadata["_sampling_weight"] == 2.5 for r in records)
    server: dict[str, Any] = {
        "id": "x",
        "external_id": records[0].id,
        "fields": dict(records[0].fields),
        "metadata": dict(records[0].metadata),
        "responses": [
            {
                "user_id": "u1",
                "status": "submitted",
                "values": {"supports_claim": {"value": 3}},
                "inserted_at": "2026-11-22T10:00:00",
                "updated_at": "2026-11-22T10:00:00",
            }
        ],
        "suggestions": [],
    }
    rows, _ = annotation_rows([server], load_spec(), {"u1": "alice"})
    assert rows[0]["sampling_weight"] == 2.5 and rows[0]["sampling_strategy"] == "all"
    uncertain = with_sampling(built.records, lambda c: None, "uncertain")
    assert "_sampling_weight" not in uncertain[0].metadata
