"""The annotation table's columns and row model (README "Annotation table").

One row per (record, annotator). The column names are public API: ``citecal
pull`` writes them, ``citecal calibrate`` / ``estimate`` / ``rejudge`` read
them, and tables from other tools may carry just the core ones. Columns are
added, never renamed; :data:`SCHEMA_VERSION` counts the additions.

:class:`RecordData` is the part of a row that belongs to the record (claim,
raw cited code and its line numbers, repository identity, the judge's
verdict): ``citecal push`` stores it with each Argilla record as metadata,
so ``pull`` reads it back as it was and nothing parses the Markdown shown
to annotators.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citecal.models import (
    JUDGE_COLUMNS,
    Confidence,
    ConfidenceSource,
    JudgeVerdict,
    LineRangeAnswer,
    Method,
    VerdictLabel,
)

SCHEMA_VERSION = 3
"""Version of the table's columns: 1 had the 35 columns of :data:`ANNOTATION_COLUMNS`
and :data:`EXTRA_COLUMNS`; 2 added :data:`RAW_COLUMNS`; 3 added :data:`CONFIDENCE_COLUMNS`."""

ANNOTATION_COLUMNS: tuple[str, ...] = (
    "record_id",
    "report_id",
    "citation",
    "claim",
    "cited_code",
    "mode",
    "judge_model",
    "prompt_version",
    "llm_verdict",
    "llm_confidence",
    "llm_score",
    "annotator",
    "human_score",
    "line_range",
    "notes",
    "submitted_at",
)
"""The core columns (README "Annotation table"), in order: what ``calibrate`` can use
from any tool's table."""

EXTRA_COLUMNS: tuple[str, ...] = (
    "annotator_id",
    "status",
    "correction",
    "language",
    "file_path",
    "repo",
    "rev",
    "method",
    "citation_id",
    "matched_terms",
    "missing_terms",
    "judge_reasoning",
    "response_inserted_at",
    "dataset",
    "workspace",
    "correction_strategy",
    "correction_suggested",
    "sampling_strategy",
    "sampling_weight",
    "sampling_probability",
    "sampling_round",
    "sampling_order",
    "sampling_drawn",
)
"""What ``pull`` writes after the core columns (schema 1)."""

RAW_COLUMNS: tuple[str, ...] = (
    "start_line",
    "end_line",
    "context_before",
    "context_after",
    "repository",
    "commit",
    "extractive_verdict",
)
"""Schema 2: the cited lines' numbers and the context around them, the repository's stable
identity, and the rule check's verdict (kept out of the ``llm_*`` columns)."""

CONFIDENCE_COLUMNS: tuple[str, ...] = ("confidence_source", "confidence_value")
"""Schema 3: how the judge's confidence was measured and how likely its verdict is right
(README "Judge confidence"). Tables without them still load: ``calibrate`` reads their
confidence from the judge's words (``verbal``)."""

TABLE_COLUMNS: tuple[str, ...] = (
    ANNOTATION_COLUMNS + EXTRA_COLUMNS + RAW_COLUMNS + CONFIDENCE_COLUMNS
)
"""Every column ``pull`` writes, in order."""


class RecordData(BaseModel):
    """What a record is about, stored raw with it in Argilla (``_citecal`` metadata).

    ``cited_code`` is the cited lines exactly as read (no numbers, no
    Markdown), ``start_line``..``end_line`` their numbers, ``context_before``
    / ``context_after`` the lines around them that annotators also saw.
    ``repository`` is a stable identity of the evaluated repository (its
    remote URL, else its absolute path) and ``commit`` the commit read, when
    it is a git repository. ``judge`` is None when no judge gave a verdict
    (``--no-llm``): a rule verdict goes to ``extractive_verdict`` instead.
    """

    model_config = ConfigDict(extra="ignore")

    schema_version: int = SCHEMA_VERSION
    report_id: str
    citation: str
    citation_id: str | None = None
    claim: str
    cited_code: str = ""
    start_line: int | None = None
    end_line: int | None = None
    context_before: str = ""
    context_after: str = ""
    file_path: str | None = None
    language: str | None = None
    mode: str | None = None
    method: Method | None = None
    repo: str | None = None
    rev: str | None = None
    repository: str | None = None
    commit: str | None = None
    judge: JudgeVerdict | None = None
    extractive_verdict: VerdictLabel | None = None
    matched_terms: str | None = None
    missing_terms: str | None = None
    p_supports: float | None = None
    """The local verifier's calibrated support probability at push time (for sampling;
    never shown to annotators; docs/explanation/cascade.md)."""
    risk_rank: int | None = None
    """1 = the report's citation most likely unsupported at push time."""

    def columns(self) -> dict[str, Any]:
        """This record's columns of the annotation table (judge columns flattened)."""
        judge = self.judge.columns() if self.judge is not None else dict.fromkeys(JUDGE_COLUMNS)
        return {
            "report_id": self.report_id,
            "citation": self.citation,
            "claim": self.claim,
            "cited_code": self.cited_code,
            "mode": self.mode,
            **judge,
            "language": self.language,
            "file_path": self.file_path,
            "repo": self.repo,
            "rev": self.rev,
            "method": self.method,
            "citation_id": self.citation_id,
            "matched_terms": self.matched_terms or None,
            "missing_terms": self.missing_terms or None,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "context_before": self.context_before or None,
            "context_after": self.context_after or None,
            "repository": self.repository,
            "commit": self.commit,
            "extractive_verdict": self.extractive_verdict,
        }


