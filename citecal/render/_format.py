"""Small formatting helpers shared by the human-readable renderers."""

from __future__ import annotations

from citecal.models import CitationResult, EvalResult


def pct(value: float | None) -> str:
    """A rate as a percentage, or an em dash when it is undefined (denominator 0)."""
    return "—" if value is None else f"{value:.1%}"


def shorten(text: str, width: int) -> str:
    """One line, cut with an ellipsis, so long claims do not wreck table layout."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def outcome_label(verdict: str | None, valid: bool) -> str:
    """The word a reader scans for in the outcome column."""
    if not valid:
        return "invalid"
    return verdict or "—"


SUMMARY_ROWS: tuple[tuple[str, str, str | None], ...] = (
    ("Citations", "total_citations", None),
    ("Valid", "valid_citations", "validity_rate"),
    ("Extractive supported", "extractive_supports", "extractive_precision"),
    ("Abstractive supported", "abstractive_supports", "abstractive_precision"),
    ("Overall precision", "", "overall_precision"),
    ("Decided", "decided", "decision_coverage"),
    ("Precision (decided)", "", "decided_precision"),
    ("Unverified", "unverified", None),
    ("Claims cited", "cited_claims", "coverage"),
    ("LLM calls", "llm_calls", None),
    ("LLM tokens", "llm_tokens", None),
)
"""(label, count field, rate field) rows of the summary, shared by table and Markdown."""


def excerpt_note(r: CitationResult) -> str:
    """One line on an excerpt citation's check (README "Excerpt citations"), or "" for others."""
    if r.excerpt_status is None:
        return ""
    words = {
        "verified": "excerpt found",
        "failed": "excerpt not checked: no such item or location",
    }
    if r.excerpt_status == "unverified":
        head = "no excerpt to check" if r.excerpt is None else "excerpt not found"
    else:
        head = words[r.excerpt_status]
    parts = [f"{head} ({r.excerpt_status}, {r.excerpt_confidence})"]
    if r.located:
        parts.append(r.located)
    m = r.excerpt_match
    if m is not None and r.excerpt_status != "verified":
        lines = (
            f"line {m.start_line}"
            if m.start_line == m.end_line
            else f"lines {m.start_line}-{m.end_line}"
        )
        parts.append(f"best match {lines} ({m.score:.2f})")
    return "; ".join(parts)


def review_rows(result: EvalResult) -> list[CitationResult]:
    """The review list: the riskiest valid citations, most likely unsupported first."""
    n = result.summary.review_size
    rows = [r for r in result.citations if r.risk_rank is not None and r.risk_rank <= n]
    return sorted(rows, key=lambda r: r.risk_rank or 0)


def review_title(result: EvalResult) -> str:
    s = result.summary
    labels = sum(b.labels for b in s.risk_bands)
    return (
        f"Most likely unsupported ({s.review_size} of {s.valid_citations} valid citations, "
        f"ranked by p_supports: an expectation from {labels} labelled citations, "
        "not a guarantee)"
    )


def band_line(result: EvalResult) -> str:
    """The report's valid citations per risk band, with what the labels expect of each band."""
    parts = []
    for b in result.summary.risk_bands:
        expect = "—" if b.expected_unsupported is None else f"~{b.expected_unsupported:.0%}"
        parts.append(f"{b.name} {b.citations} ({expect})")
    return "Risk bands (in brackets: unsupported in that band of the labels): " + ", ".join(parts)


def review_detail(r: CitationResult) -> list[str]:
    """The lines under a review-list entry: evidence, then the probable place."""
    lines = list(r.risk_evidence)
    if r.proposed_citation:
        lines.append(f"probably belongs at {r.proposed_citation}")
    return lines
