"""Bias-corrected citation precision: judged citations + a few human labels → an interval.

The population is every structurally valid citation the judge (or a rule)
decided; the figure is the share of them that a person would say supports its
claim (score ≥ 2, :mod:`citecal.support`; with several annotators, the share
of them who say so). The judge's own share is biased by its errors; the
labels alone are unbiased but few. Stratified PPI++ (:mod:`._ppi`) combines
them: valid when the labelled records are a uniform random sample of the
judged ones, or a sample with known sampling weights (``citecal push
--sample``), README "Estimates".

Pure: takes the judged frame (:mod:`._judged`) and the per-record labels
(:func:`._table.prepare_labels`) and returns an :class:`EstimateReport`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from citecal.calibrate import _ppi
from citecal.calibrate._active import active_mean, active_plan, scaled_plan
from citecal.calibrate._estimate_models import (
    Cell,
    EstimateReport,
    Figures,
    GateResult,
    Interval,
    LabelPlanReport,
    Point,
    Predictor,
    Stratification,
)
from citecal.calibrate._table import judge_support
from citecal.errors import InputError

STRATA: tuple[str, ...] = ("mode", "language", "repo")
"""Dimensions the overall estimate is stratified by (when they vary)."""

MIN_LABELLED = 20
"""Cells with fewer labelled records are pooled (their variance would be unreliable)."""

MISSING = "(none)"

GATE_NAMES: tuple[str, ...] = ("precision",)
"""``--fail-under`` names: the corrected interval's lower bound must reach the threshold."""


def _interval(est: _ppi.MeanEstimate) -> Interval:
    e = float(est.estimate)
    lo, hi = float(est.low), float(est.high)
    if not np.isfinite(e):
        return Interval(estimate=None, ci=None)
    return Interval(estimate=e, ci=[max(0.0, lo), min(1.0, hi)])


def _effective(n: int, corrected_se: float, human_se: float) -> float | None:
    """Labels the classical interval would need to match the corrected one: n·var_h/var_c."""
    if not (np.isfinite(corrected_se) and np.isfinite(human_se)) or corrected_se <= 0:
        return None
    return float(n * (human_se / corrected_se) ** 2)


