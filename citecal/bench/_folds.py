"""Leave-one-package-out: the cascade scored only on packages it did not learn from.

``citecal bench groundtruth --folds package`` (README "The cascade"): for each
package, the local verifier is trained and every threshold set on the other
packages' labels, then the held-out package's citations go through that
cascade. No figure here is in sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from citecal._io import read_text_file
from citecal.bench._labels import GroundTruth
from citecal.bench._ranking import Ranked, RankingFigures, ranking_figures
from citecal.bench._score import Scored, match
from citecal.cascade import (
    BAND_NAMES,
    CascadeSpec,
    Item,
    Row,
    band_of,
    feature_matrix,
    fit_cascade,
    input_of,
    rule_of,
    run_cascade,
)
from citecal.cascade._apply import lines_above, read_lines
from citecal.config import Config
from citecal.pipeline import evaluate_report
from citecal.source import open_store

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Held:
    """A labelled citation of a held-out package with what the cascade made of it."""

    scored: Scored
    tier: str | None  # None: abstained (valid) / structural (invalid) / not extracted
    verdict: str | None  # supports / not_supports; None: abstained or not extracted
    p_supports: float | None = None  # calibrated by the fold's calibrator (valid only)
    band: str = ""
    expected: float | None = None  # the band's unsupported share in the fold's labels
    disagree_below: float | None = None  # the fold's judge-verifier disagreement cut

    @property
    def human(self) -> bool:
        return self.scored.human


class FoldFigures(BaseModel):
    """Agreement of the cascade's decisions with people, out of sample."""

    model_config = ConfigDict(extra="forbid")

    n: int
    supported: int
    unsupported: int
    decided: int = Field(description="Invalid, or valid and decided by a tier.")
    abstained: int = Field(description="Valid citations sent to a person.")
    agreement: float | None = Field(description="Decided citations where the cascade agrees.")
    agreement_supports: float | None = Field(description="Of decided supports, people accept.")
    agreement_not_supports: float | None = Field(
        description="Of decided non-supports (incl. invalid), people reject."
    )
    decision_coverage: float | None = Field(description="decided / n.")
    decision_coverage_valid: float | None
    false_supports: int
    false_support_rate: float | None = Field(description="false supports / unsupported.")
    false_rejects: int
    unsupported_caught: float | None = Field(
        description="Unsupported citations flagged (not_supports, invalid) or sent to a person."
    )
    decided_by: dict[str, int]


