"""Pure record building: an evaluation's citations → values of Argilla records.

No HTTP here. :func:`build_records` turns each structurally valid citation of
an :class:`~citecal.models.EvalResult` into an :class:`AnnotationRecord`
(stable id, field texts, metadata, the judge's suggestion) following an
:class:`~citecal.annotate.AnnotationSpec`; ``_push`` only converts these to
``rg.Record`` and sends them.

Besides what the spec shows, every record carries its raw data
(:class:`~citecal.annotations.RecordData`) as the extra metadata
:data:`RAW_KEY`: ``pull`` reads the claim, the cited lines and their
numbers, the repository and the judge's verdict from there, never from the
Markdown annotators see (README "Annotation table").

No report-, repository- or judge-derived text reaches a field as markup:
:func:`field_text` escapes every value for the field it goes into (Markdown or
HTML), and the Markdown citecal composes itself (the cited code, the judge's
reasoning, the best match) escapes its untrusted parts (README "Security").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citecal._markup import Markdown, html_text, md_code, md_fence, md_text
from citecal.annotate._settings import AnnotationSpec, FieldSpec
from citecal.annotations import RecordData
from citecal.models import CitationResult, EvalResult, JudgeVerdict, Method
from citecal.record_ids import record_key, report_key

FieldValue = str | float
"""A value a field or declared metadata property shows: raw text, a number, or
:class:`~citecal._markup.Markdown` citecal composed (cited code, reasoning, best match)."""

RecordValue = str | float | dict[str, Any]
"""A metadata value: shown ones, or the raw record data (:data:`RAW_KEY`)."""

RAW_KEY = "_citecal"
"""Extra metadata holding a record's :class:`RecordData` (never shown to annotators)."""

NO_JUDGE = "**No judge verdict.**"
"""How the judge's-reasoning field starts when no judge decided the claim."""


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
    data: RecordData | None = None


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
) -> Markdown:
    """Markdown for the ``cited_code`` field: a caption and a fenced, numbered block.

    Cited lines carry ``▶``; context lines are shown unmarked so annotators can
    judge whether the range is too narrow or too broad. The file name is a
    code span or escaped, the lines are fenced so that no line closes the
    fence (:func:`~citecal._markup.md_fence`).
    """
    span = f"line {start}" if start == end else f"lines {start}–{end}"
    context = sum(1 for line in lines if not line.cited)
    caption = f"{md_code(file_path)}, {span}" + (
        f" (▶ cited, {context} context lines)" if context else ""
    )
    width = len(str(max((line.number for line in lines), default=end)))
    body = "\n".join(
        f"{'▶' if line.cited else ' '} {line.number:>{width}}  {line.text}" for line in lines
    )
    return Markdown(f"{caption}\n\n{md_fence(body, language)}")


def _cited_only(citation: CitationResult) -> list[CodeLine]:
    text = citation.cited_code or ""
    return code_window(
        text.split("\n"), citation.start_line, citation.start_line, citation.end_line
    )


def _terms(citation: CitationResult) -> Markdown:
    found = ", ".join(md_code(t) for t in citation.matched_terms) or "none"
    missing = ", ".join(md_code(t) for t in citation.missing_terms) or "none"
    plain_found = ", ".join(f"`{t}`" for t in citation.matched_terms) or "none"
    plain_missing = ", ".join(f"`{t}`" for t in citation.missing_terms) or "none"
    return Markdown(
        f"Term matching: found {found}; missing {missing}.",
        f"Term matching: found {plain_found}; missing {plain_missing}.",
    )


