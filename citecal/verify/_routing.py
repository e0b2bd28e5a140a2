"""Who decides a claim: the rules or the judge (README "Routing").

This is the one place routing is decided. Rules decide only what they can
prove (:func:`citecal.verify.verify_extractive`): a verdict of ``supports`` or
``not_supports`` from the rules stands, whatever the claim's classification.
Everything else goes to the judge, with the rule evidence attached, except
where the user's configuration says otherwise for *unknown* claims (no
extractive or abstractive indicator, README "Routing"):

``classify.default_unknown_handling``
    ``"judge"`` (default): unknown claims go to the judge like any other;
    ``"abstractive"``: they are reported as abstractive and go to the judge;
    ``"extractive"``: they are never sent to the judge; the term-coverage
    thresholds decide them (``coverage``), with medium confidence.
``classify.use_llm_classification``
    Unknown claims that go to the judge are also classified by it, in the
    same call (the judge's answer carries ``mode``).

Without a judge (``--no-llm``, no API key) a claim routed to the judge is
``unverified``: nothing guesses in its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from citecal.config import ClassifyConfig
from citecal.models import Classification, Verdict

Route = Literal["rules", "judge", "coverage"]
"""``rules``: the rule verdict stands; ``judge``: the judge decides; ``coverage``: the
term-coverage thresholds decide (unknown claims under ``default_unknown_handling = extractive``)."""


@dataclass(frozen=True, slots=True)
class Routing:
    """Where a claim goes, under which classification, and whether the judge classifies it."""

    route: Route
    classification: Classification
    classify_with_judge: bool = False


def route_claim(
    classification: Classification, rule: Verdict | None, config: ClassifyConfig
) -> Routing:
    """Route one structurally valid claim (rules in the module docstring)."""
    if (
        rule is not None
        and rule.method == "extractive"
        and rule.verdict
        in (
            "supports",
            "not_supports",
        )
    ):
        return Routing("rules", classification)
    if classification.mode != "unknown":
        return Routing("judge", classification)
    handling = config.default_unknown_handling
    if handling == "extractive" and rule is not None and rule.score is not None:
        return Routing("coverage", classification)
    if handling == "abstractive":
        classification = Classification("abstractive", 0.0, classification.matched_patterns)
        return Routing("judge", classification)
    return Routing("judge", classification, classify_with_judge=config.use_llm_classification)


__all__ = ["Route", "Routing", "route_claim"]
