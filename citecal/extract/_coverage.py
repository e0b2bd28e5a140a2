"""Coverage (README "`citecal eval`"): the share of claim sentences that carry a citation."""

from __future__ import annotations

from collections.abc import Sequence

from citecal.models import Claim


def coverage(claims: Sequence[Claim]) -> tuple[int, int, float | None]:
    """``(total_claims, cited_claims, cited / total)``; the rate is None when there are no claims.

    None rather than 0 or 1: a report with no claims is neither fully
    covered nor uncovered, and the JSON contract reports such rates as null.
    """
    total = len(claims)
    cited = sum(1 for c in claims if c.cited)
    return total, cited, (cited / total if total else None)