def _reasoning(citation: CitationResult, judge: JudgeVerdict | None) -> Markdown:
    """The judge's reasoning, or a note that there is no judge verdict and why.

    A record without a judge verdict says so, rather than showing annotators an
    empty suggestion they might read as "the judge had nothing to say". The
    judge's and the rule check's words are escaped (README "Security").
    """
    if judge is not None:
        if judge.reasoning:
            return Markdown(md_text(judge.reasoning), judge.reasoning)
        return _terms(citation) if citation.method == "extractive" else Markdown("")
    if citation.method == "extractive" and citation.verdict not in (None, "unverified"):
        head = f"The rule check decided it ({citation.verdict}). "  # a verdict label: no escape
        if citation.reasoning:
            why = Markdown(head + md_text(citation.reasoning), head + citation.reasoning)
        else:
            terms = _terms(citation)
            why = Markdown(head + terms, head + terms.plain)
    else:
        text = citation.reasoning or "the judge was not asked."
        why = Markdown(md_text(text), text)
    return Markdown(f"{NO_JUDGE} {why}", f"{NO_JUDGE} {why.plain}")


def record_data(
    result: EvalResult,
    citation: CitationResult,
    lines: Sequence[CodeLine],
    judge: JudgeVerdict | None,
    identity: tuple[str, str | None] | None = None,
) -> RecordData:
    """The raw data of one record: what ``pull`` puts in the annotation table."""
    cited = [i for i, line in enumerate(lines) if line.cited]
    first, last = (cited[0], cited[-1]) if cited else (0, len(lines) - 1)
    rule = citation.verdict if citation.method == "extractive" else None
    repository, commit = identity if identity is not None else (result.repo, None)
    return RecordData(
        report_id=report_id(result),
        citation=citation.citation,
        citation_id=citation.id,
        claim=citation.claim,
        cited_code=(
            citation.cited_code
            if citation.cited_code is not None
            else "\n".join(line.text for line in lines[first : last + 1])
        ),
        start_line=citation.start_line,
        end_line=citation.end_line,
        context_before="\n".join(line.text for line in lines[:first]),
        context_after="\n".join(line.text for line in lines[last + 1 :]),
        file_path=citation.file_path,
        language=citation.language,
        mode=citation.mode,
        method=citation.method,
        repo=result.repo,
        rev=result.rev,
        repository=repository,
        commit=commit,
        judge=judge,
        extractive_verdict=rule if rule != "unverified" else None,
        matched_terms=", ".join(citation.matched_terms) or None,
        missing_terms=", ".join(citation.missing_terms) or None,
        p_supports=citation.p_supports,
        risk_rank=citation.risk_rank,
    )


def record_values(
    result: EvalResult,
    citation: CitationResult,
    code: Sequence[CodeLine] | None,
    judge: JudgeVerdict | None = None,
) -> dict[str, FieldValue | None]:
    """Every value a field or metadata property can show (``RECORD_SOURCES``)."""
    lines = list(code) if code else _cited_only(citation)
    score = None if judge is None else judge.score
    match = citation.excerpt_match
    best = None
    if match is not None:
        head = f"lines {match.start_line}–{match.end_line} (score {match.score:.2f}):\n\n"
        quoted = match.text.split("\n")
        best = Markdown(
            head + "\n".join(f"> {md_text(line)}" for line in quoted),
            head + "\n".join(f"> {line}" for line in quoted),
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
        "judge_reasoning": _reasoning(citation, judge),
        "judge_score": score,
        "language": citation.language,
        "matched_terms": ", ".join(citation.matched_terms),
        "method": citation.method,
        "missing_terms": ", ".join(citation.missing_terms),
        "mode": citation.mode,
        "p_supports": citation.p_supports,
        "prompt_version": citation.prompt_version,
        "report_id": report_id(result),
        "repo": result.repo,
        "rev": result.rev,
        "risk_rank": float(citation.risk_rank) if citation.risk_rank is not None else None,
        "section": citation.section,
        "verdict": citation.verdict,
    }


