"""Benchmark: judge confidence sources on the realistic test judge (issue 28).

README "Judge confidence". A seeded labelled set of synthetic claims (people's label the
truth, a hidden difficulty each) is judged through real HTTP and the real ``openai``
client by the realistic test judge (:mod:`citecal.testing.realistic_judge`) playing two
models — ``gpt-4o-mini`` (cheap, wrong on 20% of claims) and ``gpt-4o`` (strong, 10%) —
with every confidence source: ``verbal``, ``logprob``, ``consistency`` (K = 5 samples,
``n=5``) and ``simulated`` (K = 5 few-shot variants, examples mined from a labelled table
of other reports). Then:

1. **Signal quality** (target: ROC AUC of ``logprob`` and ``consistency`` ≥ 0.80 for
   "people agree with the verdict", ≈ 0.5 for ``verbal``): ``calibrate``'s own figures
   (:func:`citecal.calibrate.signal_quality`) per model and source.
2. **A cascade of the two judges** (agreement asked 0.90 per verdict, δ = 0.1): in each
   of ``--runs`` seeded runs the labelled set is split in half at random, thresholds are
   set on one half (``citecal.cascade.calibrate_cascade``, the cheap model's tier then
   the strong one's, rows read by ``calibrate --write-cascade``'s reader) and scored on the
   other. Targets: the guarantee (each verdict's agreement ≥ 0.90 on the scored half)
   holds in ≥ 1 − δ of runs; the judge tiers' coverage with ``consistency`` or
   ``logprob`` ≥ 2× with ``verbal``; the cascade's cost ≤ 0.5× judging every claim with
   the strong model, the K samples' tokens included. Costs are the runs' own: tokens
   from the API's ``usage``, priced as README "The LLM judge" says, per claim.

    .venv/bin/python benchmarks/judge_confidence.py [--claims 2000] [--runs 1000] [--out DIR]
        [--samples 5] [--sample-temperature 0.7] [--strong-samples K] [--sources ...]

``--samples`` and ``--sample-temperature`` are ``judge.samples`` and
``judge.sample_temperature``; ``--strong-samples`` gives the strong tier its own K
(1: it answers once and its tier thresholds on ``verbal``), the per-tier K of
docs/explanation/cascade.md.

``--out DIR`` writes each judged table (``DIR/<model>-<source>.parquet``) so
``citecal calibrate DIR/gpt-4o-mini-logprob.parquet`` prints the same signal figures.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from citecal.calibrate import prepare, signal_quality, simulated_prompts
from citecal.cascade import Item, TierSpec, calibrate_cascade, run_cascade
from citecal.cascade._annotations import rows_from_table
from citecal.config import JudgeConfig
from citecal.testing import FakeOpenAIServer
from citecal.testing.realistic_judge import (
    RealisticJudge,
    synthetic_claims,
    synthetic_oracle,
    synthetic_table,
)
from citecal.verify.judge import rejudge_frame

CHEAP, STRONG = "gpt-4o-mini", "gpt-4o"
SOURCES = ("verbal", "logprob", "consistency", "simulated")
AGREEMENT = {"supports": 0.90, "not_supports": 0.90}
DELTA = 0.1
TARGET_AUC = 0.80
TARGET_COVERAGE_RATIO = 2.0
TARGET_COST_RATIO = 0.5


@dataclass
class Judged:
    """One model's answers on the labelled set under one confidence source."""

    table: pd.DataFrame
    cost_per_claim: float
    tokens_per_claim: float


