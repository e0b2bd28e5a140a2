"""Annotation tables for calibration tests: small literal ones and seeded synthetic ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def row(
    record: str,
    annotator: str,
    human: int,
    verdict: str | None,
    *,
    report: str = "rep1",
    confidence: str | None = "high",
    score: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One annotation-table row with the DESIGN.md columns (extras passed through)."""
    out: dict[str, Any] = {
        "record_id": record,
        "report_id": report,
        "citation": "[src/cart.py:1-3]",
        "claim": f"claim of {record}",
        "cited_code": "def f():\n    return 1",
        "mode": "abstractive",
        "judge_model": "gpt-4o-mini",
        "prompt_version": "v1",
        "llm_verdict": verdict,
        "llm_confidence": confidence,
        "llm_score": score,
        "annotator": annotator,
        "human_score": human,
        "line_range": "correct",
        "notes": None,
        "submitted_at": "2026-01-01T00:00:00+00:00",
    }
    out.update(extra)
    return out


def synthetic(
    n_records: int = 120,
    n_annotators: int = 3,
    n_reports: int = 8,
    *,
    seed: int = 0,
    judge_noise: float = 0.2,
    human_noise: float = 0.3,
) -> pd.DataFrame:
    """A seeded table: latent 0–3 truth, noisy annotators, a judge flipping at ``judge_noise``."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_records)
    flip = rng.random(n_records) < judge_noise
    supports = (truth >= 2) ^ flip
    conf = rng.choice(["high", "medium", "low"], n_records)
    rows = []
    for r in range(n_records):
        for a in range(n_annotators):
            jitter = rng.integers(-1, 2) if rng.random() < human_noise else 0
            rows.append(
                row(
                    f"r{r:04d}",
                    f"ann{a}",
                    int(np.clip(truth[r] + jitter, 0, 3)),
                    "supports" if supports[r] else "not_supports",
                    report=f"rep{r % n_reports}",
                    confidence=str(conf[r]),
                    mode="abstractive" if r % 3 else "extractive",
                    line_range=["correct", "too_narrow", "too_broad", None][r % 4],
                )
            )
    return pd.DataFrame(rows)


def judged_eval(verdicts: list[str | None], *, report: str = "report.md", rev: str | None = None):  # type: ignore[no-untyped-def]
    """An :class:`EvalResult` with one valid citation per verdict (None: invalid citation)."""
    from citecal.models import CitationResult, EvalResult, Summary

    citations = []
    for i, v in enumerate(verdicts):
        citations.append(
            CitationResult.model_validate(
                {
                    "id": f"c{i}",
                    "citation": f"[shop/cart.py:{i + 1}-{i + 2}]",
                    "file_path": "shop/cart.py",
                    "start_line": i + 1,
                    "end_line": i + 2,
                    "claim": f"claim {i}",
                    "section": "Cart",
                    "paragraph_index": 0,
                    "position": i,
                    "valid": v is not None,
                    "error": None if v is not None else "out of range",
                    "failure_type": None if v is not None else "invalid_range",
                    "mode": None if v is None else ("extractive" if i % 2 else "abstractive"),
                    "verdict": v,
                    "method": None if v is None else "llm",
                    "confidence": None if v is None else "high",
                    "score": None,
                    "reasoning": None,
                    "matched_terms": [],
                    "missing_terms": [],
                    "suggested_action": None,
                    "model": None,
                    "prompt_version": None,
                    "language": "python",
                }
            )
        )
    n = len(citations)
    summary = Summary(
        total_citations=n,
        valid_citations=n,
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
    return EvalResult(
        report=report,
        repo="/repos/shop",
        rev=rev,
        summary=summary,
        citations=citations,
        failed_citations=[],
    )
