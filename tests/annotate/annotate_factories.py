"""Factories for annotation tests: citations and evaluations built from the models."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citecal.models import CitationResult, EvalResult, Summary


def make_citation(**over: Any) -> CitationResult:
    """A valid, extractively verified citation; override any field."""
    base: dict[str, Any] = {
        "id": "c0",
        "citation": "[shop/cart.py:10-12]",
        "file_path": "shop/cart.py",
        "start_line": 10,
        "end_line": 12,
        "claim": "The `Cart` class keeps items in a dict",
        "section": "Cart",
        "paragraph_index": 0,
        "position": 0,
        "valid": True,
        "error": None,
        "failure_type": None,
        "mode": "extractive",
        "verdict": "supports",
        "method": "extractive",
        "confidence": "high",
        "score": 1.0,
        "reasoning": None,
        "matched_terms": ["Cart", "items"],
        "missing_terms": [],
        "suggested_action": None,
        "model": None,
        "prompt_version": None,
        "language": "python",
        "context": "The `Cart` class keeps items in a dict [shop/cart.py:10-12].",
        "cited_code": "class Cart:\n    def __init__(self):\n        self.items = {}",
    }
    base.update(over)
    return CitationResult.model_validate(base)


def make_eval(citations: list[CitationResult], **over: Any) -> EvalResult:
    """An evaluation of ``citations`` (summary figures are not used by annotate)."""
    n = len(citations)
    summary = Summary(
        total_citations=n,
        valid_citations=sum(c.valid for c in citations),
        validity_rate=None,
        extractive_checked=0,
        extractive_supports=0,
        extractive_precision=None,
        abstractive_checked=0,
        abstractive_supports=0,
        abstractive_precision=None,
        overall_precision=None,
        unverified=0,
        total_claims=n,
        cited_claims=n,
        coverage=None,
    )
    base: dict[str, Any] = {
        "report": "report.md",
        "repo": "/nonexistent/repo",
        "rev": None,
        "summary": summary,
        "citations": citations,
        "failed_citations": [c for c in citations if not c.valid],
    }
    base.update(over)
    return EvalResult.model_validate(base)


ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Stack:
    """The Argilla server the integration tests use."""

    url: str
    api_key: str
    started_here: bool