def judge_all(
    claims: int,
    seed: int,
    sources: tuple[str, ...],
    samples: int,
    workdir: Path,
    prevalence: float = 0.6,
    sample_temperature: float = 0.7,
    strong_samples: int | None = None,
) -> dict[tuple[str, str], Judged]:
    """Every (model, source) judgement of the labelled set, through HTTP and the openai client.

    ``strong_samples``: K of the strong model's ``consistency`` samples when it differs
    from the cheap model's ``samples`` (per-tier K, docs/explanation/cascade.md); 1 leaves
    the strong model's ``consistency`` run out (its tier then answers once: ``verbal``).
    """
    labelled = synthetic_claims(claims, seed=seed, prevalence=prevalence, prefix="b")
    examples = synthetic_claims(200, seed=seed + 1, prevalence=0.6, prefix="x")
    table = synthetic_table(labelled)
    pool = pd.concat(
        [synthetic_table(examples, annotator=a) for a in ("ann1", "ann2", "ann3")],
        ignore_index=True,
    )
    judge = RealisticJudge(seed=seed, oracle=synthetic_oracle(labelled + examples))
    out: dict[tuple[str, str], Judged] = {}
    with FakeOpenAIServer(mode="realistic", realistic=judge) as srv:
        os.environ["OPENAI_API_KEY"] = "benchmark"
        for source in sources:
            for model in (CHEAP, STRONG):
                k = samples
                if source == "consistency" and model == STRONG and strong_samples is not None:
                    if strong_samples < 2:
                        continue
                    k = strong_samples
                config = JudgeConfig(
                    base_url=srv.base_url,
                    cache=False,
                    escalation_model="",
                    confidence=source,  # type: ignore[arg-type]
                    samples=k,
                    sample_temperature=sample_temperature,
                    concurrency=16,
                    cache_path=str(workdir / "cache.sqlite3"),
                )
                variants = (
                    simulated_prompts(config, table=pool, seed=seed)
                    if source == "simulated"
                    else ()
                )
                new, run = rejudge_frame(
                    table, config, prompt="v3", model=model, use_cache=False, variants=variants
                )
                out[(model, source)] = Judged(
                    new.assign(judge_model=model), run.cost_usd / claims, run.tokens / claims
                )
    return out


def tier_sources(judged: dict[tuple[str, str], Judged], source: str) -> dict[str, str]:
    """Each tier's confidence source: ``source``, or ``verbal`` where that model has no run."""
    return {m: source if (m, source) in judged else "verbal" for m in (CHEAP, STRONG)}


def items_of(judged: dict[tuple[str, str], Judged], source: dict[str, str]) -> list[Item]:
    """The labelled claims as the cascade sees them, read as ``calibrate --write-cascade`` reads."""
    both = pd.concat(
        [judged[(CHEAP, source[CHEAP])].table, judged[(STRONG, source[STRONG])].table],
        ignore_index=True,
    )
    rows, _ = rows_from_table(both)
    return [r.item(with_rule=False) for r in rows]


