"""Prediction-powered inference (PPI++) for a share: the arithmetic, vectorised.

The judge's verdict on every judged citation is cheap and biased; a person's
label on a few of them is costly and unbiased. PPI (Angelopoulos et al.,
Science 2023) combines both: the judge's mean over everything, corrected by
the mean judge error measured on the labelled records. PPI++ (Angelopoulos,
Duchi & Zrnic 2024) scales the judge's part by a power-tuning factor λ ∈ [0, 1]
chosen from the data, so a useless judge (λ → 0) falls back to the labels
alone and a good one (λ → 1) shrinks the interval. Stratified PPI (Fisch et
al. 2024) does this per stratum (mode, language, repository) with its own λ
and weights the strata by their share of judged citations.

Formulas follow ``ppi_py.ppi_mean_ci`` (the reference implementation) to the
last detail, so ``tests/calibrate/test_ppi.py`` can check them against it:

- labelled weights ``w`` normalised to mean 1 (sampling weights, README
  "Estimates"); the judge's part is unweighted over all judged records;
- ``θ₁ = mean(Ŷ_all) + mean(w·(Y − Ŷ))`` (plain PPI), gradients
  ``g = w·(Y − θ₁)``, ``ĝ = w·(Ŷ − θ₁)``;
- ``λ = cov₀(g, ĝ) / ((1 + n/N) · var₁(ĝ ∪ (Ŷ_all − θ₁)))`` clipped to [0, 1];
- ``θ = λ·mean(Ŷ_all) + mean(w·(Y − λŶ))``;
- ``se² = λ²·var₀(Ŷ_all)/N + var₀(w·(Y − λŶ))/n``; interval ``θ ± z·se``.

Every function takes the judged set as moments (count, sum, sum of squares of
Ŷ) rather than the array, so a million judged citations cost one
``bincount``; labelled arrays may carry leading batch axes, which is how the
Monte-Carlo coverage test runs thousands of simulations at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def z_value(level: float) -> float:
    """Two-sided normal quantile for a confidence level (0.95 → 1.959964…)."""
    # The standard library's quantile (AS241, ~1e-16) spares estimate the scipy.stats import.
    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


@dataclass(frozen=True, slots=True)
class MeanEstimate:
    """A share with its standard error and normal interval (arrays for batched input)."""

    estimate: FloatArray
    se: FloatArray
    low: FloatArray
    high: FloatArray
    lam: FloatArray
    """Power-tuning factor (0 for a classical, labels-only estimate)."""


@dataclass(frozen=True, slots=True)
class Moments:
    """Count, sum and sum of squares of the judge's predictions over judged records."""

    n: FloatArray
    total: FloatArray
    squares: FloatArray

    @classmethod
    def of(cls, yhat: FloatArray) -> Moments:
        """Moments of ``yhat`` along its last axis."""
        y = np.asarray(yhat, dtype=np.float64)
        return cls(
            n=np.asarray(float(y.shape[-1]) + np.zeros(y.shape[:-1])),
            total=np.asarray(y.sum(axis=-1)),
            squares=np.asarray((y * y).sum(axis=-1)),
        )


def _weights(w: FloatArray | None, shape: tuple[int, ...]) -> FloatArray:
    if w is None:
        return np.ones(shape)
    w = np.broadcast_to(np.asarray(w, dtype=np.float64), shape)
    return np.asarray(w / w.mean(axis=-1, keepdims=True))


def _interval(est: FloatArray, se: FloatArray, lam: FloatArray, level: float) -> MeanEstimate:
    z = z_value(level)
    return MeanEstimate(
        estimate=np.asarray(est),
        se=np.asarray(se),
        low=np.asarray(est - z * se),
        high=np.asarray(est + z * se),
        lam=np.asarray(lam),
    )


