"""Designs ``push`` records: a seeded random serving order, and rounds of active sampling.

Pure except :func:`read_prior`, which reads the hidden sampling metadata of a
dataset's records. What is recorded here comes back through ``pull`` as the
annotation table's ``sampling_*`` columns, and is what lets ``citecal
estimate`` say whether its interval is valid (README "Estimates", "How many
labels").
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import argilla as rg

from citecal.annotate._client import argilla_errors
from citecal.annotate._records import AnnotationRecord, RecordValue
from citecal.annotate._sampling import (
    FLOOR,
    ActiveDesign,
    active_probabilities,
    cumulative_probability,
    poisson_draw,
)

ORDER_KEY = "_sampling_order"
"""Hidden metadata: the record's place in the seeded random order it was pushed in."""


def in_random_order(
    records: Sequence[AnnotationRecord],
    seed: int,
    known: Mapping[str, int] | None = None,
) -> tuple[AnnotationRecord, ...]:
    """``records`` shuffled with ``seed``, each with its place as ``_sampling_order``.

    Argilla serves a dataset's records in the order they were inserted, so
    pushing them shuffled makes the first ones labelled a uniform random subset
    (README "Estimates": a partly labelled census is then still a random
    sample). Records already on the server (``known``: id → place) keep their
    place; new ones follow, shuffled.
    """
    known = known or {}
    fresh = [r for r in records if r.id not in known]
    random.Random(seed).shuffle(fresh)
    start = max(known.values(), default=-1) + 1
    place = {r.id: start + i for i, r in enumerate(fresh)} | dict(known)
    ordered = sorted(records, key=lambda r: place[r.id])
    return tuple(
        dataclasses.replace(r, metadata={**r.metadata, ORDER_KEY: place[r.id]}) for r in ordered
    )


@dataclass(frozen=True, slots=True)
class PriorDesign:
    """What earlier pushes recorded on a dataset's records."""

    strategies: frozenset[str]
    """Designs of the records already there (``census``, ``all``, ``active``, …)."""
    probabilities: Mapping[str, tuple[float, ...]]
    """Active records: id → the probability they had in each earlier round."""
    rounds_of: Mapping[str, int]
    """Active records: id → the round that drew them."""
    designs: tuple[ActiveDesign, ...]
    """Each earlier active round's design (what any record's probability was)."""
    drawn: tuple[int, ...]
    """Records each earlier active round drew."""
    orders: Mapping[str, int]
    """Id → place in the serving order, for records pushed in a recorded random order."""
    hashes: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    """Id → content hash of every record there (``push`` sends only what changed)."""
    found: bool = False
    """Whether the dataset existed when this was read."""
    recorded: Mapping[str, tuple[str | None, float | None]] = dataclasses.field(
        default_factory=dict
    )
    """Id → the (design, weight) its record carries, as ``estimate`` will read them."""

    @property
    def rounds(self) -> int:
        """Active rounds already pushed."""
        return len(self.designs)


NO_PRIOR = PriorDesign(frozenset(), {}, {}, (), (), {})


def _floats(text: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in str(text).split(",") if x.strip()) if text else ()


def _designs(text: Any) -> tuple[ActiveDesign, ...]:
    out = []
    for part in str(text or "").split(";"):
        if part.strip():
            scale, mean_u, floor = (float(x) for x in part.split(":"))
            out.append(ActiveDesign(scale, mean_u, floor))
    return tuple(out)


def _design_text(designs: Sequence[ActiveDesign]) -> str:
    return ";".join(f"{d.scale!r}:{d.mean_u!r}:{d.floor!r}" for d in designs)


def prior_from_metadata(items: Sequence[tuple[str, Mapping[str, Any]]]) -> PriorDesign:
    """:class:`PriorDesign` from (external id, metadata) pairs; pure."""
    strategies: set[str] = set()
    probabilities: dict[str, tuple[float, ...]] = {}
    rounds_of: dict[str, int] = {}
    orders: dict[str, int] = {}
    drawn: tuple[int, ...] = ()
    designs: tuple[ActiveDesign, ...] = ()
    for rid, meta in items:
        strategy = meta.get("_sampling_strategy")
        if strategy is not None:
            strategies.add(str(strategy))
        if meta.get(ORDER_KEY) is not None:
            orders[rid] = int(meta[ORDER_KEY])
        if strategy == "active":
            probabilities[rid] = _floats(meta.get("_sampling_probabilities"))
            rounds_of[rid] = int(meta.get("_sampling_round") or 1)
            counts = tuple(int(x) for x in _floats(meta.get("_sampling_drawn_rounds")))
            if len(counts) > len(drawn):
                drawn = counts
                designs = _designs(meta.get("_sampling_designs"))
    hashes = {rid: meta.get("_content_hash") for rid, meta in items}
    recorded = {rid: _design_of(meta) for rid, meta in items}
    return PriorDesign(
        frozenset(strategies),
        probabilities,
        rounds_of,
        designs,
        drawn,
        orders,
        hashes,
        True,
        recorded,
    )