class FoldReport(BaseModel):
    """``bench groundtruth --folds package -f json`` (schema_version 1)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    folds: str = "package"
    agreement: dict[str, float]
    delta: float
    overall: FoldFigures
    by_origin: dict[str, FoldFigures]
    by_package: dict[str, FoldFigures]
    by_origin_package: dict[str, dict[str, FoldFigures]]
    disagreement: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Per origin: valid citations people found supported / unsupported, and "
        "of each how many have p_supports below the fold's disagreement cut (a judge's "
        "supports there goes to a person; issue 29 1(c)).",
    )
    spread: dict[str, dict[str, dict[str, float | None]]] = Field(
        default_factory=dict,
        description="Per origin, figure → min, median, max over held-out packages (and how many).",
    )
    thresholds_on: list[str] | None = Field(
        None, description="Origins whose labels set the thresholds (null: all)."
    )
    thresholds: dict[str, dict[str, dict[str, float | None]]] = Field(
        description="Held-out package → tier → verdict → threshold (null: never decides)."
    )
    ranking: dict[str, RankingFigures] = Field(
        default_factory=dict,
        description="p_supports on held-out valid citations: all, natural, planted "
        "(docs/explanation/cascade.md, 'The review list').",
    )
    ranking_natural: dict[str, dict[str, RankingFigures]] = Field(
        default_factory=dict,
        description="p_supports on held-out valid citations of natural reports, by language "
        "and by package size (issue 31: a figure that holds across languages).",
    )


def _r(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def figures(items: Sequence[Held]) -> FoldFigures:
    n = len(items)
    sup = sum(h.human for h in items)
    decided = [h for h in items if h.verdict is not None]
    says_sup = [h for h in decided if h.verdict == "supports"]
    says_not = [h for h in decided if h.verdict == "not_supports"]
    agree = sum((h.verdict == "supports") == h.human for h in decided)
    fs = sum(not h.human for h in says_sup)
    fr = sum(h.human for h in says_not)
    valid = [h for h in items if h.scored.valid]
    abstained = [h for h in valid if h.verdict is None]
    caught = sum(
        not h.human and (h.verdict == "not_supports" or (h.scored.valid and h.verdict is None))
        for h in items
    )
    by: dict[str, int] = {}
    for h in decided:
        key = h.tier or "structural"
        by[key] = by.get(key, 0) + 1
    return FoldFigures(
        n=n,
        supported=sup,
        unsupported=n - sup,
        decided=len(decided),
        abstained=len(abstained),
        agreement=_r(agree, len(decided)),
        agreement_supports=_r(len(says_sup) - fs, len(says_sup)),
        agreement_not_supports=_r(len(says_not) - fr, len(says_not)),
        decision_coverage=_r(len(decided), n),
        decision_coverage_valid=_r(sum(h.verdict is not None for h in valid), len(valid)),
        false_supports=fs,
        false_support_rate=_r(fs, n - sup),
        false_rejects=fr,
        unsupported_caught=_r(caught, n - sup),
        decided_by=dict(sorted(by.items())),
    )


def apply_held_out(spec: CascadeSpec, scored: Sequence[Scored], rows: dict[int, Row]) -> list[Held]:
    """Run each held-out citation through ``spec``; ``rows`` maps scored index → its Row."""
    idx = sorted(rows)
    probs: dict[int, float] = {}
    if spec.verifier is not None and idx:
        x = feature_matrix([rows[i].features for i in idx])
        probs = dict(zip(idx, spec.verifier.predict(x).tolist(), strict=True))
    cal = spec.calibrator
    out: list[Held] = []
    for i, s in enumerate(scored):
        if s.row is None:
            out.append(Held(s, None, None))
        elif not s.row.valid:
            out.append(Held(s, "structural", "not_supports"))
        else:
            r = rows[i]
            decision = run_cascade(spec, Item(rule=r.rule, local=probs.get(i), human=r.human))
            tier, verdict = decision if decision else (None, None)
            p = probs.get(i)
            if cal is None or p is None:
                out.append(Held(s, tier, verdict))
                continue
            ps = float(cal([p])[0])
            band = band_of(ps, cal.bands)
            share = next((b.share for b in cal.bands if b.name == band), None)
            out.append(Held(s, tier, verdict, ps, band, share, cal.disagree_below))
    return out


def ranking_of(held: Sequence[Held]) -> dict[str, RankingFigures]:
    """The review list's figures on the held-out valid citations: all, then per origin."""
    ranked = [
        (h.scored.label.origin, Ranked(h.p_supports, h.human, h.band, h.expected))
        for h in held
        if h.p_supports is not None
    ]
    if not ranked:
        return {}
    out = {"all": ranking_figures([r for _, r in ranked], BAND_NAMES)}
    for origin in sorted({o for o, _ in ranked}):
        out[origin] = ranking_figures([r for o, r in ranked if o == origin], BAND_NAMES)
    return out


RANKING_GROUPS: tuple[str, ...] = ("language", "size")


def ranking_natural_of(held: Sequence[Held]) -> dict[str, dict[str, RankingFigures]]:
    """The natural reports' held-out ranking figures per language and per package size.

    Users bring natural reports in their own languages (docs/how-to/groundtruth.md): one
    pooled AUC can hide a language the verifier ranks poorly.
    """
    natural = [
        (h, Ranked(h.p_supports, h.human, h.band, h.expected))
        for h in held
        if h.p_supports is not None and h.scored.label.origin == "natural"
    ]
    out: dict[str, dict[str, RankingFigures]] = {}
    for by in RANKING_GROUPS:
        keys = sorted({h.scored.group(by) for h, _ in natural})
        out[by] = {
            key: ranking_figures([r for h, r in natural if h.scored.group(by) == key], BAND_NAMES)
            for key in keys
        }
    return out if natural else {}


def groundtruth_rows(
    sets: Sequence[GroundTruth], config: Config
) -> tuple[list[Scored], dict[int, Row]]:
    """Every label matched to its rules-only eval row, and the cascade's training row of each
    valid one (keyed by its index in the first list): what ``--folds`` and
    ``--write-cascade`` learn from and score."""
    scored: list[Scored] = []
    rows: dict[int, Row] = {}
    for truth in sets:
        with open_store(truth.sources, None, config.validation) as store:
            result = evaluate_report(
                read_text_file(truth.report_path, "report"),
                store,
                config,
                judge=None,
                no_judge_reason="--no-llm",
                report_name=str(truth.report_path),
            )
            cache: dict[str, tuple[str, ...]] = {}
            for s in match(truth, result):
                r = s.row
                if r is not None and r.valid:
                    lines = read_lines(store, r.file_path, cache)
                    feats = input_of(r, lines_above(lines, r.start_line), lines)
                    rows[len(scored)] = Row(
                        truth.package, feats, rule_of(r), s.human, origin=s.label.origin
                    )
                scored.append(s)
    return scored, rows


