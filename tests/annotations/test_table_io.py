"""The annotation table: its row model, Parquet/CSV/JSONL round trips, clear validation errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from citecal.annotations import (
    ANNOTATION_COLUMNS,
    CONFIDENCE_COLUMNS,
    RAW_COLUMNS,
    SCHEMA_VERSION,
    TABLE_COLUMNS,
    AnnotationRow,
    RecordData,
    read_table,
    table_rows,
    to_frame,
    validate_row,
    write_table,
)
from citecal.errors import InputError
from citecal.models import JudgeVerdict

JUDGE = JudgeVerdict.of(
    "supports", "medium", None, model="gpt-4o-mini", prompt_version="v1:abc", reasoning="Shown."
)


def record(**over: Any) -> RecordData:
    values: dict[str, Any] = {
        "report_id": "r1",
        "citation": "[a.py:2-3]",
        "citation_id": "c1",
        "claim": 'The cart keeps "items", one per SKU',
        "cited_code": 'items = {}\n    return "items",\n',  # quotes, commas, line breaks
        "start_line": 2,
        "end_line": 3,
        "context_before": "def cart():",
        "file_path": "a.py",
        "language": "python",
        "mode": "abstractive",
        "method": "llm",
        "repo": "shop",
        "rev": "0123456",  # digits only: must stay text in CSV
        "repository": "https://example.org/shop.git",
        "commit": "0" * 40,
        "judge": JUDGE,
        "matched_terms": "items",
    }
    values.update(over)
    return RecordData(**values)


def row(annotator: str = "alice", score: int = 3, **over: Any) -> dict[str, Any]:
    base = {
        "record_id": "rec1",
        **record().columns(),
        "annotator": annotator,
        "human_score": score,
        "line_range": "correct",
        "notes": "fine, really",
        "submitted_at": "2026-11-22T10:05:00+00:00",
        "annotator_id": "u1",
        "status": "submitted",
        "correction": None,
        "response_inserted_at": "2026-11-22T10:00:00+00:00",
        "dataset": "d",
        "workspace": "w",
        "correction_strategy": None,
        "correction_suggested": None,
        "sampling_strategy": "all",
        "sampling_weight": 2.5,
    }
    base.update(over)
    return {c: base.get(c) for c in TABLE_COLUMNS}


def test_the_model_has_every_column_the_table_has() -> None:
    assert list(AnnotationRow.model_fields) == list(TABLE_COLUMNS)
    assert TABLE_COLUMNS[: len(ANNOTATION_COLUMNS)] == ANNOTATION_COLUMNS
    assert len(TABLE_COLUMNS) == 48
    raw_end = len(TABLE_COLUMNS) - len(CONFIDENCE_COLUMNS)
    assert TABLE_COLUMNS[raw_end - len(RAW_COLUMNS) : raw_end] == RAW_COLUMNS
    assert TABLE_COLUMNS[raw_end:] == CONFIDENCE_COLUMNS
    assert CONFIDENCE_COLUMNS == ("confidence_source", "confidence_value")
    assert SCHEMA_VERSION == 3


def test_the_judge_verdict_is_flattened_once_and_read_back() -> None:
    r = validate_row(row())
    # supports/medium without a score of its own: the mapping, computed once (README "Calibration")
    assert (r.llm_verdict, r.llm_confidence, r.llm_score) == ("supports", "medium", 0.83)
    assert r.judge == JUDGE
    no_judge = validate_row(row(**record(judge=None, extractive_verdict="partial").columns()))
    assert no_judge.judge is None and no_judge.llm_score is None
    assert no_judge.extractive_verdict == "partial"


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_round_trip_keeps_every_value(tmp_path: Path, suffix: str) -> None:
    rows = [row("alice", 3), row("bob", 1, notes=None, sampling_weight=None)]
    path = tmp_path / f"t{suffix}"
    assert write_table(to_frame(rows), path) == suffix[1:]
    back = read_table(path)
    assert list(back.columns) == list(TABLE_COLUMNS)
    assert table_rows(back) == [validate_row(r) for r in rows]


def test_extra_columns_of_other_tools_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    write_table(to_frame([{**row(), "reviewer_team": "blue"}]), path)
    back = read_table(path)
    assert list(back.columns)[-1] == "reviewer_team"
    assert table_rows(back)[0].model_extra == {"reviewer_team": "blue"}


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"human_score": 4}, "record rec1: human_score: Input should be less than or equal to 3"),
        ({"llm_verdict": "maybe"}, "record rec1: llm_verdict: Input should be 'supports',"),
        ({"llm_score": 1.5}, "record rec1: llm_score: Input should be less than or equal to 1"),
        ({"annotator": ""}, "record rec1: annotator: String should have at least 1 character"),
        ({"start_line": -1}, "record rec1: start_line: Input should be greater than or equal to 0"),
        ({"sampling_weight": 0}, "record rec1: sampling_weight: Input should be greater than 0"),
    ],
)
def test_a_bad_row_names_the_record_the_column_and_the_value(
    over: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as err:
        validate_row(row(**over), "is --spec the dataset's definition?")
    assert str(err.value).startswith(message)
    assert f"got {next(iter(over.values()))!r}" in str(err.value)
    assert str(err.value).endswith("(is --spec the dataset's definition?)")


def test_a_missing_column_is_named() -> None:
    bad = row()
    del bad["claim"]
    with pytest.raises(InputError, match=r"^record rec1: claim: Field required$"):
        validate_row(bad)


def test_table_rows_names_the_first_bad_row(tmp_path: Path) -> None:
    frame = to_frame([row(), row("bob", human_score=2, record_id="rec2")])
    frame.loc[1, "line_range"] = "sideways"
    with pytest.raises(InputError, match=r"^record rec2: line_range: Input should be 'correct'"):
        table_rows(frame)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("none.parquet", None, "annotation table not found: "),
        ("t.xlsx", b"x", "unknown annotation table type '.xlsx'"),
        ("t.csv", b"", "annotation table is empty: "),
        ("t.parquet", b"not parquet", "cannot read annotation table "),
    ],
)
def test_unreadable_files_are_one_line(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        read_table(path)


def test_write_refuses_an_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"use \.parquet, \.csv or \.jsonl"):
        write_table(to_frame([row()]), tmp_path / "t.xlsx")
    assert not (tmp_path / "t.xlsx").exists()


def test_an_empty_table_keeps_its_columns(tmp_path: Path) -> None:
    write_table(to_frame([]), tmp_path / "e.parquet")
    assert list(pd.read_parquet(tmp_path / "e.parquet").columns) == list(TABLE_COLUMNS)
