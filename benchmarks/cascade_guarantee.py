"""Does the cascade keep its guarantee? A seeded Monte-Carlo (README "The cascade").

Each run draws calibration labels and fresh test claims from synthetic tiers of
known accuracy and miscalibration — a cheap tier that is overconfident, a strong
one that is underconfident — fits the cascade's thresholds by fixed-sequence
testing (`citecal.cascade.calibrate_cascade`), and measures on the test claims
how often the decided verdicts agree with the truth, per verdict. The guarantee
holds when, for each verdict, agreement ≥ 1 − α in ≥ 1 − δ of runs. The same
runs with one uncalibrated threshold (decide when a tier's confidence ≥ the
agreement asked) show what the calibration buys.

    .venv/bin/python benchmarks/cascade_guarantee.py [--runs 1000] [--labels 1000]

Targets: the guarantee holds for both verdicts; coverage printed against the
single uncalibrated threshold.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from citecal.cascade import Item, TierSpec, calibrate_cascade, run_cascade

AGREEMENT = {"supports": 0.95, "not_supports": 0.90}
TIERS = [TierSpec("local"), TierSpec("judge", "strong")]


def draw(rng: np.random.Generator, n: int, prevalence: float = 0.8) -> list[Item]:
    """Claims with a true label and each tier's support score.

    The local tier's score is overconfident: its stated probability is pushed
    toward 0/1 (true accuracy lower than stated). The strong judge is accurate
    but underconfident (scores shrunk toward 0.5).
    """
    human = rng.uniform(size=n) < prevalence
    signal = np.where(human, 1.0, -1.0)
    local_logit = 1.0 * signal + rng.normal(0, 1.5, n)
    local = 1 / (1 + np.exp(-2.5 * local_logit))  # overconfident by a factor 2.5
    judge_logit = 1.8 * signal + rng.normal(0, 1.3, n)
    judge = 1 / (1 + np.exp(-0.5 * judge_logit))  # underconfident by a factor 2
    return [
        Item(rule=None, local=float(lo), judges={"strong": float(j)}, human=bool(h))
        for lo, j, h in zip(local, judge, human, strict=True)
    ]


def measure(decide: list[tuple[str, str] | None], items: list[Item]) -> dict[str, tuple[int, int]]:
    """Per verdict: (decided, agreeing)."""
    out = {"supports": [0, 0], "not_supports": [0, 0]}
    for d, it in zip(decide, items, strict=True):
        if d is None:
            continue
        verdict = d[1]
        out[verdict][0] += 1
        out[verdict][1] += it.human == (verdict == "supports")
    return {k: (v[0], v[1]) for k, v in out.items()}


def naive(item: Item) -> tuple[str, str] | None:
    """One uncalibrated threshold per verdict: the agreement asked, on the raw score."""
    for name, p in (("local", item.local), ("judge:strong", item.judges["strong"])):
        assert p is not None
        if p >= AGREEMENT["supports"]:
            return name, "supports"
        if 1 - p >= AGREEMENT["not_supports"]:
            return name, "not_supports"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--labels", type=int, default=1000)
    parser.add_argument("--test", type=int, default=4000)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=20261125)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    held = {"supports": 0, "not_supports": 0}
    naive_held = {"supports": 0, "not_supports": 0}
    coverage, naive_coverage = [], []
    t = time.perf_counter()
    for _ in range(args.runs):
        spec = calibrate_cascade(draw(rng, args.labels), TIERS, AGREEMENT, args.delta, {})
        test = draw(rng, args.test)
        got = measure([run_cascade(spec, it) for it in test], test)
        base = measure([naive(it) for it in test], test)
        for verdict, level in AGREEMENT.items():
            n, ok = got[verdict]
            held[verdict] += n == 0 or ok / n >= level
            n, ok = base[verdict]
            naive_held[verdict] += n == 0 or ok / n >= level
        coverage.append(sum(n for n, _ in got.values()) / args.test)
        naive_coverage.append(sum(n for n, _ in base.values()) / args.test)
    took = time.perf_counter() - t
    print(
        f"{args.runs} runs, {args.labels} calibration labels, {args.test} test claims each, "
        f"δ = {args.delta} ({took:.0f} s)"
    )
    for verdict, level in AGREEMENT.items():
        share = held[verdict] / args.runs
        mark = "met" if share >= 1 - args.delta else "NOT met"
        print(
            f"  {verdict:13s} agreement ≥ {level:.0%} in {share:.1%} of runs "
            f"(target ≥ {1 - args.delta:.0%}: {mark}); one uncalibrated threshold: "
            f"{naive_held[verdict] / args.runs:.1%}"
        )
    print(
        f"  coverage: cascade {np.mean(coverage):.1%} of claims decided, uncalibrated "
        f"{np.mean(naive_coverage):.1%} (ratio {np.mean(coverage) / np.mean(naive_coverage):.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
