"""``citecal pull``: annotators' submitted answers → the annotation table.

One row per (record, annotator) with the judge's verdict carried alongside, in
the columns of :data:`citecal.annotations.TABLE_COLUMNS`. The record's columns
come from the raw data ``push`` stored with it (:data:`RAW_KEY` metadata), the
response's from the annotator's answers. A record pushed by an older citecal
has no raw data: its columns are read from the fields and hidden metadata as
then, its ``cited_code`` is the Markdown annotators saw, and it is counted in
:attr:`PullCounts.legacy_records` so the CLI can say so. Drafts and discarded
responses are counted, not exported (a discarded response may have no values
at all). Records are read page by page through the SDK's HTTP client, because
the SDK's response objects drop the timestamps the table needs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import argilla as rg
import pandas as pd
from argilla._exceptions import ForbiddenError
from pydantic import ValidationError

from citecal.annotate._client import argilla_errors, connect, get_dataset
from citecal.annotate._records import RAW_KEY
from citecal.annotate._settings import AnnotationSpec
from citecal.annotations import RAW_COLUMNS, TABLE_COLUMNS, RecordData, to_frame, validate_row
from citecal.config import ArgillaConfig
from citecal.correct._annotate import correction_columns
from citecal.errors import InputError
from citecal.models import JUDGE_COLUMNS

PAGE_SIZE = 1000  # the server's maximum page


@dataclass(frozen=True, slots=True)
class PullCounts:
    """What was found, for the CLI's summary."""

    records: int = 0
    submitted: int = 0
    exported: int = 0
    drafts: int = 0
    discarded: int = 0
    before_since: int = 0
    pending_records: int = 0
    legacy_records: int = 0
    """Records pushed by a citecal that stored no raw data (their cited_code is Markdown)."""


@dataclass(frozen=True, slots=True)
class PullResult:
    """The annotation table and the counts behind it."""

    table: pd.DataFrame
    counts: PullCounts


def parse_timestamp(value: str | datetime) -> datetime:
    """A timezone-aware datetime; naive values (the server's) are UTC."""
    ts = (
        value
        if isinstance(value, datetime)
        else datetime.fromisoformat(value.replace("Z", "+00:00"))
    )
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _answer(values: Mapping[str, Any] | None, question: str | None) -> Any:
    if not values or question is None:
        return None
    entry = values.get(question)
    return entry.get("value") if isinstance(entry, Mapping) else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None


