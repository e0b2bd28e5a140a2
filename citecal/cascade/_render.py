"""A cascade file for people: one row per tier (README "The cascade")."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from citecal.cascade._cascade import VERDICTS, CascadeSpec, TierThreshold


def _side(t: TierThreshold) -> str:
    if t.value is None:
        return f"never ({t.candidates} candidates)"
    ci = f" [{t.interval[0]:.1%}, {t.interval[1]:.1%}]" if t.interval else ""
    agree = f"{t.agreement:.1%}" if t.agreement is not None else "–"
    return f"≥ {t.value:.3f}: {t.n} decided, {agree}{ci}"


def render_cascade_table(spec: CascadeSpec, console: Console) -> None:
    """Per tier: labels reached and decided, per-verdict threshold and agreement, cost."""
    levels = ", ".join(f"{k} ≥ {v:.0%}" for k, v in spec.agreement.items())
    n = spec.labels.get("n", "?")
    table = Table(
        title=f"Cascade on {n} labels ({levels} with probability ≥ {1 - spec.delta:.0%})",
        title_justify="left",
    )
    for head in ("tier", "reached", "decided", "coverage", *VERDICTS, "USD / 1 000"):
        table.add_column(head, justify="left" if head in ("tier", *VERDICTS) else "right")
    for tier in spec.tiers:
        cov = f"{tier.decided / tier.reached:.1%}" if tier.reached else "–"
        cost = f"{tier.cost_per_1000:.4f}" if tier.cost_per_1000 is not None else "–"
        table.add_row(
            tier.name,
            str(tier.reached),
            str(tier.decided),
            cov,
            *(_side(tier.thresholds[v]) for v in VERDICTS),
            cost,
        )
    console.print(table)
    total = sum(t.decided for t in spec.tiers) + spec.abstained
    share = f" ({spec.abstained / total:.1%})" if total else ""
    console.print(f"abstained (sent to a person): {spec.abstained}{share}")


__all__ = ["render_cascade_table"]
