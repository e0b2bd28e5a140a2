"""The fast paths behind `calibrate` on a million rows give exactly the slow paths' answers.

``benchmarks/calibrate_million.py`` measures them; these tests pin that speed
changed nothing: records assembled without validation equal validated ones,
integer id codes group like the ids, a breakdown group holding every row
reuses the overall figures, and a judge score without a verdict is used.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from calibrate_factories import row, synthetic

from citecal.calibrate import calibrate_frame, categorise, compute_metrics, prepare
from citecal.calibrate._disagreements import to_records
from citecal.calibrate._models import Disagreement
from citecal.calibrate._report import group_metrics
from citecal.calibrate._table import id_codes
from citecal.config import CalibrationConfig


def test_assembled_disagreements_equal_validated_ones() -> None:
    raw = synthetic(60, 3, 5, seed=3)
    raw.loc[::4, "notes"] = "wrong file"
    raw.loc[::5, "llm_score"] = None
    mismatch = categorise(prepare(raw))
    fast = to_records(mismatch)
    assert len(fast) == len(mismatch) > 10
    for item in fast:
        slow = Disagreement.model_validate(item.model_dump())
        assert item == slow
        assert item.model_dump_json() == slow.model_dump_json()
        assert item.model_fields_set == slow.model_fields_set


def test_id_codes_follow_the_sorted_ids() -> None:
    df = prepare(synthetic(30, 2, 4, seed=1))
    part = df[df["mode"] == df["mode"].iloc[0]]
    for column in ("record_id", "report_id", "annotator"):
        codes, n = id_codes(part, column)
        expected, labels = pd.factorize(part[column], sort=True)
        assert n == len(labels) and codes.tolist() == expected.tolist()


def test_a_group_of_every_row_reuses_the_overall_figures() -> None:
    df = prepare(synthetic(40, 3, 5, seed=2))
    config = CalibrationConfig(bootstrap_resamples=200, seed=0)
    overall = compute_metrics(df, config)
    [(name, reused)] = group_metrics(df, "prompt_version", config, overall).items()
    assert reused is overall
    assert reused == compute_metrics(df[df["prompt_version"] == name], config)
    report = calibrate_frame(df, input_name="t", config=config)
    assert report.groups["prompt_version"][name] == report.overall


def test_a_judge_score_without_a_verdict_is_used() -> None:
    """DESIGN.md: no verdict → the score decides; pandas 3 once read the blank verdict as NaN."""
    rows = [
        row("r1", "a", 3, "supports", score=0.9),
        row("r2", "a", 0, None, score=0.1),
        row("r3", "a", 3, None, score=0.8),
        row("r4", "a", 0, "not_supports", score=0.2),
    ]
    df = prepare(pd.DataFrame(rows))
    assert df["judge_pos"].tolist() == [1.0, 0.0, 1.0, 0.0]
    m = compute_metrics(df, CalibrationConfig(bootstrap_resamples=0))
    assert m.n_pairs == 4 and math.isclose(m.agreement_rate or 0, 1.0)


@pytest.mark.parametrize("per_chunk", [1, 3, 10_000])
def test_json_output_in_chunks_is_byte_identical(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, per_chunk: int
) -> None:
    """The JSON is written a few thousand disagreements at a time (the 1M-row path peaked at
    1 074 MB serialising them at once); the bytes are what ``model_dump_json`` gives."""
    from citecal.calibrate import calibrate
    from citecal.commands import calibrate as command

    table = tmp_path / "t.parquet"
    synthetic(n_records=40, n_reports=4, seed=5).to_parquet(table, index=False)
    report = calibrate(table)
    assert len(report.disagreements) > 3
    monkeypatch.setattr(command, "DISAGREEMENTS_PER_CHUNK", per_chunk)
    out = tmp_path / "c.json"
    command._emit(report, "json", out)
    assert out.read_bytes() == (report.model_dump_json(indent=2) + "\n").encode()
    empty = report.model_copy(update={"disagreements": []})
    command._emit(empty, "json", out)
    assert out.read_bytes() == (empty.model_dump_json(indent=2) + "\n").encode()
