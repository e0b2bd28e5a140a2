"""Markdown for pasting into a pull request: summary, failed citations, all citations.

Everything taken from the report, the repository or the judge (claims,
citations, reasons, warnings, the report's name) is escaped by
:mod:`citecal._markup`: it shows as text, never as HTML, a link or an image
(README "Security").
"""

from __future__ import annotations

from citecal._markup import md_code, md_line
from citecal.models import EvalResult
from citecal.render._format import (
    SUMMARY_ROWS,
    band_line,
    excerpt_note,
    outcome_label,
    pct,
    review_rows,
    review_title,
    shorten,
)


def render_markdown(result: EvalResult) -> str:
    """A self-contained Markdown document (GitHub-flavoured tables)."""
    s = result.summary.model_dump()
    out = [f"## citecal: {md_line(result.report)}", ""]
    out += ["| metric | value |", "|---|---:|"]
    for label, count, rate_field in SUMMARY_ROWS:
        value = " ".join(
            part
            for part in (str(s[count]) if count else "", pct(s[rate_field]) if rate_field else "")
            if part
        )
        out.append(f"| {label} | {value} |")
    out.append(f"| Cost | ${s['cost_usd']:.4f} |")
    if s["excerpt_checked"]:
        out.append(f"| Excerpts found | {s['excerpt_verified']}/{s['excerpt_checked']} |")
    out.append("")
    if result.warnings:
        out += [f"> **Warning:** {md_line(w)}" for w in result.warnings]
        out.append("")
    if result.summary.risk_bands:
        out += [md_line(band_line(result)), ""]
    shift = result.summary.shift
    if shift is not None and shift.shifted:
        out += [f"> **Note:** {md_line(shift.message)}", ""]
    if result.summary.review_size:
        out += [f"### {md_line(review_title(result))}", ""]
        out += ["| rank | citation | p_supports | claim | why | probably belongs |"]
        out += ["|---:|---|---:|---|---|---|"]
        for r in review_rows(result):
            why = "; ".join(r.risk_evidence)
            place = md_code(r.proposed_citation) if r.proposed_citation else ""
            p = "" if r.p_supports is None else f"{r.p_supports:.2f}"
            out.append(
                f"| {r.risk_rank} | {md_code(r.citation)} | {p} "
                f"| {md_line(shorten(r.claim, 120))} | {md_line(shorten(why, 200))} | {place} |"
            )
        out.append("")
    if result.gate is not None:
        out += [f"**Gate: {result.gate.status}**", ""]
        out += [f"- {md_line(r)}" for r in result.gate.reasons]
        out.append("")
    if result.failed_citations:
        out += [f"### Failed citations ({len(result.failed_citations)})", ""]
        out += ["| citation | failure | action | claim | why |", "|---|---|---|---|---|"]
        for r in result.failed_citations:
            why = r.error or r.hint or r.reasoning or ""
            out.append(
                f"| {md_code(r.citation)} | {r.failure_type} | {r.suggested_action} "
                f"| {md_line(shorten(r.claim, 120))} | {md_line(shorten(why, 160))} |"
            )
        out.append("")
    out += ["<details><summary>All citations</summary>", ""]
    excerpts = any(r.excerpt_status is not None for r in result.citations)
    head = "| # | citation | outcome | mode | score | claim |"
    rule = "|---:|---|---|---|---:|---|"
    if excerpts:
        head, rule = head + " excerpt |", rule + "---|"
    out += [head, rule]
    for n, r in enumerate(result.citations, 1):
        score = "" if r.score is None else f"{r.score:.2f}"
        row = (
            f"| {n} | {md_code(r.citation)} | {outcome_label(r.verdict, r.valid)} | {r.mode or ''} "
            f"| {score} | {md_line(shorten(r.claim, 120))} |"
        )
        if excerpts:
            row += f" {md_line(excerpt_note(r))} |"
        out.append(row)
    out += ["", "</details>", ""]
    if result.uncited_claims:
        out += [f"### Uncited claims ({len(result.uncited_claims)})", ""]
        out += [f"- {md_line(shorten(c, 200))}" for c in result.uncited_claims]
        out.append("")
    return "\n".join(out)