def _number(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _integer(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def record_sources(record: Mapping[str, Any], spec: AnnotationSpec) -> dict[str, Any]:
    """The record builder's values recovered from a record's fields and metadata."""
    fields = record.get("fields") or {}
    metadata = record.get("metadata") or {}
    values: dict[str, Any] = {}
    for f in spec.fields:
        values[f.value_source] = fields.get(f.name)
    for m in spec.metadata:
        values[m.value_source] = metadata.get(m.name)
    for source in spec.hidden:
        if values.get(source) is None:
            values[source] = metadata.get(f"_{source}")
    return values


def legacy_columns(record: Mapping[str, Any], spec: AnnotationSpec) -> dict[str, Any]:
    """A record's columns when it has no raw data (pushed by an older citecal).

    Read from the fields and hidden metadata as they were pushed: ``cited_code``
    is the Markdown annotators saw and the line numbers and context are unknown.
    """
    src = record_sources(record, spec)
    method = src.get("method")
    judged = src.get("verdict") is not None and (method is None or method in spec.judge_methods)
    llm_score = src.get("judge_score")
    if llm_score is None:
        for s in record.get("suggestions") or []:
            if s.get("score") is not None and s.get("value") is not None:
                llm_score = s["score"]
                break
    judge = {
        "llm_verdict": src.get("verdict"),
        "llm_confidence": src.get("confidence"),
        "llm_score": None if llm_score is None else float(llm_score),
        "judge_model": src.get("judge_model"),
        "prompt_version": src.get("prompt_version"),
        "judge_reasoning": _text(src.get("judge_reasoning")),
        "confidence_source": None,
        "confidence_value": None,
    }
    return {
        "report_id": src.get("report_id") or "",
        "citation": src.get("citation") or "",
        "claim": src.get("claim") or "",
        "cited_code": src.get("cited_code") or "",
        "mode": src.get("mode"),
        **(judge if judged else dict.fromkeys(JUDGE_COLUMNS)),
        "language": src.get("language"),
        "file_path": src.get("file_path"),
        "repo": src.get("repo"),
        "rev": src.get("rev"),
        "method": method,
        "citation_id": src.get("citation_id"),
        "matched_terms": src.get("matched_terms"),
        "missing_terms": src.get("missing_terms"),
        **dict.fromkeys(RAW_COLUMNS),
        "extractive_verdict": src.get("verdict") if method == "extractive" else None,
    }


def record_columns(record: Mapping[str, Any], spec: AnnotationSpec) -> tuple[dict[str, Any], bool]:
    """(the record's columns of the table, whether they came from its raw data).

    Raises:
        InputError: the raw data is there but not valid (a record edited by hand).
    """
    raw = (record.get("metadata") or {}).get(RAW_KEY)
    if raw is None:
        return legacy_columns(record, spec), False
    try:
        data = RecordData.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(
            f"record {record.get('external_id')}: metadata {RAW_KEY}.{where}: {err['msg']}"
        ) from None
    columns = data.columns()
    if data.judge is not None and data.judge.method not in spec.judge_methods:
        columns.update(dict.fromkeys(JUDGE_COLUMNS))
    return columns, True


def annotation_rows(
    records: Iterable[Mapping[str, Any]],
    spec: AnnotationSpec,
    users: Mapping[str, str],
    *,
    since: datetime | None = None,
    dataset: str = "",
    workspace: str = "",
) -> tuple[list[dict[str, Any]], PullCounts]:
    """Rows of the annotation table from server records (``include=responses``); pure."""
    p = spec.pull
    score_q = spec.question(p.score_question)
    rows: list[dict[str, Any]] = []
    n_records = submitted = drafts = discarded = early = pending = legacy = 0
    for record in records:
        n_records += 1
        responses = record.get("responses") or []
        if not any(r.get("status") == "submitted" for r in responses):
            pending += 1
        meta = record.get("metadata") or {}
        columns, from_raw = record_columns(record, spec)
        legacy += not from_raw
        for response in responses:
            status = response.get("status")
            if status == "draft":
                drafts += 1
                continue
            if status != "submitted":
                discarded += 1
                continue
            submitted += 1
            submitted_at = parse_timestamp(response["updated_at"])
            if since is not None and submitted_at < since:
                early += 1
                continue
            values = response.get("values") or {}
            raw = _answer(values, score_q.name)
            score = p.score_map.get(str(raw)) if p.score_map else raw
            if score is None:
                raise InputError(
                    f"a submitted response of record {record.get('external_id')} has no "
                    f"answer to {score_q.name!r}: is --spec the dataset's definition?"
                )
            user_id = str(response.get("user_id"))
            row = {
                "record_id": str(record.get("external_id") or record.get("id")),
                **columns,
                "annotator": users.get(user_id, user_id),
                "human_score": int(score),
                "line_range": _text(_answer(values, p.line_range_question)),
                "notes": _text(_answer(values, p.notes_question)),
                "submitted_at": submitted_at.isoformat(),
                "annotator_id": user_id,
                "status": status,
                "correction": _text(_answer(values, p.correction_question)),
                "response_inserted_at": parse_timestamp(response["inserted_at"]).isoformat(),
                "dataset": dataset,
                "workspace": workspace,
                **correction_columns(meta),
                # citecal push --sample records how the record was drawn (README "Estimates").
                "sampling_strategy": _text(meta.get("_sampling_strategy")),
                "sampling_weight": _number(meta.get("_sampling_weight")),
                "sampling_probability": _number(meta.get("_sampling_probability")),
                "sampling_round": _integer(meta.get("_sampling_round")),
                "sampling_order": _integer(meta.get("_sampling_order")),
                "sampling_drawn": _integer(meta.get("_sampling_drawn")),
            }
            row = {c: row[c] for c in TABLE_COLUMNS}
            validate_row(row, "is --spec the dataset's definition?")
            rows.append(row)
    counts = PullCounts(
        records=n_records,
        submitted=submitted,
        exported=len(rows),
        drafts=drafts,
        discarded=discarded,
        before_since=early,
        pending_records=pending,
        legacy_records=legacy,
    )
    return rows, counts


Progress = Callable[[int], Callable[[int], None]]
"""Called once with the number of records, returns the callback each page's size goes to."""


PAGES_IN_FLIGHT = 3
"""Pages requested at once: the server spends ~0.5 s building a page of
1 000 records, and another server worker builds the next meanwhile (README "Push throughput")."""


def _page(
    client: rg.Argilla, dataset: rg.Dataset, api_url: str, offset: int, limit: int = PAGE_SIZE
) -> dict[str, Any]:
    with argilla_errors(api_url):
        response = client.api.http_client.get(
            f"/api/v1/datasets/{dataset.id}/records",
            params={"include": ["responses", "suggestions"], "offset": offset, "limit": limit},
        )
        response.raise_for_status()
    page: dict[str, Any] = response.json()
    return page


def iter_records(
    client: rg.Argilla, dataset: rg.Dataset, api_url: str, progress: Progress | None = None
) -> Iterator[dict[str, Any]]:
    """Every record of ``dataset`` with responses and suggestions, as the server sends it.

    A one-record request says how many records there are (the server builds a
    page of 1 000 in ~0.5 s, one record in milliseconds), so every page,
    the first too, is fetched :data:`PAGES_IN_FLIGHT` at a time and yielded
    in order; pages go on while they come back full, so records added
    meanwhile are read too. ``progress`` learns the total first (README
    "5. Pull the answers").
    """
    head = _page(client, dataset, api_url, 0, limit=1)
    total = max(int(head.get("total") or 0), len(head["items"]))
    tick = progress(total) if progress is not None else None
    offset = 0
    with ThreadPoolExecutor(PAGES_IN_FLIGHT) as pool:
        while True:
            offsets = range(offset, max(total, offset + 1), PAGE_SIZE)[:PAGES_IN_FLIGHT]
            pages = list(pool.map(lambda o: _page(client, dataset, api_url, o)["items"], offsets))
            for page_items in pages:
                yield from page_items
                if tick is not None:
                    tick(len(page_items))
                offset += len(page_items)
                if len(page_items) < PAGE_SIZE:
                    return


def user_names(client: rg.Argilla, api_url: str) -> dict[str, str]:
    """User id → username; empty when the key may not list users (ids are kept then)."""
    with argilla_errors(api_url), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            models = client.api.users.list()
        except ForbiddenError:
            return {}
    return {str(u.id): u.username for u in models}


def pull_annotations(
    spec: AnnotationSpec,
    config: ArgillaConfig,
    *,
    dataset_name: str,
    workspace: str | None = None,
    since: datetime | None = None,
    client: rg.Argilla | None = None,
    progress: Progress | None = None,
) -> PullResult:
    """The annotation table of dataset ``dataset_name`` (submitted responses only).

    ``progress`` as for ``push_evaluation``: called with the number of records,
    it returns the callback that receives each page's size as it is read.
    """
    client = client or connect(config)
    ws = workspace or config.workspace
    dataset = get_dataset(client, dataset_name, ws, config.api_url)
    users = user_names(client, config.api_url)
    rows, counts = annotation_rows(
        iter_records(client, dataset, config.api_url, progress),
        spec,
        users,
        since=since,
        dataset=dataset_name,
        workspace=ws,
    )
    return PullResult(to_frame(rows), counts)
