"""Server records → annotation table rows (pure), and atomic table writing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from citecal.annotate import (
    TABLE_COLUMNS,
    annotation_rows,
    load_spec,
    parse_timestamp,
    write_table,
)
from citecal.annotate._pull import to_frame
from citecal.annotate._settings import DEFAULT_SPEC_PATH
from citecal.errors import InputError
from citecal.models import ANNOTATION_COLUMNS

SPEC = load_spec()


def server_record(responses: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    record = {
        "id": "5c1e0c0e-0000-0000-0000-000000000001",
        "external_id": "rec1",
        "status": "completed",
        "fields": {
            "claim": "The cart keeps items",
            "citation": "[a.py:1-2]",
            "cited_code": "```python\n▶ 1  x = 1\n```",
            "judge_reasoning": "Looks right.",
        },
        "metadata": {
            "mode": "abstractive",
            "judge_model": "gpt-4o-mini",
            "prompt_version": "v1:abc",
            "report_id": "r1",
            "repo": "shop",
            "file": "a.py",
            "language": "python",
            "judge_score": 0.83,
            "_verdict": "supports",
            "_confidence": "medium",
            "_method": "llm",
            "_citation_id": "c1",
        },
        "responses": responses,
        "suggestions": [],
    }
    record.update(over)
    return record


def response(user: str, status: str, values: dict[str, Any] | None, at: str) -> dict[str, Any]:
    return {
        "id": f"resp-{user}",
        "user_id": user,
        "status": status,
        "values": values,
        "inserted_at": "2026-11-22T10:00:00",
        "updated_at": at,
    }


def answers(score: int, **more: Any) -> dict[str, Any]:
    values = {"supports_claim": {"value": score}}
    values.update({k: {"value": v} for k, v in more.items()})
    return values


def test_one_row_per_submitted_response_with_the_judge_verdict() -> None:
    records = [
        server_record(
            [
                response(
                    "u1",
                    "submitted",
                    answers(3, line_range="correct", notes="fine", correction="[a.py:1-3]"),
                    "2026-11-22T10:05:00.123456",
                ),
                response("u2", "submitted", answers(1), "2026-11-22T10:06:00"),
                response("u3", "draft", answers(2), "2026-11-22T10:07:00"),
                response("u4", "discarded", None, "2026-11-22T10:08:00"),
            ]
        ),
        server_record([], external_id="rec2"),
    ]
    rows, counts = annotation_rows(records, SPEC, {"u1": "alice"}, dataset="d", workspace="w")
    assert (counts.records, counts.submitted, counts.exported) == (2, 2, 2)
    assert (counts.drafts, counts.discarded, counts.pending_records) == (1, 1, 1)
    first, second = rows
    assert first == {
        "record_id": "rec1",
        "report_id": "r1",
        "citation": "[a.py:1-2]",
        "claim": "The cart keeps items",
        "cited_code": "```python\n▶ 1  x = 1\n```",
        "mode": "abstractive",
        "judge_model": "gpt-4o-mini",
        "prompt_version": "v1:abc",
        "llm_verdict": "supports",
        "llm_confidence": "medium",
        "llm_score": 0.83,
        "annotator": "alice",
        "human_score": 3,
        "line_range": "correct",
        "notes": "fine",
        "submitted_at": "2026-11-22T10:05:00.123456+00:00",
        "annotator_id": "u1",
        "status": "submitted",
        "correction": "[a.py:1-3]",
        "language": "python",
        "file_path": "a.py",
        "repo": "shop",
        "rev": None,
        "method": "llm",
        "citation_id": "c1",
        "matched_terms": None,
        "missing_terms": None,
        "judge_reasoning": "Looks right.",
        "response_inserted_at": "2026-11-22T10:00:00+00:00",
        "dataset": "d",
        "workspace": "w",
        "correction_strategy": None,  # no proposal pushed (citecal push --corrections)
        "correction_suggested": None,
        "sampling_strategy": None,  # pushed before push recorded its sampling design
        "sampling_weight": None,
    }
    assert second["annotator"] == "u2"  # unknown user: the id is kept
    assert (second["human_score"], second["line_range"], second["notes"]) == (1, None, None)
    assert list(first) == list(TABLE_COLUMNS)
    assert TABLE_COLUMNS[: len(ANNOTATION_COLUMNS)] == ANNOTATION_COLUMNS


def test_since_filters_on_submission_time() -> None:
    records = [
        server_record(
            [
                response("u1", "submitted", answers(3), "2026-11-22T10:05:00"),
                response("u2", "submitted", answers(2), "2026-11-22T12:00:00"),
            ]
        )
    ]
    since = parse_timestamp("2026-11-22T11:00:00Z")
    rows, counts = annotation_rows(records, SPEC, {}, since=since)
    assert [r["annotator"] for r in rows] == ["u2"]
    assert counts.before_since == 1


def test_label_score_question_uses_the_score_map() -> None:
    spec = load_spec(DEFAULT_SPEC_PATH.parent / "citation_support_binary.yaml")
    rec = server_record([response("u", "submitted", {"supported": {"value": "no"}}, "2026-11-22")])
    rows, _ = annotation_rows([rec], spec, {})
    assert rows[0]["human_score"] == 0


def test_submitted_response_without_the_score_is_an_input_error() -> None:
    rec = server_record([response("u", "submitted", {"other": {"value": 1}}, "2026-11-22")])
    with pytest.raises(InputError, match="no answer to 'supports_claim'"):
        annotation_rows([rec], SPEC, {})


def test_out_of_range_score_is_an_input_error() -> None:
    rec = server_record([response("u", "submitted", answers(7), "2026-11-22")])
    with pytest.raises(InputError, match="human_score"):
        annotation_rows([rec], SPEC, {})


def test_timestamps_are_timezone_aware() -> None:
    assert parse_timestamp("2026-11-22T10:00:00").tzinfo == UTC
    assert parse_timestamp("2026-11-22T10:00:00+02:00") == datetime(2026, 11, 22, 8, tzinfo=UTC)


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_write_table_round_trips(tmp_path: Path, suffix: str) -> None:
    rec = server_record([response("u1", "submitted", answers(2, notes="n"), "2026-11-22T10:05")])
    rows, _ = annotation_rows([rec], SPEC, {"u1": "alice"})
    path = tmp_path / f"ann{suffix}"
    write_table(to_frame(rows), path)
    if suffix == ".parquet":
        back = pd.read_parquet(path)
    elif suffix == ".csv":
        back = pd.read_csv(path)
    else:
        back = pd.read_json(path, lines=True)
    assert list(back.columns) == list(TABLE_COLUMNS)
    assert back.loc[0, "annotator"] == "alice" and int(back.loc[0, "human_score"]) == 2
    assert back.loc[0, "notes"] == "n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_empty_table_keeps_its_columns(tmp_path: Path) -> None:
    write_table(to_frame([]), tmp_path / "e.parquet")
    assert list(pd.read_parquet(tmp_path / "e.parquet").columns) == list(TABLE_COLUMNS)


def test_unknown_extension_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"\.parquet, \.csv or \.jsonl"):
        write_table(to_frame([]), tmp_path / "x.xlsx")
    assert list(tmp_path.iterdir()) == []
