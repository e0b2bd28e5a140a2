"""Reading question-answer batches as a stream, and validating them in flat memory.

Inputs: JSON Lines (one item per line; ``.jsonl``/``.ndjson``), or JSON (an
array of items, an object holding the array under ``fields.items``, or one
item). JSON arrays are read element by element with ijson, JSON Lines line by
line, so a 100 000-item file never sits in memory; neither do the results:
:func:`run_validation` hands each item to a callback and keeps only running
totals (see :func:`write_validation` for the JSON output).

A record that is not a JSON object (a syntax error, a number, a cut line) is
*malformed*: it is reported with its line number and counted, and the rest is
still validated, unless ``strict`` makes the first one fatal
(:class:`~citecal.errors.InputError`, exit 2). A record nested deeper than
:data:`MAX_JSON_DEPTH` is always fatal: parsing it cost memory quadratic in its
depth (a 400 KB file grew to 23 GB) or a RecursionError (README "Security",
resource bounds).
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import ijson

from citecal._io import atomic_path, check_regular_file
from citecal._json import HOOKS, NumberRefused, too_deep
from citecal.answers._gate import batch_gate
from citecal.answers._models import AnswerMetrics, ItemResult, MalformedRecord, ValidateResult
from citecal.answers._validate import validate_item
from citecal.config import AnswersConfig
from citecal.errors import InputError

InputFormat = Literal["auto", "json", "jsonl"]

Record = tuple[int, int | None, Any]
"""(1-based record number, line in a JSONL input or None, parsed value)."""

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects an answers file may use (README "`citecal validate`")."""


def _too_deep(where: str) -> InputError:
    return InputError(
        f"answers file: {where} is nested deeper than {MAX_JSON_DEPTH} levels "
        "(citecal validate reads at most that depth)"
    )


def _loads(raw: bytes | str, where: str) -> Any:
    """``json.loads`` that refuses nesting deeper than :data:`MAX_JSON_DEPTH`.

    Raises:
        InputError: the value nests too deeply (Python's own parser gives up
            with a RecursionError a little deeper).
    """
    try:
        value = json.loads(raw, **HOOKS)  # no NaN, Infinity or 5 000-digit integer (README)
    except RecursionError:
        raise _too_deep(where) from None
    if too_deep(value, MAX_JSON_DEPTH):
        raise _too_deep(where)
    return value


def _open(path: Path | None) -> IO[bytes]:
    if path is None:
        import sys

        return io.BytesIO(sys.stdin.buffer.read())
    check_regular_file(path, "answers file")  # README "Security": a FIFO would block the run
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise InputError(f"answers file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"answers file is a directory, not a file: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read answers file {path}: {exc.strerror}") from None


def _first_byte(fh: IO[bytes]) -> bytes:
    """The first significant byte, without consuming the stream."""
    if isinstance(fh, io.BufferedReader):
        head = fh.peek(256)[:256]
    else:
        head = fh.read(256)
        fh.seek(0)
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]


def _kind(
    fh: IO[bytes], path: Path | None, fmt: InputFormat
) -> Literal["array", "object", "jsonl"]:
    """JSON Lines by flag or extension; else a JSON array by its ``[``; else an object (.json)."""
    suffix = path.suffix.lower() if path is not None else ""
    if fmt == "jsonl" or (fmt == "auto" and suffix in (".jsonl", ".ndjson")):
        return "jsonl"
    if _first_byte(fh) == b"[":
        return "array"
    return "object" if fmt == "json" or suffix == ".json" else "jsonl"


def _jsonl(fh: IO[bytes]) -> Iterator[Record | MalformedRecord]:
    number = 0
    for line_no, raw in enumerate(fh, 1):
        if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        raw = raw.strip()
        if not raw:
            continue
        number += 1
        try:
            value = _loads(raw, f"line {line_no}")
        except UnicodeDecodeError as exc:
            yield MalformedRecord(line=line_no, item=number, error=f"not UTF-8 (byte {exc.start})")
            continue
        except json.JSONDecodeError as exc:
            yield MalformedRecord(line=line_no, item=number, error=f"invalid JSON: {exc.msg}")
            continue
        except NumberRefused as exc:
            yield MalformedRecord(line=line_no, item=number, error=f"invalid JSON: {exc}")
            continue
        yield (number, line_no, value)


