"""``eval --cascade``: each tier decides what its calibrated thresholds allow.

README "The cascade".

Runs between the rule check and the judge. A rule verdict stands only when the
cascade's rules tier may give that verdict; every other valid citation goes to
the local verifier, and what it is not confident about escalates to the judge
tiers, or, without a judge, abstains: ``unverified``, "needs a person",
suggested action ``annotate``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from citecal.cascade._cascade import VERDICTS, CascadeSpec, Item, Tier, decides, predict
from citecal.cascade._features import FeatureInput, feature_matrix
from citecal.models import AbstainReason, CascadeSummary, Verdict
from citecal.source import SourceFileError

if TYPE_CHECKING:
    from citecal.aggregate import Outcome
    from citecal.source import SourceStore
    from citecal.verify.judge import Judge, JudgeRequest, JudgeRun

CONTEXT_LINES = 3
"""Lines above a range the verifier reads: where an enclosing signature sits."""


def rule_decision(outcome: Outcome) -> str | None:
    """The rule check's own decided verdict, or None when it left the claim open."""
    v = outcome.verdict
    if v is None or outcome.route == "judge" or v.method != "extractive":
        return None
    return v.verdict if v.verdict in VERDICTS else None


def feature_input(
    outcome: Outcome, context_before: str, file_lines: tuple[str, ...] | None = None
) -> FeatureInput:
    v = outcome.verdict
    cls = outcome.classification
    return FeatureInput(
        claim=outcome.extracted.claim_text,
        code=outcome.validation.cited_content or "",
        context_before=context_before,
        mode=cls.mode if cls is not None else None,
        rule_verdict=rule_decision(outcome) or "unverified",
        matched=len(v.matched_terms) if v is not None else 0,
        missing=len(v.missing_terms) if v is not None else 0,
        hint=v is not None and v.hint is not None,
        file_lines=file_lines,
        start_line=outcome.extracted.citation.start_line,
        end_line=outcome.extracted.citation.end_line,
    )


