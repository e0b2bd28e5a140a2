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
from typing import Any

from pydantic import ValidationError

from citecal._io import read_text_file
from citecal.annotate._records import BuiltRecords, SuggestionValue
from citecal.annotate._settings import AnnotationSpec
from citecal.correct._models import Correction, CorrectionsFile
from citecal.errors import InputError
from citecal.models import EvalResult

AGENT = "citecal correct"
STRATEGY_KEY = "_correction_strategy"
SUGGESTED_KEY = "_correction_suggested"
COLUMNS = ("correction_strategy", "correction_suggested")
"""Columns ``citecal pull`` adds to the annotation table for proposed corrections."""


def read_corrections(path: Path, report: str | None = None) -> CorrectionsFile:
    """A corrections file written by ``citecal correct --corrections``; InputError otherwise.

    ``path`` may also be the ``corrections.parquet`` table of ``eval-batch --correct`` (a
    directory of parts or one Parquet file): its rows for ``report`` are read as the
    corrections file of that report (README "Many reports").
    """
    if path.is_dir() or path.suffix == ".parquet":
        return _read_corrections_table(path, report)
    text = read_text_file(path, "corrections file")
    try:
        return CorrectionsFile.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise InputError(
            f"{path} is not a `citecal correct --corrections` file: '{where}': {err['msg']}"
        ) from None


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
    return CorrectionsFile(
        report=reports[0],
        iterations=max((c.iteration for c in corrections), default=0),
        corrections=corrections,
    )


def suggestion_text(c: Correction) -> str:
    """What annotators see pre-filled under the correction question."""
    if c.strategy == "remove" or c.new is None:
        return "remove the citation"
    if c.strategy == "rewrite":
        return f"claim: {c.new_claim}"
    return str(c.new)


def _same_report(a: str, b: str) -> bool:
    pa, pb = Path(a), Path(b)
    if pa == pb or pa.name == pb.name:
        return True
    try:
        return pa.resolve() == pb.resolve()
    except OSError:
        return False


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
    question = spec.pull.correction_question
    if question is None:
        raise InputError(
            "the annotation config has no correction question (pull.correction_question)"
        )
    if not _same_report(corrections.report, result.report):
        raise InputError(
            f"the corrections file is for {corrections.report}, "
            f"the evaluation is of {result.report}"
        )
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
