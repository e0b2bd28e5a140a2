"""Prediction-powered estimates from an active sample, and how many labels a width needs.

``citecal push --strategy active`` draws each record independently with a
recorded probability π (higher where the judge is unsure), possibly over
several rounds (README "How many labels"). Weighting each label by 1/π keeps
the estimate unbiased (Zrnic & Candès, "Active Statistical Inference", ICML
2024). The judge enters as a control variate fitted on the labels,
``Ŷ ↦ a + λ·Ŷ`` (weighted least squares, λ clipped to [0, 1] as in PPI++):

- ``θ = a + λ·mean(Ŷ_all)`` — the same point as ``ppi_py.ppi_mean_pointestimate``
  with weights 1/π (``tests/calibrate/test_active.py`` checks it against it);
- ``se² = Σ_S (1 − π)·r²/π² / N²`` with ``r = Y − a − λŶ``: the exact
  variance of the inverse-probability estimator under independent (Poisson)
  draws, estimated from the sample, over the judged citations as they are.

Pure: arrays in, numbers out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from citecal.calibrate._ppi import FloatArray, Moments, z_value


@dataclass(frozen=True, slots=True)
class ActiveEstimate:
    """The corrected and labels-only figures of an active sample, and what planning needs."""

    estimate: float
    se: float
    lam: float
    human_estimate: float
    human_se: float
    uniform_labels: float | None
    """Labels a uniform random sample would need to give ``se`` (the design's gain)."""
    residual_var: float
    """Σ w·r²/Σ w: the residual variance a uniform sample of the judged citations would see."""
    spread: float
    """``N·Σ_S w·r²/π / Σ_S w``: an estimate of ``Σ_all r²/π`` (the design's cost at n labels)."""
    total: float
    """``N·σ²``: an estimate of ``Σ_all r²``."""
    n: int
    big_n: float

    def interval(self, level: float) -> tuple[float, float]:
        """``estimate ± z·se``."""
        z = z_value(level)
        return self.estimate - z * self.se, self.estimate + z * self.se


def active_mean(y: FloatArray, yhat: FloatArray, pi: FloatArray, judged: Moments) -> ActiveEstimate:
    """Inverse-probability-weighted PPI estimate of the mean label over the judged records.

    Args:
        y: labels of the labelled records.
        yhat: the judge's prediction for them.
        pi: their probability of being labelled (``sampling_probability``).
        judged: moments of the judge's predictions over every judged record.
    """
    y = np.asarray(y, dtype=np.float64)
    yhat = np.asarray(yhat, dtype=np.float64)
    pi = np.asarray(pi, dtype=np.float64)
    w = 1.0 / pi
    big_n = float(judged.n)
    sw = w.sum()
    ybar = (w * y).sum() / sw
    hbar = (w * yhat).sum() / sw
    sxx = (w * (yhat - hbar) ** 2).sum()
    lam = float(np.clip((w * (y - ybar) * (yhat - hbar)).sum() / sxx, 0.0, 1.0)) if sxx > 0 else 0.0
    a = ybar - lam * hbar
    estimate = a + lam * float(judged.total) / big_n
    r = y - a - lam * yhat
    var = float(((1.0 - pi) * r * r * w * w).sum()) / big_n**2
    rh = y - ybar
    human_var = float(((1.0 - pi) * rh * rh * w * w).sum()) / big_n**2
    sigma2 = float((w * r * r).sum() / sw)
    if var <= 0:
        uniform = big_n
    elif sigma2 <= 0:
        uniform = None
    else:
        uniform = 1.0 / (var / sigma2 + 1.0 / big_n)
    return ActiveEstimate(
        estimate=float(estimate),
        se=math.sqrt(max(var, 0.0)),
        lam=lam,
        human_estimate=float(ybar),
        human_se=math.sqrt(max(human_var, 0.0)),
        uniform_labels=uniform,
        residual_var=sigma2,
        spread=float((r * r * w * w).sum() * big_n / sw),
        total=sigma2 * big_n,
        n=int(y.size),
        big_n=big_n,
    )


@dataclass(frozen=True, slots=True)
class LabelPlan:
    """Labels expected to bring the corrected interval to a width, by design."""

    current: float | None
    """Under the current design (None: the width is out of reach)."""
    uniform: float | None
    """Under uniform random sampling."""


def active_plan(est: ActiveEstimate, width: float, level: float) -> LabelPlan:
    """Labels an active design of the same shape, and a uniform one, need for ``width``.

    Scaling the design to m labels scales every π by m/n (records stay below
    π = 1 in practice), so ``se²(m) = ((n/m)·Σ r²/π − Σ r²)/N²`` with both sums
    over all judged records, estimated from the labels (:attr:`ActiveEstimate.spread`
    and :attr:`~ActiveEstimate.total`, ratio estimates: each weighted sum divided by Σ w/N,
    which removes the noise of the random sample size from the plan). A uniform sample
    of m labels has ``se²(m) = σ²·(1/m − 1/N)``. Solving ``z·se = width/2`` gives m.
    """
    h2 = (width / (2.0 * z_value(level))) ** 2
    n, big_n = est.n, est.big_n
    current = n * est.spread / (big_n**2 * h2 + est.total) if est.spread > 0 else 0.0
    uniform = 1.0 / (h2 / est.residual_var + 1.0 / big_n) if est.residual_var > 0 else 0.0
    return LabelPlan(current=min(current, big_n), uniform=min(uniform, big_n))


def scaled_plan(n: int, se: float, width: float, level: float, big_n: float) -> float:
    """Labels for ``width`` when the variance falls as 1/labels (uniform and stratified designs)."""
    h = width / (2.0 * z_value(level))
    return min(float(big_n), n * (se / h) ** 2) if se > 0 else 0.0


__all__ = ["ActiveEstimate", "LabelPlan", "active_mean", "active_plan", "scaled_plan"]
