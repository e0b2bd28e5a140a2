"""A cascade file for people: one row per tier (README "The cascade")."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from scipy.stats import beta

from citecal.cascade._cascade import VERDICTS, CascadeSpec, Tier, TierThreshold


def _side(t: TierThreshold) -> str:
    if t.value is None:
        return f"never ({t.candidates} candidates)"
    ci = f" [{t.interval[0]:.1%}, {t.interval[1]:.1%}]" if t.interval else ""
    agree = f"{t.agreement:.1%}" if t.agreement is not None else "–"
    return f"≥ {t.value:.3f}: {t.n} decided, {agree}{ci}"


def tier_agreement(tier: Tier) -> tuple[float, tuple[float, float]] | None:
    """Agreement of everything the tier decides on its labels, with a Clopper–Pearson 95%."""
    n = sum(t.n for t in tier.thresholds.values() if t.value is not None)
    errors = sum(t.errors for t in tier.thresholds.values() if t.value is not None)
    if not n:
        return None
    k = n - errors
    lo = float(beta.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
    hi = float(beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return k / n, (lo, hi)


def render_cascade_table(spec: CascadeSpec, console: Console) -> None:
    """Per tier: labels reached and decided, per-verdict threshold and agreement, cost."""
    levels = ", ".join(f"{k} ≥ {v:.0%}" for k, v in spec.agreement.items())
    n = spec.labels.get("n", "?")
    table = Table(
        title=f"Cascade on {n} labels ({levels} with probability ≥ {1 - spec.delta:.0%})",
        title_justify="left",
    )
    heads = ("tier", "reached", "decided", "coverage", "agreement", *VERDICTS, "USD / 1 000")
    for head in heads:
        table.add_column(head, justify="left" if head in ("tier", *VERDICTS) else "right")
    for tier in spec.tiers:
        cov = f"{tier.decided / tier.reached:.1%}" if tier.reached else "–"
        cost = f"{tier.cost_per_1000:.4f}" if tier.cost_per_1000 is not None else "–"
        agree = tier_agreement(tier)
        shown = "–" if agree is None else f"{agree[0]:.1%} [{agree[1][0]:.1%}, {agree[1][1]:.1%}]"
        name = tier.name + (f" ({tier.confidence})" if tier.confidence else "")
        table.add_row(
            name,
            str(tier.reached),
            str(tier.decided),
            cov,
            shown,
            *(_side(tier.thresholds[v]) for v in VERDICTS),
            cost,
        )
    console.print(table)
    total = sum(t.decided for t in spec.tiers) + spec.abstained
    share = f" ({spec.abstained / total:.1%})" if total else ""
    console.print(f"abstained (sent to a person): {spec.abstained}{share}")
    if spec.cost is not None:
        c = spec.cost
        ratio = f" ({c.ratio:.2f}×)" if c.ratio is not None else ""
        console.print(
            f"judge tiers: ${c.per_1000:.4f} per 1 000 claims (every claim reaching a judge "
            f"tier pays for it, K answers included) vs ${c.baseline_per_1000:.4f} judging "
            f"every claim with {c.baseline_model}{ratio}"
        )


__all__ = ["render_cascade_table"]
