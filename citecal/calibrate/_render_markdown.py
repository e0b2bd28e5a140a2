"""Markdown of a calibration report and of an estimate report (pull-request comments).

Claims, annotators' notes, citations, group values and file names come from
the annotation table, which reports, repositories, judges and annotators
wrote: every cell and line is escaped by :mod:`citecal._markup` unless citecal
composed it itself (:class:`~citecal._markup.Markdown`), so none of it shows
as HTML, a link or an image (README "Security").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from citecal._markup import Markdown, md_code, md_line
from citecal.calibrate._estimate_models import EstimateReport
from citecal.calibrate._models import CATEGORY_HELP, CalibrationReport
from citecal.calibrate._render_common import (
    GROUP_HEADER,
    SIGNALS_HEADER,
    SIGNALS_TITLE,
    check_lines,
    comparison_rows,
    correction_rows,
    design_lines,
    estimate_group_rows,
    figure_rows,
    fmt,
    fmt_ci,
    headline,
    shorten,
    signal_rows,
    summary_line,
)


def md_table(header: tuple[str, ...], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub table; a cell is escaped (:func:`~citecal._markup.md_line`) unless it is
    :class:`~citecal._markup.Markdown` citecal wrote (figures, labels)."""

    def esc(cell: str) -> str:
        return cell if isinstance(cell, Markdown) else md_line(cell)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def ours(row: Iterable[str]) -> tuple[Markdown, ...]:
    """A row citecal composed from its own labels and numbers: no escaping needed."""
    return tuple(Markdown(cell) for cell in row)


def render_markdown(report: CalibrationReport) -> str:
    """GitHub-flavoured Markdown with every figure, breakdown and disagreement category."""
    m = report.overall
    out = [
        f"# Judge calibration: {md_line(report.input)}",
        "",
        f"{m.n_records} records, {m.n_annotations} annotations, {m.n_annotators} annotators, "
        f"{m.n_reports} reports. CIs: 95% cluster bootstrap by report.",
        "",
        md_table(("Figure", "Value", "95% CI"), [ours(r) for r in figure_rows(m)]),
    ]
    if report.signals:
        out += ["", f"## {SIGNALS_TITLE}", "", md_table(
            SIGNALS_HEADER, [ours(r) for r in signal_rows(report)]
        )]  # fmt: skip
    for by, values in report.groups.items():
        rows = [
            (
                v,
                *ours(
                    (
                        str(g.n_annotations),
                        fmt(g.agreement_rate),
                        fmt(g.cohen_kappa),
                        fmt(g.weighted_kappa),
                        fmt(g.spearman_rho),
                        fmt_ci(g.ci.get("spearman_rho")),
                    )
                ),
            )
            for v, g in values.items()
        ]
        out += ["", f"## By {md_line(by)}", "", md_table(
            ("Group", "n", "Agreement", "κ", "Weighted κ", "ρ", "ρ 95% CI"), rows
        )]  # fmt: skip
    out += ["", "## Disagreements", ""]
    out.append(
        md_table(
            ("Category", "Count", "Meaning"),
            [ours((k, str(v), CATEGORY_HELP[k])) for k, v in report.categories.items()],
        )
    )
    if report.disagreements:
        out += [""]
        out.append(
            md_table(
                ("Type", "Category", "Citation", "Judge", "Human", "Claim", "Notes"),
                [
                    (
                        d.type,
                        d.category,
                        Markdown(md_code(d.citation or "")),
                        f"{d.judge_verdict or ''} {fmt(d.judge_score, 2)}",
                        str(d.human_score),
                        shorten(d.claim, 80),
                        shorten(d.notes, 60),
                    )
                    for d in report.disagreements
                ],
            )
        )
    if report.compare is not None:
        c = report.compare
        out += ["", f"## Comparison: {md_line(c.b)} vs {md_line(c.a)}", ""]
        out.append(
            md_table(("Figure", "A", "B", "B − A", "95% CI"), [ours(r) for r in comparison_rows(c)])
        )
        out += [
            "",
            f"McNemar exact test (records): only A right {c.mcnemar_b01}, only B right "
            f"{c.mcnemar_b10}, p = {fmt(c.mcnemar_p)}. Significantly worse: "
            f"{fmt(c.significantly_worse)}; significantly better: {fmt(c.significantly_better)}.",
        ]
        if c.flipped:
            out += ["", md_table(
                ("Record", "Effect", "A", "B", "Human median", "Claim"),
                [(f.record_id, f.effect, f.verdict_a or "", f.verdict_b or "",
                  fmt(f.human_median, 1), shorten(f.claim, 70)) for f in c.flipped],
            )]  # fmt: skip
    if report.corrections:
        out += ["", "## Proposed corrections accepted by annotators", ""]
        header = ("Strategy", "Answers", "Accepted", "Edited", "Rejected", "Acceptance")
        out.append(md_table(header, correction_rows(report)))
    checks = check_lines(report)
    if checks:
        out += ["", "## Checks", ""] + [f"- {md_line(c.strip())}" for c in checks]
    if m.notes:
        out += ["", "## Notes", ""] + [f"- {md_line(n)}" for n in m.notes]
    return "\n".join(out) + "\n"


def render_estimate_markdown(r: EstimateReport) -> str:
    """The same tables in Markdown (a pull-request comment)."""
    out = [f"## Citation precision\n\n{summary_line(r)}.\n"]
    out.append(f"| Figure | Estimate | {r.level:.0%} CI | Width |\n|---|---:|---:|---:|")
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in headline(r)]
    for dim, values in r.strata.items():
        if len(values) < 2:
            continue
        out.append(f"\n### By {md_line(dim)}\n")
        out.append("| " + " | ".join(GROUP_HEADER) + " |")
        out.append("|---" + "|---:" * (len(GROUP_HEADER) - 1) + "|")
        out += [
            "| " + " | ".join([md_line(row[0]), *row[1:]]) + " |"  # the value is data
            for row in estimate_group_rows(values)
        ]
    out.append(f"\nSampling: {md_line(r.sampling)}.")
    out += [f"\n{md_line(line)}." for line in design_lines(r)]
    if r.notes:
        out.append("\nNotes:\n" + "\n".join(f"- {md_line(n)}" for n in r.notes))
    if r.gate is not None:
        out.append(
            "\nGate: passed"
            if r.gate.passed
            else "\nGate: **failed**\n" + "\n".join(f"- {md_line(f)}" for f in r.gate.failures)
        )
    return "\n".join(out) + "\n"
