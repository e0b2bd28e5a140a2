"""``citecal calibrate`` through click: formats, errors, --compare and --fail-if-worse."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from calibrate_factories import row, synthetic
from click.testing import CliRunner

from citecal.cli import cli


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "ann.parquet"
    synthetic(90, 3, 6, seed=1).to_parquet(path)
    return path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


FIGURE_LABELS: dict[str, str] = {
    "Agreement (pairs)": "agreement_rate",
    "Agreement (consensus)": "consensus_agreement_rate",
    "Cohen's κ (binary)": "cohen_kappa",
    "Weighted κ (0–3, quadratic)": "weighted_kappa",
    "Spearman ρ": "spearman_rho",
    "Spearman p-value": "spearman_p",
    "Kendall τ-b": "kendall_tau",
    "Precision (supports)": "precision",
    "Recall (supports)": "recall",
    "F1 (supports)": "f1",
    "Precision (not supports)": "precision_not_supports",
    "Recall (not supports)": "recall_not_supports",
    "F1 (not supports)": "f1_not_supports",
    "Brier score": "brier",
    "Krippendorff α (humans, ordinal)": "krippendorff_alpha",
    "Human pairs: exact": "human_exact_agreement",
    "Human pairs: within 1": "human_within1_agreement",
    "Human ceiling (LOAO)": "human_ceiling",
    "Judge on the same records": "judge_ceiling_agreement",
    "Judge − ceiling": "judge_vs_ceiling",
    "Line range correct": "line_range_accuracy",
}
"""Every figure row of the terminal table and the JSON field it must show (written out
here, not imported, so a row that shows another figure's value fails)."""


def _cells(out: str, title: str) -> list[list[str]]:
    """The body rows of the rich table titled ``title`` in ``out``, as stripped cells."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    rows = []
    for line in lines[start + 4 :]:
        if line.startswith("└"):
            break
        rows.append([c.strip() for c in line.strip("│").split("│")])
    return rows


def _same(printed: str, value: float | None) -> bool:
    if value is None:
        return printed == "—"
    return math.isclose(
        float(printed), value, abs_tol=5e-4, rel_tol=5e-2 if abs(value) < 1e-3 else 0
    )


def test_table_output_shows_every_figure(table: Path) -> None:
    """Each printed figure, CI and count equals the one computed (JSON of the same run)."""
    args = ("calibrate", str(table), "--resamples", "200", "--by", "mode")
    code, out, _ = _run(*args)
    assert code == 0, out
    code, js, _ = _run(*args, "-f", "json")
    data = json.loads(js)
    m = data["overall"]
    head = out.split("Judge vs humans")[0]
    assert " ".join(head.split()) == (
        f"Calibration of {table}: {m['n_records']} records, {m['n_annotations']} annotations, "
        f"{m['n_annotators']} annotators, {m['n_reports']} reports"
    )
    rows = {
        r[0]: r[1:] for r in _cells(out, "Judge vs humans (95% CI: cluster bootstrap by report)")
    }
    assert set(FIGURE_LABELS) <= set(rows), sorted(set(FIGURE_LABELS) - set(rows))
    for label, name in FIGURE_LABELS.items():
        value, ci = rows[label]
        assert _same(value, m[name]), (label, value, m[name])
        want = m["ci"].get(name)
        if want:
            lo, hi = (float(x) for x in ci.strip("[]").split(","))
            assert math.isclose(lo, want[0], abs_tol=5e-4), (label, ci, want)
            assert math.isclose(hi, want[1], abs_tol=5e-4), (label, ci, want)
        else:
            assert ci == "", (label, ci)
    c = m["confusion"]
    assert (
        rows["Confusion tp / fp / fn / tn"][0] == f"{c['tp']} / {c['fp']} / {c['fn']} / {c['tn']}"
    )
    assert rows["Calibrated (ρ > threshold)"][0] == ("yes" if m["calibrated"] else "no")
    groups = _cells(out, "By mode")
    assert [g[0] for g in groups] == list(data["groups"]["mode"])
    for name, n, agreement, kappa, wkappa, rho, _ci, calibrated in groups:
        gm = data["groups"]["mode"][name]
        assert int(n) == gm["n_annotations"]
        for printed, key in ((agreement, "agreement_rate"), (kappa, "cohen_kappa"),
                             (wkappa, "weighted_kappa"), (rho, "spearman_rho")):  # fmt: skip
            assert _same(printed, gm[key]), (name, key, printed, gm[key])
        assert calibrated == ("yes" if gm["calibrated"] else "no")
    heading = next(line for line in out.splitlines() if "Disagreements by category (" in line)
    assert f"({c['fp'] + c['fn']} pairs," in heading


def test_json_follows_the_design_schema(table: Path) -> None:
    code, out, _ = _run("calibrate", str(table), "-f", "json", "--by", "mode", "--by", "report")
    assert code == 0
    data = json.loads(out)
    assert data["schema_version"] == 1 and data["input"] == str(table)
    metrics_keys = {
        "n_records", "n_annotations", "n_annotators", "agreement_rate",
        "consensus_agreement_rate", "spearman_rho", "spearman_p", "kendall_tau", "cohen_kappa",
        "weighted_kappa", "brier", "precision", "recall", "f1", "confusion",
        "krippendorff_alpha", "human_ceiling", "judge_vs_ceiling", "line_range_accuracy", "ci",
        "calibrated", "notes",
    }  # fmt: skip
    assert metrics_keys <= set(data["overall"])
    assert set(data["groups"]) == {"mode", "report"}
    assert set(data["groups"]["mode"]) == {"abstractive", "extractive"}
    assert len(data["groups"]["report"]) == 6
    assert metrics_keys <= set(data["groups"]["mode"]["extractive"])
    assert set(data["overall"]["confusion"]) == {"tp", "fp", "fn", "tn"}
    for name in ("agreement_rate", "cohen_kappa", "spearman_rho"):
        lo, hi = data["overall"]["ci"][name]
        assert lo <= data["overall"][name] <= hi
    d = data["disagreements"][0]
    for key in ("record_id", "annotator", "type", "category", "claim", "citation",
                "judge_verdict", "judge_score", "human_score", "reasoning", "notes"):  # fmt: skip
        assert key in d
    c = data["overall"]["confusion"]
    assert len(data["disagreements"]) == c["fp"] + c["fn"]
    assert sum(data["categories"].values()) == c["fp"] + c["fn"]


def test_markdown_and_html_to_file(table: Path, tmp_path: Path) -> None:
    md = tmp_path / "r.md"
    code, _, err = _run("calibrate", str(table), "-f", "markdown", "-o", str(md))
    assert code == 0 and "wrote" in err
    text = md.read_text()
    assert text.startswith("# Judge calibration") and "| Agreement (pairs) |" in text
    html = tmp_path / "r.html"
    code, _, _ = _run("calibrate", str(table), "-f", "html", "-o", str(html), "--by", "language")
    assert code == 0
    page = html.read_text()
    assert page.count("data:image/png;base64,") >= 3
    assert "<script src" not in page and "http" not in page.split("<body", 1)[1][:2000]


def test_language_from_extension(tmp_path: Path) -> None:
    raw = synthetic(20, 2, 3, seed=2)
    raw["citation"] = ["[a.py:1-2]", "[b.ts:3]"] * (len(raw) // 2)
    path = tmp_path / "a.csv"
    raw.to_csv(path, index=False)
    code, out, _ = _run("calibrate", str(path), "-f", "json", "--by", "language")
    assert code == 0
    assert set(json.loads(out)["groups"]["language"]) == {"python", "typescript"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("", "empty"),
        ("record_id,annotator\nr1,a\n", "lacks column"),
        ("garbage\x00\x01", "cannot read"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / ("x.parquet" if content and "\x00" in content else "x.csv")
    if content is not None:
        path.write_text(content)
    code, _, err = _run("calibrate", str(path))
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_human_score_out_of_range(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    pd.DataFrame([row("r1", "a", 2, "supports"), row("r2", "a", 5, "supports")]).to_json(
        path, orient="records", lines=True
    )
    code, _, err = _run("calibrate", str(path))
    assert code == 2 and "human_score must be an integer 0–3" in err and "row 2" in err


def test_degenerate_tables_give_nulls_with_reasons(tmp_path: Path) -> None:
    path = tmp_path / "tiny.csv"
    pd.DataFrame([row("r1", "a", 3, "supports"), row("r2", "a", 2, "supports")]).to_csv(path)
    code, out, err = _run("calibrate", str(path), "-f", "json")
    assert code == 0 and "Warning" not in err
    m = json.loads(out)["overall"]
    assert m["agreement_rate"] == 1.0
    for name in ("cohen_kappa", "spearman_rho", "kendall_tau", "krippendorff_alpha",
                 "human_ceiling", "judge_vs_ceiling"):  # fmt: skip
        assert m[name] is None
    notes = " ".join(m["notes"])
    assert "fewer than 3" in notes and "one annotator" in notes


def _judge_b(raw: pd.DataFrame, worse: bool) -> pd.DataFrame:
    """B = A with verdicts changed on a third of the records (right or wrong on purpose)."""
    b = raw.copy()
    median = b.groupby("record_id")["human_score"].transform("median")
    target = b["record_id"].str[1:].astype(int) % 3 == 0
    truth = median >= 2
    new = ~truth if worse else truth
    b.loc[target, "llm_verdict"] = new[target].map({True: "supports", False: "not_supports"})
    b["prompt_version"] = "v2"
    return b


@pytest.mark.parametrize("worse", [True, False])
def test_compare_and_fail_if_worse(tmp_path: Path, worse: bool) -> None:
    raw = synthetic(150, 2, 10, seed=4)
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    raw.to_parquet(a)
    _judge_b(raw, worse).to_parquet(b)
    code, out, err = _run("calibrate", str(a), "--compare", str(b), "--fail-if-worse", "-f", "json")
    comp = json.loads(out)["compare"]
    assert comp["prompt_a"] == "v1" and comp["prompt_b"] == "v2"
    assert comp["significantly_worse"] is worse
    assert comp["significantly_better"] is (not worse)
    assert code == (1 if worse else 0)
    if worse:
        assert "significantly worse" in err
    diff = comp["figures"]["agreement_rate"]
    assert (diff["diff"] < 0) is worse
    assert diff["ci"][0] <= diff["diff"] <= diff["ci"][1]
    assert comp["mcnemar_p"] < 0.05
    effects = {f["effect"] for f in comp["flipped"]}
    assert effects == ({"broke"} if worse else {"fixed"})
    code, out, _ = _run("calibrate", str(a), "--compare", str(b))
    assert "McNemar" in out and "Comparison" in out and "Flipped records" in out


def test_fail_if_worse_needs_compare(table: Path) -> None:
    code, _, err = _run("calibrate", str(table), "--fail-if-worse")
    assert code == 2 and "--compare" in err
