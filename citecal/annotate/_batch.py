"""Sampling a batch output (``citecal eval-batch``) for annotators, across its reports.

``citecal push OUT/citations.parquet`` reads the batch's tables, draws a
seeded sample of valid citations across reports (stratified by repository and
verdict by default, :func:`~citecal.annotate.sample_across_reports`) and
turns the chosen rows back into one :class:`~citecal.models.EvalResult` per
report, so records are built exactly as for ``citecal push eval.json``.
Only the few columns sampling needs are read for every citation; whole rows
are read for the chosen reports only, so a 100 000-report output is sampled
without loading it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from citecal.annotate._sampling import (
    Candidate,
    Strategy,
    candidate_group,
    rule_judge_conflict,
    sample_across_reports,
    sampling_weights,
    uncertainty,
)
from citecal.errors import InputError
from citecal.models import EvalResult, Summary

SAMPLING_COLUMNS = (
    "report_id",
    "id",
    "position",
    "verdict",
    "confidence",
    "score",
    "method",
    "matched_terms",
    "missing_terms",
    "escalated_from",
)


@dataclass(frozen=True, slots=True)
class _Escalated:
    verdict: str


@dataclass(frozen=True, slots=True)
class _Judged:
    """A citations row with only the sampling columns (satisfies ``Judged``)."""

    verdict: str | None
    confidence: str | None
    score: float | None
    method: str | None
    matched_terms: list[str]
    missing_terms: list[str]
    escalated_from: _Escalated | None


def is_batch_output(path: Path) -> bool:
    """True for ``OUT/citations.parquet`` (a directory of parts) or ``OUT`` itself."""
    return (path.is_dir() and path.suffix == ".parquet") or (path / "citations.parquet").is_dir()


def batch_root(path: Path) -> Path:
    """The output directory of ``OUT/citations.parquet`` or ``OUT``.

    Raises:
        InputError: it lacks the reports table that says which repository each report cites.
    """
    root = path if (path / "citations.parquet").is_dir() else path.parent
    if not (root / "reports.parquet").is_dir():
        raise InputError(
            f"{path} is not an eval-batch output: {root / 'reports.parquet'} is missing"
        )
    return root


@dataclass(frozen=True)
class BatchSample:
    """The chosen citations, regrouped as evaluations, and how many valid ones were left out."""

    results: list[EvalResult]
    candidates: int
    chosen: int
    weights: list[dict[tuple[str, int], float]] | None = None
    """Per result: sampling weight of each chosen citation by (id, position); None: no weights."""
    design: str = "census"
    """How the sample was drawn (:func:`~citecal.annotate._sampling.sampling_weights`)."""


def sample_batch(
    path: Path, n: int | None, strategy: Strategy = "stratified", seed: int = 0
) -> BatchSample:
    """Draw ``n`` valid citations across the reports of the batch output at ``path``.

    Raises:
        InputError: not a batch output, or it holds no committed report yet.
    """
    from citecal.batch import BatchOutput, to_citation

    output = BatchOutput(batch_root(path))
    reports = {r["report_id"]: r for r in output.read("reports").to_pylist()}
    if not reports:
        raise InputError(f"{output.root} holds no evaluated report yet")
    candidates: list[Candidate[tuple[str, str, int]]] = []
    valid = pc.field("valid")
    for batch in output.scan("citations", columns=SAMPLING_COLUMNS, filter=valid):
        for row in batch.to_pylist():
            escalated = row["escalated_from"]
            judged = _Judged(
                verdict=row["verdict"],
                confidence=row["confidence"],
                score=row["score"],
                method=row["method"],
                matched_terms=row["matched_terms"] or [],
                missing_terms=row["missing_terms"] or [],
                escalated_from=_Escalated(escalated["verdict"]) if escalated else None,
            )
            rid = row["report_id"]
            candidates.append(
                Candidate(
                    key=(rid, row["id"], row["position"]),
                    repo=str(reports[rid]["repo"]),
                    verdict=row["verdict"],
                    conflict=rule_judge_conflict(judged),
                    uncertainty=uncertainty(judged),
                )
            )
    keys = sample_across_reports(candidates, n, strategy, seed)
    by_key = {c.key: c for c in candidates}
    chosen_candidates = [by_key[k] for k in keys]
    weights, design = sampling_weights(candidates, chosen_candidates, strategy, candidate_group)
    wanted: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for rid, cid, position in keys:
        wanted[rid].add((cid, position))
    chosen: dict[str, list[Any]] = defaultdict(list)
    if wanted:
        where = pc.field("report_id").isin(sorted(wanted))
        for batch in output.scan("citations", filter=where):
            for row in batch.to_pylist():
                if (row["id"], row["position"]) in wanted[row["report_id"]]:
                    chosen[row["report_id"]].append(to_citation(row))
    results = []
    per_result: list[dict[tuple[str, int], float]] = []
    for rid in sorted(chosen, key=lambda r: reports[r]["manifest_row"]):
        if weights is not None:
            per_result.append(
                {(cid, pos): weights[id(by_key[(rid, cid, pos)])] for cid, pos in wanted[rid]}
            )
        meta = reports[rid]
        results.append(
            EvalResult(
                report=meta["report"],
                repo=meta["repo"],
                rev=meta["rev"],
                summary=Summary.model_validate({k: meta[k] for k in Summary.model_fields}),
                citations=chosen[rid],
                failed_citations=[c for c in chosen[rid] if c.failure_type is not None],
            )
        )
    return BatchSample(
        results, len(candidates), len(keys), per_result if weights is not None else None, design
    )
