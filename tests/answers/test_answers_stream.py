"""Reading batches: JSONL, JSON arrays and objects, malformed records, flat memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from citecal.answers import ValidateResult, validate_answers, validate_items, write_validation
from citecal.config import AnswersConfig
from citecal.errors import InputError

GOOD = {
    "id": "ok",
    "answer": "The dome was finished in 1436.",
    "evidence": ["Vasari writes that the dome was finished in 1436."],
    "citations": [
        {
            "source": "Vasari",
            "relevance": 0.9,
            "quote": "the dome was finished in 1436",
            "evidence_idx": 0,
            "alignment_score": 0.9,
            "span_in_answer": "The dome was finished in 1436",
        }
    ],
}


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_malformed_lines_are_reported_counted_and_skipped(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "a.jsonl",
        [json.dumps(GOOD), '{"id": "cut", "answ', "", "[1, 2]", json.dumps({**GOOD, "id": "two"})],
    )
    result = validate_answers(path)
    assert [i.id for i in result.items] == ["ok", "two"]
    assert [i.line for i in result.items] == [1, 5]
    assert [(m.line, m.item, m.error) for m in result.malformed] == [
        (2, 2, "invalid JSON: Unterminated string starting at"),
        (4, 3, "not a JSON object"),
    ]
    assert result.total_qa == 2 and result.valid_qa == 2
    assert result.gate.status == "WARN"
    assert result.gate.reasons == ["2 malformed record(s) skipped"]


def test_strict_makes_the_first_malformed_line_fatal(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [json.dumps(GOOD), "nope"])
    with pytest.raises(InputError, match=r"malformed record at line 2: invalid JSON"):
        validate_answers(path, strict=True)


def test_json_array_object_wrapper_and_single_item(tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text(json.dumps([GOOD, {**GOOD, "id": "b"}], indent=2))
    wrapped = tmp_path / "b.json"
    wrapped.write_text(json.dumps({"items": [GOOD, GOOD, GOOD]}))
    single = tmp_path / "c.json"
    single.write_text(json.dumps(GOOD))
    assert [i.id for i in validate_answers(array).items] == ["ok", "b"]
    assert validate_answers(wrapped).total_qa == 3
    assert validate_answers(single).total_qa == 1
    # a JSON array in a file without a telling extension is still read as an array
    other = tmp_path / "answers.txt"
    other.write_text(array.read_text())
    assert validate_answers(other).total_qa == 2


def test_a_broken_json_array_keeps_the_items_before_the_break(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("[" + json.dumps(GOOD) + ', {"id": ')
    result = validate_answers(path)
    assert result.total_qa == 1
    assert result.malformed[0].item == 2
    assert result.malformed[0].error.startswith("invalid JSON after item 1")


def test_written_json_parses_as_the_model_and_matches_the_api(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "a.jsonl", [json.dumps(GOOD), "x", json.dumps({**GOOD, "citations": []})]
    )
    out = tmp_path / "v.json"
    header = write_validation(path, AnswersConfig(), out)
    written = ValidateResult.model_validate_json(out.read_text())
    assert written == validate_answers(path)
    assert header.items == [] and header.gate == written.gate
    assert written.gate.model_dump() == {
        "status": "WARN",
        "reasons": [
            "citation coverage 48% < 50%",  # mean of 96.7% and 0% (the item without citations)
            "1 item(s) have no citations",
            "1 item(s) fail their own gate",
            "1 malformed record(s) skipped",
        ],
    }


def test_empty_input_writes_valid_json(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [""])
    out = tmp_path / "v.json"
    write_validation(path, AnswersConfig(), out)
    result = ValidateResult.model_validate_json(out.read_text())
    assert result.total_qa == 0 and result.items == []
    assert result.gate.reasons == ["no citations"]


def test_validate_items_in_memory() -> None:
    result = validate_items([GOOD, {**GOOD, "id": "x", "citations": []}])
    assert [i.gate.status for i in result.items] == ["PASS", "FAIL"]
    assert result.aggregate.items_without_citations == 1


def _peak(path: Path, out: Path) -> int:
    tracemalloc.start()
    try:
        write_validation(path, AnswersConfig(), out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_as_the_batch_grows(tmp_path: Path) -> None:
    line = json.dumps(GOOD)
    small = write_jsonl(tmp_path / "small.jsonl", [line] * 500)
    large = write_jsonl(tmp_path / "large.jsonl", [line] * 5000)
    peak_small = _peak(small, tmp_path / "s.json")
    peak_large = _peak(large, tmp_path / "l.json")
    # ten times the items: keeping every result would take ~10x the memory
    assert peak_large < 1.5 * peak_small + 200_000, (peak_small, peak_large)
