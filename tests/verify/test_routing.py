"""Routing: one function decides who settles each claim, and its settings are used."""

from __future__ import annotations

import pytest

from citecal.config import ClassifyConfig
from citecal.models import Classification, Verdict
from citecal.verify import route_claim


def rule(verdict: str, score: float | None = 0.5) -> Verdict:
    return Verdict(verdict=verdict, method="extractive", confidence="high", score=score)  # type: ignore[arg-type]


EXTRACTIVE = Classification("extractive", 0.8, ("`[^`]+`",))
ABSTRACTIVE = Classification("abstractive", 0.7, ("handles",))
UNKNOWN = Classification("unknown", 0.0, ())


@pytest.mark.parametrize("mode", [EXTRACTIVE, ABSTRACTIVE, UNKNOWN])
@pytest.mark.parametrize("decided", ["supports", "not_supports"])
def test_a_rule_decision_stands_whatever_the_mode(mode: Classification, decided: str) -> None:
    routing = route_claim(mode, rule(decided), ClassifyConfig())
    assert routing.route == "rules"
    assert routing.classification == mode


@pytest.mark.parametrize("mode", [EXTRACTIVE, ABSTRACTIVE])
def test_everything_rules_cannot_prove_goes_to_the_judge(mode: Classification) -> None:
    assert route_claim(mode, rule("unverified"), ClassifyConfig()).route == "judge"
    assert route_claim(mode, None, ClassifyConfig()).route == "judge"


def test_unknown_claims_default_to_the_judge() -> None:
    routing = route_claim(UNKNOWN, rule("unverified"), ClassifyConfig())
    assert (routing.route, routing.classification.mode, routing.classify_with_judge) == (
        "judge",
        "unknown",
        False,
    )


def test_unknown_as_abstractive_is_judged_and_reported_abstractive() -> None:
    config = ClassifyConfig(default_unknown_handling="abstractive")
    routing = route_claim(UNKNOWN, rule("unverified"), config)
    assert (routing.route, routing.classification.mode) == ("judge", "abstractive")


def test_unknown_as_extractive_is_decided_by_term_coverage() -> None:
    config = ClassifyConfig(default_unknown_handling="extractive")
    assert route_claim(UNKNOWN, rule("unverified", 0.9), config).route == "coverage"
    # Without checkable terms there is no coverage to decide by: the judge.
    assert route_claim(UNKNOWN, rule("unverified", None), config).route == "judge"
    # Known modes are not affected.
    assert route_claim(EXTRACTIVE, rule("unverified", 0.9), config).route == "judge"


def test_llm_classification_asks_the_judge_to_classify_unknown_claims_only() -> None:
    config = ClassifyConfig(use_llm_classification=True)
    assert route_claim(UNKNOWN, rule("unverified"), config).classify_with_judge
    assert not route_claim(EXTRACTIVE, rule("unverified"), config).classify_with_judge


def test_old_setting_name_is_read_as_judge() -> None:
    assert ClassifyConfig(default_unknown_handling="llm").default_unknown_handling == "judge"  # type: ignore[arg-type]
