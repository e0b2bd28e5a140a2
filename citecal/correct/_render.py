"""``citecal correct`` output: a terminal table with the diff, Markdown, or JSON."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from citecal._markup import md_code, md_fence, md_line
from citecal.correct._models import Correction, CorrectionOutput, correction_claim


def _new(c: Correction) -> str:
    if c.strategy == "remove":
        return "(removed: claim left uncited)"
    if c.strategy == "rewrite":
        return f"claim: {c.new_claim}"
    return str(c.new) if c.new is not None else ""


def summary_line(out: CorrectionOutput) -> str:
    """One line: how many citations failed before and after, and what was done."""
    by: dict[str, int] = {}
    for c in out.corrections:
        by[c.strategy] = by.get(c.strategy, 0) + 1
    done = ", ".join(f"{n} {s}" for s, n in sorted(by.items())) or "no change"
    return (
        f"{len(out.corrections)} correction(s) in {out.iterations} round(s): {done}; "
        f"{len(out.remaining)} failed citation(s) left"
    )


def render_table(out: CorrectionOutput, diff: str, width: int = 140) -> str:
    """Corrections, what is left, and the unified diff, as plain text for a terminal or log."""
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(escape(f"citecal correct · {out.report}"))  # a file name is data
    console.print(escape(summary_line(out)))
    if out.corrections:
        table = Table(title="Corrections", title_justify="left")
        for col in ("round", "strategy", "citation", "new", "verdict", "claim"):
            table.add_column(col, overflow="fold")
        for c in out.corrections:
            table.add_row(
                Text(str(c.iteration)),
                Text(c.strategy),
                Text(str(c.original)),
                Text(_new(c)),
                Text(f"{c.verdict_before} → {c.verdict_after or '—'}"),
                Text(correction_claim(c)),
            )
        console.print(table)
    if out.remaining:
        table = Table(title="Still failing", title_justify="left")
        for col in ("citation", "failure", "why not corrected", "claim"):
            table.add_column(col, overflow="fold")
        for r in out.remaining:
            table.add_row(
                Text(r.citation), Text(r.failure_type or ""), Text(r.reason), Text(r.claim)
            )
        console.print(table)
    text = console.export_text()
    if diff:
        text += "\n" + diff
    for w in out.warnings:
        text += f"warning: {w}\n"
    return text


def render_markdown(out: CorrectionOutput, diff: str) -> str:
    """The same as a Markdown document (a pull-request comment), the diff in a fenced block.

    Report text (citations, claims, reasons, the diff) is escaped or fenced by
    :mod:`citecal._markup`: it shows as text, never as HTML (README "Security").
    """
    lines = [f"## citecal correct · {md_code(out.report)}", "", summary_line(out), ""]
    if out.corrections:
        lines += [
            "| round | strategy | citation | new | verdict |",
            "|---:|---|---|---|---|",
        ]
        for c in out.corrections:
            cited = c.new is not None and c.strategy not in ("remove", "rewrite")
            new = md_code(_new(c)) if cited else md_line(_new(c))
            lines.append(
                f"| {c.iteration} | {c.strategy} | {md_code(str(c.original))} | {new} | "
                f"{c.verdict_before} → {c.verdict_after or '—'} |"
            )
        lines.append("")
    if out.remaining:
        lines += [
            "### Still failing",
            "",
            "| citation | failure | why not corrected |",
            "|---|---|---|",
        ]
        for r in out.remaining:
            lines.append(
                f"| {md_code(str(r.citation))} | {r.failure_type or ''} | {md_line(r.reason)} |"
            )
        lines.append("")
    if diff:
        lines += [md_fence(diff.rstrip("\n"), "diff"), ""]
    return "\n".join(lines)


__all__ = ["render_markdown", "render_table", "summary_line"]
