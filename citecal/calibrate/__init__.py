"""Judge-human calibration: agreement, kappas, ρ, reliability, disagreements, comparisons.

Reads the annotation table written by ``citecal pull`` (DESIGN.md) and
computes every figure of DESIGN.md "Calibration definitions" with bootstrap
confidence intervals, the human ceiling, disagreement categories and a paired
comparison of two judges.

The plots (matplotlib) and re-judging (the LLM client) load on first use, so
``citecal calibrate`` does not pay for them on every run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from citecal.calibrate._compare import compare_judges
from citecal.calibrate._disagreements import categorise, category_counts
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
)
from citecal.calibrate._render import render_markdown, render_table
from citecal.calibrate._report import (
    DEFAULT_BY,
    GROUP_COLUMNS,
    calibrate,
    calibrate_frame,
    default_by,
)
from citecal.calibrate._table import language_of, load_annotations, prepare, read_table

if TYPE_CHECKING:
    from citecal.calibrate._html import (
        comparison_plot,
        confusion_plot,
        group_plot,
        reliability_plot,
        render_html,
    )
    from citecal.calibrate._rejudge import (
        judge_requests,
        mine_few_shot,
        parse_cited_code,
        rejudge_frame,
    )

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        ("comparison_plot", "confusion_plot", "group_plot", "reliability_plot", "render_html"),
        "citecal.calibrate._html",
    ),
    **dict.fromkeys(
        ("judge_requests", "mine_few_shot", "parse_cited_code", "rejudge_frame"),
        "citecal.calibrate._rejudge",
    ),
}


def __getattr__(name: str) -> Any:
    """Load the plotting and re-judging names on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "CATEGORY_HELP",
    "DEFAULT_BY",
    "GROUP_COLUMNS",
    "CalibrationReport",
    "Comparison",
    "Confusion",
    "Disagreement",
    "FlippedRecord",
    "MetricDiff",
    "Metrics",
    "calibrate",
    "calibrate_frame",
    "categorise",
    "category_counts",
    "compare_judges",
    "comparison_plot",
    "compute_metrics",
    "confusion_plot",
    "default_by",
    "group_plot",
    "judge_requests",
    "language_of",
    "load_annotations",
    "mine_few_shot",
    "parse_cited_code",
    "prepare",
    "read_table",
    "rejudge_frame",
    "reliability_plot",
    "render_html",
    "render_markdown",
    "render_table",
]
