"""Vectorised cluster bootstrap by report.

Annotations of one report are not independent (same author, same repository,
often the same judge mistake), so confidence intervals resample whole reports.
Doing that with a Python loop over 1 000 resamples recomputing pandas/scipy
figures costs seconds per figure; instead every figure here is a function of
per-report *sufficient statistics* (contingency tables), so one resample is a
weighted sum of those tables:

1. draw all resamples at once: ``rng.integers(0, n_reports, (B, n_reports))``;
2. turn them into a ``(B, n_reports)`` matrix of how often each report was drawn;
3. multiply by the ``(n_reports, cells)`` table matrix: ``(B, cells)`` tables;
4. evaluate agreement, kappa, weighted kappa and Spearman's ρ (midranks from the
   resampled margins, so ties are handled exactly as scipy does) on all ``B``
   tables with array arithmetic.

The point estimates themselves come from scipy / scikit-learn; the tests check
that these table formulas reproduce them on the unresampled data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

MAX_TABLE_CELLS = 4_000_000
"""Upper bound on n_reports × judge-score levels × 4 kept in memory for ρ."""


@dataclass(frozen=True, slots=True)
class Codes:
    """Rows coded for the table formulas: cluster index and category codes."""

    cluster: IntArray
    n_clusters: int


def cluster_codes(labels: NDArray[np.object_] | list[str]) -> Codes:
    """Integer cluster index per row, clusters in sorted order of their labels.

    A hash table (``pd.factorize``) instead of sorting every row's string:
    the same codes as ``np.unique(labels, return_inverse=True)``, so the same
    resamples for the same seed.
    """
    codes, uniques = pd.factorize(
        pd.Series(np.asarray(labels, dtype=object)).astype(str), sort=True
    )
    inv = codes.astype(np.int64)
    return Codes(cluster=inv, n_clusters=len(uniques))


def resample_counts(n_clusters: int, resamples: int, rng: np.random.Generator) -> FloatArray:
    """How often each cluster is drawn in each resample, shape ``(resamples, n_clusters)``."""
    idx = rng.integers(0, n_clusters, size=(resamples, n_clusters))
    flat = idx + (np.arange(resamples, dtype=np.int64) * n_clusters)[:, None]
    counts = np.bincount(flat.ravel(), minlength=resamples * n_clusters)
    return counts.reshape(resamples, n_clusters).astype(np.float64)


def cluster_tables(codes: Codes, x: IntArray, y: IntArray, nx: int, ny: int) -> FloatArray:
    """Per-cluster contingency tables of codes ``x`` × ``y``: ``(n_clusters, nx * ny)``."""
    flat = (codes.cluster * nx + x) * ny + y
    counts = np.bincount(flat, minlength=codes.n_clusters * nx * ny)
    return counts.reshape(codes.n_clusters, nx * ny).astype(np.float64)


EXACT_FLOAT32 = 2**24
"""Integers below this are exact in float32, and so is every sum that stays below it."""


def resampled_tables(weights: FloatArray, tables: FloatArray, nx: int, ny: int) -> FloatArray:
    """``(B, nx, ny)`` tables of every resample (plus nothing else: a matrix product).

    Both factors hold counts, so the product holds integers; when no cell can
    reach 2²⁴ (largest draw count × largest column total bounds every partial
    sum) the product is computed in float32, exactly the same integers in
    half the time, else in float64.
    """
    bound = float(weights.max(initial=0.0)) * float(tables.sum(axis=0).max(initial=0.0))
    if bound < EXACT_FLOAT32:
        product = (weights.astype(np.float32) @ tables.astype(np.float32)).astype(np.float64)
    else:
        product = weights @ tables
    return product.reshape(weights.shape[0], nx, ny)


def agreement_from_tables(t: FloatArray) -> FloatArray:
    """Share on the diagonal of each ``(…, k, k)`` table."""
    n = t.sum(axis=(-2, -1))
    diag = np.trace(t, axis1=-2, axis2=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(diag / n, dtype=np.float64)


def kappa_from_tables(t: FloatArray, weights: str | None = None) -> FloatArray:
    """Cohen's kappa (unweighted, ``"linear"`` or ``"quadratic"``) of each table.

    Same definition as :func:`sklearn.metrics.cohen_kappa_score`:
    ``κ = 1 − Σ w·O / Σ w·E`` with ``E`` the outer product of the margins.
    """
    k = t.shape[-1]
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    if weights is None:
        w = (i != j).astype(np.float64)
    elif weights == "linear":
        w = np.abs(i - j).astype(np.float64)
    else:
        w = ((i - j) ** 2).astype(np.float64)
    n = t.sum(axis=(-2, -1))
    rows = t.sum(axis=-1)
    cols = t.sum(axis=-2)
    expected = rows[..., :, None] * cols[..., None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (t * w).sum(axis=(-2, -1)) / n
        chance = (expected * w).sum(axis=(-2, -1)) / (n * n)
        return np.asarray(1.0 - observed / chance, dtype=np.float64)


def _midranks(margin: FloatArray) -> FloatArray:
    """Average rank of every level given level counts (ties share the mean rank)."""
    return np.cumsum(margin, axis=-1) - (margin - 1.0) / 2.0


def spearman_from_tables(t: FloatArray) -> FloatArray:
    """Spearman's ρ of each ``(…, nx, ny)`` table of ordered levels, with midranks.

    ρ is Pearson's r of the ranks; with a contingency table the ranks of a
    level are known from the cumulative margins, so no sort is needed.
    """
    n = t.sum(axis=(-2, -1))
    mx = t.sum(axis=-1)
    my = t.sum(axis=-2)
    mean = (n + 1.0) / 2.0
    rx = _midranks(mx) - mean[..., None]
    ry = _midranks(my) - mean[..., None]
    cov = np.einsum("...ij,...i,...j->...", t, rx, ry)
    vx = (mx * rx * rx).sum(axis=-1)
    vy = (my * ry * ry).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = cov / np.sqrt(vx * vy)
    return np.asarray(np.where((vx > 0) & (vy > 0), rho, np.nan), dtype=np.float64)


def percentile_ci(samples: FloatArray, level: float = 0.95) -> tuple[list[float] | None, int]:
    """Percentile interval of the finite samples and how many samples were undefined."""
    finite = samples[np.isfinite(samples)]
    undefined = int(samples.size - finite.size)
    if finite.size < max(10, samples.size // 2):
        return None, undefined
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return [float(low), float(high)], undefined


def level_codes(values: FloatArray, max_levels: int) -> tuple[IntArray, int, bool]:
    """Ordered integer codes of ``values``; quantile-binned when there are too many levels.

    Returns the codes, the number of levels and whether binning was needed
    (ranks of binned values approximate the exact ranks; callers note it).
    """
    uniq, inverse = np.unique(values, return_inverse=True)
    if uniq.size <= max_levels:
        return inverse.astype(np.int64).ravel(), int(uniq.size), False
    # Each value's position in the stable sort (the inverse permutation: one sort, not two).
    order = np.empty(values.size, dtype=np.int64)
    order[np.argsort(values, kind="stable")] = np.arange(values.size, dtype=np.int64)
    codes = (order * max_levels // values.size).astype(np.int64)
    return codes, max_levels, True
