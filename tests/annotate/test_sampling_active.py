"""Active sampling: probabilities favouring uncertain verdicts, a uniform floor, rounds."""

from __future__ import annotations

import math

import pytest
from annotate_factories import make_citation, make_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.annotate import build_records, load_spec
from citecal.annotate._rounds import (
    NO_PRIOR,
    in_random_order,
    plan_active_round,
    prior_from_metadata,
)
from citecal.annotate._sampling import (
    active_probabilities,
    active_uncertainty,
    cumulative_probability,
    poisson_draw,
)


def test_uncertainty_peaks_at_half_and_abstentions_count_fully() -> None:
    sure = make_citation(verdict="supports", score=1.0, method="llm")
    torn = make_citation(verdict="supports", score=0.5, method="llm")
    leaning = make_citation(verdict="supports", score=0.9, method="llm")
    abstained = make_citation(verdict="unverified", score=None, method="llm")
    assert active_uncertainty(sure) == 0.0
    assert active_uncertainty(torn) == 1.0
    assert math.isclose(active_uncertainty(leaning), 2 * math.sqrt(0.9 * 0.1), abs_tol=1e-12)
    assert active_uncertainty(abstained) == 1.0


def test_probabilities_add_up_to_n_with_a_floor() -> None:
    # u = (0, 0, 1, 1): ū = 0.5, q = 0.5 + 0.5·u/ū = (0.5, 0.5, 1.5, 1.5), Σq = 4;
    # n = 2 → c = 2/4 = 0.5 → π = (0.25, 0.25, 0.75, 0.75).
    probs, design = active_probabilities([0.0, 0.0, 1.0, 1.0], 2, floor=0.5)
    assert probs == pytest.approx([0.25, 0.25, 0.75, 0.75], abs=1e-12)
    assert design.probability(0.0) == pytest.approx(0.25)
    # The floor: no record below floor·n/N = 0.5·2/4.
    assert min(probs) >= 0.5 * 2 / 4 - 1e-12


def test_probabilities_are_capped_at_one() -> None:
    # u = (0, 0, 0, 1), floor 0.5: ū = 0.25, q = (0.5, 0.5, 0.5, 2.5); n = 2 →
    # c = 2/4 gives π₄ = 1.25 > 1: cap it, then c = (2 − 1)/1.5 → π = (1/3, 1/3, 1/3, 1).
    probs, _ = active_probabilities([0.0, 0.0, 0.0, 1.0], 2, floor=0.5)
    assert probs == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0], abs=1e-12)
    assert sum(probs) == pytest.approx(2.0)


def test_poisson_draw_is_seeded_and_cumulative_probability_is_one_minus_escape() -> None:
    assert poisson_draw([0.5] * 20, 3) == poisson_draw([0.5] * 20, 3)
    assert poisson_draw([1.0, 0.0, 1.0], 0) == [0, 2]
    assert cumulative_probability([0.2, 0.5]) == pytest.approx(1 - 0.8 * 0.5)


def test_two_rounds_record_every_round_probability() -> None:
    ids = ["a", "b", "c", "d"]
    u = [0.0, 0.0, 1.0, 1.0]
    first = plan_active_round(ids, u, 2, NO_PRIOR, seed=1, floor=0.5)
    assert first.round == 1 and first.pool == 4
    assert set(first.metadata) == set(first.drawn)
    prior = prior_from_metadata([(rid, first.metadata[rid]) for rid in first.drawn])
    assert prior.rounds == 1 and prior.drawn == (len(first.drawn),)
    second = plan_active_round(ids, u, 1, prior, seed=1, floor=0.5)
    assert second.round == 2
    assert not set(second.drawn) & set(first.drawn)  # only records no round drew
    # Every drawn record (both rounds) carries π for both rounds; its weight is
    # 1 / (1 − (1 − π₁)(1 − π₂)).
    for rid, meta in second.metadata.items():
        p1, p2 = (float(x) for x in str(meta["_sampling_probabilities"]).split(","))
        assert meta["_sampling_probability"] == pytest.approx(1 - (1 - p1) * (1 - p2))
        assert meta["_sampling_weight"] == pytest.approx(1 / (1 - (1 - p1) * (1 - p2)))
        want_round = 1 if rid in first.drawn else 2
        assert meta["_sampling_round"] == want_round
    # Round 1's probabilities are what round 1 gave: π = (0.25, 0.25, 0.75, 0.75).
    for rid in first.drawn:
        p1 = float(str(second.metadata[rid]["_sampling_probabilities"]).split(",")[0])
        assert p1 == pytest.approx({"a": 0.25, "b": 0.25, "c": 0.75, "d": 0.75}[rid])


def test_random_order_is_seeded_recorded_and_keeps_known_places() -> None:
    citations = [make_citation(id=f"c{i}", claim=f"claim {i}") for i in range(12)]
    built = build_records(make_eval(citations), load_spec())
    ordered = in_random_order(built.records, seed=5)
    assert [r.metadata["_sampling_order"] for r in ordered] == list(range(12))
    assert [r.id for r in ordered] != [r.id for r in built.records]  # shuffled
    assert [r.id for r in in_random_order(built.records, seed=5)] == [r.id for r in ordered]
    known = {ordered[0].id: 0, ordered[1].id: 1}
    again = in_random_order(built.records, seed=9, known=known)
    assert [r.id for r in again[:2]] == [ordered[0].id, ordered[1].id]
    assert sorted(r.metadata["_sampling_order"] for r in again) == list(range(12))


@settings(max_examples=200, deadline=None)
@given(
    u=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=60),
    share=st.floats(0.01, 1.0),
    floor=st.floats(0.05, 1.0),
)
def test_probabilities_sum_to_n_and_respect_the_floor(
    u: list[float], share: float, floor: float
) -> None:
    n = share * len(u)
    probs, design = active_probabilities(u, n, floor)
    assert sum(probs) == pytest.approx(min(n, len(u)), rel=1e-9, abs=1e-9)
    assert all(floor * n / len(u) - 1e-12 <= p <= 1.0 for p in probs)
    # The recorded design gives every record the probability it had.
    assert [design.probability(x) for x in u] == pytest.approx(probs, abs=1e-12)


def test_a_numeric_confidence_drives_the_active_design() -> None:
    """README "Judge confidence": u = 2·√(c(1 − c)) from confidence_value, whatever the words."""
    import math

    from annotate_factories import make_citation

    from citecal.annotate._sampling import active_uncertainty

    def judged(value: float | None, source: str | None) -> object:
        return make_citation(method="llm", verdict="supports", confidence="high", score=1.0,
                             matched_terms=[], missing_terms=[], model="m",
                             confidence_source=source, confidence_value=value)  # fmt: skip

    assert active_uncertainty(judged(None, None)) == 0.0  # "high", score 1: sure, by its word
    assert math.isclose(active_uncertainty(judged(0.6, "consistency")), 2 * math.sqrt(0.24))
    assert math.isclose(active_uncertainty(judged(0.9, "logprob")), 0.6)
    assert active_uncertainty(judged(1.0, "consistency")) == 0.0
