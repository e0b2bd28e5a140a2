"""Which citations to send to annotators when there are more than they can rate.

Pure functions over :class:`~citecal.models.CitationResult`; deterministic for
a given seed so a re-push picks the same records (and upserts them instead of
adding new ones).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from citecal.models import CitationResult, support_score

Strategy = Literal["all", "uncertain", "stratified", "active", "abstained"]
STRATEGIES: tuple[Strategy, ...] = ("all", "uncertain", "stratified", "active", "abstained")
ABSTAINED_FLOOR = 0.1
"""``abstained``: the share of the sample drawn uniformly from the decided citations, so
every citation can be drawn and ``estimate`` stays valid (README "The cascade")."""


def abstained(c: CitationResult) -> bool:
    """The cascade sent this citation to a person (README "The cascade")."""
    return c.verdict == "unverified" and c.suggested_action == "annotate"


def abstained_group(c: CitationResult) -> tuple[str, str]:
    """The two strata of ``--strategy abstained``: sent to a person, or decided."""
    return ("abstained", "") if abstained(c) else ("decided", "")


FLOOR = 0.3
"""Share of the active design that is uniform (README "How many labels").

Each record's inclusion probability is ``c·(FLOOR + (1 − FLOOR)·u/ū)``: at
least ``FLOOR × n/N`` however certain the judge is, so a judge whose
confidence is noise costs little (a few per cent of width) while an
informative one saves a quarter or more of it."""

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


def active_uncertainty(citation: Judged) -> float:
    """How much a label of this citation is worth to the active design, in [0, 1].

    1 for a cascade abstention (verdict ``unverified``, suggested action
    ``annotate``), a verdict without a score, or a disagreement between tiers
    (rule versus judge, first judge versus escalation); else the standard
    deviation of a label the calibrated support score ``s`` predicts, scaled
    to 1 at s = 0.5: ``2·√(s(1 − s))``. Sampling proportionally to it is the
    variance-optimal choice of Zrnic & Candès (2024) for a calibrated judge.
    A judged row's numeric ``confidence_value`` c (how likely its verdict is
    right, README "Judge confidence") is that number when present: the label is
    the verdict with probability c, so its spread is ``2·√(c(1 − c))``.
    """
    if citation.verdict in (None, "unverified") or rule_judge_conflict(citation):
        return 1.0
    value = getattr(citation, "confidence_value", None)
    if value is not None and getattr(citation, "method", None) == "llm":
        c = min(1.0, max(0.0, float(value)))
        return 2.0 * math.sqrt(c * (1.0 - c))
    score = support_score(citation.verdict, citation.confidence or "low", citation.score)
    if score is None:
        return 1.0
    s = min(1.0, max(0.0, float(score)))
    return 2.0 * math.sqrt(s * (1.0 - s))


@dataclass(frozen=True, slots=True)
class ActiveDesign:
    """One round's active design: ``π(u) = min(1, scale·(floor + (1 − floor)·u/mean_u))``.

    Kept as its three numbers so a later round can tell the probability any
    record had in this one, drawn or not (README "How many labels").
    """

    scale: float
    mean_u: float
    floor: float

    def probability(self, u: float) -> float:
        """Inclusion probability of a record of uncertainty ``u``."""
        q = self.floor + (1.0 - self.floor) * (u / self.mean_u if self.mean_u > 0 else 1.0)
        return 1.0 if math.isinf(self.scale) else min(1.0, self.scale * q)


def active_probabilities(
    uncertainties: Sequence[float], n: float, floor: float = FLOOR
) -> tuple[list[float], ActiveDesign]:
    """Inclusion probabilities summing to ``n``: uncertainty mixed with a uniform floor.

    ``q_i = floor + (1 − floor)·u_i/ū`` (mean 1), ``π_i = min(1, c·q_i)``
    with the scale ``c`` found so that ``Σ π_i = n`` (records capped at 1 are
    certain to be drawn). Every π_i ≥ ``floor·n/N``.

    Raises:
        ValueError: ``floor`` outside (0, 1].
    """
    if not 0.0 < floor <= 1.0:
        raise ValueError(f"floor must be in (0, 1], got {floor}")
    u = [min(1.0, max(0.0, float(x))) for x in uncertainties]
    size = len(u)
    mean_u = sum(u) / size if size else 0.0
    if size == 0 or n <= 0:
        return [0.0] * size, ActiveDesign(0.0, mean_u, floor)
    if n >= size:
        return [1.0] * size, ActiveDesign(math.inf, mean_u, floor)
    q = [floor + (1.0 - floor) * (x / mean_u if mean_u > 0 else 1.0) for x in u]
    capped: set[int] = set()
    while True:
        free = sum(q[i] for i in range(size) if i not in capped)
        scale = (n - len(capped)) / free
        over = {i for i in range(size) if i not in capped and scale * q[i] >= 1.0}
        if not over:
            break
        capped |= over
    design = ActiveDesign(scale, mean_u, floor)
    return [1.0 if i in capped else scale * q[i] for i in range(size)], design


def poisson_draw(probabilities: Sequence[float], seed: int) -> list[int]:
    """Indices drawn independently, each with its probability (Poisson sampling).

    Independent draws make the inverse-probability estimator and its variance
    exact (README "How many labels"); the sample size is random around Σ π.
    """
    rng = random.Random(seed)
    return [i for i, p in enumerate(probabilities) if rng.random() < p]


def cumulative_probability(per_round: Sequence[float]) -> float:
    """Probability a record is drawn in any round: ``1 − Π (1 − π_t)``.

    Round t draws only from records no earlier round drew, with probability
    ``π_t`` each; a record escapes every round with probability ``Π (1 − π_t)``.
    """
    escape = 1.0
    for p in per_round:
        escape *= 1.0 - p
    return 1.0 - escape


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
    - ``abstained``: what the cascade sent to a person first (README "The
      cascade"), with at least a tenth of the sample drawn uniformly from the
      decided citations: two strata, each drawn uniformly, so the weights of
      :func:`sampling_weights` keep ``estimate`` valid.
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
    elif strategy == "abstained":
        rng = random.Random(seed)
        sent = [c for c in pool if abstained(c)]
        rest = [c for c in pool if not abstained(c)]
        floor = min(len(rest), max(1, round(n * ABSTAINED_FLOOR))) if rest else 0
        take = min(len(sent), n - floor)
        chosen = rng.sample(sent, take) + rng.sample(rest, min(len(rest), n - take))
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
