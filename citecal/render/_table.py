"""Terminal output with rich: a summary, every citation, and what to fix."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from citecal.models import EvalResult
from citecal.render._format import (
    SUMMARY_ROWS,
    band_line,
    excerpt_note,
    outcome_label,
    pct,
    review_detail,
    review_rows,
    review_title,
    shorten,
)

_STYLE = {
    "supports": "green",
    "partial": "yellow",
    "not_supports": "red",
    "unverified": "dim",
    "invalid": "bold red",
}


def _summary_table(result: EvalResult) -> Table:
    s = result.summary.model_dump()
    table = Table(
        title=f"citecal · {escape(result.report)}", show_header=False, title_justify="left"
    )
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
                "decided": s["total_citations"],
            }.get(count)
            parts.append(f"{s[count]}" + (f"/{denominator}" if denominator is not None else ""))
        if rate_field:
            parts.append(pct(s[rate_field]))
        table.add_row(label, escape("  ".join(parts)))
    table.add_row("Cost", f"${s['cost_usd']:.4f}")
    if s["excerpt_checked"]:
        table.add_row("Excerpts found", escape(f"{s['excerpt_verified']}/{s['excerpt_checked']}"))
    return table


def _citations_table(result: EvalResult, width: int) -> Table:
    table = Table(title="Citations", title_justify="left", expand=False)
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("citation", overflow="fold", min_width=18, max_width=36)
    table.add_column("outcome", no_wrap=True)
    table.add_column("mode", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    probs = any(r.p_supports is not None for r in result.citations)
    if probs:  # the local verifier's calibrated probability (docs/explanation/cascade.md)
        table.add_column("p", justify="right", no_wrap=True)
    table.add_column("claim / reason", overflow="fold", ratio=1, min_width=24)
    for n, r in enumerate(result.citations, 1):
        label = outcome_label(r.verdict, r.valid)
        reason = r.error if not r.valid else (r.reasoning or "")
        detail = escape(shorten(r.claim, width))
        if reason:
            detail += f"\n[dim]{escape(shorten(reason, width))}[/dim]"
        note = excerpt_note(r)
        if note:
            detail += f"\n[dim]{escape(shorten(note, width))}[/dim]"
        cells = [
            str(n),
            escape(r.citation),
            f"[{_STYLE.get(label, '')}]{escape(label)}[/]",
            escape(r.mode or "—"),
            "—" if r.score is None else f"{r.score:.2f}",
        ]
        if probs:
            cells.append("—" if r.p_supports is None else f"{r.p_supports:.2f}")
        table.add_row(*cells, detail)
    return table


def _review_table(result: EvalResult, width: int) -> Table:
    """The review list (docs/explanation/cascade.md): riskiest first, evidence, probable place."""
    table = Table(title=review_title(result), title_justify="left")
    table.add_column("rank", justify="right", no_wrap=True)
    table.add_column("citation", overflow="fold", min_width=18, max_width=36)
    table.add_column("p_supports", justify="right", no_wrap=True)
    table.add_column("claim / why", overflow="fold", ratio=1, min_width=24)
    for r in review_rows(result):
        detail = escape(shorten(r.claim, width))
        for line in review_detail(r):
            detail += f"\n[dim]{escape(shorten(line, width))}[/dim]"
        table.add_row(
            str(r.risk_rank),
            escape(r.citation),
            "—" if r.p_supports is None else f"{r.p_supports:.2f}",
            detail,
        )
    return table


def _failed_table(result: EvalResult, width: int) -> Table:
    table = Table(title="Failed citations", title_justify="left")
    table.add_column("citation", overflow="fold", min_width=18, max_width=36)
    table.add_column("failure", no_wrap=True)
    table.add_column("suggested action", no_wrap=True)
    table.add_column("why", overflow="fold", ratio=1, min_width=24)
    for r in result.failed_citations:
        why = r.error or r.hint or r.reasoning or ""
        table.add_row(
            Text(r.citation),
            Text(r.failure_type or ""),
            Text(r.suggested_action or ""),
            Text(shorten(why, width)),
        )
    return table


def render_table(result: EvalResult, console: Console, *, show_citations: bool = True) -> None:
    """Print the summary, the citations and the failed ones."""
    width = max(40, min(110, console.width - 50))
    console.print(_summary_table(result))
    if result.summary.risk_bands:
        console.print(escape(band_line(result)))
    shift = result.summary.shift
    if shift is not None and shift.shifted:
        console.print(f"[yellow]note:[/] {escape(shift.message)}")
    if result.summary.review_size:
        console.print(_review_table(result, width))
    if show_citations and result.citations:
        console.print(_citations_table(result, width))
    if result.failed_citations:
        console.print(_failed_table(result, width))
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if result.gate is not None:
        style = {"PASS": "green", "WARN": "yellow", "FAIL": "bold red"}[result.gate.status]
        console.print(f"Gate: [{style}]{result.gate.status}[/]")
        for reason in result.gate.reasons:
            console.print(f"  - {escape(reason)}")