def leave_one_package_out(
    scored: Sequence[Scored],
    rows: dict[int, Row],
    agreement: dict[str, float],
    delta: float,
    progress: Callable[[str], None] | None = None,
    thresholds_on: frozenset[str] | None = None,
) -> FoldReport:
    """Fit on every package but one, apply to that one, for each package.

    ``thresholds_on``: as :func:`citecal.cascade._training.fit_cascade` (the other
    packages' rows of those origins set the thresholds; every row trains)."""
    packages = sorted({s.package for s in scored})
    held: list[Held] = []
    thresholds: dict[str, dict[str, dict[str, float | None]]] = {}
    for pkg in packages:
        if progress is not None:
            progress(pkg)
        train = [rows[i] for i in sorted(rows) if scored[i].package != pkg]
        spec = fit_cascade(
            train,
            agreement,
            delta,
            {"source": f"groundtruth without {pkg}"},
            thresholds_on=thresholds_on,
        )
        test_idx = [i for i, s in enumerate(scored) if s.package == pkg]
        part = apply_held_out(
            spec,
            [scored[i] for i in test_idx],
            {k: rows[i] for k, i in enumerate(test_idx) if i in rows},
        )
        held.extend(part)
        thresholds[pkg] = {
            t.name: {v: th.value for v, th in t.thresholds.items()} for t in spec.tiers
        }
    origins = sorted({h.scored.label.origin for h in held})
    by_origin_package = {
        o: {
            p: figures(part)
            for p in packages
            if (part := [h for h in held if h.scored.package == p and h.scored.label.origin == o])
        }
        for o in origins
    }
    return FoldReport(
        agreement=agreement,
        delta=delta,
        thresholds_on=sorted(thresholds_on) if thresholds_on is not None else None,
        overall=figures(held),
        by_origin={o: figures([h for h in held if h.scored.label.origin == o]) for o in origins},
        by_package={p: figures([h for h in held if h.scored.package == p]) for p in packages},
        by_origin_package=by_origin_package,
        spread={o: spread(list(parts.values())) for o, parts in by_origin_package.items()},
        thresholds=thresholds,
        ranking=ranking_of(held),
        ranking_natural=ranking_natural_of(held),
        disagreement=disagreement_of(held),
    )


def disagreement_of(held: Sequence[Held]) -> dict[str, dict[str, int]]:
    """What the judge-verifier disagreement rule costs and catches, out of sample.

    A judge that is right says ``supports`` on every supported citation: those below
    the cut are the rule's cost (abstentions). On an unsupported citation a judge's
    ``supports`` is wrong (an obeyed injection, a lenient judge): those below the cut
    are what the rule catches.
    """
    out: dict[str, dict[str, int]] = {}
    for h in held:
        if h.p_supports is None:
            continue
        below = h.disagree_below is not None and h.p_supports < h.disagree_below
        for key in ("all", h.scored.label.origin):
            slot = out.setdefault(
                key,
                {"supported": 0, "supported_below": 0, "unsupported": 0, "unsupported_below": 0},
            )
            kind = "supported" if h.human else "unsupported"
            slot[kind] += 1
            slot[f"{kind}_below"] += below
    return out


SPREAD_FIGURES: tuple[str, ...] = (
    "decision_coverage_valid",
    "agreement",
    "agreement_supports",
    "agreement_not_supports",
)


def spread(per_package: Sequence[FoldFigures]) -> dict[str, dict[str, float | None]]:
    """Min, median and max over held-out packages of each figure: how much folds swing."""
    out: dict[str, dict[str, float | None]] = {}
    for key in SPREAD_FIGURES:
        values = sorted(v for m in per_package if (v := getattr(m, key)) is not None)
        if not values:
            out[key] = {"min": None, "median": None, "max": None, "packages": 0}
            continue
        mid = len(values) // 2
        median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
        out[key] = {
            "min": values[0],
            "median": round(median, 4),
            "max": values[-1],
            "packages": len(values),
        }
    return out


__all__ = [
    "FoldFigures",
    "FoldReport",
    "Held",
    "apply_held_out",
    "disagreement_of",
    "figures",
    "groundtruth_rows",
    "leave_one_package_out",
    "ranking_natural_of",
    "ranking_of",
    "spread",
]
