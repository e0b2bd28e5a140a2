"""Proposed corrections into the annotation loop (README "`citecal correct`", "Into the loop").

``citecal push --corrections FILE`` offers each correction the loop proposed as
the pre-filled answer of the dataset's correction question, so an annotator
accepts it as it is or edits it; the strategy and the suggestion travel as hidden
metadata, ``citecal pull`` returns them as the ``correction_strategy`` and
``correction_suggested`` columns, and ``citecal calibrate`` reports how often
each strategy's proposals were accepted (:func:`correction_acceptance`).

Pure functions over records and tables; the Argilla calls stay in
``citecal.annotate``. Kept in one module so that moving the annotation table's
ownership (``citecal/annotations/``) moves one import.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from citecal._io import MAX_JSON_BYTES, read_text_file
from citecal._json import loads
from citecal.correct._models import Correction, CorrectionsFile
from citecal.errors import InputError
from citecal.models import LINE_NUMBER_OVERFLOW, EvalResult
from citecal.source import SourceFileError
from citecal.source._errors import display_path
from citecal.source._paths import normalise_cited_path

if TYPE_CHECKING:  # citecal.annotate imports this module (pull's correction columns)
    from citecal.annotate import AnnotationSpec
    from citecal.annotate._records import BuiltRecords

AGENT = "citecal correct"
STRATEGY_KEY = "_correction_strategy"
SUGGESTED_KEY = "_correction_suggested"
COLUMNS = ("correction_strategy", "correction_suggested")
"""Columns ``citecal pull`` adds to the annotation table for proposed corrections."""


def read_corrections(path: Path, report: str | None = None) -> CorrectionsFile:
    """A corrections file written by ``citecal correct --corrections``; InputError otherwise.

    ``path`` may also be the ``corrections.parquet`` table of ``eval-batch --correct`` (a
    directory of parts or one Parquet file): its rows for ``report`` are read as the
    corrections file of that report (README "Many reports"). Every proposed place is
    checked (:func:`check_locations`) before anything is offered.
    """
    if path.is_dir() or path.suffix == ".parquet":
        table = _read_corrections_table(path, report)
        check_locations(table, path)
        return table
    text = read_text_file(path, "corrections file", MAX_JSON_BYTES)
    data = loads(text, str(path), "a `citecal correct --corrections` file")
    try:
        corrections = CorrectionsFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise InputError(
            f"{path} is not a `citecal correct --corrections` file: '{where}': {err['msg']}"
        ) from None
    check_locations(corrections, path)
    return corrections


def check_locations(corrections: CorrectionsFile, path: Path | str = "corrections file") -> None:
    """Refuse a proposed place outside the repository or with impossible lines.

    README "Security": a corrections file is input like a report; what it proposes
    is shown to annotators as the suggested answer, so every ``new`` location must
    be a repository-relative path (no ``..``, absolute path, ``~`` or ``.git``)
    and a line range a file can have (1 ≤ start ≤ end, at most 18 digits:
    ``invalid_range`` otherwise, as in eval).

    Raises:
        InputError: naming the first bad correction (1-based) and why.
    """
    for n, c in enumerate(corrections.corrections, 1):
        new = c.new
        if new is None:
            continue
        try:
            normalise_cited_path(new.file_path)
        except SourceFileError as exc:
            raise InputError(
                f"{path}: correction {n} proposes a place outside the repository: {exc}"
            ) from None
        start, end = new.start_line, new.end_line
        if not 1 <= start <= end < LINE_NUMBER_OVERFLOW:
            shown = display_path(new.file_path)
            raise InputError(
                f"{path}: correction {n} proposes lines no file has "
                f"({shown}:{start}-{end}, invalid_range)"
            )


def _read_corrections_table(path: Path, report: str | None) -> CorrectionsFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from citecal.batch._tables import to_correction

    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"{path}: not a readable corrections table: {exc}") from None
    if rows and not {"report", "position", "strategy", "evidence"} <= set(rows[0]):
        raise InputError(f"{path} is not an `eval-batch --correct` corrections table")
    reports = sorted({str(r["report"]) for r in rows})
    if report is not None:
        reports = [r for r in reports if _same_report(r, report)]
        if not reports:  # nothing of this report failed: nothing to offer
            return CorrectionsFile(report=report, iterations=0, corrections=[])
    if len(reports) != 1:
        which = f"for {report}" if report is not None else "of one report"
        raise InputError(
            f"{path}: {len(reports)} reports' corrections {which}; push the report they belong to"
        )
    mine = [r for r in rows if str(r["report"]) == reports[0]]
    try:
        corrections = [to_correction(r) for r in sorted(mine, key=lambda r: r["position"])]
    except (ValidationError, ValueError) as exc:
        raise InputError(f"{path}: a row is not a correction: {exc}") from None
    digests = {r.get("report_sha256") for r in mine}  # README "Security": matched by content
    return CorrectionsFile(
        report=reports[0],
        report_sha256=digests.pop() if len(digests) == 1 else None,
        iterations=max((c.iteration for c in corrections), default=0),
        corrections=corrections,
    )


def _same_report(a: str, b: str) -> bool:
    pa, pb = Path(a), Path(b)
    if pa == pb or pa.name == pb.name:
        return True
    try:
        return pa.resolve() == pb.resolve()
    except OSError:
        return False


def suggestion_text(c: Correction) -> str:
    """What annotators see pre-filled under the correction question."""
    if c.strategy == "remove" or c.new is None:
        return "remove the citation"
    if c.strategy == "rewrite":
        return f"claim: {c.new_claim}"
    return str(c.new)


def offer_corrections(
    built: BuiltRecords, result: EvalResult, corrections: CorrectionsFile, spec: AnnotationSpec
) -> tuple[BuiltRecords, int]:
    """``built`` with each correction as the suggestion of the correction question.

    Returns the records and how many corrections were offered (corrections of
    citations that are not pushed — structurally invalid ones — are not).

    Raises:
        InputError: the corrections are for another report, or name a citation the
            evaluation does not have at that offset; the spec has no correction question.
    """
    from citecal.annotate._records import BuiltRecords, SuggestionValue

    question = spec.pull.correction_question
    if question is None:
        raise InputError(
            "the annotation config has no correction question (pull.correction_question)"
        )
    # README "`citecal correct`": the report is matched by its content, never by its name
    if corrections.report_sha256 is None or result.report_sha256 is None:
        missing = "corrections file" if corrections.report_sha256 is None else "evaluation"
        raise InputError(
            f"the {missing} records no report_sha256 (written by an older citecal): "
            "run `citecal eval` and `citecal correct --corrections` on the report again"
        )
    if corrections.report_sha256 != result.report_sha256:
        raise InputError(
            f"the corrections file is for another report than the evaluation "
            f"(report_sha256 {corrections.report_sha256[:12]}… in the corrections file, "
            f"{result.report_sha256[:12]}… in the evaluation of {result.report})"
        )
    check_locations(corrections)
    first: dict[tuple[int, str, int, int], Correction] = {}
    for item in corrections.corrections:
        o = item.original
        first.setdefault((item.position, o.file_path, o.start_line, o.end_line), item)
    known = {(r.position, r.file_path, r.start_line, r.end_line) for r in result.citations}
    unknown = [k for k in first if k not in known]
    if unknown:
        pos, path, start, end = unknown[0]
        raise InputError(
            f"the corrections file does not match the evaluation: no citation "
            f"[{path}:{start}-{end}] at offset {pos} of {result.report} "
            f"({len(unknown)} correction(s) unmatched)"
        )
    records = []
    offered = 0
    for record in built.records:
        cit = record.citation
        found = first.get((cit.position, cit.file_path, cit.start_line, cit.end_line))
        if found is None:
            records.append(record)
            continue
        c = found
        text = suggestion_text(c)
        suggestion = SuggestionValue(question, text, None, f"{AGENT} {c.strategy}")
        others = tuple(s for s in record.suggestions if s.question != question)
        metadata = dict(record.metadata) | {STRATEGY_KEY: c.strategy, SUGGESTED_KEY: text}
        records.append(replace(record, suggestions=(*others, suggestion), metadata=metadata))
        offered += 1
    return BuiltRecords(tuple(records), built.skipped), offered


def correction_columns(metadata: dict[str, Any]) -> dict[str, Any]:
    """The pulled row's correction columns from a record's metadata (null without a proposal)."""
    return {
        "correction_strategy": metadata.get(STRATEGY_KEY),
        "correction_suggested": metadata.get(SUGGESTED_KEY),
    }


__all__ = [
    "AGENT",
    "COLUMNS",
    "correction_columns",
    "offer_corrections",
    "read_corrections",
    "suggestion_text",
]
