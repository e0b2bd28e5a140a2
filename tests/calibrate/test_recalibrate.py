"""Calibrated confidence: ECE, recalibration maps (fit, CV, file), eval --calibration."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from calibrate_factories import row, synthetic
from click.testing import CliRunner

from citecal.calibrate import compute_metrics, prepare
from citecal.calibrate._recalibrate import (
    RecalibrationMap,
    cross_validate,
    expected_calibration_error,
    fit_map,
    read_map,
)
from citecal.cli import cli
from citecal.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
ANNOTATIONS = ROOT / "datasets" / "annotations" / "annotations.parquet"


def test_ece_worked_example() -> None:
    # Bins of width 0.2. Scores 0.1, 0.1 (bin 0; people: 0, 1 → share 0.5; mean score 0.1,
    # gap 0.4); 0.9, 0.9, 0.9, 0.9 (bin 4; people 1, 1, 1, 0 → 0.75; gap 0.15).
    # ECE = (2·0.4 + 4·0.15) / 6 = (0.8 + 0.6) / 6 = 1.4 / 6.
    s = np.array([0.1, 0.1, 0.9, 0.9, 0.9, 0.9])
    y = np.array([0.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    assert math.isclose(expected_calibration_error(s, y) or 0, 1.4 / 6, abs_tol=1e-12)
    assert expected_calibration_error(np.array([]), np.array([])) is None
    # A perfectly calibrated bin contributes nothing.
    assert expected_calibration_error(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == 0.0


def test_metrics_ece_is_the_reliability_diagrams_gap() -> None:
    # Three records, one annotator each: a (score 0.9, human 3), b (0.1, 3), c (0.1, 0).
    df = prepare(
        pd.DataFrame(
            [
                row("a", "x", 3, "supports", score=0.9),
                row("b", "x", 3, "not_supports", score=0.1),
                row("c", "x", 0, "not_supports", score=0.1),
            ]
        )
    )
    m = compute_metrics(df)
    # c joins b's bin: mean score 0.1, share supported 0.5 → gap 0.4; a's bin gap 0.1.
    # ECE = (2·0.4 + 1·0.1) / 3 = 0.9 / 3.
    assert m.ece is not None and math.isclose(m.ece, 0.3, abs_tol=1e-12)


def test_isotonic_and_platt_maps() -> None:
    rng = np.random.default_rng(0)
    s = rng.random(400)
    y = (rng.random(400) < s**2).astype(float)  # the judge is over-confident at low scores
    iso = fit_map(s, y, "isotonic")
    mapped = iso.apply(s)
    assert np.all(np.diff(iso.apply(np.linspace(0, 1, 50))) >= -1e-12)  # monotone
    assert mapped.min() >= 0.0 and mapped.max() <= 1.0
    assert (expected_calibration_error(mapped, y) or 1) < (expected_calibration_error(s, y) or 0)
    platt = fit_map(s, y, "platt")
    assert platt.a is not None and platt.a > 0
    back = RecalibrationMap.model_validate_json(platt.model_dump_json())
    assert np.allclose(back.apply(s), platt.apply(s))
    with pytest.raises(InputError, match="at least 10"):
        fit_map(s[:5], y[:5])
    with pytest.raises(InputError, match="both supported and unsupported"):
        fit_map(s, np.ones(400))


def test_cross_validation_is_out_of_sample_and_grouped() -> None:
    rng = np.random.default_rng(1)
    s = rng.random(300)
    y = (rng.random(300) < 0.2 + 0.6 * s).astype(float)
    groups = np.array([f"rep{i % 6}" for i in range(300)], dtype=object)
    cv = cross_validate(s, y, groups, "isotonic", folds=5)
    assert cv is not None and cv.folds == 5 and cv.grouped_by == "report"
    assert cv.ece_before == expected_calibration_error(s, y)
    # Out of sample, the map is worse than in sample (where it fits its own data).
    in_sample = expected_calibration_error(fit_map(s, y).apply(s), y) or 0
    assert (cv.ece_after or 0) > in_sample
    assert cross_validate(s, y, np.array(["one"] * 300, dtype=object)) is None


def test_calibrate_save_map_then_eval_calibration(tmp_path: Path) -> None:
    out = tmp_path / "map.json"
    res = CliRunner().invoke(
        cli,
        ["calibrate", str(ANNOTATIONS), "--save-map", str(out), "--resamples", "0", "-f", "json"],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    saved = read_map(out)
    assert saved.method == "isotonic" and saved.n_fitted == 237
    assert report["recalibration"]["cv"]["folds"] == 5
    assert report["overall"]["ece"] is not None
    ev = tmp_path / "eval.json"
    examples = ROOT / "datasets" / "examples"
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            str(examples / "report.md"),
            "--repo",
            str(examples / "shopcart"),
            "--no-llm",
            "--no-cascade",  # the rules' decided verdicts carry scores to map
            "--calibration",
            str(out),
            "-f",
            "json",
            "-o",
            str(ev),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(ev.read_text())
    assert data["calibration"] == str(out)
    decided = [c for c in data["citations"] if c["verdict"] not in (None, "unverified")]
    assert decided
    for c in decided:
        assert c["raw_score"] is not None
        assert math.isclose(c["score"], float(saved.apply(np.array([c["raw_score"]]))[0]))
    undecided = [c for c in data["citations"] if c["verdict"] in (None, "unverified")]
    assert all(c["raw_score"] is None for c in undecided)


def test_eval_calibration_errors_are_one_line(tmp_path: Path) -> None:
    examples = ROOT / "datasets" / "examples"
    bad = tmp_path / "map.json"
    bad.write_text('{"method": "magic"}')
    for path, message in (
        (tmp_path / "missing.json", "calibration map not found"),
        (bad, "is not a `citecal calibrate --save-map` file"),
    ):
        res = CliRunner().invoke(
            cli,
            [
                "eval",
                str(examples / "report.md"),
                "--repo",
                str(examples / "shopcart"),
                "--no-llm",
                "--calibration",
                str(path),
            ],
        )
        assert res.exit_code == 2
        assert res.stderr.startswith(f"Error: {message}") or message in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


def test_synthetic_table_map_improves_ece_out_of_sample() -> None:
    df = prepare(synthetic(n_records=240, n_reports=12, seed=3))
    scored = df[df["judge_score"].notna()]
    cv = cross_validate(
        scored["judge_score"].to_numpy(),
        scored["human_pos"].to_numpy(),
        scored["report_id"].to_numpy(),
    )
    assert cv is not None and cv.ece_before is not None and cv.ece_after is not None
    assert cv.ece_after < cv.ece_before
