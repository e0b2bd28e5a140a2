"""Drift alarms (--baseline), calibrate gates (--fail-under), anchor set (rejudge --anchor)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from calibrate_factories import row, synthetic
from click.testing import CliRunner

from citecal.calibrate._anchor import anchor_check, anchor_records
from citecal.cli import cli
from citecal.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
ANNOTATIONS = ROOT / "datasets" / "annotations" / "annotations.parquet"


def worse(table: pd.DataFrame, share: float, seed: int = 0) -> pd.DataFrame:
    """The same annotations with the judge's verdict flipped on ``share`` of the records."""
    rng = np.random.default_rng(seed)
    records = table["record_id"].unique()
    flip = set(rng.choice(records, int(share * len(records)), replace=False))
    out = table.copy()
    m = out["record_id"].isin(flip)
    out.loc[m, "llm_verdict"] = out.loc[m, "llm_verdict"].map(
        {"supports": "not_supports", "not_supports": "supports"}
    )
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("drift")
    base = synthetic(n_records=400, n_reports=20, seed=4, judge_noise=0.1)
    paths = {"base": tmp / "base.parquet", "worse": tmp / "worse.parquet"}
    base.to_parquet(paths["base"], index=False)
    worse(base, 0.35).to_parquet(paths["worse"], index=False)
    saved = tmp / "calibration.json"
    res = CliRunner().invoke(
        cli, ["calibrate", str(paths["base"]), "-f", "json", "-o", str(saved), "--resamples", "300"]
    )
    assert res.exit_code == 0, res.output
    paths["saved"] = saved
    return paths


def test_calibration_json_carries_the_judge_per_record(tables: dict[str, Path]) -> None:
    data = json.loads(tables["saved"].read_text())
    judge = data["judge"]
    assert len(judge["record_id"]) == 400
    assert set(judge["llm_verdict"]) == {"supports", "not_supports"}
    assert set(judge) == {"record_id", "llm_verdict", "judge_score", "prompt_version"}
    assert all(0.0 <= s <= 1.0 for s in judge["judge_score"])


def test_only_json_output_carries_the_snapshot(tables: dict[str, Path]) -> None:
    from citecal.calibrate._report import Checks, calibrate

    report = calibrate(tables["base"], checks=Checks(snapshot=False))
    assert report.judge is None


def test_a_significant_drop_raises_an_alarm_and_exits_1(tables: dict[str, Path]) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(tables["worse"]),
            "--baseline",
            str(tables["saved"]),
            "--resamples",
            "300",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 1, res.output
    drift = json.loads(res.stdout)["drift"]
    assert drift["shared_records"] == 400
    assert drift["comparison"]["figures"]["agreement_rate"]["diff"] < -0.2
    assert any(a.startswith("agreement_rate dropped") for a in drift["alarms"])
    assert f"drift alarm against {tables['saved']}: agreement_rate dropped" in res.stderr


def test_the_same_judge_raises_no_alarm(tables: dict[str, Path]) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(tables["base"]),
            "--baseline",
            str(tables["saved"]),
            "--resamples",
            "300",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "no alarm" in res.stdout


def test_a_drop_within_the_margin_does_not_alarm(tables: dict[str, Path]) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(tables["worse"]),
            "--baseline",
            str(tables["saved"]),
            "--resamples",
            "300",
            "--drift-margin",
            "0.9",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["drift"]["alarms"] == []


def test_baseline_errors_are_one_line(tmp_path: Path, tables: dict[str, Path]) -> None:
    old = tmp_path / "old.json"
    data = json.loads(tables["saved"].read_text())
    data["judge"] = None
    old.write_text(json.dumps(data))
    other = tmp_path / "other.parquet"
    pd.DataFrame([row("zz", "a", 3, "supports"), row("zy", "a", 0, "supports")]).to_parquet(other)
    for args, message in (
        (
            [str(tables["base"]), "--baseline", str(tmp_path / "nope.json")],
            "baseline calibration not found",
        ),
        ([str(tables["base"]), "--baseline", str(old)], "has no per-record judge answers"),
        ([str(other), "--baseline", str(tables["saved"])], "share no record"),
    ):
        res = CliRunner().invoke(cli, ["calibrate", *args, "--resamples", "0"])
        assert res.exit_code == 2, res.output
        assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_fail_under_gates_on_overall_figures(tables: dict[str, Path]) -> None:
    ok = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(tables["base"]),
            "--fail-under",
            "weighted_kappa=0.1,spearman_rho=0.1",
            "--resamples",
            "0",
        ],
    )
    assert ok.exit_code == 0, ok.output
    bad = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(tables["worse"]),
            "--fail-under",
            "weighted_kappa=0.6,spearman_rho=0.6",
            "--resamples",
            "0",
            "-f",
            "json",
        ],
    )
    assert bad.exit_code == 1
    gate = json.loads(bad.stdout)["gate"]
    assert gate["passed"] is False and len(gate["failures"]) == 2
    assert "gate failed: weighted_kappa " in bad.stderr and "< 0.6" in bad.stderr
    usage = CliRunner().invoke(
        cli, ["calibrate", str(tables["base"]), "--fail-under", "happiness=1"]
    )
    assert usage.exit_code == 2
    assert usage.stderr.startswith("Error: --fail-under 'happiness': use one of agreement_rate")


