"""``citecal estimate``: joins, labels, sampling, strata, gates, inputs and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from calibrate_factories import judged_eval
from click.testing import CliRunner

from citecal.calibrate._estimate import apply_gate, estimate_frame
from citecal.calibrate._judged import read_judged
from citecal.calibrate._ppi import Moments, classical_mean, ppi_mean
from citecal.calibrate._table import prepare_labels
from citecal.cli import cli
from citecal.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "datasets" / "annotations"


def judged_frame(verdicts: list[str | None], **cols: list[object]) -> pd.DataFrame:
    n = len(verdicts)
    base: dict[str, object] = {
        "record_id": [f"r{i}" for i in range(n)],
        "verdict": verdicts,
        "confidence": ["high"] * n,
        "score": [np.nan] * n,
        "mode": ["extractive"] * n,
        "language": ["python"] * n,
        "repo": ["shop"] * n,
        "report": ["rep"] * n,
    }
    base.update(cols)
    return pd.DataFrame(base)


def labels(scores: dict[str, list[int]], **cols: object) -> pd.DataFrame:
    rows = [
        {"record_id": rid, "annotator": f"a{k}", "human_score": s, **cols}
        for rid, ss in scores.items()
        for k, s in enumerate(ss)
    ]
    return prepare_labels(pd.DataFrame(rows))


def test_worked_example_single_stratum() -> None:
    # 10 judged: r0–r5 supports (score 1.0), r6–r9 not_supports (0.0) → judge-only 0.6.
    # Labelled r0 (3), r1 (0), r6 (1), r2 (2, 3): labels 1, 0, 0, 1 (r2: both ≥ 2).
    # Judge on them: 1, 1, 0, 1. This is test_ppi's worked example with the labels in
    # another order: corrected = ppi_mean(Y, Ŷ, moments of the 10 verdicts).
    verdicts = ["supports"] * 6 + ["not_supports"] * 4
    lab = labels({"r0": [3], "r1": [0], "r6": [1], "r2": [2, 3]})
    r = estimate_frame(judged_frame(verdicts), lab, by=(), min_labelled=2)
    assert r.n_judged == 10 and r.n_labelled == 4
    assert r.judge_only.estimate == 0.6
    y = np.array([1.0, 0.0, 1.0, 0.0])  # sorted by record id: r0, r1, r2, r6
    yhat = np.array([1.0, 1.0, 1.0, 0.0])
    expected = ppi_mean(y, yhat, Moments.of(np.array([1.0] * 6 + [0.0] * 4)))
    assert math.isclose(r.corrected.estimate or 0, float(expected.estimate), abs_tol=1e-12)
    assert r.corrected.ci is not None
    assert math.isclose(r.corrected.ci[0], max(0.0, float(expected.low)), abs_tol=1e-12)
    human = classical_mean(y)
    assert r.human_only.estimate == 0.5
    assert r.human_only.ci is not None
    assert math.isclose(r.human_only.ci[1], float(human.high), abs_tol=1e-12)
    # Effective labels: n · var_human / var_corrected.
    assert r.effective_labels is not None
    assert math.isclose(
        r.effective_labels, 4 * float(human.se) ** 2 / float(expected.se) ** 2, abs_tol=1e-9
    )


def test_several_annotators_give_the_share_who_say_supports() -> None:
    lab = labels({"a": [3, 0, 2], "b": [1, 1]})
    got = dict(zip(lab["record_id"], lab["label"], strict=True))
    assert got == {"a": pytest.approx(2 / 3), "b": 0.0}


def test_unverified_and_unlabelled_records_are_left_out_with_notes() -> None:
    verdicts = ["supports", "not_supports", "unverified", "supports", "partial"]
    lab = labels({"r0": [3], "r1": [0], "r2": [3], "zz": [2], "r4": [1]})
    r = estimate_frame(judged_frame(verdicts), lab, by=(), min_labelled=2)
    assert r.n_judged == 4  # r2 is unverified
    assert r.n_labelled == 3  # r2 (not decided) and zz (not judged) left out
    assert any("1 judged citation(s) without a decision" in n for n in r.notes)
    assert any("2 labelled record(s) are not among" in n for n in r.notes)
    # partial is not support (citecal.support): judge-only = 2 supports / 4.
    assert r.judge_only.estimate == 0.5


def test_no_labelled_record_among_the_judged_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no labelled record is among the judged"):
        estimate_frame(judged_frame(["supports"] * 3), labels({"x": [3], "y": [0]}), by=())


def test_a_non_random_sample_is_refused() -> None:
    lab = labels({"r0": [3], "r1": [0]}, sampling_strategy="uncertain", sampling_weight=2.0)
    with pytest.raises(InputError, match="not at random"):
        estimate_frame(judged_frame(["supports"] * 3), lab, by=())


def test_sampling_weights_are_used_and_must_be_complete() -> None:
    rows = [
        {"record_id": "r0", "annotator": "a", "human_score": 3, "sampling_weight": 1.0},
        {"record_id": "r1", "annotator": "a", "human_score": 0, "sampling_weight": 3.0},
        {"record_id": "r2", "annotator": "a", "human_score": 3, "sampling_weight": 1.0},
    ]
    lab = prepare_labels(pd.DataFrame(rows))
    verdicts = ["supports", "not_supports", "supports", "supports"]
    r = estimate_frame(judged_frame(verdicts), lab, by=(), min_labelled=2, predictor="verdict")
    expected = ppi_mean(
        np.array([1.0, 0.0, 1.0]),
        np.array([1.0, 0.0, 1.0]),
        Moments.of(np.array([1.0, 0.0, 1.0, 1.0])),
        w=np.array([1.0, 3.0, 1.0]),
    )
    assert math.isclose(r.corrected.estimate or 0, float(expected.estimate), abs_tol=1e-12)
    assert r.sampling.startswith("weighted sample")
    rows[2]["sampling_weight"] = None
    with pytest.raises(InputError, match="1 labelled record\\(s\\) have no sampling_weight"):
        estimate_frame(judged_frame(verdicts), prepare_labels(pd.DataFrame(rows)), by=())
    rows[2]["sampling_weight"] = -1
    with pytest.raises(InputError, match="sampling_weight must be a positive number"):
        prepare_labels(pd.DataFrame(rows))


def test_strata_breakdown_and_pooling() -> None:
    rng = np.random.default_rng(3)
    n = 400
    mode = np.where(np.arange(n) < 300, "extractive", "abstractive")
    lang = np.where(np.arange(n) % 10 == 0, "javascript", "python")
    verdicts = list(np.where(rng.random(n) < 0.6, "supports", "not_supports"))
    frame = judged_frame(verdicts, mode=list(mode), language=list(lang))
    picked = rng.choice(n, 120, replace=False)
    lab = labels({f"r{i}": [int(rng.integers(0, 4))] for i in picked})
    r = estimate_frame(frame, lab, by=("mode", "language"), min_labelled=20)
    assert set(r.strata) == {"mode", "language"}
    assert r.strata["mode"]["extractive"].n_judged == 300
    assert sum(f.n_labelled for f in r.strata["mode"].values()) == 120
    # javascript cells have ~12 labels: pooled; the strata's shares add up to 1.
    assert r.stratification.by == ["mode", "language"]
    assert math.isclose(sum(c.share for c in r.stratification.strata), 1.0, abs_tol=1e-12)
    assert any("pooled into" in note for note in r.notes)
    with pytest.raises(InputError, match="cannot stratify by 'colour'"):
        estimate_frame(frame, lab, by=("colour",))


def test_gate_on_the_lower_bound() -> None:
    lab = labels({f"r{i}": [3 if i % 4 else 0] for i in range(40)})
    r = estimate_frame(judged_frame(["supports"] * 60), lab, by=())
    assert r.corrected.ci is not None
    low = r.corrected.ci[0]
    passed = apply_gate(r, {"precision": low - 0.01})
    assert passed.gate is not None and passed.gate.passed
    failed = apply_gate(r, {"precision": low + 0.01})
    assert failed.gate is not None and not failed.gate.passed
    assert failed.gate.failures[0].startswith(
        f"precision: lower bound of the corrected 95% interval {low:.3f} <"
    )
    with pytest.raises(InputError, match="--fail-under 'recall'"):
        apply_gate(r, {"recall": 0.5})


def test_eval_json_record_ids_are_the_ids_push_gives(tmp_path: Path) -> None:
    from citecal.annotate._records import record_id, report_id

    result = judged_eval(["supports", None, "not_supports"], rev="abc123")
    path = tmp_path / "eval.json"
    path.write_text(result.model_dump_json(), encoding="utf-8")
    judged = read_judged([path])
    valid = [c for c in result.citations if c.valid]
    assert judged["record_id"].tolist() == [
        record_id(report_id(result), c, "abc123") for c in valid
    ]
    assert judged["verdict"].tolist() == ["supports", "not_supports"]  # invalid one dropped
    assert judged["repo"].tolist() == ["/repos/shop"] * 2


def test_batch_output_record_ids_are_the_ids_push_gives(tmp_path: Path) -> None:
    from citecal.annotate._records import record_id, report_id
    from citecal.batch import BatchOutput, citation_rows, report_row

    out = BatchOutput(tmp_path / "out")
    out.create()
    results = [judged_eval(["supports", "partial"], report=f"r{i}.md") for i in range(2)]
    for i, result in enumerate(results):
        out.write_part(
            f"k{i}", citation_rows(f"b{i}", result), [report_row(f"b{i}", i, result, 0.1)], []
        )
    judged = read_judged([tmp_path / "out" / "citations.parquet"])
    expected = {record_id(report_id(r), c, r.rev) for r in results for c in r.citations}
    assert set(judged["record_id"]) == expected
    assert sorted(set(judged["report"])) == ["r0.md", "r1.md"]


def test_directory_of_eval_json_and_duplicates(tmp_path: Path) -> None:
    for i in range(2):
        (tmp_path / f"e{i}.json").write_text(
            judged_eval(["supports"], report=f"r{i}.md").model_dump_json(), encoding="utf-8"
        )
    assert len(read_judged([tmp_path])) == 2
    with pytest.raises(InputError, match="appears twice"):
        read_judged([tmp_path / "e0.json", tmp_path / "e0.json"])
    with pytest.raises(InputError, match="no eval JSON"):
        (tmp_path / "empty").mkdir()
        read_judged([tmp_path / "empty"])


# ------------------------------------------------------------------------------ CLI


def test_cli_on_the_bundled_tables() -> None:
    judged = BUNDLED / "judged.parquet"
    ann = BUNDLED / "annotations.parquet"
    res = CliRunner().invoke(cli, ["estimate", str(judged), "-a", str(ann), "-f", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["schema_version"] == 1
    assert (data["n_judged"], data["n_labelled"]) == (1000, 86)
    for key in ("corrected", "judge_only", "human_only", "effective_labels", "strata"):
        assert key in data
    lo, hi = data["corrected"]["ci"]
    assert lo <= data["corrected"]["estimate"] <= hi
    assert set(data["strata"]) == {"mode", "language", "repo"}
    # Narrower than the labels alone on this table.
    h_lo, h_hi = data["human_only"]["ci"]
    assert hi - lo < h_hi - h_lo
    table = CliRunner().invoke(cli, ["estimate", str(judged), "-a", str(ann)])
    assert table.exit_code == 0
    assert "Corrected (PPI++)" in table.stdout and "By mode" in table.stdout


def test_cli_gate_exits_1_with_the_reason(tmp_path: Path) -> None:
    judged = str(BUNDLED / "judged.parquet")
    ann = str(BUNDLED / "annotations.parquet")
    ok = CliRunner().invoke(cli, ["estimate", judged, "-a", ann, "--fail-under", "precision=0.2"])
    assert ok.exit_code == 0, ok.output
    out = tmp_path / "est.json"
    bad = CliRunner().invoke(
        cli,
        [
            "estimate",
            judged,
            "-a",
            ann,
            "--fail-under",
            "precision=0.8",
            "-f",
            "json",
            "-o",
            str(out),
        ],
    )
    assert bad.exit_code == 1
    assert "gate failed: precision: lower bound of the corrected 95% interval" in bad.stderr
    assert json.loads(out.read_text())["gate"]["passed"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-under", "precision"], "Error: --fail-under 'precision': write NAME=VALUE"),
        (["--fail-under", "recall=0.5"], "Error: --fail-under 'recall': use one of precision"),
        (
            ["--fail-under", "precision=high"],
            "Error: --fail-under precision: 'high' is not a number",
        ),
        (["--strata", "colour"], "Error: --strata 'colour': use any of mode, language, repo"),
    ],
)
def test_cli_usage_errors_are_one_line(args: list[str], message: str) -> None:
    judged = str(BUNDLED / "judged.parquet")
    ann = str(BUNDLED / "annotations.parquet")
    res = CliRunner().invoke(cli, ["estimate", judged, "-a", ann, *args])
    assert res.exit_code == 2
    assert res.stderr.strip().startswith(message), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_cli_input_errors_are_one_line(tmp_path: Path) -> None:
    ann = str(BUNDLED / "annotations.parquet")
    missing = CliRunner().invoke(cli, ["estimate", str(tmp_path / "nope.json"), "-a", ann])
    assert missing.exit_code == 2
    assert missing.stderr.strip() == f"Error: judged citations not found: {tmp_path / 'nope.json'}"
    other = tmp_path / "other.csv"
    pd.DataFrame({"record_id": ["x", "y"], "llm_verdict": ["supports", "partial"]}).to_csv(other)
    res = CliRunner().invoke(cli, ["estimate", str(other), "-a", ann])
    assert res.exit_code == 2
    assert "no labelled record is among the judged citations" in res.stderr
    out = tmp_path / "never.json"
    res = CliRunner().invoke(cli, ["estimate", str(other), "-a", ann, "-o", str(out)])
    assert res.exit_code == 2 and not out.exists()
    weird = tmp_path / "judged.txt"
    weird.write_text("x")
    res = CliRunner().invoke(cli, ["estimate", str(weird), "-a", ann])
    assert res.exit_code == 2 and "cannot tell what" in res.stderr
