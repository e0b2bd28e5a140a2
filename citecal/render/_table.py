"""Terminal output with rich: a summary, every citation, and what to fix."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from citecal.models import EvalResult
from citecal.render._format import SUMMARY_ROWS, outcome_label, pct, shorten

_STYLE = {
    "supports": "green",
    "partial": "yellow",
    "not_supports": "red",
    "unverified": "dim",
    "invalid": "bold red",
}


def _summary_table(result: EvalResult) -> Table:
    s = result.summary.model_dump()
    table = Table(title=f"citecal · {result.report}", show_header=False, title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for label, count, rate_field in SUMMARY_ROWS:
        parts = []
        if count:
            denominator = {
                "valid_citations": s["total_citations"],
                "extractive_supports": s["extractive_checked"],
                "abstractive_supports": s["abstractive_checked"],
                "cited_claims": s["total_claims"],
            }.get(count)
            parts.append(f"{s[count]}" + (f"/{denominator}" if denominator is not None else ""))
        if rate_field:
            parts.append(pct(s[rate_field]))
        table.add_row(label, "  ".join(parts))
    table.add_row("Cost", f"${s['cost_usd']:.4f}")
    return table


def _citations_table(result: EvalResult, width: int) -> Table:
    table = Table(title="Citations", title_justify="left", expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("citation", overflow="fold")
    table.add_column("outcome")
    table.add_column("mode")
    table.add_column("score", justify="right")
    table.add_column("claim / reason", overflow="fold")
    for n, r in enumerate(result.citations, 1):
        label = outcome_label(r.verdict, r.valid)
        reason = r.error if not r.valid else (r.reasoning or "")
        detail = shorten(r.claim, width)
        if reason:
            detail += f"\n[dim]{shorten(reason, width)}[/dim]"
        table.add_row(
            str(n),
            r.citation,
            f"[{_STYLE.get(label, '')}]{label}[/]",
            r.mode or "—",
            "—" if r.score is None else f"{r.score:.2f}",
            detail,
        )
    return table


def _failed_table(result: EvalResult, width: int) -> Table:
    table = Table(title="Failed citations", title_justify="left")
    table.add_column("citation", overflow="fold")
    table.add_column("failure")
    table.add_column("suggested action")
    table.add_column("why", overflow="fold")
    for r in result.failed_citations:
        why = r.error or r.hint or r.reasoning or ""
        table.add_row(
            r.citation, r.failure_type or "", r.suggested_action or "", shorten(why, width)
        )
    return table


def render_table(result: EvalResult, console: Console, *, show_citations: bool = True) -> None:
    """Print the summary, the citations and the failed ones."""
    width = max(40, min(90, console.width - 60))
    console.print(_summary_table(result))
    if show_citations and result.citations:
        console.print(_citations_table(result, width))
    if result.failed_citations:
        console.print(_failed_table(result, width))
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