def read_lines(store: SourceStore, path: str, cache: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The cited file's lines (read once per run); empty when it cannot be read."""
    if path not in cache:
        try:
            cache[path] = tuple(store.read(path).text.splitlines())
        except SourceFileError:
            cache[path] = ()
    return cache[path]


def lines_above(lines: tuple[str, ...], start: int) -> str:
    """The few lines above a range starting at ``start``: where an enclosing signature sits."""
    return "\n".join(lines[max(0, start - 1 - CONTEXT_LINES) : max(0, start - 1)])


def context_before(lines: tuple[str, ...], outcome: Outcome) -> str:
    return lines_above(lines, outcome.extracted.citation.start_line)


def _confidence(conf: float) -> str:
    return "high" if conf >= 0.9 else "medium" if conf >= 0.75 else "low"


def abstain(base: Verdict | None, why: str, reason: AbstainReason = "needs a person") -> Verdict:
    """A claim for a person: unverified, the evidence so far kept in the reasoning."""
    kept = base or Verdict(verdict="unverified", method="local", confidence="low")
    return replace(
        kept,
        verdict="unverified",
        confidence="low",
        abstain_reason=reason,
        reasoning=f"{reason}: {why}." + (f" {kept.reasoning}" if kept.reasoning else ""),
    )


def judge_disagrees(verdict: Verdict, p_supports: float | None, below: float | None) -> Verdict:
    """A judge's ``supports`` that the local verifier strongly doubts goes to a person.

    Independent of the injection screen (issue 29 1(c); docs/explanation/routing.md):
    an obeyed instruction in the report or the code could turn a judge's answer
    into ``supports``; where the verifier's calibrated probability is below the
    cut set on people's labels (``below``), such a verdict is not allowed to stand
    silently. Everything else is returned unchanged.
    """
    if (
        below is None
        or p_supports is None
        or verdict.verdict != "supports"
        or verdict.method != "llm"
        or p_supports >= below
    ):
        return verdict
    return abstain(
        verdict,
        f"the judge says supports, the local verifier gives P(supports) = {p_supports:.2f} "
        f"(below {below:.2f}, where people rarely found a citation supported)",
        "judge and verifier disagree",
    )


def disagree_cut(spec: CascadeSpec) -> float | None:
    """The calibrated p_supports below which a judge's supports goes to a person."""
    return spec.calibrator.disagree_below if spec.calibrator is not None else None


def pre_judge(
    outcomes: Sequence[Outcome],
    spec: CascadeSpec,
    store: SourceStore,
    has_judge: bool,
    workers: int = 1,
) -> tuple[list[Outcome], list[int], dict[str, int]]:
    """Rules and local tiers. Returns (outcomes, indexes for the judge, decisions per tier).

    ``workers``: processes computing the verifier's features (the same rows either way).
    """
    out = list(outcomes)
    decided_by: dict[str, int] = {}
    rules = spec.tier("rules")
    local = spec.tier("local")
    # A claim held back as a possible prompt injection goes to a person whatever a tier
    # would say (README "Security"): no tier sees it.
    todo = [
        i
        for i, o in enumerate(out)
        if o.validation.valid and o.verdict is not None and o.route != "held"
    ]
    open_: list[int] = []
    for i in todo:
        rule = rule_decision(out[i])
        if rules is not None and rule is not None and decides(rules, rule, 1.0):
            decided_by[rules.name] = decided_by.get(rules.name, 0) + 1
        else:
            open_.append(i)
    probs: dict[int, float] = {}
    calibrated: dict[int, float] = {}
    if spec.verifier is not None and todo:
        # Every valid citation is scored, decided or not: its calibrated p_supports is what
        # the review list ranks by (docs/explanation/cascade.md).
        cache: dict[str, tuple[str, ...]] = {}
        by_file = sorted(todo, key=lambda i: out[i].extracted.citation.file_path)
        inputs = []
        for i in by_file:  # file by file: each file's words are indexed once
            lines = read_lines(store, out[i].extracted.citation.file_path, cache)
            inputs.append(feature_input(out[i], context_before(lines, out[i]), lines))
        raw = spec.verifier.predict(feature_matrix(inputs, workers))
        probs = dict(zip(by_file, raw.tolist(), strict=True))
        if spec.calibrator is not None:
            scaled = spec.calibrator(raw).round(4).tolist()
            calibrated = dict(zip(by_file, scaled, strict=True))
    if local is None:
        probs = {}
    escalate: list[int] = []
    handled: set[int] = set()
    version = spec.verifier.version if spec.verifier is not None else None  # a hash: once
    for i in open_:
        o = out[i]
        p = probs.get(i)
        ps = calibrated.get(i)
        pred = predict("local", Item(rule=None, local=p)) if p is not None else None
        if local is not None and pred is not None and decides(local, *pred):
            verdict, conf = pred
            th = local.thresholds[verdict]
            base = o.verdict
            assert base is not None
            handled.add(i)
            out[i] = replace(
                o,
                route="cascade",
                p_supports=ps,
                verdict=replace(
                    base,
                    verdict=verdict,  # type: ignore[arg-type]
                    method="local",
                    confidence=_confidence(conf),  # type: ignore[arg-type]
                    score=round(float(p), 4) if p is not None else None,
                    model=version,
                    prompt_version=None,
                    reasoning=(
                        f"local verifier: P(supports) = {p:.2f}; decides {verdict} at "
                        f"confidence >= {th.value} (calibrated on {th.n} labels). "
                        + (base.reasoning or "")
                    ).strip(),
                ),
            )
            decided_by[local.name] = decided_by.get(local.name, 0) + 1
        elif has_judge:
            escalate.append(i)
        else:
            shown = ps if ps is not None else p
            why = (f"p_supports {shown:.2f}, " if shown is not None else "") + (
                "no tier of the cascade is confident enough"
            )
            handled.add(i)
            out[i] = replace(o, route="cascade", p_supports=ps, verdict=abstain(o.verdict, why))
    for i, ps in calibrated.items():  # decided by rules, or escalated to the judge
        if i not in handled:
            out[i] = replace(out[i], p_supports=ps)
    return out, escalate, decided_by


def post_judge(
    outcomes: Sequence[Outcome], indexes: Sequence[int], spec: CascadeSpec, model: str | None
) -> tuple[list[Outcome], dict[str, int]]:
    """Judge tiers: the judge's verdict stands only above its calibrated threshold."""
    tier = spec.tier("judge", model)
    if tier is None:  # a judge the cascade was not calibrated for decides as without one
        out = list(outcomes)
        decided_by: dict[str, int] = {}
        below = disagree_cut(spec)
        for i in indexes:
            v = out[i].verdict
            if v is None or v.verdict == "unverified" or v.abstain_reason is not None:
                continue
            checked = judge_disagrees(v, out[i].p_supports, below)
            if checked is not v:  # still checked against the verifier (issue 29 1c)
                out[i] = replace(out[i], verdict=checked)
                continue
            name = f"judge:{model} (uncalibrated)"
            decided_by[name] = decided_by.get(name, 0) + 1
        return out, decided_by
    out, decided_by, _, _ = judge_tier(outcomes, indexes, spec, tier)
    return out, decided_by


def judge_tier(
    outcomes: Sequence[Outcome], indexes: Sequence[int], spec: CascadeSpec, tier: Tier
) -> tuple[list[Outcome], dict[str, int], list[int], int]:
    """One judge tier: decide above its threshold, else abstain and say who may escalate.

    A tier calibrated on a confidence source (README "Judge confidence") thresholds on
    the verdict's ``confidence_value``, and only when the run measured that source;
    otherwise on the judge's support score. Returns the outcomes, decisions per tier,
    the indexes the tier was not confident about (for the next tier) and how many
    verdicts came with another confidence source than the tier's.
    """
    out = list(outcomes)
    decided_by: dict[str, int] = {}
    escalate: list[int] = []
    mismatched = 0
    model = tier.model or ""
    below = disagree_cut(spec)
    for i in indexes:
        v = out[i].verdict
        if v is None or v.verdict == "unverified" or v.abstain_reason is not None:
            continue
        # A judge's supports the local verifier strongly doubts goes to a person whatever
        # the tier's threshold or confidence source (issue 29 1c; docs/explanation/routing.md).
        checked = judge_disagrees(v, out[i].p_supports, below)
        if checked is not v:
            out[i] = replace(out[i], verdict=checked)
            continue
        if tier.confidence is not None:
            if v.confidence_source != tier.confidence or v.confidence_value is None:
                mismatched += 1
                why = (
                    f"the cascade's tier {tier.name} is calibrated on {tier.confidence} "
                    f"confidence, this verdict's is {v.confidence_source or 'unknown'}"
                )
                out[i] = replace(out[i], verdict=abstain(v, why))
                continue
            side = "supports" if v.verdict == "supports" else "not_supports"
            item = Item(rule=None, local=None, judge_verdicts={model: (side, v.confidence_value)})
        else:
            score = v.score if v.score is not None else float("nan")
            item = Item(rule=None, local=None, judges={model: score})
        pred = predict("judge", item, model)
        if pred is not None and decides(tier, *pred):
            decided_by[tier.name] = decided_by.get(tier.name, 0) + 1
        else:
            escalate.append(i)
            out[i] = replace(
                out[i], verdict=abstain(v, f"the judge {tier.model} is not confident enough")
            )
    return out, decided_by, escalate, mismatched


ApplyVerdicts = Callable[[list["Outcome"], Sequence[int], Mapping[str, Verdict]], list["Outcome"]]
"""Puts a judge run's verdicts on the outcomes (the pipeline's one way of doing it)."""


def run_judge_tiers(
    outcomes: Sequence[Outcome],
    indexes: Sequence[int],
    spec: CascadeSpec,
    judge: Judge,
    requests: Mapping[int, JudgeRequest],
    apply: ApplyVerdicts,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Outcome], dict[str, int], list[JudgeRun], list[str]]:
    """The cascade's judge tiers in order, cheapest first (README "The cascade").

    The first tier's model judges every claim the rules and the local verifier left;
    what it is not confident about is asked of the next tier's model, and so on; after
    the last, a person decides. Each model asks as ``judge`` does (its confidence
    source, cache and budget); an escalated verdict keeps the one before it in
    ``escalated_from`` and carries both tokens and costs. Returns the outcomes,
    decisions per tier, every run and warnings.
    """
    out = list(outcomes)
    decided_by: dict[str, int] = {}
    runs: list[JudgeRun] = []
    warnings: list[str] = []
    tiers = [t for t in spec.tiers if t.kind == "judge"]
    todo = list(indexes)
    for n, tier in enumerate(tiers):
        if not todo:
            break
        run = judge.for_model(tier.model or judge.model).judge(
            [requests[i] for i in todo], progress
        )
        runs.append(run)
        earlier = {i: out[i].verdict for i in todo} if n else {}
        out = apply(out, todo, run.verdicts)
        for i, before in earlier.items():
            now = out[i].verdict
            if before is None or now is None:
                continue
            first = replace(before, reasoning=before.reasoning.removeprefix("needs a person: "))
            out[i] = replace(
                out[i],
                verdict=replace(
                    now,
                    tokens=now.tokens + before.tokens,
                    cost_usd=now.cost_usd + before.cost_usd,
                    escalated_from=first,
                ),
            )
        out, by, escalate, mismatched = judge_tier(out, todo, spec, tier)
        decided_by.update(by)
        if mismatched:
            warnings.append(
                f"{mismatched} verdicts of {tier.model} were not decided: the cascade's tier "
                f"{tier.name} is calibrated on {tier.confidence} confidence (pass "
                f"--confidence {tier.confidence})"
            )
        todo = escalate
    return out, decided_by, runs, warnings


def summary_of(
    spec: CascadeSpec, decided_by: dict[str, int], abstained: int, disagreed: int = 0
) -> CascadeSummary:
    n = spec.labels.get("n", 0)
    return CascadeSummary(
        decided_by=dict(sorted(decided_by.items())),
        abstained=abstained,
        disagreed=disagreed,
        agreement=spec.agreement,
        delta=spec.delta,
        labels=int(n) if isinstance(n, int | float) else 0,
        source=str(spec.labels.get("source", "")),
    )


__all__ = [
    "abstain",
    "context_before",
    "disagree_cut",
    "feature_input",
    "judge_disagrees",
    "judge_tier",
    "lines_above",
    "post_judge",
    "pre_judge",
    "rule_decision",
    "run_judge_tiers",
    "summary_of",
]
