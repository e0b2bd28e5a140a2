"""Text renderings of an :class:`EstimateReport`: terminal tables and Markdown.

Both show the same rows: the corrected precision next to what the judge alone
and the labels alone say, so a reader sees the bias and the interval gained.
"""

from __future__ import annotations

from io import StringIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from citecal.calibrate._estimate_models import EstimateReport, Figures, Interval
from citecal.calibrate._render import fmt, fmt_ci


def _width(i: Interval) -> str:
    return "" if not i.ci else f"{i.ci[1] - i.ci[0]:.3f}"


def headline(r: EstimateReport) -> list[tuple[str, str, str, str]]:
    """(figure, estimate, interval, width) rows of the overall estimate."""
    return [
        (
            "Corrected (PPI++)",
            fmt(r.corrected.estimate),
            fmt_ci(r.corrected.ci),
            _width(r.corrected),
        ),
        ("Judge only", fmt(r.judge_only.estimate), "", ""),
        ("Human only", fmt(r.human_only.estimate), fmt_ci(r.human_only.ci), _width(r.human_only)),
    ]


def summary_line(r: EstimateReport) -> str:
    """One sentence: what was estimated from what."""
    eff = "—" if r.effective_labels is None else f"{r.effective_labels:,.0f}"
    return (
        f"Citation precision (human: score ≥ 2) over {r.n_judged:,} judged citations, "
        f"{r.n_labelled:,} labelled; {r.level:.0%} intervals; judge predictor: {r.predictor}; "
        f"the corrected interval is worth {eff} labels"
    )


def _group_rows(values: dict[str, Figures]) -> list[list[str]]:
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


def render_estimate_table(r: EstimateReport, width: int = 110) -> str:
    """Rich tables for a terminal (plain text when not a TTY)."""
    buf = StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    console.print(escape(summary_line(r)))
    t = Table(title="Citation precision")
    for col in ("Figure", "Estimate", f"{r.level:.0%} CI", "Width"):
        t.add_column(col, justify="left" if col == "Figure" else "right")
    for row in headline(r):
        t.add_row(*row)
    console.print(t)
    for dim, values in r.strata.items():
        if len(values) < 2:
            continue
        g = Table(title=f"By {dim}")
        for i, col in enumerate(GROUP_HEADER):
            g.add_column(col, justify="left" if i == 0 else "right")
        for cells in _group_rows(values):
            g.add_row(*(escape(c) for c in cells))
        console.print(g)
    console.print(escape(f"Sampling: {r.sampling}"))
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


def render_estimate_markdown(r: EstimateReport) -> str:
    """The same tables in Markdown (a pull-request comment)."""
    out = [f"## Citation precision\n\n{summary_line(r)}.\n"]
    out.append(f"| Figure | Estimate | {r.level:.0%} CI | Width |\n|---|---:|---:|---:|")
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in headline(r)]
    for dim, values in r.strata.items():
        if len(values) < 2:
            continue
        out.append(f"\n### By {dim}\n")
        out.append("| " + " | ".join(GROUP_HEADER) + " |")
        out.append("|---" + "|---:" * (len(GROUP_HEADER) - 1) + "|")
        out += ["| " + " | ".join(row) + " |" for row in _group_rows(values)]
    out.append(f"\nSampling: {r.sampling}.")
    if r.notes:
        out.append("\nNotes:\n" + "\n".join(f"- {n}" for n in r.notes))
    if r.gate is not None:
        out.append(
            "\nGate: passed"
            if r.gate.passed
            else "\nGate: **failed**\n" + "\n".join(f"- {f}" for f in r.gate.failures)
        )
    return "\n".join(out) + "\n"


__all__ = ["headline", "render_estimate_markdown", "render_estimate_table", "summary_line"]