def power_tuning(
    y: FloatArray, yhat: FloatArray, judged: Moments, w: FloatArray | None = None
) -> FloatArray:
    """PPI++'s variance-minimising λ for a mean, clipped to [0, 1] (0 when Ŷ is constant)."""
    y = np.asarray(y, dtype=np.float64)
    yhat = np.asarray(yhat, dtype=np.float64)
    n = y.shape[-1]
    w = _weights(w, y.shape)
    big_n = judged.n
    theta1 = judged.total / big_n + (w * (y - yhat)).mean(axis=-1)
    g = w * (y - theta1[..., None])
    gh = w * (yhat - theta1[..., None])
    cov = ((g - g.mean(axis=-1, keepdims=True)) * (gh - gh.mean(axis=-1, keepdims=True))).mean(
        axis=-1
    )
    m = n + big_n
    s1 = gh.sum(axis=-1) + judged.total - big_n * theta1
    s2 = (gh * gh).sum(axis=-1) + judged.squares - 2.0 * theta1 * judged.total
    s2 = s2 + big_n * theta1 * theta1
    var = (s2 - s1 * s1 / m) / (m - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = cov / ((1.0 + n / big_n) * var)
    return np.asarray(np.clip(np.where(var > 1e-15, lam, 0.0), 0.0, 1.0))


def ppi_mean(
    y: FloatArray,
    yhat: FloatArray,
    judged: Moments,
    *,
    w: FloatArray | None = None,
    lam: float | FloatArray | None = None,
    level: float = 0.95,
) -> MeanEstimate:
    """PPI++ estimate of the mean label over the judged records, with its interval.

    Args:
        y: human labels of the labelled records (last axis: records).
        yhat: the judge's prediction for the same records.
        judged: moments of the judge's predictions over all judged records.
        w: sampling weights of the labelled records (inverse inclusion
            probabilities; normalised here), None for a uniform sample.
        lam: fixed power tuning (1 = plain PPI, 0 = labels only); None tunes it.
        level: confidence level of the interval.
    """
    y = np.asarray(y, dtype=np.float64)
    yhat = np.asarray(yhat, dtype=np.float64)
    n = y.shape[-1]
    lam_arr = (
        power_tuning(y, yhat, judged, w)
        if lam is None
        else np.asarray(lam, dtype=np.float64) + np.zeros(y.shape[:-1])
    )
    wn = _weights(w, y.shape)
    r = wn * (y - lam_arr[..., None] * yhat)
    mean_all = judged.total / judged.n
    var_all = np.maximum(judged.squares / judged.n - mean_all * mean_all, 0.0)
    est = lam_arr * mean_all + r.mean(axis=-1)
    se = np.sqrt(lam_arr * lam_arr * var_all / judged.n + r.var(axis=-1) / n)
    return _interval(est, se, lam_arr, level)


def classical_mean(
    y: FloatArray, *, w: FloatArray | None = None, level: float = 0.95
) -> MeanEstimate:
    """The labels-only (human-only) estimate: weighted mean ± z·sd/√n (``classical_mean_ci``)."""
    y = np.asarray(y, dtype=np.float64)
    wy = _weights(w, y.shape) * y
    est = wy.mean(axis=-1)
    se = wy.std(axis=-1) / np.sqrt(y.shape[-1])
    return _interval(est, se, np.zeros_like(est), level)


@dataclass(frozen=True, slots=True)
class StratumEstimate:
    """One stratum's PPI++ figures and its share of the judged records."""

    n_judged: int
    n_labelled: int
    share: float
    corrected: MeanEstimate
    human: MeanEstimate
    judge_mean: float


@dataclass(frozen=True, slots=True)
class StratifiedEstimate:
    """Stratified PPI++: strata weighted by their share of judged records."""

    corrected: MeanEstimate
    human: MeanEstimate
    judge_mean: float
    strata: tuple[StratumEstimate, ...]


def stratified_ppi(
    y: FloatArray,
    yhat: FloatArray,
    stratum: NDArray[np.int64],
    judged_yhat: FloatArray,
    judged_stratum: NDArray[np.int64],
    *,
    w: FloatArray | None = None,
    level: float = 0.95,
) -> StratifiedEstimate:
    """Stratified PPI++ with a power-tuned λ per stratum (Fisch et al. 2024).

    ``θ = Σ_h (N_h/N)·θ_h`` and ``se² = Σ_h (N_h/N)²·se_h²``; each θ_h is
    :func:`ppi_mean` on stratum h. The human-only figure is the classical
    interval over all labels (what the labels give without the judge).
    Every stratum code in ``judged_stratum`` must have labelled records;
    callers merge strata with too few first (:func:`merge_strata`).

    Raises:
        ValueError: a stratum has judged records but fewer than 2 labels.
    """
    y = np.asarray(y, dtype=np.float64)
    yhat = np.asarray(yhat, dtype=np.float64)
    judged_yhat = np.asarray(judged_yhat, dtype=np.float64)
    k = int(max(judged_stratum.max(initial=-1), stratum.max(initial=-1))) + 1
    counts = np.bincount(judged_stratum, minlength=k).astype(np.float64)
    totals = np.bincount(judged_stratum, weights=judged_yhat, minlength=k)
    squares = np.bincount(judged_stratum, weights=judged_yhat * judged_yhat, minlength=k)
    big_n = counts.sum()
    weights = None if w is None else np.asarray(w, dtype=np.float64)
    parts: list[StratumEstimate] = []
    est = 0.0
    var = 0.0
    for h in range(k):
        if counts[h] == 0:
            continue
        mask = stratum == h
        if int(mask.sum()) < 2:
            raise ValueError(f"stratum {h} has {int(mask.sum())} labelled record(s); needs ≥ 2")
        wh = None if weights is None else weights[mask]
        moments = Moments(
            n=np.asarray(counts[h]), total=np.asarray(totals[h]), squares=np.asarray(squares[h])
        )
        c = ppi_mean(y[mask], yhat[mask], moments, w=wh, level=level)
        share = counts[h] / big_n
        est += share * float(c.estimate)
        var += share * share * float(c.se) ** 2
        parts.append(
            StratumEstimate(
                n_judged=int(counts[h]),
                n_labelled=int(mask.sum()),
                share=float(share),
                corrected=c,
                human=classical_mean(y[mask], w=wh, level=level),
                judge_mean=float(totals[h] / counts[h]),
            )
        )
    lam = np.asarray(float("nan"))
    corrected = _interval(np.asarray(est), np.asarray(np.sqrt(var)), lam, level)
    return StratifiedEstimate(
        corrected=corrected,
        human=classical_mean(y, w=weights, level=level),
        judge_mean=float(judged_yhat.mean()),
        strata=tuple(parts),
    )


def merge_strata(
    labelled_cells: NDArray[np.int64], n_cells: int, min_labelled: int
) -> NDArray[np.int64]:
    """Map cells to strata: cells with ≥ ``min_labelled`` labels stand alone, the rest pool.

    Any partition of the judged records is a valid stratification when the
    labelled records are a uniform sample (README "Estimates"); small cells
    would give unstable variances, so they are pooled into one stratum, and a
    pool still short of labels joins the stratum with the most labels.
    Returns ``stratum_of_cell`` (length ``n_cells``), strata numbered from 0.
    """
    n = np.bincount(labelled_cells, minlength=n_cells)
    big = np.flatnonzero(n >= min_labelled)
    out = np.full(n_cells, -1, dtype=np.int64)
    out[big] = np.arange(big.size)
    small = out < 0
    if not small.any():
        return out
    pooled = int(n[small].sum())
    if big.size == 0:
        return np.zeros(n_cells, dtype=np.int64)
    if pooled >= min_labelled:
        out[small] = big.size
    else:
        out[small] = int(out[big[np.argmax(n[big])]])
    return out


__all__ = [
    "MeanEstimate",
    "Moments",
    "StratifiedEstimate",
    "StratumEstimate",
    "classical_mean",
    "merge_strata",
    "power_tuning",
    "ppi_mean",
    "stratified_ppi",
    "z_value",
]
