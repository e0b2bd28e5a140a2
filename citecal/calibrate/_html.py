"""Self-contained HTML calibration report with embedded matplotlib plots.

One file, no external assets: plots are PNGs inlined as base64 ``data:`` URIs
so the report can be attached to a CI run or mailed. Plots: confusion heat
map, reliability diagram (judge score vs human support), per-group bars with
CIs, and for comparisons the A/B figures with paired CIs.
"""

from __future__ import annotations

import base64
import html
import re
from io import BytesIO

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray

from citecal.calibrate._estimate_models import EstimateReport
from citecal.calibrate._models import (
    CATEGORY_HELP,
    CalibrationReport,
    Comparison,
    Metrics,
    SignalQuality,
)
from citecal.calibrate._render_common import (
    SIGNALS_HEADER,
    SIGNALS_TITLE,
    check_lines,
    figure_rows,
    fmt,
    fmt_ci,
    signal_rows,
)

FloatArray = NDArray[np.float64]

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;
padding:0 1rem;color:#222;line-height:1.4;overflow-wrap:anywhere}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
.scroll{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem;max-width:100%}
table.wide{width:100%;table-layout:fixed;font-size:.8rem}
table.wide td,table.wide th{overflow-wrap:break-word;hyphens:none}
table.wide th{overflow-wrap:normal}
td,th{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top;text-align:left}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.plots{display:flex;flex-wrap:wrap;gap:1rem}.plots img{max-width:100%;border:1px solid #eee}
pre{white-space:pre;margin:.25rem 0 0;font-size:.75rem;max-height:14rem;max-width:100%;
overflow:auto;background:#f7f7f7;padding:.25rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.note{color:#666}
"""

_FENCE = re.compile(r"^```[ \t]*([\w+.-]*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")

DISAGREEMENT_WIDTHS = ("9%", "11%", "11%", "14%", "23%", "7%", "7%", "10%", "8%")
"""Column widths of the disagreement table: the cited code gets the most room, and the type and
category columns fit their longest word (``overstates_``, ``positive``) on one line."""


def breakable(text: str) -> str:
    """Escaped ``text`` that may wrap after ``_`` and ``/`` only, never inside a word.

    The page used to let any word break anywhere, so a narrow column showed "false_po sitive";
    a ``<wbr>`` after each underscore and slash gives the line breaks an identifier or a path
    reads well with (issue 24).
    """
    return re.sub(r"([_/])", r"\1<wbr>", html.escape(text))


def _png(fig: Figure) -> str:
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def confusion_plot(m: Metrics) -> str:
    """2 × 2 heat map of judge verdict against human support."""
    c = m.confusion
    grid = np.array([[c.tp, c.fn], [c.fp, c.tn]], dtype=float)
    fig, ax = plt.subplots(figsize=(4, 3.4))
    ax.imshow(grid, cmap="Blues")
    for (i, j), v in np.ndenumerate(grid):
        color = "white" if v > grid.max() / 2 else "black"
        ax.text(j, i, f"{int(v)}", ha="center", va="center", color=color, fontsize=14)
    ax.set_xticks([0, 1], ["judge: supports", "judge: not"])
    ax.set_yticks([0, 1], ["human ≥ 2", "human ≤ 1"])
    ax.set_title("Confusion (pairs)")
    return _png(fig)


def reliability_plot(m: Metrics) -> str | None:
    """Reliability diagram: mean judge score per bin vs the share of humans saying supports."""
    fig = reliability_figure(m)
    return None if fig is None else _png(fig)


def reliability_figure(m: Metrics) -> Figure | None:
    """The reliability diagram's figure (its legend outside the axes, see below)."""
    if not m.reliability:
        return None
    x = [b.mean_judge_score for b in m.reliability]
    y = [b.human_support_rate for b in m.reliability]
    n = [b.n for b in m.reliability]
    fig, ax = plt.subplots(figsize=(4.4, 3.6))
    ax.plot([0, 1], [0, 1], ls="--", color="#999", label="perfectly calibrated")
    ax.plot(x, y, marker="o", color="#1f77b4", label="judge")
    for xi, yi, ni in zip(x, y, n, strict=True):
        ax.annotate(f"n={ni}", (xi, yi), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("judge support score")
    ax.set_ylabel("share of humans scoring ≥ 2")
    ax.set_title("Reliability diagram")
    # Below the axes: inside, the legend covered points and their n= labels (issue 24).
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8, frameon=False)
    return fig


def signal_plot(signals: list[SignalQuality]) -> str | None:
    """Reliability diagram of each confidence source: confidence vs the share agreeing."""
    fig = signal_figure(signals)
    return None if fig is None else _png(fig)


def signal_figure(signals: list[SignalQuality]) -> Figure | None:
    """The confidence signals' figure: one line per source (README "Judge confidence")."""
    shown = [s for s in signals if s.reliability]
    if not shown:
        return None
    fig, ax = plt.subplots(figsize=(4.4, 3.6))
    ax.plot([0, 1], [0, 1], ls="--", color="#999", label="perfectly calibrated")
    for s in shown:
        auc = f", AUC {s.roc_auc:.2f}" if s.roc_auc is not None else ""
        ax.plot(
            [b.mean_confidence for b in s.reliability],
            [b.agreement_rate for b in s.reliability],
            marker="o",
            label=f"{s.source}{auc}",
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("judge confidence (confidence_value)")
    ax.set_ylabel("share of annotators agreeing")
    ax.set_title("Confidence signals")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8, frameon=False)
    return fig


def error_bars(values: dict[str, Metrics], metric: str) -> FloatArray | None:
    """(below, above) distances of ``metric``'s CI per group; None when no group has one.

    Without intervals (one report: README "Calibration") no error bars are
    drawn, rather than bars of zero width that read as perfect certainty.
    """
    if not any(g.ci.get(metric) for g in values.values()):
        return None
    err = np.zeros((2, len(values)))
    for i, g in enumerate(values.values()):
        value, ci = getattr(g, metric), g.ci.get(metric)
        if ci and value is not None:
            err[0, i] = max(0.0, value - ci[0])
            err[1, i] = max(0.0, ci[1] - value)
    return err


def group_plot(by: str, values: dict[str, Metrics]) -> str | None:
    """Agreement and ρ per group value, with their 95% CIs as error bars when there are any."""
    fig = group_figure(by, values)
    return None if fig is None else _png(fig)


def group_figure(by: str, values: dict[str, Metrics]) -> Figure | None:
    """The per-group bar chart's figure (its legend outside the axes, see below)."""
    if not values:
        return None
    names = list(values)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(names) + 2), 3.4))
    width = 0.38
    pos = np.arange(len(names))
    with_ci = False
    for k, (metric, label) in enumerate((("agreement_rate", "agreement"), ("spearman_rho", "ρ"))):
        heights = [getattr(values[v], metric) or 0.0 for v in names]
        err = error_bars(values, metric)
        with_ci = with_ci or err is not None
        ax.bar(pos + (k - 0.5) * width, heights, width, yerr=err, capsize=3, label=label)
    ax.set_xticks(pos, names, rotation=20, ha="right")
    ax.set_ylim(min(0.0, ax.get_ylim()[0]), 1.05)
    ax.set_title(f"By {by} (95% CI)" if with_ci else f"By {by} (no CIs)")
    # Right of the axes: inside, "best" still put it over a bar or an error bar (issue 24).
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def estimate_plot(e: EstimateReport) -> str:
    """Corrected vs judge-only vs human-only precision, with their intervals (README Estimates)."""
    rows = [
        ("human only", e.human_only.estimate, e.human_only.ci, "#7f7f7f"),
        ("corrected (PPI++)", e.corrected.estimate, e.corrected.ci, "#1f77b4"),
        ("judge only", e.judge_only.estimate, None, "#d62728"),
    ]
    fig, ax = plt.subplots(figsize=(5.2, 2.6))
    for i, (_label, est, ci, color) in enumerate(rows):
        if est is None:
            continue
        if ci:
            ax.errorbar(
                est,
                i,
                xerr=[[est - ci[0]], [ci[1] - est]],
                fmt="o",
                color=color,
                capsize=5,
            )
            ax.annotate(
                f"{est:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]",
                (est, i),
                textcoords="offset points",
                xytext=(0, 8),
                ha="center",
                fontsize=8,
            )
        else:
            ax.plot(est, i, marker="D", color=color)
            ax.annotate(
                f"{est:.3f} (no interval: biased)",
                (est, i),
                textcoords="offset points",
                xytext=(0, 8),
                ha="center",
                fontsize=8,
            )
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.6, len(rows) - 0.3)
    ax.set_xlabel(f"citation precision (people: score ≥ 2), {e.level:.0%} intervals")
    ax.set_title(f"{e.n_judged:,} judged, {e.n_labelled} labelled")
    return _png(fig)


