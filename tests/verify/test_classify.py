"""Claim classification: seed §3.2.3 decision tree over the §13.1 indicator lists."""

from __future__ import annotations

import pytest

from citecal.config import ABSTRACTIVE_INDICATORS, EXTRACTIVE_INDICATORS, ClassifyConfig
from citecal.errors import ConfigError
from citecal.models import Classification
from citecal.verify import classify_claim
from citecal.verify._classify import compile_indicators

CODE_SPAN, KIND_NAME, LOCATION, NAMED, RELATION = EXTRACTIVE_INDICATORS
PURPOSE, CAPABILITY, CONCEPT, GUARANTEE = ABSTRACTIVE_INDICATORS


@pytest.fixture
def config() -> ClassifyConfig:
    return ClassifyConfig()


@pytest.mark.parametrize(
    ("claim", "pattern"),
    [
        ("Tokens go through `check()` first", CODE_SPAN),
        ("The class AuthManager keeps sessions", KIND_NAME),
        ("The function parse_args reads argv", KIND_NAME),
        ("Timeouts are defined in the settings", LOCATION),
        ("A helper named cleanup runs nightly", NAMED),
        ("On failure it raises ValueError", RELATION),
        ("It calls fetchUser() before rendering", RELATION),
    ],
)
def test_each_extractive_indicator(config: ClassifyConfig, claim: str, pattern: str) -> None:
    assert classify_claim(claim, config) == Classification("extractive", 0.8, (pattern,))


@pytest.mark.parametrize(
    ("claim", "pattern"),
    [
        ("This module handles user lifecycle", PURPOSE),  # seed §2.4.2
        ("The service is responsible for billing", PURPOSE),
        ("The client implements retries", CAPABILITY),
        ("The overall architecture is layered", CONCEPT),
        ("The authentication system prevents replay attacks", GUARANTEE),  # seed §13.2 ex. 2
    ],
)
def test_each_abstractive_indicator(config: ClassifyConfig, claim: str, pattern: str) -> None:
    assert classify_claim(claim, config) == Classification("abstractive", 0.7, (pattern,))


def test_matching_is_case_insensitive(config: ClassifyConfig) -> None:
    assert classify_claim("Handles retries quietly", config).mode == "abstractive"


def test_unknown_when_nothing_matches(config: ClassifyConfig) -> None:
    assert classify_claim("Tokens expire after an hour", config) == Classification(
        "unknown", 0.0, ()
    )


def test_descriptive_words_after_kind_words_are_not_symbols(config: ClassifyConfig) -> None:
    # "function validates" and "returns the" name nothing: no extractive indicator.
    assert classify_claim("The function validates input", config).mode == "unknown"
    assert classify_claim("It returns the result", config).mode == "unknown"


def test_conflict_keeps_extractive_with_lower_confidence(config: ClassifyConfig) -> None:
    # 1 extractive + 1 abstractive: 0.5 + 0.4 * 1/2 = 0.7
    result = classify_claim("`SessionStore` manages sessions", config)
    assert result == Classification("extractive", 0.7, (CODE_SPAN, PURPOSE))
    # 2 extractive + 1 abstractive: 0.5 + 0.4 * 2/3 = 0.7667
    result = classify_claim("The function `validate_token` handles expiry", config)
    assert result == Classification("extractive", 0.7667, (CODE_SPAN, KIND_NAME, PURPOSE))


def test_more_indicators_raise_confidence(config: ClassifyConfig) -> None:
    # 2 extractive: 0.7 + 0.2 = 0.9; 3 abstractive: 0.6 + 0.3 = 0.9
    assert classify_claim("The function `parse` reads argv", config).confidence == 0.9
    claim = "The design provides isolation and ensures that it handles failure"
    assert classify_claim(claim, config) == Classification(
        "abstractive", 0.95, (PURPOSE, CAPABILITY, CONCEPT, GUARANTEE)
    )


def test_citation_markers_do_not_trigger_indicators(config: ClassifyConfig) -> None:
    assert classify_claim("Tokens expire hourly [src/handlers.py:10-12]", config).mode == (
        "unknown"
    )


def test_indicators_are_configurable() -> None:
    config = ClassifyConfig(extractive_indicators=[r"\bTODO\b"], abstractive_indicators=[])
    assert classify_claim("TODO: parse `x`", config) == Classification(
        "extractive", 0.8, (r"\bTODO\b",)
    )
    assert classify_claim("It implements `x`", config).mode == "unknown"


def test_invalid_indicator_is_a_config_error() -> None:
    config = ClassifyConfig(extractive_indicators=["(unclosed"])
    with pytest.raises(
        ConfigError, match=r"classify.extractive_indicators: invalid regex '\(unclosed'"
    ):
        classify_claim("anything", config)


def test_regexes_are_compiled_once_per_list() -> None:
    patterns = (r"\bfoo\b", r"\bbar\b")
    assert compile_indicators(patterns) is compile_indicators(patterns)