def test_undefined_figure_fails_its_gate() -> None:
    from citecal.calibrate import prepare
    from citecal.calibrate._report import apply_gate, calibrate_frame

    # One annotator only: Krippendorff's α between annotators is undefined.
    df = prepare(pd.DataFrame([row(f"r{i}", "a", i % 4, "supports") for i in range(8)]))
    report = apply_gate(calibrate_frame(df, input_name="t", by=()), {"krippendorff_alpha": 0.5})
    assert report.gate is not None and not report.gate.passed
    assert report.gate.failures == [
        "krippendorff_alpha is undefined (see the notes), required ≥ 0.5"
    ]


def test_anchor_records_worked_example() -> None:
    # a: 3, 2 (both support) → anchor; b: 3, 1 (split) → not; c: 0 alone → not (1 annotator);
    # d: 0, 1, 0 (all not) → anchor.
    table = pd.DataFrame(
        [
            row("a", "x", 3, "supports"),
            row("a", "y", 2, "supports"),
            row("b", "x", 3, "supports"),
            row("b", "y", 1, "supports"),
            row("c", "x", 0, "supports"),
            row("d", "x", 0, "supports"),
            row("d", "y", 1, "supports"),
            row("d", "z", 0, "supports"),
        ]
    )
    anchors = anchor_records(table)
    assert sorted(anchors["record_id"].unique()) == ["a", "d"]
    with pytest.raises(InputError, match="no anchor record"):
        anchor_records(table[table["record_id"].isin(["b", "c"])])
    # Old judge: supports on both (right on a, wrong on d); new: not_supports on both.
    new = anchors.assign(llm_verdict="not_supports")
    check = anchor_check(anchors, new, of_records=4)
    assert (check.records, check.new_agree, check.old_agree) == (2, 1, 1)
    assert (check.only_old_right, check.only_new_right) == (1, 1)
    assert check.line("v2").startswith(
        "anchor: 2 record(s) with annotator consensus (of 4); judge v2 agrees on 1 (0.500)"
    )


def test_rejudge_anchor_against_the_local_server(tmp_path: Path) -> None:
    from citecal.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
            "CITECAL_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
        }
        res = CliRunner().invoke(
            cli, ["rejudge", str(ANNOTATIONS), "--anchor", "--prompt", "v1"], env=env
        )
        assert res.exit_code == 0, res.output
        assert "anchor: 75 record(s) with annotator consensus (of 86)" in res.stdout
        strict = CliRunner().invoke(
            cli,
            ["rejudge", str(ANNOTATIONS), "--anchor", "--prompt", "v1", "--min-agreement", "0.99"],
            env=env,
        )
        assert strict.exit_code == 1
        assert "anchor check failed: agreement" in strict.stderr
    usage = CliRunner().invoke(cli, ["rejudge", str(ANNOTATIONS), "--prompt", "v1"])
    assert usage.exit_code == 2 and "-o/--output is required (unless --anchor)" in usage.stderr


def test_a_drop_beyond_the_margin_without_significance_does_not_alarm(tmp_path: Path) -> None:
    # The bundled table with the judge flipped on 30 of 86 records (README "Drift alarms"):
    # agreement falls 0.068 (> margin 0.05) but its paired interval crosses 0 and McNemar
    # p = 0.2, so only weighted κ and ρ, whose intervals lie below 0, alarm.
    saved = tmp_path / "calibration.json"
    res = CliRunner().invoke(cli, ["calibrate", str(ANNOTATIONS), "-f", "json", "-o", str(saved)])
    assert res.exit_code == 0, res.output
    table = pd.read_parquet(ANNOTATIONS)
    rng = np.random.default_rng(0)
    flip = set(rng.choice(table["record_id"].unique(), 30, replace=False))
    m = table["record_id"].isin(flip)
    table.loc[m, "llm_verdict"] = table.loc[m, "llm_verdict"].map(
        {"supports": "not_supports", "not_supports": "supports", "partial": "supports"}
    )
    table.loc[m, "llm_score"] = 1 - table.loc[m, "llm_score"]
    regressed = tmp_path / "regressed.parquet"
    table.to_parquet(regressed, index=False)
    res = CliRunner().invoke(
        cli, ["calibrate", str(regressed), "--baseline", str(saved), "-f", "json"]
    )
    assert res.exit_code == 1
    drift = json.loads(res.stdout)["drift"]
    agreement = drift["comparison"]["figures"]["agreement_rate"]
    assert agreement["diff"] < -0.05 and agreement["ci"][1] > 0
    assert [a.split()[0] for a in drift["alarms"]] == ["weighted_kappa", "spearman_rho"]
