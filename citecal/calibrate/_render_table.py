"""Rich terminal tables of a calibration report and of an estimate report."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from citecal.calibrate._estimate_models import EstimateReport
from citecal.calibrate._models import CATEGORY_HELP, CalibrationReport, Comparison
from citecal.calibrate._render_common import (
    GROUP_HEADER,
    MAX_DISAGREEMENTS_SHOWN,
    SIGNALS_HEADER,
    SIGNALS_TITLE,
    check_lines,
    comparison_rows,
    correction_rows,
    design_lines,
    disagreement_records,
    estimate_group_rows,
    figure_rows,
    fmt,
    fmt_ci,
    headline,
    shorten,
    signal_rows,
    summary_line,
)


def render_table(report: CalibrationReport, width: int = 120) -> str:
    """The rich terminal summary (rendered to text so the CLI can write it anywhere)."""
    buf = StringIO()
    # force_jupyter=False: inside a notebook rich would display instead of writing to buf.
    console = Console(
        file=buf, width=width, force_terminal=False, force_jupyter=False, color_system=None
    )
    m = report.overall
    console.print(
        escape(
            f"Calibration of {report.input}: {m.n_records} records, "
            f"{m.n_annotations} annotations, {m.n_annotators} annotators, {m.n_reports} reports"
        )
    )
    table = Table(title="Judge vs humans (95% CI: cluster bootstrap by report)")
    table.add_column("Figure")
    table.add_column("Value", justify="right")
    table.add_column("95% CI")
    for row in figure_rows(m):
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)
    if report.signals:
        signals = Table(title=escape(SIGNALS_TITLE))
        for col in SIGNALS_HEADER:
            signals.add_column(col, justify="left" if col == SIGNALS_HEADER[0] else "right")
        for cells in signal_rows(report):  # the source is a table's text: escaped
            signals.add_row(*(escape(cell) for cell in cells))
        console.print(signals)
    for by, values in report.groups.items():
        g = Table(title=escape(f"By {by}"))
        for col in ("Group", "n", "Agreement", "κ", "Weighted κ", "ρ", "ρ 95% CI", "Calibrated"):
            g.add_column(col, justify="left" if col in ("Group", "ρ 95% CI") else "right")
        for value, gm in values.items():
            g.add_row(
                escape(value),
                *(
                    escape(cell)
                    for cell in (
                        str(gm.n_annotations),
                        fmt(gm.agreement_rate),
                        fmt(gm.cohen_kappa),
                        fmt(gm.weighted_kappa),
                        fmt(gm.spearman_rho),
                        fmt_ci(gm.ci.get("spearman_rho")),
                        fmt(gm.calibrated),
                    )
                ),
            )
        console.print(g)
    n_records = len({d.record_id for d in report.disagreements})
    cats = Table(
        title=escape(
            f"Disagreements by category ({len(report.disagreements)} pairs, {n_records} records)"
        )
    )
    cats.add_column("Category")
    cats.add_column("Count", justify="right")
    cats.add_column("Meaning")
    for name, count in report.categories.items():
        cats.add_row(escape(name), escape(str(count)), escape(CATEGORY_HELP[name]))
    console.print(cats)
    if report.disagreements:
        grouped = disagreement_records(report)
        d = Table(
            title=escape(
                f"First {min(MAX_DISAGREEMENTS_SHOWN, len(grouped))} of {len(grouped)} "
                "disagreeing records (every pair in --format json)"
            )
        )
        for col in ("Type", "Category", "Judge", "Humans"):
            d.add_column(col, no_wrap=True)
        d.add_column(escape("Claim [citation]"), overflow="fold", min_width=40)
        for item, humans in grouped[:MAX_DISAGREEMENTS_SHOWN]:
            d.add_row(
                "FP" if item.type == "false_positive" else "FN",
                escape(item.category),
                escape(f"{item.judge_verdict or ''} {fmt(item.judge_score, 2)}"),
                escape(humans),
                escape(f"{shorten(item.claim, 110)} {item.citation or ''}"),
            )
        console.print(d)
    if report.corrections:
        proposals = Table(title="Proposed corrections (citecal correct) accepted by annotators")
        for col in ("Strategy", "Answers", "Accepted", "Edited", "Rejected", "Acceptance"):
            proposals.add_column(col, justify="left" if col == "Strategy" else "right")
        for cells in correction_rows(report):
            proposals.add_row(*(escape(cell) for cell in cells))
        console.print(proposals)
    if report.compare is not None:
        console.print(comparison_table(report.compare))
        c = report.compare
        console.print(
            escape(
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
        )
        if c.flipped:
            f = Table(
                title=escape(
                    f"Flipped records ({len(c.flipped)}; first {MAX_DISAGREEMENTS_SHOWN} here, "
                    "all in --format json)"
                )
            )
            for col in ("Record", "Effect", "A", "B", "Human median"):
                f.add_column(col, no_wrap=True)
            f.add_column(escape("Claim [citation]"), overflow="fold", min_width=40)
            for flip in c.flipped[:MAX_DISAGREEMENTS_SHOWN]:
                f.add_row(
                    escape(flip.record_id),
                    escape(flip.effect),
                    escape(flip.verdict_a or ""),
                    escape(flip.verdict_b or ""),
                    escape(fmt(flip.human_median, 1)),
                    escape(f"{shorten(flip.claim, 110)} {flip.citation or ''}"),
                )
            console.print(f)
    for line in check_lines(report):
        console.print(escape(line))
    if m.notes:
        console.print("Notes:")
        for note in m.notes:
            console.print(f"  - {escape(note)}")
    return buf.getvalue()


def comparison_table(c: Comparison) -> Table:
    t = Table(
        title=escape(
            f"Comparison: B = {Path(c.b).name} vs A = {Path(c.a).name} "
            f"({c.n_pairs} paired annotations)"
        )
    )
    for col in ("Figure", "A", "B", "B − A", "95% CI (paired)"):
        t.add_column(col, justify="left" if col in ("Figure", "95% CI (paired)") else "right")
    for row in comparison_rows(c):
        t.add_row(*(escape(cell) for cell in row))
    return t


def render_estimate_table(r: EstimateReport, width: int = 110) -> str:
    """Rich tables for a terminal (plain text when not a TTY)."""
    buf = StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    console.print(escape(summary_line(r)))
    t = Table(title="Citation precision")
    for col in ("Figure", "Estimate", f"{r.level:.0%} CI", "Width"):
        t.add_column(col, justify="left" if col == "Figure" else "right")
    for row in headline(r):
        t.add_row(*(escape(cell) for cell in row))
    console.print(t)
    for dim, values in r.strata.items():
        if len(values) < 2:
            continue
        g = Table(title=escape(f"By {dim}"))
        for i, col in enumerate(GROUP_HEADER):
            g.add_column(col, justify="left" if i == 0 else "right")
        for cells in estimate_group_rows(values):
            g.add_row(*(escape(c) for c in cells))
        console.print(g)
    console.print(escape(f"Sampling: {r.sampling}"))
    for line in design_lines(r):
        console.print(escape(line))
    if r.notes:
        console.print("Notes:")
        for n in r.notes:
            console.print(escape(f"  - {n}"))
    if r.gate is not None:
        console.print(
            "Gate: passed"
            if r.gate.passed
            else "Gate: FAILED\n" + "\n".join(f"  - {escape(f)}" for f in r.gate.failures)
        )
    return buf.getvalue()
