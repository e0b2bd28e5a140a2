"""The cascade through the CLI: calibrate --cascade, eval --cascade, the fold split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.bench import _folds
from citecal.bench._labels import CitationLabel
from citecal.bench._score import Scored
from citecal.cascade import FeatureInput, load_cascade
from citecal.cascade._training import Row
from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"


def test_calibrate_cascade_writes_a_file_eval_can_use(tmp_path: Path) -> None:
    out = tmp_path / "cascade.json"
    res = CliRunner().invoke(cli, ["calibrate", str(TABLE), "--write-cascade", str(out)])
    assert res.exit_code == 0, res.output
    assert "Cascade on 86 labels" in res.stdout and "abstained (sent to a person)" in res.stdout
    spec = load_cascade(out)
    assert [t.name for t in spec.tiers] == ["rules", "local", "judge:gpt-4o-mini"]
    assert spec.agreement == {"supports": 0.98, "not_supports": 0.9}


@pytest.mark.parametrize("bad", ["nan", "1.5", "supports=0.9", "sure=0.9,supports=0.9"])
def test_bad_agreement_is_a_usage_error(bad: str, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    res = CliRunner().invoke(
        cli, ["calibrate", str(TABLE), "--write-cascade", str(out), "--agreement", bad]
    )
    assert res.exit_code == 2 and "--agreement" in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_eval_with_a_bad_cascade_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "c.json"
    bad.write_text('{"schema_version": 1}')
    res = CliRunner().invoke(
        cli,
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--cascade", str(bad)],
    )  # fmt: skip
    assert res.exit_code == 2 and "not a citecal cascade file" in res.output
    assert "Traceback" not in res.output


def test_eval_default_cascade_sends_what_it_cannot_decide_to_a_person() -> None:
    res = CliRunner().invoke(
        cli,
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--cascade", "default", "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    summary = out["summary"]["cascade"]
    abstained = [c for c in out["citations"] if c["suggested_action"] == "annotate"]
    assert len(abstained) == summary["abstained"] > 0
    assert all(c["verdict"] == "unverified" for c in abstained)
    assert all(c["reasoning"].startswith("needs a person:") for c in abstained)
    decided = sum(summary["decided_by"].values())
    valid = out["summary"]["valid_citations"]
    assert decided + summary["abstained"] == valid
    assert summary["labels"] > 800


def test_leave_one_package_out_never_trains_on_the_held_out_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[set[str]] = []
    real = _folds.fit_cascade

    def spy(rows, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append({r.group for r in rows})
        return real(rows, *args, **kwargs)

    monkeypatch.setattr(_folds, "fit_cascade", spy)
    scored: list[Scored] = []
    rows: dict[int, Row] = {}
    for i in range(90):
        pkg = "abc"[i % 3]
        human = i % 4 != 0
        label = CitationLabel(
            id=f"{pkg}-{i}", citation=f"[a.py:{i + 1}]", claim="c", structural="valid",
            human_score=3 if human else 0, category="literal", difficulty="easy", rationale="r",
        )  # fmt: skip
        scored.append(Scored(pkg, "python", label, None))
        feats = FeatureInput(claim="`f` returns x", code="def f(): return x" if human else "y = 1")
        rows[i] = Row(pkg, feats, None, human)
    report = _folds.leave_one_package_out(scored, rows, {"supports": 0.8, "not_supports": 0.8}, 0.1)
    assert seen == [{"b", "c"}, {"a", "c"}, {"a", "b"}]
    assert set(report.by_package) == {"a", "b", "c"}


def _rows(n: int = 120) -> list[Row]:
    """Rows of three packages; every third planted, and the planted ones all unsupported."""
    out = []
    for i in range(n):
        origin = "planted" if i % 3 == 0 else "natural"
        human = origin == "natural" and i % 5 != 0
        feats = FeatureInput(claim="`f` returns x", code="def f(): return x" if human else "y = 1")
        out.append(Row("abc"[i % 3], feats, None, human, origin=origin))
    return out


def test_thresholds_on_natural_labels_only_while_every_label_trains() -> None:
    from citecal.cascade._training import fit_cascade

    rows = _rows()
    levels = {"supports": 0.8, "not_supports": 0.8}
    natural = fit_cascade(rows, levels, 0.1, {"source": "t"}, thresholds_on=frozenset({"natural"}))
    everything = fit_cascade(rows, levels, 0.1, {"source": "t"})
    assert natural.labels["n"] == 80 and natural.labels["trained_on"] == 120
    assert natural.labels["thresholds_on"] == ["natural"]
    assert everything.labels["n"] == 120 and "thresholds_on" not in everything.labels
    assert natural.verifier is not None and natural.verifier.trained_on["n"] == 120
    local = {t.name: t for t in natural.tiers}["local"]
    assert local.reached == 80  # only natural labels reach the tiers being calibrated


def test_the_spread_across_held_out_packages() -> None:
    figs = [
        _folds.FoldFigures(
            n=10,
            supported=5,
            unsupported=5,
            decided=d,
            abstained=10 - d,
            agreement=a,
            agreement_supports=None,
            agreement_not_supports=None,
            decision_coverage=d / 10,
            decision_coverage_valid=d / 10,
            false_supports=0,
            false_support_rate=0.0,
            false_rejects=0,
            unsupported_caught=1.0,
            decided_by={},
        )
        for d, a in ((2, 1.0), (4, 0.5), (9, 0.8), (0, None))
    ]
    spread = _folds.spread(figs)
    assert spread["decision_coverage_valid"] == {
        "min": 0.0, "median": 0.3, "max": 0.9, "packages": 4,
    }  # fmt: skip
    assert spread["agreement"] == {"min": 0.5, "median": 0.8, "max": 1.0, "packages": 3}
    assert spread["agreement_supports"]["packages"] == 0


def test_judges_needs_write_cascade(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["calibrate", str(TABLE), "--judges", str(TABLE)])
    assert res.exit_code == 2 and "--judges needs --write-cascade FILE" in res.output


def test_an_old_cascade_file_without_judge_confidence_still_loads(tmp_path: Path) -> None:
    """README "Judge confidence": tier.confidence and cost are additive; old files load."""
    spec = load_cascade("default")
    raw = json.loads(spec.model_dump_json())
    for tier in raw["tiers"]:
        tier.pop("confidence")
    raw.pop("cost")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(raw))
    again = load_cascade(old)
    assert [t.confidence for t in again.tiers] == [None] * len(again.tiers)
    assert again.cost is None


def test_ranking_per_language_and_size_counts_natural_reports_only() -> None:
    def held(lang: str, origin: str, p: float, human: bool) -> _folds.Held:
        label = CitationLabel(
            id=f"{lang}-{p}", citation="[a.py:1]", claim="c", structural="valid",
            human_score=3 if human else 0, category="literal", difficulty="easy",
            rationale="r", origin=origin,
        )  # fmt: skip
        return _folds.Held(Scored("pkg", lang, label, None, size="small"), None, None, p, "low")

    items = [
        held("go", "natural", 0.9, True), held("go", "natural", 0.2, False),  # ranked right
        held("rust", "natural", 0.2, True), held("rust", "natural", 0.9, False),  # inverted
        held("rust", "natural", 0.9, True),
        held("java", "planted", 0.9, True), held("java", "planted", 0.1, False),
    ]  # fmt: skip
    by = _folds.ranking_natural_of(items)
    assert set(by["language"]) == {"go", "rust"}  # planted java is a stress test, apart
    assert by["language"]["go"].auc == 1.0
    assert by["language"]["rust"].auc == 0.25  # (0 + 0.5) / 2: one pair tied, one inverted
    assert by["language"]["rust"].n == 3 and by["language"]["rust"].unsupported == 1
    assert by["size"]["small"].n == 5
    assert _folds.ranking_natural_of(items[-2:]) == {}


def test_a_rows_item_keeps_each_judges_verdict_and_confidence() -> None:
    from citecal.cascade._cascade import predict

    feats = FeatureInput(claim="c", code="x")
    row = Row(
        "pkg", feats, "not_supports", True, judges=(("m", 0.5),),
        judge_verdicts=(("m", "supports", 0.97),),
    )  # fmt: skip
    item = row.item(0.8)
    # a judge tier with a confidence source reads the verdict and its confidence_value,
    # not the support score (README "Judge confidence")
    assert predict("judge", item, "m") == ("supports", 0.97)
    assert predict("rules", item) == ("not_supports", 1.0) and item.local == 0.8
    assert item.human is True
    assert row.item(with_rule=False).rule is None
