"""Pure record building: an evaluation's citations → values of Argilla records.

No HTTP here. :func:`build_records` turns each structurally valid citation of
an :class:`~citecal.models.EvalResult` into an :class:`AnnotationRecord`
(stable id, field texts, metadata, the judge's suggestion) following an
:class:`~citecal.annotate.AnnotationSpec`; ``_push`` only converts these to
``rg.Record`` and sends them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from citecal.annotate._settings import AnnotationSpec
from citecal.models import CitationResult, EvalResult, support_score
from citecal.record_ids import record_key, report_key

RecordValue = str | float


@dataclass(frozen=True, slots=True)
class CodeLine:
    """One numbered source line shown to annotators; ``cited`` marks the cited range."""

    number: int
    text: str
    cited: bool


@dataclass(frozen=True, slots=True)
class SuggestionValue:
    """A pre-filled answer: the judge's verdict mapped onto one question."""

    question: str
    value: int | str
    score: float | None
    agent: str


@dataclass(frozen=True, slots=True)
class AnnotationRecord:
    """Everything ``push`` sends for one citation."""

    id: str
    fields: Mapping[str, str]
    metadata: Mapping[str, RecordValue]
    suggestions: tuple[SuggestionValue, ...]
    citation: CitationResult


@dataclass(frozen=True, slots=True)
class BuiltRecords:
    """Records to push, and the citations left out with the reason."""

    records: tuple[AnnotationRecord, ...]
    skipped: tuple[tuple[str, str], ...]


CodeReader = Callable[[CitationResult], Sequence[CodeLine] | None]
"""Returns the cited lines with context from the repository, or None when unreadable."""


def report_id(result: EvalResult) -> str:
    """Stable id of an evaluated report: its path or name with the repository."""
    return report_key(result.report, result.repo)


def record_id(rid: str, citation: CitationResult, rev: str | None) -> str:
    """Stable record id: report id, claim, citation, revision (and occurrence via the citation id).

    Pushing the same evaluation twice gives the same ids, so Argilla updates
    records instead of adding duplicates; a new revision gives new records.
    ``citecal estimate`` computes the same id (:mod:`citecal.record_ids`).
    """
    return record_key(rid, citation.claim, citation.citation, rev, citation.id)


_AGENT_BAD = re.compile(r"[^A-Za-z0-9\-_:./\s]+")


def judge_agent(model: str | None, prompt_version: str | None, method: str | None = None) -> str:
    """The suggestion's agent: model and prompt version, in characters Argilla accepts.

    Argilla allows letters, digits, ``-_:./`` and spaces, at most 200
    characters, with at least one letter or digit.
    """
    if model:
        raw = f"{model} {prompt_version}" if prompt_version else model
    else:
        raw = f"citecal {method or 'judge'}"
    agent = re.sub(r"\s+", " ", _AGENT_BAD.sub("-", raw)).strip()[:200].strip()
    return agent if re.search(r"[A-Za-z0-9]", agent) else "citecal judge"


def code_window(lines: Sequence[str], first_line: int, start: int, end: int) -> list[CodeLine]:
    """Number ``lines`` (the first is ``first_line``) and mark ``start..end`` as cited."""
    return [
        CodeLine(number=first_line + i, text=text, cited=start <= first_line + i <= end)
        for i, text in enumerate(lines)
    ]


def render_cited_code(
    file_path: str, language: str | None, lines: Sequence[CodeLine], start: int, end: int
) -> str:
    """Markdown for the ``cited_code`` field: a caption and a fenced, numbered block.

    Cited lines carry ``▶``; context lines are shown unmarked so annotators can
    judge whether the range is too narrow or too broad.
    """
    span = f"line {start}" if start == end else f"lines {start}–{end}"
    context = sum(1 for line in lines if not line.cited)
    caption = f"`{file_path}`, {span}" + (f" (▶ cited, {context} context lines)" if context else "")
    width = len(str(max((line.number for line in lines), default=end)))
    body = "\n".join(
        f"{'▶' if line.cited else ' '} {line.number:>{width}}  {line.text}" for line in lines
    )
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{caption}\n\n{fence}{language or ''}\n{body}\n{fence}"


def _cited_only(citation: CitationResult) -> list[CodeLine]:
    text = citation.cited_code or ""
    return code_window(
        text.split("\n"), citation.start_line, citation.start_line, citation.end_line
    )


def _reasoning(citation: CitationResult) -> str:
    if citation.reasoning:
        return citation.reasoning
    if citation.method == "extractive":
        found = ", ".join(f"`{t}`" for t in citation.matched_terms) or "none"
        missing = ", ".join(f"`{t}`" for t in citation.missing_terms) or "none"
        return f"Term matching: found {found}; missing {missing}."
    return ""


