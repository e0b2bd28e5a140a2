"""Text renderings of a :class:`CalibrationReport`: rich terminal summary and Markdown.

Both show the same rows (see :data:`FIGURES`) so what a user reads in the
terminal, in a pull-request comment and in the HTML report is one story.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from citecal.calibrate._models import (
    CATEGORY_HELP,
    CalibrationReport,
    Comparison,
    Disagreement,
    Metrics,
)

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


def _shorten(text: str | None, width: int = 70) -> str:
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


def _comparison_rows(c: Comparison) -> list[tuple[str, str, str, str, str]]:
    return [(name, fmt(d.a), fmt(d.b), fmt(d.diff), fmt_ci(d.ci)) for name, d in c.figures.items()]


def render_table(report: CalibrationReport, width: int = 120) -> str:
    """The rich terminal summary (rendered to text so the CLI can write it anywhere)."""
    buf = StringIO()
    # force_jupyter=False: inside a notebook rich would display instead of writing to buf.
    console = Console(
        file=buf, width=width, force_terminal=False, force_jupyter=False, color_system=None
    )
    m = report.overall
    console.print(
        f"Calibration of {escape(report.input)}: {m.n_records} records, "
        f"{m.n_annotations} annotations, {m.n_annotators} annotators, {m.n_reports} reports"
    )
    table = Table(title="Judge vs humans (95% CI: cluster bootstrap by report)")
    table.add_column("Figure")
    table.add_column("Value", justify="right")
    table.add_column("95% CI")
    for row in figure_rows(m):
        table.add_row(*row)
    console.print(table)
    for by, values in report.groups.items():
        g = Table(title=f"By {by}")
        for col in ("Group", "n", "Agreement", "κ", "Weighted κ", "ρ", "ρ 95% CI", "Calibrated"):
            g.add_column(col, justify="left" if col in ("Group", "ρ 95% CI") else "right")
        for value, gm in values.items():
            g.add_row(
                escape(value),
                str(gm.n_annotations),
                fmt(gm.agreement_rate),
                fmt(gm.cohen_kappa),
                fmt(gm.weighted_kappa),
                fmt(gm.spearman_rho),
                fmt_ci(gm.ci.get("spearman_rho")),
                fmt(gm.calibrated),
            )
        console.print(g)
    n_records = len({d.record_id for d in report.disagreements})
    cats = Table(
        title=f"Disagreements by category ({len(report.disagreements)} pairs, {n_records} records)"
    )
    cats.add_column("Category")
    cats.add_column("Count", justify="right")
    cats.add_column("Meaning")
    for name, count in report.categories.items():
        cats.add_row(name, str(count), CATEGORY_HELP[name])
    console.print(cats)
    if report.disagreements:
        grouped = disagreement_records(report)
        d = Table(
            title=f"First {min(MAX_DISAGREEMENTS_SHOWN, len(grouped))} of {len(grouped)} "
            "disagreeing records (every pair in --format json)"
        )
        for col in ("Type", "Category", "Judge", "Humans"):
            d.add_column(col, no_wrap=True)
        d.add_column(escape("Claim [citation]"), overflow="fold", min_width=40)
        for item, humans in grouped[:MAX_DISAGREEMENTS_SHOWN]:
            d.add_row(
                "FP" if item.type == "false_positive" else "FN",
                item.category,
                f"{item.judge_verdict or ''} {fmt(item.judge_score, 2)}",
                humans,
                escape(f"{_shorten(item.claim, 110)} {item.citation or ''}"),
            )
        console.print(d)
    if report.corrections:
        proposals = Table(title="Proposed corrections (citecal correct) accepted by annotators")
        for col in ("Strategy", "Answers", "Accepted", "Edited", "Rejected", "Acceptance"):
            proposals.add_column(col, justify="left" if col == "Strategy" else "right")
        for cells in _correction_rows(report):
            proposals.add_row(*cells)
        console.print(proposals)
    if report.compare is not None:
        console.print(_comparison_table(report.compare))
        c = report.compare
        console.print(
            f"McNemar exact test on records: only A right {c.mcnemar_b01}, only B right "
            f"{c.mcnemar_b10}, p = {fmt(c.mcnemar_p)}; flipped records: {len(c.flipped)}. "
            + (
                "B is significantly WORSE."
                if c.significantly_worse
                else "B is significantly better."
                if c.significantly_better
                else "No significant difference."
            )
        )
        if c.flipped:
            f = Table(
                title=f"Flipped records ({len(c.flipped)}; first {MAX_DISAGREEMENTS_SHOWN} here, "
                "all in --format json)"
            )
            for col in ("Record", "Effect", "A", "B", "Human median"):
                f.add_column(col, no_wrap=True)
            f.add_column(escape("Claim [citation]"), overflow="fold", min_width=40)
            for flip in c.flipped[:MAX_DISAGREEMENTS_SHOWN]:
                f.add_row(
                    escape(flip.record_id),
                    flip.effect,
                    flip.verdict_a or "",
                    flip.verdict_b or "",
                    fmt(flip.human_median, 1),
                    escape(f"{_shorten(flip.claim, 110)} {flip.citation or ''}"),
                )
            console.print(f)
    for line in check_lines(report):
        console.print(escape(line))
    if m.notes:
        console.print("Notes:")
        for note in m.notes:
            console.print(f"  - {escape(note)}")
    return buf.getvalue()


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


def _comparison_table(c: Comparison) -> Table:
    t = Table(
        title=escape(
            f"Comparison: B = {Path(c.b).name} vs A = {Path(c.a).name} "
            f"({c.n_pairs} paired annotations)"
        )
    )
    for col in ("Figure", "A", "B", "B − A", "95% CI (paired)"):
        t.add_column(col, justify="left" if col in ("Figure", "95% CI (paired)") else "right")
    for row in _comparison_rows(c):
        t.add_row(*row)
    return t


def _md_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: CalibrationReport) -> str:
    """GitHub-flavoured Markdown with every figure, breakdown and disagreement category."""
    m = report.overall
    out = [
        f"# Judge calibration: {report.input}",
        "",
        f"{m.n_records} records, {m.n_annotations} annotations, {m.n_annotators} annotators, "
        f"{m.n_reports} reports. CIs: 95% cluster bootstrap by report.",
        "",
        _md_table(("Figure", "Value", "95% CI"), figure_rows(m)),
    ]
    for by, values in report.groups.items():
        rows = [
            (
                v,
                str(g.n_annotations),
                fmt(g.agreement_rate),
                fmt(g.cohen_kappa),
                fmt(g.weighted_kappa),
                fmt(g.spearman_rho),
                fmt_ci(g.ci.get("spearman_rho")),
            )
            for v, g in values.items()
        ]
        out += ["", f"## By {by}", "", _md_table(
            ("Group", "n", "Agreement", "κ", "Weighted κ", "ρ", "ρ 95% CI"), rows
        )]  # fmt: skip
    out += ["", "## Disagreements", ""]
    out.append(
        _md_table(
            ("Category", "Count", "Meaning"),
            [(k, str(v), CATEGORY_HELP[k]) for k, v in report.categories.items()],
        )
    )
    if report.disagreements:
        out += [""]
        out.append(
            _md_table(
                ("Type", "Category", "Citation", "Judge", "Human", "Claim", "Notes"),
                [
                    (
                        d.type,
                        d.category,
                        d.citation or "",
                        f"{d.judge_verdict or ''} {fmt(d.judge_score, 2)}",
                        str(d.human_score),
                        _shorten(d.claim, 80),
                        _shorten(d.notes, 60),
                    )
                    for d in report.disagreements
                ],
            )
        )
    if report.compare is not None:
        c = report.compare
        out += ["", f"## Comparison: {c.b} vs {c.a}", ""]
        out.append(_md_table(("Figure", "A", "B", "B − A", "95% CI"), _comparison_rows(c)))
        out += [
            "",
            f"McNemar exact test (records): only A right {c.mcnemar_b01}, only B right "
            f"{c.mcnemar_b10}, p = {fmt(c.mcnemar_p)}. Significantly worse: "
            f"{fmt(c.significantly_worse)}; significantly better: {fmt(c.significantly_better)}.",
        ]
        if c.flipped:
            out += ["", _md_table(
                ("Record", "Effect", "A", "B", "Human median", "Claim"),
                [(f.record_id, f.effect, f.verdict_a or "", f.verdict_b or "",
                  fmt(f.human_median, 1), _shorten(f.claim, 70)) for f in c.flipped],
            )]  # fmt: skip
    if report.corrections:
        out += ["", "## Proposed corrections accepted by annotators", ""]
        header = ("Strategy", "Answers", "Accepted", "Edited", "Rejected", "Acceptance")
        out.append(_md_table(header, _correction_rows(report)))
    checks = check_lines(report)
    if checks:
        out += ["", "## Checks", ""] + [f"- {c.strip()}" for c in checks]
    if m.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in m.notes]
    return "\n".join(out) + "\n"


def _correction_rows(report: CalibrationReport) -> list[tuple[str, ...]]:
    """One row per strategy of ``citecal correct`` whose proposals annotators answered."""
    return [
        (name, str(a.n), str(a.accepted), str(a.edited), str(a.cleared), fmt(a.acceptance_rate))
        for name, a in (report.corrections or {}).items()
    ]
