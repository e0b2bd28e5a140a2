"""push --strategy abstained: what the cascade sent to a person first, with valid weights."""

from __future__ import annotations

from annotate_factories import make_citation

from citecal.annotate._sampling import (
    abstained,
    abstained_group,
    sampling_weights,
    select_citations,
)


def _pool(n_abst: int, n_rest: int) -> list:  # type: ignore[type-arg]
    out = []
    for i in range(n_abst):
        out.append(
            make_citation(id=f"a{i}", verdict="unverified", suggested_action="annotate", position=i)
        )
    for i in range(n_rest):
        out.append(make_citation(id=f"d{i}", verdict="supports", position=100 + i))
    return out


def test_abstained_first_then_a_tenth_from_the_rest_with_stratum_weights() -> None:
    pool = _pool(30, 70)
    chosen = select_citations(pool, 20, "abstained", seed=1)
    sent = [c for c in chosen if abstained(c)]
    # 20 * 0.1 = 2 drawn from the 70 decided; 18 of the 30 sent to a person.
    assert (len(chosen), len(sent)) == (20, 18)
    weights, design = sampling_weights(pool, chosen, "abstained", abstained_group)
    assert design == "stratified" and weights is not None
    assert {weights[id(c)] for c in sent} == {30 / 18}
    assert {weights[id(c)] for c in chosen if not abstained(c)} == {70 / 2}
    # Inverse inclusion probabilities add up to the population (unbiased totals).
    assert abs(sum(weights.values()) - 100) < 1e-9


def test_every_abstained_citation_fits_when_the_budget_allows() -> None:
    pool = _pool(5, 95)
    chosen = select_citations(pool, 20, "abstained", seed=2)
    assert sum(abstained(c) for c in chosen) == 5 and len(chosen) == 20
    weights, _ = sampling_weights(pool, chosen, "abstained", abstained_group)
    assert weights is not None
    assert {weights[id(c)] for c in chosen if abstained(c)} == {1.0}
    assert {weights[id(c)] for c in chosen if not abstained(c)} == {95 / 15}
