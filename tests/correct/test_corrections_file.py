"""A corrections file meets an evaluation: matched by offset and citation, or refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from correct_factories import REPORT

from citecal.annotate import load_spec
from citecal.annotate._records import build_records
from citecal.config import Config
from citecal.correct import correct_report
from citecal.correct._annotate import offer_corrections, read_corrections, suggestion_text
from citecal.errors import InputError
from citecal.pipeline import evaluate_report
from citecal.source import open_store


def test_offers_each_pushed_correction_and_refuses_a_mismatch(shop: Path, tmp_path: Path) -> None:
    from test_correct_judge import handler

    from citecal.config import JudgeConfig
    from citecal.testing import FakeOpenAIServer
    from citecal.verify.judge import build_judge

    # With a judge: without one, valid citations only the rules object to stay (issue 21).
    with FakeOpenAIServer(handler=handler) as srv:
        config = Config(
            judge=JudgeConfig(base_url=srv.base_url, cache=False, escalation_model=None)
        )
        judge = build_judge(config.judge)
        try:
            with open_store(shop) as store:
                result = evaluate_report(REPORT, store, Config(), report_name="report.md")
                fixes = correct_report(
                    REPORT, store, config, judge=judge, report_name="report.md"
                ).output
        finally:
            judge.close()
    spec = load_spec(None)
    built = build_records(result, spec)
    records, offered = offer_corrections(built, result, fixes.corrections_file(), spec)
    # expand is offered; the relocation and the removal cite invalid (unpushed) lines
    assert offered == 1
    by = {r.citation.citation: r for r in records.records}
    expanded = by["[pkg/cart.py:8-9]"]
    (suggestion,) = [s for s in expanded.suggestions if s.question == "correction"]
    assert (suggestion.value, suggestion.agent) == ("[pkg/cart.py:8-11]", "citecal correct expand")
    assert expanded.metadata["_correction_strategy"] == "expand"
    assert not [s for s in by["[pkg/cart.py:4-11]"].suggestions if s.question == "correction"]
    remove = next(c for c in fixes.corrections if c.strategy == "remove")
    assert suggestion_text(remove) == "remove the citation"

    moved = fixes.corrections_file().model_copy(deep=True)
    moved.corrections[0].position += 1
    with pytest.raises(InputError, match="does not match the evaluation: no citation"):
        offer_corrections(built, result, moved, spec)
    # the report is matched by content: a moved or renamed report is the same report ...
    renamed = fixes.corrections_file().model_copy(update={"report": "elsewhere/other.md"})
    assert offer_corrections(built, result, renamed, spec)[1] == offered


def test_a_corrections_file_of_another_report_with_the_same_name_is_refused(shop: Path) -> None:
    """Matching by file name offered one report's proposals on another report called the same."""
    edited = REPORT.replace("# Shop", "# Shoq", 1)  # same offsets: every citation matches
    assert edited != REPORT
    with open_store(shop) as store:
        result = evaluate_report(edited, store, Config(), report_name="report.md")
        fixes = correct_report(REPORT, store, Config(), report_name="report.md").output
    spec = load_spec(None)
    built = build_records(result, spec)
    with pytest.raises(InputError, match="the corrections file is for another report"):
        offer_corrections(built, result, fixes.corrections_file(), spec)
    old = fixes.corrections_file().model_copy(update={"report_sha256": None})
    with pytest.raises(InputError, match="records no report_sha256"):
        offer_corrections(built, result, old, spec)


@pytest.mark.parametrize(
    "path", ["../secrets.env", "/etc/passwd", "~/.ssh/id_rsa", ".git/config", "pkg/../../x.py"]
)
def test_a_proposed_place_outside_the_repository_is_refused(
    shop: Path, tmp_path: Path, path: str
) -> None:
    with open_store(shop) as store:
        fixes = correct_report(REPORT, store, Config(), report_name="report.md").output
    data = fixes.corrections_file().model_copy(deep=True)
    target = next(c for c in data.corrections if c.new is not None)
    target.new = target.new.model_copy(update={"file_path": path})  # type: ignore[union-attr]
    file = tmp_path / "fixes.json"
    file.write_text(data.model_dump_json())
    with pytest.raises(InputError, match=r"proposes a place outside the repository"):
        read_corrections(file)


def test_reading_a_file_that_is_not_one(tmp_path: Path) -> None:
    bad = tmp_path / "fixes.json"
    bad.write_text('{"schema_version": 1, "report": "r.md"}')
    with pytest.raises(InputError, match="is not a `citecal correct --corrections` file"):
        read_corrections(bad)


def test_reads_the_corrections_table_of_eval_batch(shop: Path, tmp_path: Path) -> None:
    """``push --corrections out/corrections.parquet``: the pushed report's rows, as the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from citecal.batch._tables import SCHEMAS, correction_rows

    with open_store(shop) as store:
        fixes = correct_report(REPORT, store, Config(), report_name="r/report.md").output
    rows = correction_rows("id-1", fixes)
    rows += [{**r, "report_id": "id-2", "report": "r/other.md"} for r in rows]
    table = tmp_path / "corrections.parquet"
    table.mkdir()
    pq.write_table(
        pa.Table.from_pylist(rows, schema=SCHEMAS["corrections"]), table / "part-a.parquet"
    )
    got = read_corrections(table, "r/report.md")
    assert got.report == "r/report.md" and got.corrections == fixes.corrections
    assert read_corrections(table, "r/none.md").corrections == []  # nothing of it failed
    with pytest.raises(InputError, match="2 reports' corrections of one report"):
        read_corrections(table)
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"x": [1]}), bad)
    with pytest.raises(InputError, match="is not an `eval-batch --correct` corrections table"):
        read_corrections(bad, "r/report.md")
