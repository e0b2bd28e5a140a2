"""Server records → annotation table rows (pure), and atomic table writing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from citecal.annotate import load_spec, parse_timestamp
from citecal.annotate._pull import annotation_rows
from citecal.annotate._settings import DEFAULT_SPEC_PATH
from citecal.annotations import ANNOTATION_COLUMNS, TABLE_COLUMNS, to_frame, write_table
from citecal.errors import InputError

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
        "sampling_probability": None,
        "sampling_round": None,
        "sampling_order": None,
        "sampling_drawn": None,
        # pushed before push stored the raw record data (schema 2): unknown
        "start_line": None,
        "end_line": None,
        "context_before": None,
        "context_after": None,
        "repository": None,
        "commit": None,
        "extractive_verdict": None,
        # pushed before README "Judge confidence": calibrate reads the judge's words
        "confidence_source": None,
        "confidence_value": None,
    }
    assert counts.legacy_records == 2
    assert second["annotator"] == "u2"  # unknown user: the id is kept
    assert (second["human_score"], second["line_range"], second["notes"]) == (1, None, None)
    assert list(first) == list(TABLE_COLUMNS)
    assert TABLE_COLUMNS[: len(ANNOTATION_COLUMNS)] == ANNOTATION_COLUMNS


def raw_record(**judge: Any) -> dict[str, Any]:
    """A record as this citecal pushes it: the raw data in ``_citecal`` metadata."""
    data = {
        "schema_version": 2,
        "report_id": "r1",
        "citation": "[a.py:2-3]",
        "citation_id": "c1",
        "claim": "The cart keeps items",
        "cited_code": "items = {}\nreturn items",
        "start_line": 2,
        "end_line": 3,
        "context_before": "def cart():",
        "file_path": "a.py",
        "language": "python",
        "mode": "abstractive",
        "method": judge.pop("method", "llm"),
        "repo": "shop",
        "repository": "https://example.org/shop.git",
        "commit": "0" * 40,
        **judge,
    }
    return server_record(
        [response("u1", "submitted", answers(2), "2026-11-22T10:05:00")],
        metadata={"report_id": "r1", "_citecal": data},
    )


def test_rows_come_from_the_raw_record_data_not_the_markdown() -> None:
    verdict = {"verdict": "supports", "confidence": "high", "score": 0.9, "model": "m",
               "prompt_version": "v1:abc", "reasoning": "Shown."}  # fmt: skip
    rows, counts = annotation_rows([raw_record(judge=verdict)], SPEC, {})
    (row,) = rows
    assert counts.legacy_records == 0
    assert row["cited_code"] == "items = {}\nreturn items"  # not the field's Markdown
    assert (row["start_line"], row["end_line"]) == (2, 3)
    assert (row["context_before"], row["context_after"]) == ("def cart():", None)
    assert (row["repository"], row["commit"]) == ("https://example.org/shop.git", "0" * 40)
    assert (row["llm_verdict"], row["llm_confidence"], row["llm_score"]) == (
        "supports",
        "high",
        0.9,
    )
    assert (row["judge_model"], row["prompt_version"], row["judge_reasoning"]) == (
        "m",
        "v1:abc",
        "Shown.",
    )
    assert list(row) == list(TABLE_COLUMNS)


def test_a_rule_verdict_never_lands_in_the_llm_columns() -> None:
    rows, _ = annotation_rows(
        [raw_record(method="extractive", extractive_verdict="not_supports")], SPEC, {}
    )
    (row,) = rows
    assert row["extractive_verdict"] == "not_supports"
    assert {c: row[c] for c in ("llm_verdict", "llm_score", "judge_model")} == dict.fromkeys(
        ("llm_verdict", "llm_score", "judge_model")
    )


def test_bad_raw_data_names_the_record_and_key() -> None:
    record = raw_record()
    record["metadata"]["_citecal"]["start_line"] = "three"
    with pytest.raises(InputError, match=r"record rec1: metadata _citecal.start_line: "):
        annotation_rows([record], SPEC, {})


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


def test_pull_writes_the_judges_confidence_columns() -> None:
    verdict = {"verdict": "not_supports", "confidence": "high", "score": 0.25, "model": "m",
               "confidence_source": "logprob", "confidence_value": 0.75}  # fmt: skip
    (row,), _ = annotation_rows([raw_record(judge=verdict)], SPEC, {})
    assert (row["confidence_source"], row["confidence_value"]) == ("logprob", 0.75)
    # A record pushed before: empty columns (calibrate reads them as the judge's words).
    (old,), _ = annotation_rows([raw_record(judge={"verdict": "supports"})], SPEC, {})
    assert (old["confidence_source"], old["confidence_value"]) == (None, None)
    frame = to_frame([row, old])
    assert frame["confidence_value"].dtype == "float64"
