"""Claim classification (README "Routing"): which verifier a claim needs.

The decision tree's indicator regexes are taken from
:class:`~citecal.config.ClassifyConfig` so users can extend them:

1. any extractive indicator (code span, "function X", "defined in", ...)
   → ``extractive``;
2. else any abstractive indicator ("handles", "implements", "architecture")
   → ``abstractive``;
3. else ``unknown`` (the pipeline gives these the conservative extractive
   check, README "Routing" ``default_unknown_handling``).

The confidence says how clear the signal is, not whether the claim is true:
one extractive indicator alone gives 0.8, each further distinct indicator
adds 0.1 (capped at 0.95); abstractive-only claims start at 0.7 (behaviour
words are weaker evidence than code names). When both kinds match, the
extractive mode still wins (a named symbol can be checked
cheaply), but the confidence drops to ``0.5 + 0.4 * e / (e + a)`` for ``e``
extractive and ``a`` abstractive indicators, i.e. 0.7 for one of each.
Unknown claims have confidence 0.0: no indicator matched.
"""

from __future__ import annotations

from citecal._regex import BoundedPatterns, bounded_patterns
from citecal.config import ClassifyConfig
from citecal.models import Classification
from citecal.verify._terms import strip_citations


def compile_indicators(
    patterns: tuple[str, ...], setting: str = "classify.indicators"
) -> BoundedPatterns:
    """Compile indicator regexes once per distinct list (case-insensitive, time-bounded).

    Searches are bounded by :data:`citecal._regex.SEARCH_TIMEOUT_S`, so a
    pattern with catastrophic backtracking cannot hold the run (README "Security").

    Raises:
        ConfigError: a pattern is not a valid regular expression (named in the message).
    """
    return bounded_patterns(setting, patterns)


def _matched(patterns: list[str], text: str, setting: str) -> list[str]:
    return compile_indicators(tuple(patterns), setting).matching(text)


def classify_claim(claim: str, config: ClassifyConfig) -> Classification:
    """Classify ``claim`` as extractive, abstractive or unknown.

    Citation markers (``[src/a.py:1-5]``) are removed first so that a file
    name cannot trigger an indicator.

    Args:
        claim: The claim sentence.
        config: Indicator lists (regexes, matched case-insensitively).

    Returns:
        The mode, a confidence in [0, 1] (see the module docstring) and the
        indicator patterns that matched, extractive ones first, in
        configuration order.

    Raises:
        ConfigError: an indicator is not a valid regular expression.
    """
    text = strip_citations(claim)
    extractive = _matched(config.extractive_indicators, text, "classify.extractive_indicators")
    abstractive = _matched(config.abstractive_indicators, text, "classify.abstractive_indicators")
    n_e, n_a = len(extractive), len(abstractive)
    matched = tuple(extractive + abstractive)
    if n_e and n_a:
        return Classification("extractive", round(0.5 + 0.4 * n_e / (n_e + n_a), 4), matched)
    if n_e:
        return Classification("extractive", round(min(0.95, 0.7 + 0.1 * n_e), 4), matched)
    if n_a:
        return Classification("abstractive", round(min(0.95, 0.6 + 0.1 * n_a), 4), matched)
    return Classification("unknown", 0.0, ())


__all__ = ["classify_claim", "compile_indicators"]