def _codes(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    codes, uniques = pd.factorize(values.fillna(MISSING).astype(str), sort=True)
    return codes.astype(np.int64), [str(u) for u in uniques]


def _group_figures(
    y: np.ndarray,
    yhat_lab: np.ndarray,
    w: np.ndarray | None,
    lab_codes: np.ndarray,
    yhat: np.ndarray,
    pos: np.ndarray,
    codes: np.ndarray,
    names: list[str],
    level: float,
) -> dict[str, Figures]:
    """Unstratified PPI++ within each value of one dimension."""
    k = len(names)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    totals = np.bincount(codes, weights=yhat, minlength=k)
    squares = np.bincount(codes, weights=yhat * yhat, minlength=k)
    supports = np.bincount(codes, weights=pos, minlength=k)
    out: dict[str, Figures] = {}
    for h, name in enumerate(names):
        mask = lab_codes == h
        n = int(mask.sum())
        judge = Point(estimate=float(supports[h] / counts[h]))
        if n < 2:
            out[name] = Figures(
                n_judged=int(counts[h]),
                n_labelled=n,
                corrected=Interval(estimate=None, ci=None),
                judge_only=judge,
                human_only=Interval(estimate=None, ci=None),
                effective_labels=None,
                notes=[f"{n} labelled record(s): an interval needs at least 2"],
            )
            continue
        wh = None if w is None else w[mask]
        moments = _ppi.Moments(
            n=np.asarray(counts[h]), total=np.asarray(totals[h]), squares=np.asarray(squares[h])
        )
        c = _ppi.ppi_mean(y[mask], yhat_lab[mask], moments, w=wh, level=level)
        hu = _ppi.classical_mean(y[mask], w=wh, level=level)
        notes = []
        if n < MIN_LABELLED:
            notes.append(f"only {n} labelled records: the normal interval may be too narrow")
        out[name] = Figures(
            n_judged=int(counts[h]),
            n_labelled=n,
            corrected=_interval(c),
            judge_only=judge,
            human_only=_interval(hu),
            effective_labels=_effective(n, float(c.se), float(hu.se)),
            power_tuning=float(c.lam),
            notes=notes,
        )
    return out


DESIGNS: frozenset[str] = frozenset({"census", "all", "stratified", "active", "uncertain"})
"""Sampling designs ``citecal push`` records; any other is refused (README "Estimates")."""


@dataclass(frozen=True, slots=True)
class Design:
    """How the labelled records were drawn, as far as the annotation table tells."""

    name: str
    """``uniform`` (assumed), ``census``, ``census (random order)``, ``all``, ``stratified``
    or ``active``."""
    weights: np.ndarray | None
    probabilities: np.ndarray | None
    """Active design: each labelled record's chance of being labelled."""
    sampling: str
    notes: list[str]


def _column(labels: pd.DataFrame, name: str) -> np.ndarray:
    if name not in labels:
        return np.full(len(labels), np.nan)
    return pd.to_numeric(labels[name], errors="coerce").to_numpy(dtype=np.float64)


def _active_design(labels: pd.DataFrame, lab: pd.DataFrame) -> Design:
    """Probabilities of an active sample; partial labelling only where it stays random."""
    pi = _column(lab, "sampling_probability")
    if np.isnan(pi).any():
        raise InputError(
            f"{int(np.isnan(pi).sum())} labelled record(s) of an active sample have no "
            "sampling_probability: pull the annotations again with this citecal (README "
            "'How many labels')"
        )
    rounds_all = _column(labels, "sampling_round")
    drawn_all = _column(labels, "sampling_drawn")
    rounds = sorted({int(r) for r in rounds_all if np.isfinite(r)})
    notes: list[str] = []
    scale = np.ones(len(lab))
    lab_rounds = _column(lab, "sampling_round")
    for t in rounds:
        mask = rounds_all == t
        labelled = int(mask.sum())
        drawn = int(np.nanmax(drawn_all[mask])) if np.isfinite(drawn_all[mask]).any() else 0
        if drawn and labelled < drawn:
            if len(rounds) > 1:
                raise InputError(
                    f"round {t} of the active sample has {labelled} of its {drawn} records "
                    "labelled: rounds combine only when each is fully labelled; label the rest "
                    "(`citecal status --dataset NAME` shows what is left) and pull again"
                )
            if np.isnan(_column(labels, "sampling_order")).any():
                raise InputError(
                    f"{labelled} of the {drawn} records of the active sample are labelled, in "
                    "an order that was not recorded as random: label the rest, or push the "
                    "evaluation again to a new dataset (records are now served in a seeded "
                    "random order) (README 'Estimates')"
                )
            scale[lab_rounds == t] = labelled / drawn
            notes.append(
                f"{labelled} of the {drawn} drawn records are labelled; they were served in a "
                "recorded random order, so each record's probability is scaled by "
                f"{labelled}/{drawn}"
            )
    how = (
        f"active sample, {len(rounds)} round(s), inverse-probability weights "
        "(README 'How many labels')"
    )
    return Design("active", 1.0 / (pi * scale), pi * scale, how, notes)


def _design(labels: pd.DataFrame, lab: pd.DataFrame, n_population: int) -> Design:
    """The design of the labelled records ``lab`` (of all labelled records ``labels``).

    Refuses what gives no valid interval: a non-random pick (``uncertain``),
    an unknown design, a mix of weighted and unweighted records, and a partly
    labelled census whose records were not served in a recorded random order
    (README "Estimates").
    """
    strategies = set(lab["sampling_strategy"].dropna().astype(str))
    if "uncertain" in strategies:
        raise InputError(
            "the labelled records were chosen by `citecal push --strategy uncertain` (least "
            "certain first), not at random, so no interval from them is valid: push a random "
            "sample (--sample N --strategy all, or --strategy active) and label that "
            "(README 'Estimates')"
        )
    unknown = sorted(strategies - DESIGNS)
    if unknown:
        raise InputError(
            f"the labelled records were drawn by an unknown design {unknown[0]!r}: their "
            "probabilities are unknown, so no interval from them is valid; label a sample "
            f"citecal push drew ({', '.join(sorted(DESIGNS - {'uncertain'}))})"
        )
    if "active" in strategies:
        if len(strategies) > 1 or lab["sampling_strategy"].isna().any():
            raise InputError(
                "the labelled records mix an active sample with other designs: estimate "
                "one dataset's sample at a time"
            )
        return _active_design(labels, lab)
    weights = lab["sampling_weight"].to_numpy(dtype=np.float64)
    have = ~np.isnan(weights)
    if not have.any():
        return Design(
            "uniform",
            None,
            None,
            "assumed a uniform random sample of the judged citations (no sampling_weight column)",
            [
                "the interval is valid only if the labelled records were drawn uniformly at "
                "random from these judged citations (README 'Estimates')"
            ],
        )
    if not have.all():
        raise InputError(
            f"{int((~have).sum())} labelled record(s) have no sampling_weight while "
            f"{int(have.sum())} do: label one weighted sample (citecal push --sample) or none"
        )
    if strategies == {"census"} and len(lab) < n_population:
        if np.isnan(_column(lab, "sampling_order")).any():
            raise InputError(
                f"only {len(lab)} of the {n_population} citations pushed as a census are "
                "labelled, in the order the server served them, which is not a random sample: "
                "no interval from them is valid; label all of them, or push the evaluation "
                "again to a new dataset (citecal push now serves records in a seeded random "
                "order, so the first labelled are a uniform random subset) (README 'Estimates')"
            )
        return Design(
            "census (random order)",
            None,
            None,
            f"census served in a recorded random order: the {len(lab)} of {n_population} "
            "labelled first are a uniform random sample",
            [],
        )
    how = ", ".join(sorted(strategies)) or "unknown strategy"
    return Design(
        how,
        weights,
        None,
        f"weighted sample ({how}), inverse-probability weights from citecal push",
        [],
    )


def _degenerate_labels(y: np.ndarray, level: float) -> list[str]:
    """Why the intervals have zero width when every label is the same (README "Estimates").

    Every interval here is built from the labels' variance; labels that never
    vary give a width of zero that means nothing. The exact (Clopper-Pearson)
    interval of k = 0 or n supported among n says how far precision could
    still be from the sample's 0 or 1.
    """
    n = int(y.size)
    k = int(y.sum())
    if 0 < k < n:
        return []
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    what = "unsupported (human score ≤ 1)" if k == 0 else "supported (human score ≥ 2)"
    return [
        f"all {n} labelled records are {what}: the intervals have zero width because the "
        f"labels do not vary, not because precision is known; with {k} of {n} supported, "
        f"the exact {level:.0%} interval is [{ci.low:.3f}, {ci.high:.3f}]: label more records"
    ]


def estimate_frame(
    judged: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    judged_names: Sequence[str] = (),
    annotations_name: str = "",
    by: Sequence[str] = STRATA,
    min_labelled: int = MIN_LABELLED,
    predictor: Predictor = "score",
    level: float = 0.95,
    target_width: float | None = None,
) -> EstimateReport:
    """Corrected, judge-only and human-only precision with stratified PPI++.

    Args:
        judged: one row per judged citation (:data:`._judged.JUDGED_COLUMNS`).
        labels: one row per labelled record (:func:`._table.prepare_labels`).
        judged_names / annotations_name: how the report names its inputs.
        by: stratification dimensions (columns of ``judged``).
        min_labelled: cells with fewer labels are pooled.
        predictor: the judge's support ``score`` (its probability, else the
            verdict/confidence mapping) or its binary ``verdict``.
        level: confidence level.
        target_width: plan the labels that bring the corrected interval to
            this width (README "How many labels").

    Raises:
        InputError: no decided judged citation, no labelled record among them,
            a non-random or partly weighted sample, an unknown dimension.
    """
    for dim in by:
        if dim not in judged.columns:
            raise InputError(f"cannot stratify by {dim!r}: use {', '.join(STRATA)}")
    notes: list[str] = []
    score, pos = judge_support(
        judged["verdict"].to_numpy(dtype=object),
        judged["confidence"].to_numpy(dtype=object),
        judged["score"].to_numpy(dtype=np.float64),
    )
    yhat_all = score if predictor == "score" else pos
    decided = ~np.isnan(pos) & ~np.isnan(yhat_all)
    if not decided.any():
        raise InputError("no judged citation has a verdict (all unverified?): nothing to estimate")
    left_out = int((~decided).sum())
    if left_out:
        notes.append(
            f"{left_out} judged citation(s) without a decision (unverified) left out: the "
            "estimate is over decided citations"
        )
    pop = judged.loc[decided].reset_index(drop=True)
    yhat = np.asarray(yhat_all[decided], dtype=np.float64)
    posd = np.asarray(pos[decided], dtype=np.float64)

    index = pd.Series(np.arange(len(pop)), index=pd.Index(pop["record_id"].astype(str)))
    at = index.reindex(labels["record_id"].astype(str)).to_numpy()
    found = ~np.isnan(at)
    outside = int((~found).sum())
    if outside:
        notes.append(
            f"{outside} labelled record(s) are not among the decided judged citations and "
            "were left out"
        )
    if not found.any():
        raise InputError(
            "no labelled record is among the judged citations: were the annotations pushed "
            "from these evaluations (record ids are computed as citecal push does)?"
        )
    lab = labels.loc[found].reset_index(drop=True)
    rows = at[found].astype(np.int64)
    y = lab["label"].to_numpy(dtype=np.float64)
    if len(lab) < 2:
        raise InputError("only 1 labelled record among the judged citations: an interval needs 2")
    notes.extend(_degenerate_labels(y, level))
    design = _design(labels, lab, len(pop))
    notes.extend(design.notes)
    w = design.weights
    sampling = design.sampling
    if design.probabilities is not None:
        return _active_report(
            pop,
            lab,
            rows,
            y,
            yhat,
            posd,
            design,
            judged_names=judged_names,
            annotations_name=annotations_name,
            by=by,
            min_labelled=min_labelled,
            predictor=predictor,
            level=level,
            notes=notes,
            target_width=target_width,
        )

    # Cells: the cross of the stratification dimensions; small cells pooled. Each
    # dimension is factorised once and its codes serve the cells and the breakdowns.
    coded = {dim: _codes(pop[dim]) for dim in by}
    dims = [d for d in by if len(coded[d][1]) > 1]
    combined = np.zeros(len(pop), dtype=np.int64)
    for d in dims:
        combined = combined * len(coded[d][1]) + coded[d][0]
    first_rows, cell = np.unique(combined, return_index=True, return_inverse=True)[1:]
    cell = cell.astype(np.int64).ravel()
    n_cells = int(first_rows.size)
    stratum_of_cell = _ppi.merge_strata(cell[rows], n_cells, min_labelled)
    stratum = stratum_of_cell[cell]
    result = _ppi.stratified_ppi(y, yhat[rows], stratum[rows], yhat, stratum, w=w, level=level)
    cells: list[Cell] = []
    n_strata = int(stratum_of_cell.max()) + 1
    for h, part in zip(range(n_strata), result.strata, strict=True):
        members = np.flatnonzero(stratum_of_cell == h)
        first = int(first_rows[members[0]])
        key = (
            {d: coded[d][1][coded[d][0][first]] for d in dims}
            if dims and members.size == 1
            else {d: "(pooled)" for d in dims}
        )
        cells.append(
            Cell(
                key=key,
                cells=int(members.size),
                n_judged=part.n_judged,
                n_labelled=part.n_labelled,
                share=part.share,
                power_tuning=float(part.corrected.lam),
                corrected=_interval(part.corrected),
            )
        )
    if n_strata < n_cells:
        notes.append(
            f"{n_cells} cells of {' × '.join(dims)} pooled into {n_strata} strata "
            f"(cells with fewer than {min_labelled} labelled records are pooled)"
        )
    strata: dict[str, dict[str, Figures]] = {}
    for dim in by:
        codes, names = coded[dim]
        strata[dim] = _group_figures(y, yhat[rows], w, codes[rows], yhat, posd, codes, names, level)
    n = len(lab)
    return EstimateReport(
        judged=list(judged_names),
        annotations=annotations_name,
        predictor=predictor,
        level=level,
        n_judged=len(pop),
        n_labelled=n,
        corrected=_interval(result.corrected),
        judge_only=Point(estimate=float(posd.mean())),
        human_only=_interval(result.human),
        effective_labels=_effective(n, float(result.corrected.se), float(result.human.se)),
        strata=strata,
        stratification=Stratification(by=dims, min_labelled=min_labelled, strata=cells),
        sampling=sampling,
        design=design.name,
        plan=None
        if target_width is None
        else _plan(
            target_width,
            _interval(result.corrected),
            n,
            scaled_plan(n, float(result.corrected.se), target_width, level, len(pop)),
            scaled_plan(n, float(result.corrected.se), target_width, level, len(pop)),
        ),
        notes=notes,
    )


def _plan(
    target: float, corrected: Interval, n: int, current: float | None, uniform: float | None
) -> LabelPlanReport:
    def more(total: float | None) -> int | None:
        return None if total is None else max(0, math.ceil(total) - n)

    ci = corrected.ci
    return LabelPlanReport(
        target_width=target,
        width=None if ci is None else ci[1] - ci[0],
        labels_current_design=current,
        more_current_design=more(current),
        labels_uniform=uniform,
        more_uniform=more(uniform),
    )


def _active_report(
    pop: pd.DataFrame,
    lab: pd.DataFrame,
    rows: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    posd: np.ndarray,
    design: Design,
    *,
    judged_names: Sequence[str],
    annotations_name: str,
    by: Sequence[str],
    min_labelled: int,
    predictor: Predictor,
    level: float,
    notes: list[str],
    target_width: float | None,
) -> EstimateReport:
    """:func:`estimate_frame` for an active sample (:mod:`._active`), one stratum.

    The weighted regression on the judge already adapts to where the judge is
    good; strata would need labels in every cell of every round, so the
    overall figure is not stratified and the breakdowns are domain estimates.
    """
    assert design.probabilities is not None
    pi = design.probabilities
    est = active_mean(y, yhat[rows], pi, _ppi.Moments.of(yhat))
    n = len(lab)

    def interval(e: float, se: float) -> Interval:
        z = _ppi.z_value(level)
        return Interval(estimate=e, ci=[max(0.0, e - z * se), min(1.0, e + z * se)])

    strata: dict[str, dict[str, Figures]] = {}
    for dim in by:
        codes, names = _codes(pop[dim])
        lab_codes = codes[rows]
        out: dict[str, Figures] = {}
        for h, name in enumerate(names):
            mask = lab_codes == h
            members = codes == h
            judge = Point(estimate=float(posd[members].mean()))
            if int(mask.sum()) < 2:
                out[name] = Figures(
                    n_judged=int(members.sum()),
                    n_labelled=int(mask.sum()),
                    corrected=Interval(estimate=None, ci=None),
                    judge_only=judge,
                    human_only=Interval(estimate=None, ci=None),
                    effective_labels=None,
                    notes=[f"{int(mask.sum())} labelled record(s): an interval needs at least 2"],
                )
                continue
            g = active_mean(y[mask], yhat[rows][mask], pi[mask], _ppi.Moments.of(yhat[members]))
            out[name] = Figures(
                n_judged=int(members.sum()),
                n_labelled=int(mask.sum()),
                corrected=interval(g.estimate, g.se),
                judge_only=judge,
                human_only=interval(g.human_estimate, g.human_se),
                effective_labels=_effective(int(mask.sum()), g.se, g.human_se),
                power_tuning=g.lam,
            )
        strata[dim] = out
    corrected = interval(est.estimate, est.se)
    cell = Cell(
        key={},
        cells=1,
        n_judged=len(pop),
        n_labelled=n,
        share=1.0,
        power_tuning=est.lam,
        corrected=corrected,
    )
    plan = None
    if target_width is not None:
        p = active_plan(est, target_width, level)
        plan = _plan(target_width, corrected, n, p.current, p.uniform)
    return EstimateReport(
        judged=list(judged_names),
        annotations=annotations_name,
        predictor=predictor,
        level=level,
        n_judged=len(pop),
        n_labelled=n,
        corrected=corrected,
        judge_only=Point(estimate=float(posd.mean())),
        human_only=interval(est.human_estimate, est.human_se),
        effective_labels=_effective(n, est.se, est.human_se),
        strata=strata,
        stratification=Stratification(by=[], min_labelled=min_labelled, strata=[cell]),
        sampling=design.sampling,
        design=design.name,
        uniform_labels=est.uniform_labels,
        plan=plan,
        notes=[
            *notes,
            "active sample: one weighted regression on the judge over all judged citations "
            "(not stratified); breakdowns are estimates within each value",
        ],
    )


def labels_only_interval(
    labels: pd.DataFrame, n_population: int, level: float = 0.95
) -> tuple[Interval, str]:
    """The labels-alone interval of a sample, valid for its design; (interval, design).

    What ``citecal status`` shows without judged citations: the same design
    checks as :func:`estimate_frame` (refusals included), then the weighted
    share of labels that support their claim. An active sample's population
    size is estimated as Σ 1/π.

    Raises:
        InputError: fewer than 2 labelled records, or a design with no valid interval.
    """
    if len(labels) < 2:
        raise InputError(f"{len(labels)} labelled record(s): an interval needs at least 2")
    design = _design(labels, labels, n_population)
    y = labels["label"].to_numpy(dtype=np.float64)
    if design.probabilities is not None:
        pi = design.probabilities
        moments = _ppi.Moments(
            n=np.asarray(float((1.0 / pi).sum())), total=np.asarray(0.0), squares=np.asarray(0.0)
        )
        est = active_mean(y, np.zeros_like(y), pi, moments)
        z = _ppi.z_value(level)
        e, se = est.human_estimate, est.human_se
        return Interval(estimate=e, ci=[max(0.0, e - z * se), min(1.0, e + z * se)]), design.name
    return _interval(_ppi.classical_mean(y, w=design.weights, level=level)), design.name


def apply_gate(report: EstimateReport, thresholds: dict[str, float]) -> EstimateReport:
    """``report`` with its gate: every threshold on the corrected interval's lower bound.

    Raises:
        InputError: an unknown gate name.
    """
    failures = []
    for name, value in thresholds.items():
        if name not in GATE_NAMES:
            raise InputError(f"--fail-under {name!r}: use {', '.join(GATE_NAMES)}")
        if not math.isfinite(value):
            raise InputError(f"--fail-under {name}: {value} is not a finite number")
        ci = report.corrected.ci
        if ci is None or not math.isfinite(ci[0]):  # NaN compares false: it would pass
            failures.append(f"{name}: the corrected interval is undefined")
        elif ci[0] < value:
            failures.append(
                f"{name}: lower bound of the corrected {report.level:.0%} interval "
                f"{ci[0]:.3f} < {value:g} (estimate {report.corrected.estimate:.3f})"
            )
    gate = GateResult(thresholds=dict(thresholds), passed=not failures, failures=failures)
    return report.model_copy(update={"gate": gate})


def estimate(
    judged: Sequence[Path | str],
    annotations: Path | str,
    *,
    by: Sequence[str] = STRATA,
    min_labelled: int = MIN_LABELLED,
    predictor: Predictor = "score",
    level: float = 0.95,
    target_width: float | None = None,
) -> EstimateReport:
    """Read the judged citations and the annotation table, then :func:`estimate_frame`.

    ``judged``: eval JSON files, directories of them, eval-batch outputs or
    plain tables; ``annotations``: the table ``citecal pull`` writes (or any
    with ``record_id``, ``annotator``, ``human_score``).
    """
    from citecal.calibrate._judged import read_judged
    from citecal.calibrate._table import load_labels

    paths = [Path(p) for p in judged]
    frame = read_judged(paths)
    labels = load_labels(annotations)
    return estimate_frame(
        frame,
        labels,
        judged_names=[str(p) for p in paths],
        annotations_name=str(annotations),
        by=by,
        min_labelled=min_labelled,
        predictor=predictor,
        level=level,
        target_width=target_width,
    )


__all__ = [
    "DESIGNS",
    "GATE_NAMES",
    "MIN_LABELLED",
    "STRATA",
    "apply_gate",
    "estimate",
    "estimate_frame",
    "labels_only_interval",
]