def _design_of(meta: Mapping[str, Any]) -> tuple[str | None, float | None]:
    strategy = meta.get("_sampling_strategy")
    weight = meta.get("_sampling_weight")
    return (
        None if strategy is None else str(strategy),
        None if weight is None else float(weight),
    )


def design_changes(
    records: Sequence[AnnotationRecord], prior: PriorDesign
) -> list[tuple[str, tuple[str | None, float | None], tuple[str | None, float | None]]]:
    """Records already on the dataset whose recorded design or weight this push would change.

    README "Estimates": ``estimate`` reads each record's design and weight as
    they were when its label could be given; a plain push after a ``--strategy
    abstained`` one rewrote them to ``census`` and made a weighted sample look
    uniform. Records pushed before designs were recorded carry none and may get
    one; active rounds are planned with the earlier rounds and are not checked here.
    """
    changes = []
    for r in records:
        old = prior.recorded.get(r.id)
        if old is None or old[0] is None:
            continue
        new = _design_of(r.metadata)
        same_weight = (old[1] is None and new[1] is None) or (
            old[1] is not None and new[1] is not None and math.isclose(old[1], new[1], rel_tol=1e-9)
        )
        if old[0] != new[0] or not same_weight:
            changes.append((r.id, old, new))
    return changes


def read_prior(client: rg.Argilla, dataset: rg.Dataset, api_url: str) -> PriorDesign:
    """The sampling metadata earlier pushes left on ``dataset``'s records."""
    items: list[tuple[str, Mapping[str, Any]]] = []
    offset = 0
    with argilla_errors(api_url):
        while True:
            response = client.api.http_client.get(
                f"/api/v1/datasets/{dataset.id}/records",
                params={"offset": offset, "limit": 1000},
            )
            response.raise_for_status()
            page = response.json()["items"]
            items += [
                (str(r["external_id"]), r.get("metadata") or {})
                for r in page
                if r.get("external_id") is not None
            ]
            if len(page) < 1000:
                return prior_from_metadata(items)
            offset += len(page)


@dataclass(frozen=True, slots=True)
class ActiveRound:
    """One round of ``push --strategy active``: who is drawn and what each record records."""

    round: int
    drawn: tuple[str, ...]
    """Ids drawn in this round (from records no earlier round drew)."""
    metadata: Mapping[str, dict[str, RecordValue]]
    """Id → hidden sampling metadata, for this round's draws and every earlier one."""
    pool: int
    """Records this round drew from."""


def plan_active_round(
    ids: Sequence[str],
    uncertainties: Sequence[float],
    n: int,
    prior: PriorDesign,
    seed: int,
    floor: float = FLOOR,
) -> ActiveRound:
    """Draw round ``prior.rounds + 1`` of an active sample of about ``n`` records; pure.

    The round draws from records no earlier round drew, each independently with
    probability ``π ∝ floor + (1 − floor)·u/ū`` scaled so they add up to ``n``
    (:func:`~citecal.annotate._sampling.active_probabilities`). Each drawn
    record, of this round or an earlier one, records the probability it had in
    every round (for rounds it was not eligible in: the one it would have had)
    and the probability of being drawn in any round, ``1 − Π(1 − π_t)``, whose
    inverse is its ``sampling_weight`` (README "How many labels"). The rounds'
    designs are recorded too, so a later round can do the same.
    """
    t = prior.rounds + 1
    u_of = dict(zip(ids, uncertainties, strict=True))
    pool = [i for i in ids if i not in prior.probabilities]
    probs, design = active_probabilities([u_of[i] for i in pool], n, floor)
    picked = [pool[k] for k in poisson_draw(probs, seed * 1_000_003 + t)]
    designs = (*prior.designs, design)
    drawn_rounds = (*prior.drawn, len(picked))
    history = {
        rid: (*past, design.probability(u_of.get(rid, 1.0)))
        for rid, past in prior.probabilities.items()
    }
    rounds_of = dict(prior.rounds_of)
    chosen = set(picked)
    for k, rid in enumerate(pool):
        if rid in chosen:
            earlier = tuple(d.probability(u_of[rid]) for d in prior.designs)
            history[rid] = (*earlier, probs[k])
            rounds_of[rid] = t
    metadata: dict[str, dict[str, RecordValue]] = {}
    for rid, per_round in history.items():
        p = cumulative_probability(per_round)
        metadata[rid] = {
            "_sampling_strategy": "active",
            "_sampling_round": float(rounds_of[rid]),
            "_sampling_probabilities": ",".join(f"{x!r}" for x in per_round),
            "_sampling_probability": p,
            "_sampling_weight": 1.0 / p,
            "_sampling_drawn_rounds": ",".join(str(x) for x in drawn_rounds),
            "_sampling_drawn": float(drawn_rounds[rounds_of[rid] - 1]),
            "_sampling_designs": _design_text(designs),
        }
    return ActiveRound(round=t, drawn=tuple(picked), metadata=metadata, pool=len(pool))