def record_values(
    result: EvalResult, citation: CitationResult, code: Sequence[CodeLine] | None
) -> dict[str, RecordValue | None]:
    """Every value a field or metadata property can show (``RECORD_SOURCES``)."""
    lines = list(code) if code else _cited_only(citation)
    score = (
        support_score(citation.verdict, citation.confidence, citation.score)
        if citation.verdict and citation.confidence
        else citation.score
    )
    match = citation.excerpt_match
    best = (
        None
        if match is None
        else f"lines {match.start_line}–{match.end_line} (score {match.score:.2f}):\n\n"
        + "\n".join(f"> {line}" for line in match.text.split("\n"))
    )
    return {
        "best_match": best,
        "excerpt": citation.excerpt,
        "excerpt_status": citation.excerpt_status,
        "location": citation.located or citation.location,
        "citation": citation.citation,
        "citation_id": citation.id,
        "cited_code": render_cited_code(
            citation.file_path, citation.language, lines, citation.start_line, citation.end_line
        ),
        "claim": citation.claim,
        "confidence": citation.confidence,
        "context": citation.context,
        "file_path": citation.file_path,
        "judge_model": citation.model,
        "judge_reasoning": _reasoning(citation),
        "judge_score": None if score is None else min(1.0, max(0.0, float(score))),
        "language": citation.language,
        "matched_terms": ", ".join(citation.matched_terms),
        "method": citation.method,
        "missing_terms": ", ".join(citation.missing_terms),
        "mode": citation.mode,
        "prompt_version": citation.prompt_version,
        "report_id": report_id(result),
        "repo": result.repo,
        "rev": result.rev,
        "section": citation.section,
        "verdict": citation.verdict,
    }


def suggestions_for(
    spec: AnnotationSpec, citation: CitationResult, judge_score: float | None
) -> tuple[SuggestionValue, ...]:
    """The judge's verdict as pre-filled answers, per ``suggest_from_verdict`` in the spec."""
    if citation.verdict is None:
        return ()
    agent = judge_agent(citation.model, citation.prompt_version, citation.method)
    out = []
    for q in spec.questions:
        if q.suggest_from_verdict and citation.verdict in q.suggest_from_verdict:
            out.append(
                SuggestionValue(
                    q.name, q.suggest_from_verdict[citation.verdict], judge_score, agent
                )
            )
    return tuple(out)


def build_record(
    result: EvalResult,
    citation: CitationResult,
    spec: AnnotationSpec,
    *,
    blind: bool = False,
    code: Sequence[CodeLine] | None = None,
) -> AnnotationRecord:
    """One record for one valid citation (see :func:`build_records`)."""
    values = record_values(result, citation, code)
    fields: dict[str, str] = {}
    for f in spec.fields:
        value = values.get(f.value_source)
        if blind and f.hide_when_blind:
            value = None
        text = "" if value is None else str(value)
        if text.strip():
            fields[f.name] = text
        elif f.required:
            fields[f.name] = "—"  # Argilla rejects empty required fields
    metadata: dict[str, RecordValue] = {}
    for m in spec.metadata:
        value = values.get(m.value_source)
        if value is None or value == "":
            continue
        metadata[m.name] = float(value) if m.type == "float" else str(value)
    for source in spec.hidden:
        value = values.get(source)
        if value is not None and value != "":
            metadata[f"_{source}"] = value if isinstance(value, float) else str(value)
    raw_score = values["judge_score"]
    judge_score = raw_score if isinstance(raw_score, float) else None
    suggestions = () if blind else suggestions_for(spec, citation, judge_score)
    rid = report_id(result)
    return AnnotationRecord(
        id=record_id(rid, citation, result.rev),
        fields=fields,
        metadata=metadata,
        suggestions=suggestions,
        citation=citation,
    )


def build_records(
    result: EvalResult,
    spec: AnnotationSpec,
    *,
    citations: Sequence[CitationResult] | None = None,
    blind: bool = False,
    read_code: CodeReader | None = None,
) -> BuiltRecords:
    """Records for the structurally valid citations of ``result`` (or of ``citations``).

    Invalid citations are skipped (an annotator cannot judge code that does not
    exist), as are repeats of a record id; both are returned with the reason.
    """
    chosen = list(result.citations if citations is None else citations)
    records: list[AnnotationRecord] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for citation in chosen:
        if not citation.valid:
            skipped.append((citation.citation, f"invalid citation: {citation.error or 'invalid'}"))
            continue
        code = read_code(citation) if read_code is not None else None
        record = build_record(result, citation, spec, blind=blind, code=code)
        if record.id in seen:
            skipped.append((citation.citation, "duplicate of an earlier record"))
            continue
        seen.add(record.id)
        records.append(record)
    return BuiltRecords(tuple(records), tuple(skipped))
