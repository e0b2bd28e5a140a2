"""The batch's Parquet tables without a cluster: schemas, commit protocol, deduplicated reads."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

from citecal.batch import SCHEMAS, BatchOutput, citation_rows, model_fields, report_row, to_citation
from citecal.config import Config
from citecal.models import CitationResult, EvalResult, Summary
from citecal.pipeline import evaluate_report
from citecal.source import open_store


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> EvalResult:
    root = Path(__file__).resolve().parents[2] / "datasets" / "examples"
    text = (root / "report.md").read_text()
    return evaluate_report(text, open_store(root / "shopcart"), Config(), no_judge_reason="t")


def test_columns_come_from_the_models() -> None:
    assert SCHEMAS["citations"].names == ["report_id", *CitationResult.model_fields]
    reports = SCHEMAS["reports"].names
    assert set(Summary.model_fields) < set(reports)
    assert {"report", "repo", "rev", "warnings", "uncited_claims"} < set(reports)
    assert "citations" not in reports and "failed_citations" not in reports


def test_a_new_model_field_becomes_a_column() -> None:
    """Fields added later (e.g. summary `decided`) need no change in the batch code."""

    class Grown(BaseModel):
        decided: int
        decision_coverage: float | None
        tags: list[str]
        weights: dict[str, float]
        first: CitationResult | None = None

    fields = {f.name: f.type for f in model_fields(Grown)}
    assert fields["decided"] == pa.int64() and fields["decision_coverage"] == pa.float64()
    assert fields["tags"] == pa.list_(pa.string())
    assert fields["weights"] == pa.map_(pa.string(), pa.float64())
    assert pa.types.is_struct(fields["first"])


def test_rows_round_trip_to_the_eval_models(result: EvalResult, tmp_path: Path) -> None:
    out = BatchOutput(tmp_path)
    out.create()
    out.write_part("k1", citation_rows("r1", result), [report_row("r1", 1, result, 0.5)], [])
    back = [to_citation(r) for r in out.read("citations").to_pylist()]
    assert back == result.citations
    row = out.read("reports").to_pylist()[0]
    assert Summary.model_validate({k: row[k] for k in Summary.model_fields}) == result.summary
    assert (row["report_id"], row["manifest_row"], row["warnings"]) == ("r1", 1, result.warnings)


def _part(out: BatchOutput, key: str, rid: str, result: EvalResult, commit: bool = True) -> None:
    rows = citation_rows(rid, result)
    if commit:
        out.write_part(key, rows, [report_row(rid, 1, result, 0.0)], [])
    else:  # a worker killed between its renames: citations written, no commit marker
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMAS["citations"]),
                       out.part_path("citations", key))  # fmt: skip


def test_uncommitted_parts_are_invisible_and_recovered(result: EvalResult, tmp_path: Path) -> None:
    out = BatchOutput(tmp_path)
    out.create()
    _part(out, "a", "r1", result)
    _part(out, "b", "r2", result, commit=False)
    (out.table_dir("reports") / ".part-c.parquet.x1.tmp").write_bytes(b"half")
    assert out.done_ids() == {"r1"}
    assert set(out.read("citations", columns=["report_id"]).column(0).to_pylist()) == {"r1"}
    assert out.has_data()
    assert out.recover() == 2
    assert not out.part_path("citations", "b").exists()
    assert not list(out.table_dir("reports").glob(".*"))
    assert out.read("citations").num_rows == len(result.citations)


def test_a_report_in_two_committed_parts_is_read_once(result: EvalResult, tmp_path: Path) -> None:
    """E.g. a zombie task of an interrupted run finishing after a resumed run redid it."""
    out = BatchOutput(tmp_path)
    out.create()
    _part(out, "b", "r1", result)
    _part(out, "a", "r1", result)  # the same report again, under another key
    _part(out, "c", "r2", result)
    n = len(result.citations)
    assert out.read("citations").num_rows == 2 * n
    assert out.read("reports").num_rows == 2
    batches = list(out.scan("citations", columns=["report_id"], filter=pc.field("valid")))
    valid = sum(c.valid for c in result.citations)
    assert sum(b.num_rows for b in batches) == 2 * valid


def test_older_parts_read_missing_columns_as_nulls(result: EvalResult, tmp_path: Path) -> None:
    out = BatchOutput(tmp_path)
    out.create()
    rows = citation_rows("r1", result)
    old = pa.Table.from_pylist(rows, schema=SCHEMAS["citations"]).drop_columns(["hint", "tokens"])
    pq.write_table(old, out.part_path("citations", "a"))
    out.write_part("a", [], [report_row("r1", 1, result, 0.0)], [])  # commit marker only
    table = out.read("citations")
    assert table.column("hint").null_count == len(rows) and table.num_rows == len(rows)


def test_output_that_is_a_file_is_an_input_error(tmp_path: Path) -> None:
    from citecal.errors import InputError

    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="output is not a directory"):
        BatchOutput(tmp_path / "f").create()
