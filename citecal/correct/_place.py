"""Where a doubtful citation's claim most likely belongs, without a judge (the review list).

docs/explanation/cascade.md, "The review list": for the citations the local
verifier doubts most, the correction index's ranking (:meth:`Locator.rank`:
the claim's names and definitions, BM25 over the code's words, closeness to
the original) proposes a place in the cited file, cut to the smallest window
holding the claim's strong terms. Nothing here verifies the place — that is
what ``citecal correct`` does — so the review list shows it as "probably", for
a person to look at. Natural reports miss by lines, not files (on the ground
truth, 136 of the 137 unsupported natural citations belong in the cited file),
so only the cited files are indexed: a handful of files, fast at any report
size.
"""

from __future__ import annotations

from collections.abc import Sequence

from citecal.config import Config
from citecal.correct._index import RepoIndex
from citecal.correct._locate import Locator, smallest_window
from citecal.correct._query import claim_query
from citecal.errors import InputError
from citecal.models import Citation
from citecal.source import SourceStore


def propose_places(
    store: SourceStore,
    claims: Sequence[tuple[str, Citation]],
    config: Config | None = None,
    *,
    bm25: bool = False,
) -> list[Citation | None]:
    """For each (claim, citation): the best-ranked other place in its file, or None.

    ``bm25``: rank with BM25 too (loads ``bm25s`` and numba; within one file the
    claim's names and words rank as well without it: ``benchmarks/review_list.py``).
    """
    if not claims:
        return []
    paths = sorted({c.file_path for _, c in claims})
    try:
        index = RepoIndex.build(store, paths=paths, bm25=bm25)
    except InputError:  # no file of a language citecal parses: nothing to propose
        return [None] * len(claims)
    locator = Locator(index, config or Config())
    out: list[Citation | None] = []
    for claim, original in claims:
        out.append(_best(locator, index, claim, original))
    return out


def _best(locator: Locator, index: RepoIndex, claim: str, original: Citation) -> Citation | None:
    if original.file_path not in index.files:
        return None
    query = claim_query(claim, index.project)
    if not query.strong and not query.words:
        return None
    for ranked in locator.rank(query, original):
        chunk = index.chunks[ranked.chunk]
        if chunk.path != original.file_path:
            continue  # another review entry's file: not where this claim was cited
        window = smallest_window(index, chunk.path, chunk.start_line, chunk.end_line, query)
        spans = ([window] if window is not None else []) + [(chunk.start_line, chunk.end_line)]
        for lo, hi in spans:
            place = Citation(chunk.path, lo, hi)
            if place != original:
                return place
    return None


__all__ = ["propose_places"]