def field_text(value: FieldValue | None, field: FieldSpec) -> str:
    """What a field holds for ``value``: the one place record values become field text.

    Argilla renders a ``use_markdown`` field as Markdown and sets any other
    text field as HTML (``innerHTML``), and its sanitiser keeps ``<object>``,
    ``<embed>``, forms, CSS and remote images; so raw text is escaped for the
    field it goes into (:func:`~citecal._markup.md_text` or
    :func:`~citecal._markup.html_text`), and Markdown citecal composed goes into
    Markdown fields as it is, as escaped HTML elsewhere (README "Security").
    """
    if value is None:
        return ""
    if isinstance(value, Markdown):
        return str(value) if field.use_markdown else html_text(value.plain)
    text = str(value)
    return md_text(text) if field.use_markdown else html_text(text)


def _plain(value: FieldValue) -> FieldValue:
    return value.plain if isinstance(value, Markdown) else value


def suggestions_for(
    spec: AnnotationSpec, judge: JudgeVerdict | None
) -> tuple[SuggestionValue, ...]:
    """The judge's verdict as pre-filled answers, per ``suggest_from_verdict`` in the spec.

    None without a judge verdict: a rule verdict is not offered as the judge's.
    """
    if judge is None:
        return ()
    agent = judge_agent(judge.model, judge.prompt_version, judge.method)
    out = []
    for q in spec.questions:
        if q.suggest_from_verdict and judge.verdict in q.suggest_from_verdict:
            out.append(
                SuggestionValue(q.name, q.suggest_from_verdict[judge.verdict], judge.score, agent)
            )
    return tuple(out)


def judge_of(spec: AnnotationSpec, citation: CitationResult) -> JudgeVerdict | None:
    """The verdict this dataset calibrates: the LLM judge's (or the spec's ``judge_methods``)."""
    methods: tuple[Method, ...] = tuple(spec.judge_methods)
    return JudgeVerdict.from_citation(citation, methods)


def build_record(
    result: EvalResult,
    citation: CitationResult,
    spec: AnnotationSpec,
    *,
    blind: bool = False,
    code: Sequence[CodeLine] | None = None,
    identity: tuple[str, str | None] | None = None,
) -> AnnotationRecord:
    """One record for one valid citation (see :func:`build_records`).

    ``identity`` is the repository's stable identity (remote URL or absolute
    path, commit), :func:`citecal.source.repository_identity`.
    """
    judge = judge_of(spec, citation)
    values = record_values(result, citation, code, judge)
    fields: dict[str, str] = {}
    for f in spec.fields:
        value = values.get(f.value_source)
        if blind and f.hide_when_blind:
            value = None
        if value is not None and str(_plain(value)).strip():
            fields[f.name] = field_text(value, f)
        elif f.required:
            fields[f.name] = "—"  # Argilla rejects empty required fields
    metadata: dict[str, RecordValue] = {}
    for m in spec.metadata:
        value = values.get(m.value_source)
        if value is None or value == "":
            continue
        metadata[m.name] = float(value) if m.type == "float" else str(_plain(value))
    for source in spec.hidden:
        value = values.get(source)
        if value is not None and value != "":
            metadata[f"_{source}"] = value if isinstance(value, float) else str(_plain(value))
    data = record_data(
        result, citation, list(code) if code else _cited_only(citation), judge, identity
    )
    metadata[RAW_KEY] = data.model_dump(mode="json", exclude_none=True)
    suggestions = () if blind else suggestions_for(spec, judge)
    rid = report_id(result)
    return AnnotationRecord(
        id=record_id(rid, citation, result.rev),
        fields=fields,
        metadata=metadata,
        suggestions=suggestions,
        citation=citation,
        data=data,
    )


def build_records(
    result: EvalResult,
    spec: AnnotationSpec,
    *,
    citations: Sequence[CitationResult] | None = None,
    blind: bool = False,
    read_code: CodeReader | None = None,
    identity: tuple[str, str | None] | None = None,
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
        record = build_record(result, citation, spec, blind=blind, code=code, identity=identity)
        if record.id in seen:
            skipped.append((citation.citation, "duplicate of an earlier record"))
            continue
        seen.add(record.id)
        records.append(record)
    return BuiltRecords(tuple(records), tuple(skipped))
