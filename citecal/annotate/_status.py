"""``citecal status``: how far annotators have come on a dataset, and what it says so far.

:func:`summarize` is pure (server records in, a :class:`StatusReport` out);
:func:`dataset_status` reads the records page by page with their responses
only (no suggestions), which is what keeps 10 000 records within 2 seconds
on the local stack (README "How many labels").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations
from typing import Any

import argilla as rg
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from citecal.annotate._client import argilla_errors, connect, get_dataset
from citecal.annotate._pull import user_names
from citecal.annotate._settings import AnnotationSpec, min_submitted_of
from citecal.calibrate._estimate_models import Interval
from citecal.config import ArgillaConfig
from citecal.models import SCHEMA_VERSION
from citecal.support import HUMAN_SUPPORT_MIN_SCORE

PAGE = 1000
IN_FLIGHT = 4


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnnotatorProgress(_Model):
    """One annotator's answers and how often they agree with the others."""

    annotator: str
    submitted: int = Field(description="Submitted answers.")
    drafts: int
    discarded: int
    shared: int = Field(description="Of the submitted, records someone else answered too.")
    agreement: float | None = Field(
        description="Share of pairs with another annotator on a shared record where both "
        "say the same on 'supports' (score ≥ 2); null without shared records."
    )


class StatusReport(_Model):
    """``citecal status --format json`` (schema_version 1)."""

    schema_version: int = SCHEMA_VERSION
    dataset: str
    workspace: str
    min_submitted: int | None = Field(description="Answers a record needs to be complete.")
    records: int = Field(description="Records pushed.")
    answered: int = Field(description="Records with at least one submitted answer.")
    complete: int = Field(description="Records with at least min_submitted submitted answers.")
    annotators: list[AnnotatorProgress]
    design: str | None = Field(description="How the labelled records were drawn.")
    interval: Interval | None = Field(description="The current interval (null: none valid).")
    interval_kind: str = Field(
        description="'corrected' (judge + labels, with JUDGED given) or 'labels only'."
    )
    note: str | None = Field(None, description="Why there is no interval, or what it assumes.")


def _answer(values: Mapping[str, Any] | None, question: str) -> Any:
    entry = (values or {}).get(question)
    return entry.get("value") if isinstance(entry, Mapping) else None


def label_rows(
    records: Iterable[Mapping[str, Any]], spec: AnnotationSpec, users: Mapping[str, str]
) -> tuple[list[dict[str, Any]], dict[str, list[int]], int, int]:
    """(submitted rows, per-annotator [drafts, discarded], records, records answered).

    Each row: record_id, annotator, human_score and the record's ``sampling_*`` metadata.
    """
    p = spec.pull
    score_q = spec.question(p.score_question).name
    rows: list[dict[str, Any]] = []
    other: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    n_records = answered = 0
    for record in records:
        n_records += 1
        meta = record.get("metadata") or {}
        rid = str(record.get("external_id") or record.get("id"))
        got = 0
        for response in record.get("responses") or []:
            who = users.get(str(response.get("user_id")), str(response.get("user_id")))
            status = response.get("status")
            if status == "draft":
                other[who][0] += 1
                continue
            if status != "submitted":
                other[who][1] += 1
                continue
            raw = _answer(response.get("values"), score_q)
            score = p.score_map.get(str(raw)) if p.score_map else raw
            if score is None:
                continue
            got += 1
            rows.append(
                {
                    "record_id": rid,
                    "annotator": who,
                    "human_score": int(score),
                    "sampling_strategy": meta.get("_sampling_strategy"),
                    "sampling_weight": meta.get("_sampling_weight"),
                    "sampling_probability": meta.get("_sampling_probability"),
                    "sampling_round": meta.get("_sampling_round"),
                    "sampling_order": meta.get("_sampling_order"),
                    "sampling_drawn": meta.get("_sampling_drawn"),
                }
            )
        answered += got > 0
    return rows, other, n_records, answered


