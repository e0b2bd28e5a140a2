"""The review list: the citations most likely unsupported, first (docs/explanation/cascade.md).

Without a judge most citations stay ``unverified``; the local verifier's
calibrated ``p_supports`` still ranks them. Every valid row gets its rank by
risk (1 = most likely unsupported) and its risk band; the first ``n`` get the
evidence behind the doubt — content names missing from the range, where those
names are, a better-matching window of the same file — and the place the claim
most likely belongs, from the correction index, without a judge. The summary
counts the report's citations per band next to the share people found
unsupported in that band of the calibration labels (an expectation from those
labels, never a guarantee), and says when the report's scores look unlike the
calibration labels' (the shift check).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from citecal.cascade._calibration import (
    SHIFT_LEVEL,
    Calibrator,
    band_of,
    risk_ranks,
    shift_check,
)
from citecal.cascade._features import best_window, claim_keys
from citecal.models import Citation, CitationResult, RiskBandCount, ShiftCheck

if TYPE_CHECKING:
    from citecal.config import Config
    from citecal.source import SourceStore

DEFAULT_REVIEW = 10
"""Citations the review list shows unless ``--review N`` says otherwise."""

PROPOSE_BELOW = 0.65
"""A place is proposed only for a citation this doubtful (the high and elevated bands, where
people found at least ~40% unsupported): for a likely-fine citation it would be noise."""


def rank_rows(rows: Sequence[CitationResult], calibrator: Calibrator) -> list[CitationResult]:
    """Each valid row with a ``p_supports`` gets its risk rank and band."""
    ranks = risk_ranks([r.p_supports if r.valid else None for r in rows])
    out = []
    for r, rank in zip(rows, ranks, strict=True):
        if rank is None or r.p_supports is None:
            out.append(r)
            continue
        band = band_of(r.p_supports, calibrator.bands) or None
        out.append(r.model_copy(update={"risk_rank": rank, "risk_band": band}))
    return out


def band_counts(rows: Sequence[CitationResult], calibrator: Calibrator) -> list[RiskBandCount]:
    """The report's valid citations per band, with the calibration labels' unsupported share."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.risk_band is not None:
            counts[r.risk_band] = counts.get(r.risk_band, 0) + 1
    return [
        RiskBandCount(
            name=b.name,  # type: ignore[arg-type]
            lower=b.lower,
            upper=b.upper,
            citations=counts.get(b.name, 0),
            expected_unsupported=b.share,
            labels=b.labels,
        )
        for b in calibrator.bands
    ]


def shift_of(rows: Sequence[CitationResult], calibrator: Calibrator) -> ShiftCheck | None:
    """Are the report's scores like the calibration labels'? (two-sample KS, scipy)."""
    scores = [r.p_supports for r in rows if r.valid and r.p_supports is not None]
    p = shift_check(scores, calibrator.scores)
    if p is None:
        return None
    shifted = p < SHIFT_LEVEL
    message = (
        f"this report's verifier scores are unlike the {len(calibrator.scores)} calibration "
        f"labels' (KS p = {p:.2g}): the risk bands' expectations and the cascade's thresholds "
        "may not hold here; calibrate on your own labels (citecal calibrate --write-cascade FILE)"
        if shifted
        else f"this report's verifier scores look like the calibration labels' (KS p = {p:.2g})"
    )
    return ShiftCheck(
        test="kolmogorov-smirnov",
        p_value=round(p, 6),
        shifted=shifted,
        level=SHIFT_LEVEL,
        message=message,
    )


def evidence(row: CitationResult, lines: tuple[str, ...]) -> list[str]:
    """What makes the verifier doubt ``row``, in short phrases a person can check."""
    out: list[str] = []
    if row.missing_terms:
        names = ", ".join(f"`{t}`" for t in row.missing_terms[:5])
        out.append(f"not in the cited lines: {names}")
    if row.hint:
        out.append(row.hint)
    found = best_window(lines, claim_keys(row.claim), row.start_line, row.end_line)
    if found is not None:
        cited, best, first = found
        if best >= cited + 2:  # one word more is chance, not evidence
            last = min(len(lines), first + row.end_line - row.start_line)
            where = f"line {first} holds" if last == first else f"lines {first}-{last} hold"
            out.append(f"{where} {best} of the claim's words and names (the cited lines {cited})")
    return out


def review(
    rows: Sequence[CitationResult],
    store: SourceStore,
    n: int,
    config: Config | None = None,
) -> list[CitationResult]:
    """The first ``n`` rows by risk rank get their evidence, the doubtful ones a proposed place."""
    chosen = sorted(
        (i for i, r in enumerate(rows) if r.risk_rank is not None and r.risk_rank <= n),
        key=lambda i: rows[i].risk_rank or 0,
    )
    if not chosen:
        return list(rows)
    from citecal.correct import propose_places
    from citecal.source import SourceFileError

    doubtful = [i for i in chosen if (rows[i].p_supports or 0.0) < PROPOSE_BELOW]
    found = propose_places(
        store,
        [
            (rows[i].claim, Citation(rows[i].file_path, rows[i].start_line, rows[i].end_line))
            for i in doubtful
        ],
        config,
    )
    places = dict(zip(doubtful, found, strict=True))
    out = list(rows)
    cache: dict[str, tuple[str, ...]] = {}
    for i in chosen:
        place = places.get(i)
        r = rows[i]
        if r.file_path not in cache:
            try:
                cache[r.file_path] = tuple(store.read(r.file_path).text.splitlines())
            except SourceFileError:
                cache[r.file_path] = ()
        out[i] = r.model_copy(
            update={
                "risk_evidence": evidence(r, cache[r.file_path]),
                "proposed_citation": str(place) if place is not None else None,
            }
        )
    return out


__all__ = ["DEFAULT_REVIEW", "band_counts", "evidence", "rank_rows", "review", "shift_of"]