def comparison_plot(c: Comparison) -> str:
    """B − A for every compared figure with the paired bootstrap CI."""
    names = list(c.figures)
    diffs = [c.figures[n].diff or 0.0 for n in names]
    err = np.zeros((2, len(names)))
    for i, n in enumerate(names):
        ci = c.figures[n].ci
        if ci:
            err[0, i] = max(0.0, diffs[i] - ci[0])
            err[1, i] = max(0.0, ci[1] - diffs[i])
    fig, ax = plt.subplots(figsize=(5, 3.4))
    colors = ["#2ca02c" if d >= 0 else "#d62728" for d in diffs]
    with_ci = any(c.figures[n].ci for n in names)
    ax.bar(names, diffs, yerr=err if with_ci else None, capsize=4, color=colors)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_title("B − A (paired 95% CI)" if with_ci else "B − A (no CIs)")
    ax.tick_params(axis="x", rotation=20)
    return _png(fig)


def _inline(text: str) -> str:
    """Escaped prose with Markdown inline code (`name`) shown as ``<code>``."""
    return _INLINE_CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text))


def code_html(text: str) -> str:
    """Cited code as HTML: code in ``<pre><code>``, never as raw Markdown.

    Tables pulled since schema 2 and other tools' tables hold the raw cited
    code (README "Annotation table"): all of it is code. Tables pulled from
    records an older citecal pushed hold the Markdown annotators saw (a
    heading line, then a fenced block); for display only, its fenced blocks
    become ``<pre><code>`` with their language as a class and the text around
    them escaped prose.
    """
    if not text.strip():
        return ""
    if not _FENCE.search(text):
        return f"<pre><code>{html.escape(text)}</code></pre>"
    parts: list[str] = []
    at = 0
    for m in _FENCE.finditer(text):
        prose = text[at : m.start()].strip()
        if prose:
            parts.append(f"<div>{_inline(prose)}</div>")
        lang = f' class="language-{html.escape(m.group(1))}"' if m.group(1) else ""
        parts.append(f"<pre><code{lang}>{html.escape(m.group(2).rstrip(chr(10)))}</code></pre>")
        at = m.end()
    rest = text[at:].strip()
    if rest:
        parts.append(f"<div>{_inline(rest)}</div>")
    return "".join(parts)