class _DepthExceeded(Exception):
    pass


def _bounded_events(fh: IO[bytes]) -> Iterator[tuple[str, Any]]:
    """ijson's basic events, stopped at :data:`MAX_JSON_DEPTH`.

    ``ijson.items`` tracks each event's dotted prefix, so unbounded nesting
    costs memory quadratic in the depth; counting depth on the basic events
    first keeps the prefixes short.
    """
    depth = 0
    for event, value in ijson.basic_parse(fh, use_float=True):
        if event in ("start_map", "start_array"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise _DepthExceeded
        elif event in ("end_map", "end_array"):
            depth -= 1
        yield event, value


def _array(fh: IO[bytes], prefix: str) -> Iterator[Record | MalformedRecord]:
    number = 0
    try:
        for value in ijson.items(ijson.parse(_bounded_events(fh)), prefix):
            number += 1
            yield (number, None, value)
    except _DepthExceeded:
        raise _too_deep(f"item {number + 1}") from None
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        yield MalformedRecord(
            line=None, item=number + 1, error=f"invalid JSON after item {number}: {exc}"
        )


def _object(fh: IO[bytes], items_key: str) -> Iterator[Record | MalformedRecord]:
    """An object holding the items under ``items_key``, or a single item."""
    data = fh.read()
    try:
        value = _loads(data, "the document")
    except (json.JSONDecodeError, UnicodeDecodeError, NumberRefused) as exc:
        yield MalformedRecord(line=None, item=1, error=f"invalid JSON: {exc}")
        return
    if isinstance(value, dict) and isinstance(value.get(items_key), list):
        for n, item in enumerate(value[items_key], 1):
            yield (n, None, item)
    else:
        yield (1, None, value)


def read_records(
    path: Path | None, fmt: InputFormat = "auto", items_key: str = "items"
) -> Iterator[Record | MalformedRecord]:
    """Parsed records of an answers file (``None``: standard input), in order."""
    with _open(path) as fh:
        kind = _kind(fh, path, fmt)
        if kind == "jsonl":
            yield from _jsonl(fh)
        elif kind == "array":
            yield from _array(fh, "item")
        else:
            yield from _object(fh, items_key)


@dataclass
class BatchTotals:
    """Running sums behind the batch aggregate: constant memory whatever the batch size."""

    total_qa: int = 0
    valid_qa: int = 0
    failed_items: int = 0
    citations: int = 0
    valid: int = 0
    hallucinated: int = 0
    align_sum: float = 0.0
    align_n: int = 0
    coverage_sum: float = 0.0
    coverage_n: int = 0
    with_idx: int = 0
    with_span: int = 0
    quality_sum: float = 0.0
    without_citations: int = 0
    malformed: list[MalformedRecord] = field(default_factory=list)

    def add(self, item: ItemResult) -> None:
        """Count one validated item."""
        self.total_qa += 1
        self.valid_qa += item.valid
        self.failed_items += item.gate.status == "FAIL"
        m = item.metrics
        self.citations += m.total_citations
        self.valid += m.valid_citations
        self.hallucinated += m.hallucinated_spans
        self.without_citations += m.total_citations == 0
        if m.citation_coverage is not None:
            self.coverage_sum += m.citation_coverage
            self.coverage_n += 1
        for c in item.citations:
            if c.alignment_score is not None:
                self.align_sum += c.alignment_score
                self.align_n += 1
            self.with_idx += c.evidence_idx is not None
            self.with_span += c.span_start is not None
            self.quality_sum += c.quality_score

    def aggregate(self) -> AnswerMetrics:
        """The batch's metrics (README "`citecal validate`")."""
        n = self.citations

        def share(k: int) -> float | None:
            return k / n if n else None

        return AnswerMetrics(
            total_citations=n,
            valid_citations=self.valid,
            invalid_citations=n - self.valid,
            hallucinated_spans=self.hallucinated,
            avg_alignment_score=self.align_sum / self.align_n if self.align_n else None,
            citation_coverage=self.coverage_sum / self.coverage_n if self.coverage_n else None,
            has_evidence_idx=share(self.with_idx),
            has_alignment_score=share(self.align_n),
            has_span=share(self.with_span),
            avg_quality_score=self.quality_sum / n if n else None,
            items_without_citations=self.without_citations,
        )

    def result(self, input_name: str, cfg: AnswersConfig) -> ValidateResult:
        """The result without items (the header of the streamed JSON)."""
        aggregate = self.aggregate()
        return ValidateResult(
            input=input_name,
            total_qa=self.total_qa,
            valid_qa=self.valid_qa,
            aggregate=aggregate,
            gate=batch_gate(
                aggregate, cfg, failed_items=self.failed_items, malformed=len(self.malformed)
            ),
            malformed=self.malformed,
            items=[],
        )


def run_validation(
    records: Iterable[Record | MalformedRecord],
    cfg: AnswersConfig,
    on_item: Callable[[ItemResult], None],
    *,
    strict: bool = False,
) -> BatchTotals:
    """Validate every record, handing each item to ``on_item``; returns the totals.

    Raises:
        InputError: ``strict`` and a record is malformed.
    """
    totals = BatchTotals()
    for record in records:
        if isinstance(record, tuple) and not isinstance(record[2], dict):
            number, line, _ = record
            record = MalformedRecord(line=line, item=number, error="not a JSON object")
        if isinstance(record, MalformedRecord):
            if strict:
                where = f"line {record.line}" if record.line is not None else f"item {record.item}"
                raise InputError(f"malformed record at {where}: {record.error} (--strict)")
            totals.malformed.append(record)
            continue
        number, line, value = record
        item = validate_item(value, cfg, number, line)
        totals.add(item)
        on_item(item)
    return totals


def validate_answers(
    path: Path | str | None,
    cfg: AnswersConfig | None = None,
    *,
    fmt: InputFormat = "auto",
    strict: bool = False,
) -> ValidateResult:
    """Validate an answers file and return everything, items included (Python API).

    For very large batches prefer :func:`write_validation`, which keeps no items.
    """
    cfg = cfg or AnswersConfig()
    p = None if path is None or str(path) == "-" else Path(path)
    items: list[ItemResult] = []
    totals = run_validation(
        read_records(p, fmt, cfg.fields.items), cfg, items.append, strict=strict
    )
    result = totals.result(str(path) if path is not None else "<stdin>", cfg)
    result.items = items
    return result


def validate_items(
    items: Iterable[dict[str, Any]], cfg: AnswersConfig | None = None, *, name: str = "<items>"
) -> ValidateResult:
    """Validate items already in memory (Python API, e.g. inside an answer pipeline)."""
    cfg = cfg or AnswersConfig()
    kept: list[ItemResult] = []
    records = ((n, None, item) for n, item in enumerate(items, 1))
    totals = run_validation(records, cfg, kept.append)
    result = totals.result(name, cfg)
    result.items = kept
    return result


def write_validation(
    path: Path | None,
    cfg: AnswersConfig,
    out: Path | IO[str],
    *,
    fmt: InputFormat = "auto",
    strict: bool = False,
    on_item: Callable[[ItemResult], None] | None = None,
) -> ValidateResult:
    """Validate and write the JSON output in flat memory; returns the result without items.

    Items are spooled to a temporary file as they are validated, then the
    header (counts, aggregate, gate) is written followed by the spooled items,
    one per line: the output parses as :class:`ValidateResult`. A file
    target is written atomically (nothing is left behind on an error).
    """
    name = str(path) if path is not None else "<stdin>"
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        first = True

        def keep(item: ItemResult) -> None:
            nonlocal first
            if not first:
                spool.write(",\n")
            first = False
            spool.write(item.model_dump_json())
            if on_item is not None:
                on_item(item)

        totals = run_validation(read_records(path, fmt, cfg.fields.items), cfg, keep, strict=strict)
        result = totals.result(name, cfg)
        header = result.model_dump_json()
        assert header.endswith('"items":[]}')
        spool.seek(0)

        def emit(target: IO[str]) -> None:
            target.write(header[: -len("[]}")] + "[\n")
            shutil.copyfileobj(spool, target)
            target.write("\n]}\n" if not first else "]}\n")

        if isinstance(out, Path):
            with atomic_path(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
                emit(fh)
        else:
            emit(out)
    return result
