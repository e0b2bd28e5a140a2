"""Judge-human calibration: agreement, kappas, ρ, reliability, disagreements, comparisons.

Reads the annotation table written by ``citecal pull`` (README "Annotation table") and
computes every figure of README "Calibration" with bootstrap
confidence intervals, the human ceiling, disagreement categories and a paired
comparison of two judges; and the bias-corrected precision estimate of
``citecal estimate`` (PPI++, README "Estimates").

Statistics over the annotation table and nothing else: reading and writing
the table is :mod:`citecal.annotations`, re-judging it
:func:`citecal.verify.judge.rejudge_frame`. Every name loads on first use
(PEP 562): ``citecal calibrate`` does not pay for the plots (matplotlib), and
``citecal estimate`` pays for neither scikit-learn nor scipy.stats' full import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citecal._lazy import lazy_getattr

if TYPE_CHECKING:
    from citecal.calibrate._compare import compare_judges
    from citecal.calibrate._disagreements import categorise, category_counts
    from citecal.calibrate._estimate import estimate, estimate_frame
    from citecal.calibrate._estimate_models import EstimateReport
    from citecal.calibrate._fewshot import (
        FewShot,
        SimulatedAnnotators,
        mine_few_shot,
        simulated_annotators,
        simulated_prompts,
    )
    from citecal.calibrate._html import (
        comparison_plot,
        confusion_plot,
        group_plot,
        reliability_plot,
        render_html,
    )
    from citecal.calibrate._judged import read_judged
    from citecal.calibrate._metrics import compute_metrics
    from citecal.calibrate._models import (
        CATEGORY_HELP,
        CalibrationReport,
        Comparison,
        Confusion,
        Disagreement,
        FlippedRecord,
        MetricDiff,
        Metrics,
        SignalQuality,
    )
    from citecal.calibrate._ppi import ppi_mean, stratified_ppi
    from citecal.calibrate._render_markdown import render_markdown
    from citecal.calibrate._render_table import render_table
    from citecal.calibrate._report import (
        DEFAULT_BY,
        GROUP_COLUMNS,
        calibrate,
        calibrate_frame,
        default_by,
    )
    from citecal.calibrate._signals import signal_quality
    from citecal.calibrate._stability import (
        RecordStability,
        Stability,
        record_stability,
        stability,
    )
    from citecal.calibrate._table import (
        judge_support,
        language_of,
        load_annotations,
        load_labels,
        prepare,
        prepare_labels,
    )

_LAZY: dict[str, str] = {
    "CATEGORY_HELP": "citecal.calibrate._models",
    "CalibrationReport": "citecal.calibrate._models",
    "Comparison": "citecal.calibrate._models",
    "Confusion": "citecal.calibrate._models",
    "DEFAULT_BY": "citecal.calibrate._report",
    "Disagreement": "citecal.calibrate._models",
    "EstimateReport": "citecal.calibrate._estimate_models",
    "FewShot": "citecal.calibrate._fewshot",
    "FlippedRecord": "citecal.calibrate._models",
    "GROUP_COLUMNS": "citecal.calibrate._report",
    "MetricDiff": "citecal.calibrate._models",
    "Metrics": "citecal.calibrate._models",
    "RecordStability": "citecal.calibrate._stability",
    "SignalQuality": "citecal.calibrate._models",
    "SimulatedAnnotators": "citecal.calibrate._fewshot",
    "Stability": "citecal.calibrate._stability",
    "calibrate": "citecal.calibrate._report",
    "calibrate_frame": "citecal.calibrate._report",
    "categorise": "citecal.calibrate._disagreements",
    "category_counts": "citecal.calibrate._disagreements",
    "compare_judges": "citecal.calibrate._compare",
    "comparison_plot": "citecal.calibrate._html",
    "compute_metrics": "citecal.calibrate._metrics",
    "confusion_plot": "citecal.calibrate._html",
    "default_by": "citecal.calibrate._report",
    "estimate": "citecal.calibrate._estimate",
    "estimate_frame": "citecal.calibrate._estimate",
    "group_plot": "citecal.calibrate._html",
    "judge_support": "citecal.calibrate._table",
    "language_of": "citecal.calibrate._table",
    "load_annotations": "citecal.calibrate._table",
    "load_labels": "citecal.calibrate._table",
    "mine_few_shot": "citecal.calibrate._fewshot",
    "ppi_mean": "citecal.calibrate._ppi",
    "signal_quality": "citecal.calibrate._signals",
    "simulated_annotators": "citecal.calibrate._fewshot",
    "simulated_prompts": "citecal.calibrate._fewshot",
    "stability": "citecal.calibrate._stability",
    "record_stability": "citecal.calibrate._stability",
    "prepare": "citecal.calibrate._table",
    "prepare_labels": "citecal.calibrate._table",
    "read_judged": "citecal.calibrate._judged",
    "reliability_plot": "citecal.calibrate._html",
    "render_html": "citecal.calibrate._html",
    "render_markdown": "citecal.calibrate._render_markdown",
    "render_table": "citecal.calibrate._render_table",
    "stratified_ppi": "citecal.calibrate._ppi",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "CATEGORY_HELP",
    "DEFAULT_BY",
    "GROUP_COLUMNS",
    "CalibrationReport",
    "Comparison",
    "Confusion",
    "Disagreement",
    "EstimateReport",
    "FewShot",
    "FlippedRecord",
    "MetricDiff",
    "Metrics",
    "RecordStability",
    "SignalQuality",
    "SimulatedAnnotators",
    "Stability",
    "calibrate",
    "calibrate_frame",
    "categorise",
    "category_counts",
    "compare_judges",
    "comparison_plot",
    "compute_metrics",
    "confusion_plot",
    "default_by",
    "estimate",
    "estimate_frame",
    "group_plot",
    "judge_support",
    "language_of",
    "load_annotations",
    "load_labels",
    "mine_few_shot",
    "ppi_mean",
    "prepare",
    "prepare_labels",
    "read_judged",
    "record_stability",
    "reliability_plot",
    "render_html",
    "render_markdown",
    "render_table",
    "signal_quality",
    "simulated_annotators",
    "simulated_prompts",
    "stability",
    "stratified_ppi",
]
