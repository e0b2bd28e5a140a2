"""Which citations to send to annotators when there are more than they can rate.

Pure functions over :class:`~citecal.models.CitationResult`; deterministic for
a given seed so a re-push picks the same records (and upserts them instead of
adding new ones).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from citecal.models import CitationResult, support_score

Strategy = Literal["all", "uncertain", "stratified"]
STRATEGIES: tuple[Strategy, ...] = ("all", "uncertain", "stratified")

_SUPPORTS_COVERAGE = 0.8
_FAILS_COVERAGE = 0.5


class _Escalation(Protocol):
    @property
    def verdict(self) -> str: ...


class Judged(Protocol):
    """The fields sampling looks at: a CitationResult, or a row read with only those columns."""

    @property
    def verdict(self) -> str | None: ...
    @property
    def confidence(self) -> str | None: ...
    @property
    def score(self) -> float | None: ...
    @property
    def method(self) -> str | None: ...
    @property
    def matched_terms(self) -> Sequence[str]: ...
    @property
    def missing_terms(self) -> Sequence[str]: ...
    @property
    def escalated_from(self) -> _Escalation | None: ...


def term_coverage(citation: Judged) -> float | None:
    """Share of the claim's terms found in the cited code, when term matching ran."""
    total = len(citation.matched_terms) + len(citation.missing_terms)
    return len(citation.matched_terms) / total if total else None


def rule_judge_conflict(citation: Judged) -> bool:
    """True when the term-matching rule and the LLM judge disagree.

    Either the judge's verdict contradicts the term coverage (most terms found
    but "not_supports", or few found but "supports"), or an escalated verdict
    overturned the first judge's.
    """
    if citation.escalated_from is not None and citation.escalated_from.verdict != citation.verdict:
        return True
    if citation.method != "llm":
        return False
    coverage = term_coverage(citation)
    if coverage is None:
        return False
    if citation.verdict == "not_supports" and coverage >= _SUPPORTS_COVERAGE:
        return True
    return citation.verdict == "supports" and coverage < _FAILS_COVERAGE


def uncertainty(citation: Judged) -> float:
    """1 when the support score is 0.5 (or unknown), 0 when it is 0 or 1."""
    if citation.verdict is None:
        return 1.0
    score = support_score(citation.verdict, citation.confidence or "low", citation.score)
    if score is None:
        return 1.0
    return 1.0 - abs(2.0 * float(score) - 1.0)


def select_citations(
    citations: Sequence[CitationResult],
    n: int | None,
    strategy: Strategy = "all",
    seed: int = 0,
) -> list[CitationResult]:
    """Pick at most ``n`` citations (all when ``n`` is None), kept in report order.

    - ``all``: a uniform random sample.
    - ``uncertain``: rule-versus-judge conflicts first, then the least
      confident verdicts (support score nearest 0.5), then report order.
    - ``stratified``: round-robin over (mode, verdict) groups, so rare kinds
      of claims and verdicts are represented.
    """
    pool = list(citations)
    if n is None or n >= len(pool):
        chosen = pool
    elif n <= 0:
        chosen = []
    elif strategy == "all":
        chosen = random.Random(seed).sample(pool, n)
    elif strategy == "uncertain":
        ranked = sorted(
            enumerate(pool),
            key=lambda ic: (not rule_judge_conflict(ic[1]), -uncertainty(ic[1]), ic[0]),
        )
        chosen = [c for _, c in ranked[:n]]
    elif strategy == "stratified":
        rng = random.Random(seed)
        groups: dict[tuple[str, str], list[CitationResult]] = defaultdict(list)
        for c in pool:
            groups[citation_group(c)].append(c)
        queues = []
        for key in sorted(groups):
            members = groups[key][:]
            rng.shuffle(members)
            queues.append(members)
        chosen = []
        while len(chosen) < n:
            for queue in queues:
                if queue and len(chosen) < n:
                    chosen.append(queue.pop())
    else:
        raise ValueError(f"unknown sampling strategy: {strategy}")
    order = {id(c): i for i, c in enumerate(pool)}
    return sorted(chosen, key=lambda c: order[id(c)])


