"""What every rendering of a calibration or estimate report shows, whatever the format.

The terminal tables (:mod:`._render_table`), Markdown (:mod:`._render_markdown`)
and HTML (:mod:`._html`) take their rows from here, so what a user reads in the
terminal, in a pull-request comment and in the HTML report is one story.
"""

from __future__ import annotations

from citecal.calibrate._estimate_models import EstimateReport, Figures, Interval
from citecal.calibrate._models import CalibrationReport, Comparison, Disagreement, Metrics

FIGURES: tuple[tuple[str, str], ...] = (
    ("agreement_rate", "Agreement (pairs)"),
    ("consensus_agreement_rate", "Agreement (consensus)"),
    ("cohen_kappa", "Cohen's κ (binary)"),
    ("weighted_kappa", "Weighted κ (0–3, quadratic)"),
    ("spearman_rho", "Spearman ρ"),
    ("spearman_p", "Spearman p-value"),
    ("kendall_tau", "Kendall τ-b"),
    ("precision", "Precision (supports)"),
    ("recall", "Recall (supports)"),
    ("f1", "F1 (supports)"),
    ("precision_not_supports", "Precision (not supports)"),
    ("recall_not_supports", "Recall (not supports)"),
    ("f1_not_supports", "F1 (not supports)"),
    ("brier", "Brier score"),
    ("ece", "Expected calibration error"),
    ("krippendorff_alpha", "Krippendorff α (humans, ordinal)"),
    ("human_exact_agreement", "Human pairs: exact"),
    ("human_within1_agreement", "Human pairs: within 1"),
    ("human_ceiling", "Human ceiling (LOAO)"),
    ("judge_ceiling_agreement", "Judge on the same records"),
    ("judge_vs_ceiling", "Judge − ceiling"),
    ("line_range_accuracy", "Line range correct"),
)
"""(field, label) of every figure shown in tables, in display order."""


MAX_DISAGREEMENTS_SHOWN = 20


