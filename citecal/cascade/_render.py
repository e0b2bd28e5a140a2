"""A cascade file for people: one row per tier, as a terminal table, Markdown or HTML.

A cascade's tier names carry judge model names from an annotation table and its
``labels`` what the file says about itself: untrusted text (README "Security").
The terminal table escapes Rich markup (``rich.markup.escape``), the Markdown and
HTML go through :mod:`citecal._markup`, so a model called ``<script>…`` or
``[/bold]`` is shown as those characters, never run or swallowed.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from scipy.stats import beta

from citecal._markup import html_text, md_line
from citecal.cascade._cascade import VERDICTS, CascadeSpec, Tier, TierThreshold

HEADS: tuple[str, ...] = (
    "tier",
    "reached",
    "decided",
    "coverage",
    "agreement",
    *VERDICTS,
    "USD / 1 000",
)


def _side(t: TierThreshold) -> str:
    if t.value is None:
        return f"never ({t.candidates} candidates)"
    ci = f" [{t.interval[0]:.1%}, {t.interval[1]:.1%}]" if t.interval else ""
    agree = f"{t.agreement:.1%}" if t.agreement is not None else "–"
    return f"≥ {t.value:.3f}: {t.n} decided, {agree}{ci}"


def tier_agreement(tier: Tier) -> tuple[float, tuple[float, float]] | None:
    """Agreement of everything the tier decides on its labels, with a Clopper–Pearson 95%."""
    n = sum(t.n for t in tier.thresholds.values() if t.value is not None)
    errors = sum(t.errors for t in tier.thresholds.values() if t.value is not None)
    if not n:
        return None
    k = n - errors
    lo = float(beta.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
    hi = float(beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return k / n, (lo, hi)


def _title(spec: CascadeSpec) -> str:
    levels = ", ".join(f"{k} ≥ {v:.0%}" for k, v in spec.agreement.items())
    n = spec.labels.get("n", spec.labels.get("records", "?"))
    return f"Cascade on {n} labels ({levels} with probability ≥ {1 - spec.delta:.0%})"


def _rows(spec: CascadeSpec) -> list[list[str]]:
    rows = []
    for tier in spec.tiers:
        cov = f"{tier.decided / tier.reached:.1%}" if tier.reached else "–"
        cost = f"{tier.cost_per_1000:.4f}" if tier.cost_per_1000 is not None else "–"
        agree = tier_agreement(tier)
        shown = "–" if agree is None else f"{agree[0]:.1%} [{agree[1][0]:.1%}, {agree[1][1]:.1%}]"
        name = tier.name + (f" ({tier.confidence})" if tier.confidence else "")
        sides = [_side(tier.thresholds[v]) for v in VERDICTS]
        rows.append([name, str(tier.reached), str(tier.decided), cov, shown, *sides, cost])
    return rows


def _abstained(spec: CascadeSpec) -> str:
    total = sum(t.decided for t in spec.tiers) + spec.abstained
    share = f" ({spec.abstained / total:.1%})" if total else ""
    return f"abstained (sent to a person): {spec.abstained}{share}"


def _cost(spec: CascadeSpec) -> str | None:
    """The judge tiers' cost against the strongest model alone (README "Judge confidence")."""
    if spec.cost is None:
        return None
    c = spec.cost
    ratio = f" ({c.ratio:.2f}×)" if c.ratio is not None else ""
    return (
        f"judge tiers: ${c.per_1000:.4f} per 1 000 claims (every claim reaching a judge "
        f"tier pays for it, K answers included) vs ${c.baseline_per_1000:.4f} judging "
        f"every claim with {c.baseline_model}{ratio}"
    )


def _footer(spec: CascadeSpec) -> list[str]:
    cost = _cost(spec)
    return [_abstained(spec)] + ([cost] if cost is not None else [])


def render_cascade_table(spec: CascadeSpec, console: Console) -> None:
    """Per tier: labels reached and decided, per-verdict threshold and agreement, cost."""
    table = Table(title=escape(_title(spec)), title_justify="left")
    for head in HEADS:
        table.add_column(head, justify="left" if head in ("tier", *VERDICTS) else "right")
    for row in _rows(spec):
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)
    for line in _footer(spec):
        console.print(escape(line))


def render_cascade_markdown(spec: CascadeSpec) -> str:
    """The same table in GitHub Markdown, every cell escaped (:func:`citecal._markup.md_line`)."""
    lines = [f"## {md_line(_title(spec))}", ""]
    lines.append("| " + " | ".join(md_line(h) for h in HEADS) + " |")
    lines.append("|" + "|".join("---" if h in ("tier", *VERDICTS) else "---:" for h in HEADS) + "|")
    lines += ["| " + " | ".join(md_line(c) for c in row) + " |" for row in _rows(spec)]
    footer = [md_line(line) + "\n" for line in _footer(spec)]
    return "\n".join([*lines, "", *footer])


def render_cascade_html(spec: CascadeSpec) -> str:
    """One self-contained HTML page, every text escaped (:func:`citecal._markup.html_text`)."""
    head = "".join(f"<th>{html_text(h)}</th>" for h in HEADS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>" for row in _rows(spec)
    )
    title = html_text(_title(spec))
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body><h1>{title}</h1>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        + "".join(f"<p>{html_text(line)}</p>" for line in _footer(spec))
        + "</body></html>\n"
    )


def render_cascade(spec: CascadeSpec, fmt: str) -> str:
    """``spec`` as ``table`` (plain text), ``json`` (no verifier), ``markdown`` or ``html``."""
    if fmt == "json":
        return spec.model_dump_json(indent=2, exclude={"verifier"}) + "\n"
    if fmt == "markdown":
        return render_cascade_markdown(spec)
    if fmt == "html":
        return render_cascade_html(spec)
    console = Console(record=True, width=140, file=io.StringIO())
    render_cascade_table(spec, console)
    return console.export_text()


__all__ = [
    "render_cascade",
    "render_cascade_html",
    "render_cascade_markdown",
    "render_cascade_table",
]
