"""The bundled synthetic annotation table calibrates with every figure defined."""

from __future__ import annotations

from pathlib import Path

from citecal.annotations import ANNOTATION_COLUMNS
from citecal.calibrate import calibrate, load_annotations
from citecal.config import CalibrationConfig

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "annotations" / "annotations.parquet"


def test_bundled_table_has_the_design_columns_and_shape() -> None:
    df = load_annotations(DATASET)
    assert list(df.columns[: len(ANNOTATION_COLUMNS)]) == list(ANNOTATION_COLUMNS)
    assert 60 <= df["record_id"].nunique() <= 150
    assert set(df["annotator"]) == {"alice", "bob", "carol"}
    assert df.groupby("record_id")["annotator"].size().between(2, 3).all()
    assert df["report_id"].nunique() >= 5
    assert {"extractive", "abstractive"} <= set(df["mode"])
    assert df["prompt_version"].str.startswith("v1@").all()
    assert df["llm_verdict"].isin(["supports", "not_supports"]).all()


def test_bundled_table_gives_every_figure() -> None:
    report = calibrate(DATASET, by=("mode", "language", "report"), config=CalibrationConfig())
    m = report.overall
    for name in ("agreement_rate", "consensus_agreement_rate", "spearman_rho", "spearman_p",
                 "kendall_tau", "cohen_kappa", "weighted_kappa", "brier", "precision", "recall",
                 "f1", "krippendorff_alpha", "human_ceiling", "judge_vs_ceiling",
                 "line_range_accuracy", "calibrated"):  # fmt: skip
        assert getattr(m, name) is not None, name
    for name in ("agreement_rate", "cohen_kappa", "weighted_kappa", "spearman_rho"):
        ci = m.ci[name]
        assert ci is not None and ci[0] <= getattr(m, name) <= ci[1]
    assert set(report.groups["language"]) == {"python", "javascript"}
    assert len(report.groups["report"]) == m.n_reports
    counts = report.categories
    assert counts["lines_off"] > 0 and counts["claim_overstates_code"] > 0
    assert sum(counts.values()) == m.confusion.fp + m.confusion.fn
