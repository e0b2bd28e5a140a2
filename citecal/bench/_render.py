"""The ground-truth benchmark for people: a terminal table and a Markdown table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from citecal._markup import md_line
from citecal.bench._score import BenchReport, Metrics

COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "n"),
    ("agreement", "agree"),
    ("false_support_rate", "false sup."),
    ("false_reject_rate", "false rej."),
    ("decision_coverage", "coverage"),
    ("precision", "P"),
    ("recall", "R"),
    ("f1", "F1"),
)


def _cell(m: Metrics, key: str) -> str:
    value = getattr(m, key)
    if value is None:
        return "–"
    if key == "n":
        return str(value)
    if key == "false_support_rate":
        return f"{value:.1%} ({m.false_supports})"
    if key == "false_reject_rate":
        return f"{value:.1%} ({m.false_rejects})"
    return f"{value:.1%}" if key in ("agreement", "decision_coverage") else f"{value:.3f}"


def _rows(report: BenchReport) -> list[tuple[str, Metrics]]:
    rows = [("overall", report.overall)]
    for by, groups in report.groups.items():
        rows.extend((f"{by}: {k}", m) for k, m in groups.items())
    return rows


def _title(report: BenchReport) -> str:
    who = f"judge {report.judge}" if report.judge else "rules only (--no-llm)"
    return f"Ground truth: {', '.join(report.sets)}: {who}"


def render_bench_table(report: BenchReport, console: Console) -> None:
    """The figures overall and per group, one row each."""
    table = Table(title=_title(report), title_justify="left")
    table.add_column("slice")
    for _, head in COLUMNS:
        table.add_column(head, justify="right")
    for name, m in _rows(report):
        table.add_row(name, *(_cell(m, k) for k, _ in COLUMNS))
    console.print(table)
    if report.not_extracted:
        console.print(f"not extracted: {', '.join(report.not_extracted)}")


def render_bench_markdown(report: BenchReport) -> str:
    """The same table in Markdown, then the disagreements to read.

    Claims, ids, slice names and set names are data: escaped by
    :func:`~citecal._markup.md_line` (README "Security").
    """
    lines = [f"## {md_line(_title(report))}", ""]
    lines.append("| slice | " + " | ".join(h for _, h in COLUMNS) + " |")
    lines.append("|---|" + "---:|" * len(COLUMNS))
    for name, m in _rows(report):
        lines.append(f"| {md_line(name)} | " + " | ".join(_cell(m, k) for k, _ in COLUMNS) + " |")
    if report.disagreements:
        lines += ["", "### Disagreements", "", "| id | type | human | verdict | claim |"]
        lines.append("|---|---|---:|---|---|")
        for d in report.disagreements:
            lines.append(
                f"| {md_line(d.id)} | {d.type} | {d.human_score} | {d.verdict} "
                f"| {md_line(d.claim)} |"
            )
    if report.not_extracted:
        lines += ["", f"Not extracted: {md_line(', '.join(report.not_extracted))}"]
    return "\n".join(lines) + "\n"


__all__ = ["render_bench_markdown", "render_bench_table"]