class AnnotationRow(BaseModel):
    """One (record, annotator) row: every column ``pull`` writes, each typed.

    Other tools' tables may add columns (kept) and leave out all but the
    core ones; ``calibrate`` validates those column by column
    (:func:`citecal.annotations.validate_table`) because it reads a million
    rows, where building a model per row would be slow.
    """

    model_config = ConfigDict(extra="allow")

    record_id: str = Field(min_length=1, description="Stable record id (push's external id).")
    report_id: str = Field(description="Stable id of the evaluated report.")
    citation: str = Field(description="Normalised citation, e.g. [src/a.py:1-5].")
    claim: str = Field(description="The claim the citation backs.")
    cited_code: str = Field(description="The cited lines, raw (README 'Annotation table').")
    mode: str | None = Field(None, description="extractive, abstractive or unknown.")
    judge_model: str | None = None
    prompt_version: str | None = None
    llm_verdict: VerdictLabel | None = Field(
        None, description="The judge's verdict, never a rule's."
    )
    llm_confidence: Confidence | None = None
    llm_score: float | None = Field(None, ge=0, le=1, description="Judge support score.")
    annotator: str = Field(min_length=1)
    human_score: int = Field(ge=0, le=3, description="0 no, 1 weak, 2 partial, 3 full.")
    line_range: LineRangeAnswer | None = None
    notes: str | None = None
    submitted_at: str | None = None
    annotator_id: str | None = None
    status: str | None = None
    correction: str | None = None
    language: str | None = None
    file_path: str | None = None
    repo: str | None = Field(None, description="The repository as the evaluation named it.")
    rev: str | None = None
    method: Method | None = Field(None, description="How the pushed verdict was reached.")
    citation_id: str | None = None
    matched_terms: str | None = None
    missing_terms: str | None = None
    judge_reasoning: str | None = None
    response_inserted_at: str | None = None
    dataset: str | None = None
    workspace: str | None = None
    correction_strategy: str | None = None
    correction_suggested: str | None = None
    sampling_strategy: str | None = None
    sampling_weight: float | None = Field(None, gt=0)
    sampling_probability: float | None = Field(
        None, gt=0, le=1, description="Active design: chance the record was drawn in any round."
    )
    sampling_round: int | None = Field(None, ge=1, description="Active design: its round.")
    sampling_order: int | None = Field(
        None, ge=0, description="Place in the seeded random order push served records in."
    )
    sampling_drawn: int | None = Field(
        None, ge=0, description="Active design: records its round drew."
    )
    start_line: int | None = Field(None, ge=0, description="First cited line (null: unknown).")
    end_line: int | None = Field(None, ge=0, description="Last cited line.")
    context_before: str | None = Field(None, description="Lines shown above the cited ones.")
    context_after: str | None = Field(None, description="Lines shown below the cited ones.")
    repository: str | None = Field(None, description="Remote URL or absolute path.")
    commit: str | None = Field(None, description="Commit read, when a git repository.")
    extractive_verdict: VerdictLabel | None = Field(None, description="The rule check's verdict.")
    confidence_source: ConfidenceSource | None = Field(
        None,
        description="How confidence_value was measured: verbal, logprob, consistency or "
        "simulated (README 'Judge confidence'); empty where no judge decided.",
    )
    confidence_value: float | None = Field(
        None, ge=0, le=1, description="How likely the judge's verdict is right, in [0, 1]."
    )

    @property
    def judge(self) -> JudgeVerdict | None:
        """The judge's verdict of this row, None without one."""
        if self.llm_verdict is None:
            return None
        return JudgeVerdict(
            verdict=self.llm_verdict,
            confidence=self.llm_confidence,
            score=self.llm_score,
            model=self.judge_model,
            prompt_version=self.prompt_version,
            reasoning=self.judge_reasoning,
            confidence_source=self.confidence_source,
            confidence_value=self.confidence_value,
        )
