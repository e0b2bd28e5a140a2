"""Small formatting helpers shared by the human-readable renderers."""

from __future__ import annotations

from citecal.models import CitationResult


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
