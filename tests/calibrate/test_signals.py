"""Confidence signal quality in ``calibrate`` (README "Judge confidence")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from calibrate_factories import row
from click.testing import CliRunner
from sklearn.metrics import roc_auc_score

from citecal.calibrate import calibrate_frame, prepare
from citecal.calibrate._signals import auc_from_tables, confidence_bins, signal_quality
from citecal.cli import cli


def _table() -> pd.DataFrame:
    """Eight pairs judged with logprob confidence, four with consistency.

    logprob: agreed verdicts at 0.95, 0.9, 0.8, 0.7, disputed at 0.75, 0.6, 0.55, 0.9.
    """
    rows = []
    agreed = [0.95, 0.9, 0.8, 0.7]
    disputed = [0.75, 0.6, 0.55, 0.9]
    for i, c in enumerate(agreed):
        rows.append(row(f"a{i}", "ann", 3, "supports", report=f"rep{i % 2}",
                        confidence_source="logprob", confidence_value=c))  # fmt: skip
    for i, c in enumerate(disputed):
        rows.append(row(f"d{i}", "ann", 0, "supports", report=f"rep{i % 2}",
                        confidence_source="logprob", confidence_value=c))  # fmt: skip
    for i, (human, c) in enumerate([(3, 1.0), (0, 0.6), (0, 1.0), (3, 0.8)]):
        rows.append(row(f"c{i}", "ann", human, "not_supports", report="rep2",
                        confidence_source="consistency", confidence_value=c))  # fmt: skip
    return pd.DataFrame(rows)


def test_auc_and_ece_per_source_on_a_worked_example() -> None:
    signals = {s.source: s for s in signal_quality(prepare(_table()))}
    lp = signals["logprob"]
    # Of the 16 (agreed, disputed) pairs the agreed one is above in 12, tied in 0 → 0.75...
    # by hand: 0.95 > all 4; 0.9 > 3, = 1 (0.9) → 3.5; 0.8 > 3; 0.7 > 2 → (4 + 3.5 + 3 + 2) / 16.
    assert math.isclose(lp.roc_auc or 0, 12.5 / 16, abs_tol=1e-12)
    assert (lp.n_pairs, lp.n_records, lp.agreement_rate) == (8, 8, 0.5)
    # ECE over ten bins: [0.5,0.6) 0.55 disputed: |0.55 − 0| = .55; [0.6,0.7) .6: .6;
    # [0.7,0.8) .7 agreed, .75 disputed: mean .725 vs .5 → .225 × 2; [0.8,0.9) .8: |.8 − 1| = .2;
    # [0.9,1.0] .95, .9, .9 disputed: mean .9167 vs 2/3 → .25 × 3.
    ece = (0.55 + 0.6 + 2 * 0.225 + 0.2 + 3 * (0.9166666666666666 - 2 / 3)) / 8
    assert math.isclose(lp.ece or 0, ece, abs_tol=1e-12)
    co = signals["consistency"]
    # not_supports verdicts: people agree where they scored 0 (c1 at 0.6, c2 at 1.0).
    assert math.isclose(co.roc_auc or 0, roc_auc_score([0, 1, 1, 0], [1.0, 0.6, 1.0, 0.8]))


def test_a_table_without_confidence_columns_is_read_as_the_judges_words() -> None:
    df = pd.DataFrame(
        [
            row("r1", "a", 3, "supports", score=0.9),
            row("r2", "a", 0, "not_supports", confidence="medium"),  # mapped 0.17 → 0.83
            row("r3", "a", 0, "partial", score=0.5),
        ]
    )
    prepared = prepare(df)
    assert list(prepared["confidence_source"]) == ["verbal"] * 3
    assert prepared["confidence_value"].tolist() == pytest.approx([0.9, 0.83, 0.5])
    (s,) = signal_quality(prepared)
    assert s.source == "verbal" and s.roc_auc is None  # people agree with all three
    assert s.notes and "one class" in s.notes[0]


def test_the_bootstrap_auc_matches_sklearn_on_each_table() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        value = np.round(rng.random(200), 1)  # ties
        agree = rng.random(200) < value
        levels = np.unique(value, return_inverse=True)[1]
        t = np.zeros((levels.max() + 1, 2))
        np.add.at(t, (levels, agree.astype(int)), 1)
        assert math.isclose(auc_from_tables(t), roc_auc_score(agree, value), abs_tol=1e-12)
    assert np.isnan(auc_from_tables(np.array([[0.0, 3.0], [0.0, 2.0]])))


def test_reliability_bins_drop_empty_ones() -> None:
    bins = confidence_bins(np.array([0.55, 0.95, 1.0]), np.array([False, True, True]))
    assert [(b.low, b.n, b.agreement_rate) for b in bins] == [(0.5, 1, 0.0), (0.9, 2, 1.0)]


def test_calibrate_prints_and_writes_the_signals(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    _table().to_parquet(path)
    out = CliRunner().invoke(cli, ["calibrate", str(path), "--resamples", "200"])
    assert out.exit_code == 0, out.output
    assert "Confidence signals: does the judge know when people agree with it?" in out.output
    assert any(line.startswith("│ logprob") and "0.781" in line for line in out.output.splitlines())
    doc = json.loads(
        CliRunner().invoke(cli, ["calibrate", str(path), "-f", "json", "--resamples", "200"]).output
    )
    assert [s["source"] for s in doc["signals"]] == ["consistency", "logprob"]
    lo, hi = doc["signals"][1]["roc_auc_ci"]
    assert lo <= 12.5 / 16 <= hi
    html = CliRunner().invoke(cli, ["calibrate", str(path), "-f", "html"]).output
    assert "Confidence signals" in html
    report = calibrate_frame(prepare(_table()), input_name="t")
    assert report.signals == calibrate_frame(prepare(_table()), input_name="t").signals  # seeded


@pytest.mark.parametrize("bad", ["high", 1.5])
def test_a_bad_confidence_value_is_one_line_exit_2(tmp_path: Path, bad: object) -> None:
    df = _table()
    df["confidence_value"] = df["confidence_value"].astype(object)
    df.loc[3, "confidence_value"] = bad
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    out = CliRunner().invoke(cli, ["calibrate", str(path)])
    assert out.exit_code == 2
    assert "row 4: confidence_value must be" in out.output
    assert "Traceback" not in out.output