def no_ci_reason(m: Metrics) -> str | None:
    """Why ``m`` has no confidence intervals (from its notes), or None when it has some."""
    if any(m.ci.values()):
        return None
    for note in m.notes:
        if note.startswith("ci:"):
            return note.removeprefix("ci:").strip()
    return "too few annotated pairs for the bootstrap"


def _table(
    header: list[str],
    rows: list[list[str]],
    numeric: set[int] | None = None,
    widths: tuple[str, ...] | None = None,
) -> str:
    """A table; ``widths`` fixes the column widths (the table then fits the page width)."""
    numeric = numeric or set()
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{html.escape(c)}</td>' if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    if widths:
        cols = "".join(f'<col style="width:{w}">' for w in widths)
        return f'<table class="wide"><colgroup>{cols}</colgroup><tr>{head}</tr>{body}</table>'
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def _group_table(values: dict[str, Metrics]) -> str:
    """One row per group value; the CI columns only when some group has an interval."""
    with_ci = any(any(g.ci.values()) for g in values.values())
    header = ["Group", "n", "Agreement", "95% CI", "κ", "Weighted κ", "ρ", "95% CI", "Calibrated"]
    rows = [
        [
            html.escape(v),
            str(g.n_annotations),
            fmt(g.agreement_rate),
            fmt_ci(g.ci.get("agreement_rate")),
            fmt(g.cohen_kappa),
            fmt(g.weighted_kappa),
            fmt(g.spearman_rho),
            fmt_ci(g.ci.get("spearman_rho")),
            fmt(g.calibrated),
        ]
        for v, g in values.items()
    ]
    if not with_ci:
        drop = {3, 7}
        header = [h for i, h in enumerate(header) if i not in drop]
        rows = [[c for i, c in enumerate(r) if i not in drop] for r in rows]
    return _table(header, rows, numeric=set(range(1, len(header))))