def annotator_progress(
    rows: Sequence[Mapping[str, Any]], other: Mapping[str, Sequence[int]]
) -> list[AnnotatorProgress]:
    """Per annotator: answers, and pairwise agreement on 'supports' over shared records."""
    by_record: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    submitted: dict[str, int] = defaultdict(int)
    for r in rows:
        supports = r["human_score"] >= HUMAN_SUPPORT_MIN_SCORE
        by_record[r["record_id"]].append((r["annotator"], supports))
        submitted[r["annotator"]] += 1
    pairs: dict[str, int] = defaultdict(int)
    agree: dict[str, int] = defaultdict(int)
    shared: dict[str, int] = defaultdict(int)
    for answers in by_record.values():
        if len(answers) < 2:
            continue
        for who, _ in answers:
            shared[who] += 1
        for (a, sa), (b, sb) in combinations(answers, 2):
            for who in (a, b):
                pairs[who] += 1
                agree[who] += sa == sb
    names = sorted(set(submitted) | set(other))
    return [
        AnnotatorProgress(
            annotator=name,
            submitted=submitted.get(name, 0),
            drafts=other.get(name, (0, 0))[0],
            discarded=other.get(name, (0, 0))[1],
            shared=shared.get(name, 0),
            agreement=agree[name] / pairs[name] if pairs.get(name) else None,
        )
        for name in names
    ]


def summarize(
    records: Iterable[Mapping[str, Any]],
    spec: AnnotationSpec,
    users: Mapping[str, str],
    *,
    dataset: str,
    workspace: str,
    min_submitted: int | None,
    interval: Callable[[pd.DataFrame, int], tuple[Interval | None, str | None, str, str | None]],
) -> StatusReport:
    """The status of a dataset from its records (``include=responses``); pure given ``interval``.

    ``interval(annotation rows, records pushed)`` returns (interval, design,
    kind, note): the corrected estimate when judged citations were given, else
    the labels-only one (:func:`citecal.calibrate.labels_only_interval`).
    """
    rows, other, n_records, answered = label_rows(records, spec, users)
    per_record: dict[str, int] = defaultdict(int)
    for r in rows:
        per_record[r["record_id"]] += 1
    need = min_submitted or 1
    complete = sum(1 for n in per_record.values() if n >= need)
    table = pd.DataFrame(
        rows,
        columns=[
            "record_id",
            "annotator",
            "human_score",
            "sampling_strategy",
            "sampling_weight",
            "sampling_probability",
            "sampling_round",
            "sampling_order",
            "sampling_drawn",
        ],
    )
    found, design, kind, note = interval(table, n_records)
    return StatusReport(
        dataset=dataset,
        workspace=workspace,
        min_submitted=min_submitted,
        records=n_records,
        answered=answered,
        complete=complete,
        annotators=annotator_progress(rows, other),
        design=design,
        interval=found,
        interval_kind=kind,
        note=note,
    )


def _pages(client: rg.Argilla, dataset: rg.Dataset, api_url: str) -> Iterator[dict[str, Any]]:
    """Every record with its responses (not suggestions), pages fetched in parallel."""

    def page(offset: int, limit: int = PAGE) -> dict[str, Any]:
        with argilla_errors(api_url):
            response = client.api.http_client.get(
                f"/api/v1/datasets/{dataset.id}/records",
                params={"include": ["responses"], "offset": offset, "limit": limit},
            )
            response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    head = page(0, 1)
    total = max(int(head.get("total") or 0), len(head["items"]))
    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        for items in pool.map(lambda o: page(o)["items"], range(0, max(total, 1), PAGE)):
            yield from items


def dataset_status(
    spec: AnnotationSpec,
    config: ArgillaConfig,
    *,
    dataset_name: str,
    workspace: str | None = None,
    interval: Callable[[pd.DataFrame, int], tuple[Interval | None, str | None, str, str | None]],
    client: rg.Argilla | None = None,
) -> StatusReport:
    """Read ``dataset_name``'s records and :func:`summarize` them."""
    client = client or connect(config)
    ws = workspace or config.workspace
    dataset = get_dataset(client, dataset_name, ws, config.api_url)
    users = user_names(client, config.api_url)
    return summarize(
        _pages(client, dataset, config.api_url),
        spec,
        users,
        dataset=dataset_name,
        workspace=ws,
        min_submitted=min_submitted_of(dataset.settings),
        interval=interval,
    )


__all__ = [
    "AnnotatorProgress",
    "StatusReport",
    "annotator_progress",
    "dataset_status",
    "label_rows",
    "summarize",
]