def cascade_runs(
    items: list[Item], costs: dict[str, float], runs: int, seed: int, source: dict[str, str]
) -> dict[str, float]:
    """Split in half ``runs`` times: calibrate on one half, score on the other."""
    rng = np.random.default_rng(seed)
    tiers = [
        TierSpec("judge", CHEAP, costs[CHEAP], source[CHEAP]),
        TierSpec("judge", STRONG, costs[STRONG], source[STRONG]),
    ]
    n = len(items)
    held = {"supports": 0, "not_supports": 0}
    coverage, cost, cheap_share = [], [], []
    for _ in range(runs):
        order = rng.permutation(n)
        cal = [items[i] for i in order[: n // 2]]
        test = [items[i] for i in order[n // 2 :]]
        spec = calibrate_cascade(cal, tiers, AGREEMENT, DELTA, {"n": len(cal)})
        decided = {"supports": [0, 0], "not_supports": [0, 0]}
        by_tier = {f"judge:{CHEAP}": 0, f"judge:{STRONG}": 0}
        for it in test:
            d = run_cascade(spec, it)
            if d is None:
                continue
            tier, verdict = d
            by_tier[tier] += 1
            decided[verdict][0] += 1
            decided[verdict][1] += it.human == (verdict == "supports")
        for verdict, (k, ok) in decided.items():
            held[verdict] += k == 0 or ok / k >= AGREEMENT[verdict]
        share = sum(by_tier.values()) / len(test)
        coverage.append(share)
        cheap_share.append(by_tier[f"judge:{CHEAP}"] / len(test))
        # Every claim pays the cheap tier; those it does not decide pay the strong one too.
        escalated = 1.0 - by_tier[f"judge:{CHEAP}"] / len(test)
        cost.append(costs[CHEAP] + escalated * costs[STRONG])
    return {
        "held_supports": held["supports"] / runs,
        "held_not_supports": held["not_supports"] / runs,
        "coverage": float(np.mean(coverage)),
        "cheap_coverage": float(np.mean(cheap_share)),
        "cost_per_claim": float(np.mean(cost)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=5, help="K (judge.samples)")
    parser.add_argument(
        "--sample-temperature",
        type=float,
        default=0.7,
        help="temperature of the consistency samples (judge.sample_temperature)",
    )
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--strong-samples",
        type=int,
        default=None,
        help=f"K of {STRONG}'s consistency samples (default: --samples); 1: its tier answers "
        "once (verbal)",
    )
    parser.add_argument("--prevalence", type=float, default=0.6, help="share of claims supported")
    parser.add_argument(
        "--sources", default=",".join(SOURCES), help="comma-separated; verbal is always run"
    )
    args = parser.parse_args()
    sources = tuple(dict.fromkeys(["verbal", *args.sources.split(",")]))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        judged = judge_all(
            args.claims,
            args.seed,
            sources,
            args.samples,
            Path(tmp),
            args.prevalence,
            args.sample_temperature,
            args.strong_samples,
        )
    took = time.perf_counter() - t0
    print(
        f"realistic test judge, {args.claims} labelled claims ({args.prevalence:.0%} supported), "
        f"{CHEAP} (errs on 20%) and {STRONG} (10%), K = {args.samples}"
        + ("" if args.strong_samples is None else f" ({STRONG}: {args.strong_samples})")
        + f" at temperature {args.sample_temperature}; judged through HTTP in {took:.0f}s"
    )
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for (model, source), j in judged.items():
            j.table.to_parquet(args.out / f"{model}-{source}.parquet", index=False)
    ok = True
    print("1. signal quality (calibrate): ROC AUC for 'people agree with the verdict'")
    for model in (CHEAP, STRONG):
        for source in sources:
            if (model, source) not in judged:
                continue
            (s,) = signal_quality(prepare(judged[(model, source)].table))
            auc = s.roc_auc if s.roc_auc is not None else float("nan")
            ci = s.roc_auc_ci or [float("nan"), float("nan")]
            mark = ""
            if source in ("logprob", "consistency"):
                met = auc >= TARGET_AUC
                ok &= met
                mark = f"  (target ≥ {TARGET_AUC}: {'met' if met else 'NOT met'})"
            print(
                f"  {model:11s} {source:11s} AUC {auc:.3f} [{ci[0]:.3f}, {ci[1]:.3f}], "
                f"ECE {s.ece:.3f}, agreement {s.agreement_rate:.3f}, "
                f"{judged[(model, source)].tokens_per_claim:.0f} tokens/claim{mark}"
            )
    print(
        f"2. cascade {CHEAP} → {STRONG}, agreement ≥ 0.90 per verdict, δ = {DELTA}, "
        f"{args.runs} random halvings (calibrate on one half, score on the other)"
    )
    strong_once = judged[(STRONG, "verbal")].cost_per_claim
    results = {}
    for i, source in enumerate(sources):
        per_tier = tier_sources(judged, source)
        costs = {m: judged[(m, per_tier[m])].cost_per_claim for m in (CHEAP, STRONG)}
        r = cascade_runs(items_of(judged, per_tier), costs, args.runs, args.seed + i, per_tier)
        results[source] = r
        held = min(r["held_supports"], r["held_not_supports"])
        ok &= held >= 1 - DELTA
        print(
            f"  {source:11s} guarantee held: supports {r['held_supports']:.1%}, not_supports "
            f"{r['held_not_supports']:.1%} (target ≥ {1 - DELTA:.0%}: "
            f"{'met' if held >= 1 - DELTA else 'NOT met'}); coverage {r['coverage']:.1%} "
            f"({CHEAP} {r['cheap_coverage']:.1%}); cost ${r['cost_per_claim'] * 1000:.4f} per "
            f"1 000 claims = {r['cost_per_claim'] / strong_once:.2f}× {STRONG} on every claim "
            f"(${strong_once * 1000:.4f}), "
            f"{r['cost_per_claim'] / costs[STRONG]:.2f}× {STRONG} with {per_tier[STRONG]} on "
            f"every claim"
        )
    base = results["verbal"]["coverage"]
    for source in ("logprob", "consistency"):
        if source not in results:
            continue
        r = results[source]
        ratio = r["coverage"] / base if base else float("inf")
        cost_ratio = r["cost_per_claim"] / strong_once
        cov_ok = ratio >= TARGET_COVERAGE_RATIO
        cost_ok = cost_ratio <= TARGET_COST_RATIO
        ok &= cov_ok and cost_ok
        print(
            f"  {source}: coverage {ratio:.2f}× verbal's (target ≥ {TARGET_COVERAGE_RATIO}: "
            f"{'met' if cov_ok else 'NOT met'}); cost {cost_ratio:.2f}× {STRONG} alone "
            f"(target ≤ {TARGET_COST_RATIO}: {'met' if cost_ok else 'NOT met'})"
        )
    print(f"targets {'met' if ok else 'NOT all met'} ({time.perf_counter() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