def render_html(report: CalibrationReport) -> str:
    """The whole report as one HTML document."""
    e = html.escape
    m = report.overall
    plots = [confusion_plot(m), reliability_plot(m), signal_plot(report.signals)]
    plots += [group_plot(by, values) for by, values in report.groups.items()]
    imgs = "".join(f'<img alt="plot" src="{p}">' for p in plots if p)
    reason = no_ci_reason(m)
    ci_sentence = (
        f"95% CIs from a cluster bootstrap by report "
        f"({report.settings.get('bootstrap_resamples')} resamples)."
        if reason is None
        else f"No confidence intervals: {reason}."
    )
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>citecal calibration: {e(report.input)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Judge calibration: {e(report.input)}</h1>",
        f"<p>{m.n_records} records, {m.n_annotations} annotations, {m.n_annotators} annotators, "
        f"{m.n_reports} reports. {e(ci_sentence)}</p>",
        _table(
            ["Figure", "Value", "95% CI"] if reason is None else ["Figure", "Value"],
            [[e(a), b, c][: 3 if reason is None else 2] for a, b, c in figure_rows(m)],
            numeric={1, 2},
        ),
        f'<h2>Plots</h2><div class="plots">{imgs}</div>',
    ]
    if report.signals:
        parts.append(f"<h2>{e(SIGNALS_TITLE)}</h2>")
        parts.append(
            _table(
                list(SIGNALS_HEADER),
                [[e(c) for c in r] for r in signal_rows(report)],
                numeric=set(range(1, 7)),
            )
        )
    for by, values in report.groups.items():
        parts.append(f"<h2>By {e(by)}</h2>")
        parts.append(_group_table(values))
    parts.append(f"<h2>Disagreements ({len(report.disagreements)})</h2>")
    parts.append(
        _table(
            ["Category", "Count", "Meaning"],
            [[e(k), str(v), e(CATEGORY_HELP[k])] for k, v in report.categories.items()],
            numeric={1},
        )
    )
    if report.disagreements:
        parts.append(
            _table(
                [
                    "Type",
                    "Category",
                    "Citation",
                    "Claim",
                    "Cited code",
                    "Judge",
                    "Human",
                    "Reasoning",
                    "Notes",
                ],
                [
                    [
                        breakable(d.type),
                        breakable(d.category),
                        breakable(d.citation or ""),
                        _inline(d.claim or ""),
                        code_html(d.cited_code or ""),
                        e(f"{d.judge_verdict or ''} {fmt(d.judge_score, 2)}"),
                        str(d.human_score),
                        _inline(d.reasoning or ""),
                        _inline(" ".join(x for x in (d.notes, d.correction) if x)),
                    ]
                    for d in report.disagreements
                ],
                numeric={6},
                widths=DISAGREEMENT_WIDTHS,
            )
        )
    if report.compare is not None:
        c = report.compare
        parts.append(f"<h2>Comparison: B = {e(c.b)} vs A = {e(c.a)}</h2>")
        parts.append(
            _table(
                ["Figure", "A", "B", "B − A", "95% CI (paired)"],
                [
                    [e(n), fmt(d.a), fmt(d.b), fmt(d.diff), fmt_ci(d.ci)]
                    for n, d in c.figures.items()
                ],
                numeric={1, 2, 3, 4},
            )
        )
        verdict = (
            "B is significantly worse"
            if c.significantly_worse
            else "B is significantly better"
            if c.significantly_better
            else "no significant difference"
        )
        parts.append(
            f"<p>McNemar exact test on records: only A right {c.mcnemar_b01}, only B right "
            f"{c.mcnemar_b10}, p = {fmt(c.mcnemar_p)}: <b>{verdict}</b>.</p>"
        )
        parts.append(f'<div class="plots"><img alt="comparison" src="{comparison_plot(c)}"></div>')
        if c.flipped:
            parts.append(
                _table(
                    ["Record", "Effect", "A", "B", "Human median", "Claim", "Citation"],
                    [
                        [
                            e(f.record_id),
                            e(f.effect),
                            e(f.verdict_a or ""),
                            e(f.verdict_b or ""),
                            fmt(f.human_median, 1),
                            e(f.claim or ""),
                            e(f.citation or ""),
                        ]
                        for f in c.flipped
                    ],
                )
            )
    if report.estimate is not None:
        est = report.estimate
        parts.append("<h2>Corrected precision (PPI++)</h2>")
        parts.append(
            f"<p>The share of the {est.n_judged:,} judged citations people would say support "
            f"their claims, from the judge corrected by {est.n_labelled} labels; valid when the "
            "labelled records are a random sample of the judged ones (README "
            f"&ldquo;Estimates&rdquo;). Sampling: {e(est.sampling)}.</p>"
        )
        parts.append(f'<div class="plots"><img alt="estimate" src="{estimate_plot(est)}"></div>')
    checks = check_lines(report)
    if checks:
        parts.append(
            "<h2>Checks</h2><ul>" + "".join(f"<li>{e(c.strip())}</li>" for c in checks) + "</ul>"
        )
    if m.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in m.notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