K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Candidate(Generic[K]):
    """One citation of a batch output, reduced to what sampling across reports needs."""

    key: K
    repo: str
    verdict: str | None
    conflict: bool
    uncertainty: float


def sample_across_reports(
    candidates: Sequence[Candidate[K]],
    n: int | None,
    strategy: Strategy = "stratified",
    seed: int = 0,
) -> list[K]:
    """Keys of at most ``n`` citations drawn from many reports (``citecal push citations.parquet``).

    - ``stratified``: round-robin over (repository, verdict) groups, each
      group shuffled with ``seed``, so every repository and every verdict is
      represented before any group gets a second pick (README "Many reports").
    - ``all``: a uniform random sample; ``uncertain``: rule-versus-judge
      conflicts first, then the least confident verdicts.

    Deterministic for a seed, and returned in input order, so a re-push picks
    the same records.
    """
    pool = list(candidates)
    if n is None or n >= len(pool):
        chosen = pool
    elif n <= 0:
        chosen = []
    elif strategy == "all":
        chosen = random.Random(seed).sample(pool, n)
    elif strategy == "uncertain":
        ranked = sorted(
            enumerate(pool), key=lambda ic: (not ic[1].conflict, -ic[1].uncertainty, ic[0])
        )
        chosen = [c for _, c in ranked[:n]]
    elif strategy == "stratified":
        rng = random.Random(seed)
        groups: dict[tuple[str, str], list[Candidate[K]]] = defaultdict(list)
        for c in pool:
            groups[candidate_group(c)].append(c)
        queues = []
        for group in sorted(groups):
            members = groups[group][:]
            rng.shuffle(members)
            queues.append(members)
        chosen = []
        while len(chosen) < n:
            for queue in queues:
                if queue and len(chosen) < n:
                    chosen.append(queue.pop())
    else:
        raise ValueError(f"unknown sampling strategy: {strategy}")
    picked = {id(c) for c in chosen}
    return [c.key for c in pool if id(c) in picked]


Item = TypeVar("Item")


def sampling_weights(
    pool: Sequence[Item],
    chosen: Sequence[Item],
    strategy: Strategy,
    group: Callable[[Item], Hashable],
) -> tuple[dict[int, float] | None, str]:
    """Inverse inclusion probability of each chosen item (keyed by ``id()``) and the design.

    What makes ``citecal estimate``'s interval valid (README "Estimates"):
    ``all`` draws uniformly, so every item had probability n/N; ``stratified``
    draws n_g uniformly within each group of N_g (the round-robin fixes n_g,
    the shuffle makes the pick uniform), so N_g/n_g; everything chosen is a
    census (weight 1). ``uncertain`` picks deterministically: no weight exists,
    and the design is recorded so estimate can refuse it.
    """
    if len(chosen) >= len(pool):
        return {id(c): 1.0 for c in chosen}, "census"
    if strategy == "uncertain":
        return None, "uncertain"
    if strategy == "all":
        w = len(pool) / len(chosen) if chosen else 0.0
        return {id(c): w for c in chosen}, "all"
    sizes: dict[Hashable, int] = defaultdict(int)
    picks: dict[Hashable, int] = defaultdict(int)
    for c in pool:
        sizes[group(c)] += 1
    for c in chosen:
        picks[group(c)] += 1
    return {id(c): sizes[group(c)] / picks[group(c)] for c in chosen}, "stratified"


def citation_group(c: CitationResult) -> tuple[str, str]:
    """The (mode, verdict) group :func:`select_citations` stratifies by."""
    return (c.mode or "unknown", c.verdict or "none")


def candidate_group(c: Candidate[K]) -> tuple[str, str]:
    """The (repository, verdict) group :func:`sample_across_reports` stratifies by."""
    return (c.repo, c.verdict or "none")
