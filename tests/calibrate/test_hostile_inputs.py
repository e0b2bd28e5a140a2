"""Malformed calibration inputs: one line, exit 2, never a traceback or a wrong figure (issue 25).

Before: a recalibration map with values outside [0, 1] turned judge scores
into -3 … 100; maps of mismatched lengths, empty or with NaN knots crashed or
were applied; a cut baseline snapshot crashed pandas; ``estimate`` crashed on a
table with a repeated index and silently dropped an ``llm_score`` of "high",
inf or 7.5; an all-0 label set gave the interval [0, 0] without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from calibrate_factories import synthetic
from click.testing import CliRunner

from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
ANNOTATIONS = ROOT / "datasets" / "annotations" / "annotations.parquet"
JUDGED = ROOT / "datasets" / "annotations" / "judged.parquet"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- eval --calibration

ISO = {"method": "isotonic", "n_fitted": 10}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (json.dumps({**ISO, "x": [0.1, 0.5], "y": [0.2]}), "as many values y as knots x"),
        (json.dumps({**ISO, "x": [], "y": []}), "at least one (got 0 knots, 0 values)"),
        (json.dumps({**ISO, "x": [[0.1], [0.5]], "y": [0.2, 0.4]}), "x.0: Input should be"),
        (json.dumps({**ISO, "x": [0.1, 0.5], "y": [0.9, 0.1]}), "values y must not decrease"),
        (json.dumps({**ISO, "x": [0.5, 0.1], "y": [0.1, 0.9]}), "knots x must increase"),
        ('{"method": "isotonic", "n_fitted": 10, "x": [NaN, 0.5], "y": [0.1, 0.2]}', "finite"),
        (json.dumps({**ISO, "x": [0.1, 0.5], "y": [-3, 100]}), "must lie in [0, 1]"),
        ('{"method": "platt", "n_fitted": 10, "a": Infinity, "b": 0}', "Infinity is not a finite"),
        (json.dumps({"method": "platt", "n_fitted": 10}), "needs its slope a and intercept b"),
        ("[" * 50_000 + "]" * 50_000, "JSON nested too deeply"),
    ],
)
def test_unusable_calibration_maps_are_refused(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "map.json"
    path.write_text(text)
    code, out, err = run(
        "eval",
        str(EXAMPLES / "report.md"),
        "--repo",
        str(EXAMPLES / "shopcart"),
        "--no-llm",
        "--calibration",
        str(path),
        "-f",
        "json",
    )
    assert (code, out) == (2, ""), err
    assert err.startswith(f"Error: {path} is not a") and why in err
    assert len(err.splitlines()) == 1


# --------------------------------------------------------------------------- calibrate --baseline


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    tmp = tmp_path_factory.mktemp("baseline")
    table = tmp / "base.parquet"
    synthetic(n_records=60, n_reports=6, seed=2).to_parquet(table, index=False)
    code, out, err = run("calibrate", str(table), "-f", "json", "--resamples", "0")
    assert code == 0, err
    return table, json.loads(out)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda j: j.update(judge_score=j["judge_score"][:-5]), "columns differ in length"),
        (lambda j: j["judge_score"].__setitem__(0, 7.5), "judge_score.0: Input should be less"),
        (lambda j: j["judge_score"].__setitem__(1, -0.5), "judge_score.1: Input should be greater"),
    ],
)
def test_truncated_or_out_of_range_baselines_are_refused(
    tmp_path: Path, saved: tuple[Path, dict[str, object]], edit: object, why: str
) -> None:
    table, data = saved
    data = json.loads(json.dumps(data))
    edit(data["judge"])  # type: ignore[operator]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(data))
    code, _, err = run("calibrate", str(table), "--baseline", str(baseline), "--resamples", "0")
    assert code == 2, err
    assert err.startswith(f"Error: {baseline}: 'judge' block: ") and why in err
    assert len(err.splitlines()) == 1


def test_a_nan_in_a_baseline_is_refused_where_it_is(
    tmp_path: Path, saved: tuple[Path, dict[str, object]]
) -> None:
    table, data = saved
    data = json.loads(json.dumps(data))
    data["judge"]["judge_score"][2] = float("nan")  # type: ignore[index]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(data))  # NaN is written as the JSON token NaN
    code, _, err = run("calibrate", str(table), "--baseline", str(baseline), "--resamples", "0")
    assert (code, err) == (
        2,
        f"Error: cannot read baseline calibration {baseline}: judge.judge_score.2: "
        "NaN is not a finite number\n",
    )


# --------------------------------------------------------------------------- estimate


def test_estimate_reads_a_table_with_a_repeated_index(tmp_path: Path) -> None:
    judged = pd.read_parquet(JUDGED)
    judged.index = [0] * len(judged)  # written with its (repeated) pandas index
    path = tmp_path / "judged.parquet"
    judged.to_parquet(path)
    code, out, err = run("estimate", str(path), "-a", str(ANNOTATIONS), "-f", "json")
    assert code == 0, err
    _, expected, _ = run("estimate", str(JUDGED), "-a", str(ANNOTATIONS), "-f", "json")
    mine, theirs = json.loads(out), json.loads(expected)
    mine.pop("judged"), theirs.pop("judged")
    assert mine == theirs


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("high", "row 4: llm_score must be a number in [0, 1] (or empty), got 'high'"),
        (np.inf, "row 4: llm_score must be in [0, 1], got inf"),
        (-np.inf, "row 4: llm_score must be in [0, 1], got -inf"),
        (7.5, "row 4: llm_score must be in [0, 1], got 7.5"),
    ],
)
def test_estimate_rejects_scores_calibrate_rejects(tmp_path: Path, value: object, why: str) -> None:
    judged = pd.read_parquet(JUDGED)
    judged["llm_score"] = judged["llm_score"].astype(object)
    judged.loc[3, "llm_score"] = value
    path = tmp_path / "judged.csv"
    judged.to_csv(path, index=False)
    code, out, err = run("estimate", str(path), "-a", str(ANNOTATIONS))
    assert (code, out, err) == (2, "", f"Error: {path}: {why}\n")


def test_estimate_rejects_an_out_of_range_score_in_eval_json(tmp_path: Path) -> None:
    code, out, err = run(
        "eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
        "-f", "json",
    )  # fmt: skip
    data = json.loads(out)
    data["citations"][0]["valid"] = True
    data["citations"][0]["score"] = 100.0
    path = tmp_path / "eval.json"
    path.write_text(json.dumps(data))
    code, out, err = run("estimate", str(path), "-a", str(ANNOTATIONS))
    assert (code, out) == (2, "")
    assert err == f"Error: {path}: row 1: score must be in [0, 1], got 100.0\n"


@pytest.mark.parametrize(("score", "k", "what"), [(0, 0, "unsupported"), (3, 86, "supported")])
def test_all_equal_labels_say_why_the_interval_is_degenerate(
    tmp_path: Path, score: int, k: int, what: str
) -> None:
    labels = pd.read_parquet(ANNOTATIONS)
    labels["human_score"] = score
    path = tmp_path / "labels.parquet"
    labels.to_parquet(path)
    code, out, err = run("estimate", str(JUDGED), "-a", str(path), "-f", "json")
    assert code == 0, err
    report = json.loads(out)
    low, high = report["corrected"]["ci"]
    assert low == high
    [note] = [n for n in report["notes"] if n.startswith("all 86 labelled records")]
    assert note.startswith(f"all 86 labelled records are {what}")
    assert f"with {k} of 86 supported, the exact 95% interval is [" in note
    assert "zero width because the labels do not vary" in note


# --------------------------------------------------------------------------- gates


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf"])
@pytest.mark.parametrize(
    "args",
    [
        ("calibrate", str(ANNOTATIONS), "--resamples", "0", "--fail-under"),
        ("estimate", str(JUDGED), "-a", str(ANNOTATIONS), "--fail-under"),
    ],
)
def test_fail_under_nan_is_a_usage_error(args: tuple[str, ...], value: str) -> None:
    name = "weighted_kappa" if args[0] == "calibrate" else "precision"
    code, out, err = run(*args, f"{name}={value}")
    assert (code, out) == (2, "")
    assert err == (
        f"Error: --fail-under {name}: {value!r} is not a finite number "
        "(a gate on NaN or infinity never decides)\n"
    )


def test_gates_fail_on_a_nan_figure_or_threshold() -> None:
    from citecal.calibrate._estimate import apply_gate as estimate_gate
    from citecal.calibrate._report import apply_gate as calibrate_gate
    from citecal.errors import InputError

    code, out, err = run("calibrate", str(ANNOTATIONS), "--resamples", "0", "-f", "json")
    assert code == 0, err
    from citecal.calibrate._models import CalibrationReport

    report = CalibrationReport.model_validate_json(out)
    nan_overall = report.overall.model_copy(update={"weighted_kappa": float("nan")})
    gated = calibrate_gate(
        report.model_copy(update={"overall": nan_overall}), {"weighted_kappa": 0.1}
    )
    assert gated.gate is not None and not gated.gate.passed
    with pytest.raises(InputError, match="not a finite number"):
        calibrate_gate(report, {"weighted_kappa": float("nan")})

    code, out, err = run("estimate", str(JUDGED), "-a", str(ANNOTATIONS), "-f", "json")
    assert code == 0, err
    from citecal.calibrate import EstimateReport

    est = EstimateReport.model_validate_json(out)
    nan_ci = est.corrected.model_copy(update={"ci": (float("nan"), float("nan"))})
    gated_est = estimate_gate(est.model_copy(update={"corrected": nan_ci}), {"precision": 0.1})
    assert gated_est.gate is not None and not gated_est.gate.passed
    with pytest.raises(InputError, match="not a finite number"):
        estimate_gate(est, {"precision": float("nan")})
