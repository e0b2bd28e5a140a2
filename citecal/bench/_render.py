"""The ground-truth benchmark for people: a terminal table and a Markdown table."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from citecal._markup import md_line
from citecal.bench._folds import FoldFigures, FoldReport
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
    for origin, part in report.by_origin.items():
        rows.append((f"{origin} only", part.overall))
        for by, groups in part.groups.items():
            rows.extend((f"{origin} · {by}: {k}", m) for k, m in groups.items())
    return rows


def _title(report: BenchReport) -> str:
    who = f"judge {report.judge}" if report.judge else "rules only (--no-llm)"
    return f"Ground truth: {', '.join(report.sets)}: {who}"


def render_bench_table(report: BenchReport, console: Console) -> None:
    """The figures overall and per group, one row each."""
    # Set names, package names and judge models are data: escaped (README "Security").
    table = Table(title=escape(_title(report)), title_justify="left")
    table.add_column("slice")
    for _, head in COLUMNS:
        table.add_column(head, justify="right")
    for name, m in _rows(report):
        table.add_row(escape(name), *(escape(_cell(m, k)) for k, _ in COLUMNS))
    console.print(table)
    if report.sentences is not None:
        j = report.sentences
        agree = f"{j.agreement:.1%}" if j.agreement is not None else "–"
        console.print(
            escape(
                f"sentences with several citations: {j.n} ({j.supported} supported by people); "
                f"joint verdict decided {j.decided}, agreement {agree}, "
                f"false supports {j.false_supports}, false rejects {j.false_rejects}"
            )
        )
    for line in decider_lines(report):
        console.print(line, markup=False, highlight=False)
    if report.not_extracted:
        console.print(escape(f"not extracted: {', '.join(report.not_extracted)}"))


def decider_lines(report: BenchReport) -> list[str]:
    """Valid citations by who decided them, and the ones sent to a person, by reason."""
    lines = []
    for who, m in report.decided_by.items():
        agree = "–" if m.agreement is None else f"{m.agreement:.2%}"
        lines.append(
            f"valid citations decided by {who}: {m.decided}, agreement {agree} "
            f"(false supports {m.false_supports}, false rejects {m.false_rejects})"
        )
    if report.abstained:
        parts = ", ".join(f"{reason} {n}" for reason, n in report.abstained.items())
        lines.append(f"sent to a person: {parts}")
    return lines


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


FOLD_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "n"),
    ("agreement", "agree"),
    ("agreement_supports", "agree sup."),
    ("agreement_not_supports", "agree not"),
    ("decision_coverage", "coverage"),
    ("decision_coverage_valid", "cov. valid"),
    ("false_support_rate", "false sup."),
    ("unsupported_caught", "unsup. caught"),
    ("abstained", "to a person"),
)


def _fold_cell(m: FoldFigures, key: str) -> str:
    value = getattr(m, key)
    if value is None:
        return "–"
    if isinstance(value, int):
        return str(value)
    if key == "false_support_rate":
        return f"{value:.1%} ({m.false_supports})"
    return f"{value:.1%}"


def _fold_rows(report: FoldReport) -> list[tuple[str, FoldFigures]]:
    rows = [("overall", report.overall)]
    rows += [(f"origin: {k}", m) for k, m in report.by_origin.items()]
    rows += [(f"package: {k}", m) for k, m in report.by_package.items()]
    for origin, parts in report.by_origin_package.items():
        rows += [(f"{origin} · {k}", m) for k, m in parts.items()]
    return rows


def _fold_title(report: FoldReport) -> str:
    levels = ", ".join(f"{k} ≥ {v:.0%}" for k, v in report.agreement.items())
    on = "" if report.thresholds_on is None else f", thresholds on {'+'.join(report.thresholds_on)}"
    return (
        f"Cascade rules → local verifier, leave one package out ({levels}, δ = {report.delta}{on})"
    )


def render_folds_table(report: FoldReport, console: Console) -> None:
    """Out-of-sample figures of the cascade, overall, per origin and per held-out package."""
    table = Table(title=escape(_fold_title(report)), title_justify="left")
    table.add_column("held out")
    for _, head in FOLD_COLUMNS:
        table.add_column(head, justify="right")
    for name, m in _fold_rows(report):
        table.add_row(escape(name), *(escape(_fold_cell(m, k)) for k, _ in FOLD_COLUMNS))
    console.print(table)
    by = ", ".join(f"{k} {v}" for k, v in report.overall.decided_by.items())
    console.print(escape(f"decided by: {by}; sent to a person: {report.overall.abstained}"))
    for line in _spread_lines(report):
        console.print(escape(line))
    for line in ranking_lines(report):
        console.print(line, markup=False, highlight=False)


def _spread_lines(report: FoldReport) -> list[str]:
    """How much the figures swing between held-out packages, per origin."""
    out = []
    for origin, figs in report.spread.items():
        parts, n = [], 0.0
        for key, s in figs.items():
            low, mid, high = s.get("min"), s.get("median"), s.get("max")
            if low is None or mid is None or high is None:
                continue
            n = max(n, s.get("packages") or 0.0)
            parts.append(f"{key} {low:.1%} / {mid:.1%} / {high:.1%}")
        if parts:
            head = f"{origin}, across {n:.0f} packages (min / median / max): "
            out.append(head + "; ".join(parts))
    return out


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def ranking_lines(report: FoldReport) -> list[str]:
    """p_supports out of sample: AUC, the most doubtful 10% / 20%, expected against observed."""
    lines: list[str] = []
    for name, r in report.ranking.items():
        auc = "–" if r.auc is None else f"{r.auc:.3f}"
        lines.append(
            f"p_supports, {name} ({r.n} valid, {r.unsupported} unsupported): ROC AUC {auc}; "
            f"unsupported among the 10% most doubtful {_p(r.top10_unsupported)}, "
            f"the 20% {_p(r.top20_unsupported)}"
        )
        lines.append(
            "  band: n, expected unsupported (labels) / predicted (1 - p) / observed: "
            + "; ".join(
                f"{b.name} {b.n}, {_p(b.expected_unsupported)} / "
                f"{_p(b.predicted_unsupported)} / {_p(b.observed_unsupported)}"
                for b in r.reliability
            )
        )
    for by, groups in report.ranking_natural.items():
        lines.append(
            f"p_supports, natural, by {by}: ROC AUC (valid, unsupported): "
            + "; ".join(
                f"{key} {'–' if r.auc is None else f'{r.auc:.3f}'} ({r.n}, {r.unsupported})"
                for key, r in groups.items()
            )
        )
    return lines


def render_folds_markdown(report: FoldReport) -> str:
    lines = [f"## {_fold_title(report)}", ""]
    lines.append("| held out | " + " | ".join(h for _, h in FOLD_COLUMNS) + " |")
    lines.append("|---|" + "---:|" * len(FOLD_COLUMNS))
    for name, m in _fold_rows(report):
        cells = " | ".join(_fold_cell(m, k) for k, _ in FOLD_COLUMNS)
        lines.append(f"| {md_line(name)} | {cells} |")
    spread = _spread_lines(report)
    if spread:
        lines += [""] + [f"- {md_line(line)}" for line in spread]
    extra = ranking_lines(report)
    if extra:
        lines += ["", *(f"    {line}" for line in extra)]
    return "\n".join(lines) + "\n"


__all__ = [
    "render_bench_markdown",
    "render_bench_table",
    "render_folds_markdown",
    "render_folds_table",
]