def fmt(value: float | int | bool | None, digits: int = 3) -> str:
    """A figure for humans: "—" for undefined, p-values in scientific notation when tiny."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if value != 0 and abs(value) < 10 ** (-digits):
        return f"{value:.1e}"
    return f"{value:.{digits}f}"


def fmt_ci(ci: list[float] | None) -> str:
    """A 95% interval as ``[low, high]`` or empty when there is none."""
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def figure_rows(m: Metrics) -> list[tuple[str, str, str]]:
    """(label, value, CI) for every figure of one METRICS block."""
    rows = [(label, fmt(getattr(m, name)), fmt_ci(m.ci.get(name))) for name, label in FIGURES]
    c = m.confusion
    rows.append(("Confusion tp / fp / fn / tn", f"{c.tp} / {c.fp} / {c.fn} / {c.tn}", ""))
    rows.append(("Calibrated (ρ > threshold)", fmt(m.calibrated), ""))
    rows.append(("Judge within ceiling margin", fmt(m.within_ceiling), ""))
    return rows


SIGNALS_HEADER: tuple[str, ...] = (
    "Confidence source",
    "Pairs",
    "Agreement",
    "Mean confidence",
    "ROC AUC",
    "AUC 95% CI",
    "ECE",
)
SIGNALS_TITLE = "Confidence signals: does the judge know when people agree with it?"


def signal_rows(report: CalibrationReport) -> list[tuple[str, ...]]:
    """One row per confidence source (README "Judge confidence"): what to threshold on."""
    return [
        (
            s.source,
            str(s.n_pairs),
            fmt(s.agreement_rate),
            fmt(s.mean_confidence),
            fmt(s.roc_auc),
            fmt_ci(s.roc_auc_ci),
            fmt(s.ece),
        )
        for s in report.signals
    ]


def shorten(text: str | None, width: int = 70) -> str:
    if not text:
        return ""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def disagreement_records(report: CalibrationReport) -> list[tuple[Disagreement, str]]:
    """One entry per disagreeing (record, type): its first pair and the disagreeing scores.

    The judge gives one verdict per record, so listing every annotator's pair
    repeats the same claim; the terminal shows each record once with the
    scores of the annotators who disagreed ("0, 1").
    """
    seen: dict[tuple[str, str], tuple[Disagreement, list[int]]] = {}
    for item in report.disagreements:
        key = (item.record_id, item.type)
        if key not in seen:
            seen[key] = (item, [])
        seen[key][1].append(item.human_score)
    return [(item, ", ".join(map(str, sorted(scores)))) for item, scores in seen.values()]


def comparison_rows(c: Comparison) -> list[tuple[str, str, str, str, str]]:
    return [(name, fmt(d.a), fmt(d.b), fmt(d.diff), fmt_ci(d.ci)) for name, d in c.figures.items()]


def check_lines(report: CalibrationReport) -> list[str]:
    """Plain lines on the drift check, the recalibration map, the estimate and the gate."""
    out: list[str] = []
    r = report.recalibration
    if r is not None:
        cv = r.cv
        out.append(
            f"Recalibration map ({r.method}, {r.n_fitted} pairs): "
            + (
                f"out of sample ({cv.folds} folds by report) ECE {fmt(cv.ece_before)} → "
                f"{fmt(cv.ece_after)}, Brier {fmt(cv.brier_before)} → {fmt(cv.brier_after)}"
                if cv is not None
                else "no cross-validation (one report)"
            )
        )
    e = report.estimate
    if e is not None:
        out.append(
            f"Corrected precision (PPI++, {e.n_judged:,} judged, {e.n_labelled} labelled): "
            f"{fmt(e.corrected.estimate)} {fmt_ci(e.corrected.ci)}; judge only "
            f"{fmt(e.judge_only.estimate)}; human only {fmt(e.human_only.estimate)} "
            f"{fmt_ci(e.human_only.ci)}"
        )
    d = report.drift
    if d is not None:
        c = d.comparison
        figures = ", ".join(
            f"{name} {fmt(f.a)} → {fmt(f.b)} {fmt_ci(f.ci)}" for name, f in c.figures.items()
        )
        out.append(
            f"Drift against {d.baseline} ({d.shared_records} shared records, margin "
            f"{d.margin:g}): {figures}; McNemar p = {fmt(c.mcnemar_p)}"
        )
        out += [f"  ALARM: {a}" for a in d.alarms] or ["  no alarm"]
    g = report.gate
    if g is not None:
        out.append("Gate: passed" if g.passed else "Gate: FAILED")
        out += [f"  - {f}" for f in g.failures]
    return out


def correction_rows(report: CalibrationReport) -> list[tuple[str, ...]]:
    """One row per strategy of ``citecal correct`` whose proposals annotators answered."""
    return [
        (name, str(a.n), str(a.accepted), str(a.edited), str(a.cleared), fmt(a.acceptance_rate))
        for name, a in (report.corrections or {}).items()
    ]


def interval_width(i: Interval) -> str:
    return "" if not i.ci else f"{i.ci[1] - i.ci[0]:.3f}"


def headline(r: EstimateReport) -> list[tuple[str, str, str, str]]:
    """(figure, estimate, interval, width) rows of the overall estimate."""
    return [
        (
            "Corrected (PPI++)",
            fmt(r.corrected.estimate),
            fmt_ci(r.corrected.ci),
            interval_width(r.corrected),
        ),
        ("Judge only", fmt(r.judge_only.estimate), "", ""),
        (
            "Human only",
            fmt(r.human_only.estimate),
            fmt_ci(r.human_only.ci),
            interval_width(r.human_only),
        ),
    ]


def summary_line(r: EstimateReport) -> str:
    """One sentence: what was estimated from what."""
    eff = "—" if r.effective_labels is None else f"{r.effective_labels:,.0f}"
    return (
        f"Citation precision (human: score ≥ 2) over {r.n_judged:,} judged citations, "
        f"{r.n_labelled:,} labelled; {r.level:.0%} intervals; judge predictor: {r.predictor}; "
        f"the corrected interval is worth {eff} labels"
    )


def estimate_group_rows(values: dict[str, Figures]) -> list[list[str]]:
    return [
        [
            v,
            str(f.n_judged),
            str(f.n_labelled),
            fmt(f.corrected.estimate),
            fmt_ci(f.corrected.ci),
            fmt(f.judge_only.estimate),
            fmt(f.human_only.estimate),
            fmt_ci(f.human_only.ci),
        ]
        for v, f in values.items()
    ]


GROUP_HEADER = [
    "Value",
    "Judged",
    "Labelled",
    "Corrected",
    "95% CI",
    "Judge only",
    "Human only",
    "95% CI",
]


def design_lines(r: EstimateReport) -> list[str]:
    """The active design's gain and the ``--target-width`` plan, one sentence each."""
    out = []
    if r.design == "active" and r.uniform_labels is not None:
        out.append(
            f"Active design: {r.n_labelled} labels give the interval a uniform random sample "
            f"would need about {r.uniform_labels:,.0f} labels for (README 'How many labels')"
        )
    p = r.plan
    if p is not None:

        def part(total: float | None, more: int | None) -> str:
            if total is None or more is None:
                return "out of reach"
            return f"{total:,.0f} labels in all ({more:,} more)"

        now = "" if p.width is None else f" (now {p.width:.3f})"
        out.append(
            f"Width {p.target_width:g}{now}: under the current design "
            f"{part(p.labels_current_design, p.more_current_design)}; under uniform sampling "
            f"{part(p.labels_uniform, p.more_uniform)}"
        )
    return out
