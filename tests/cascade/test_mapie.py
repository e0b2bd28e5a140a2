"""citecal's fixed-sequence thresholds against MAPIE's risk control, on the same labels.

docs/explanation/cascade.md, "Why not MAPIE": MAPIE 1.x's
``BinaryClassificationController`` controls the precision of "decide when the
confidence is at least λ" (Learn-then-Test) like ``fixed_sequence`` does for
one verdict of one tier. On the same seeded labels, at the same guarantee (the
same level and δ, the same grid of thresholds), citecal's choice decides at
least as many labels as each of MAPIE's family-wise procedures; where MAPIE
finds a threshold with fixed-sequence testing, it is the same one. The
difference is where testing starts: MAPIE's fixed sequence starts at the
strictest threshold, which decides a handful of labels, cannot reject, and
stops everything (at 90% and 95% it certifies nothing); citecal starts at the
first threshold deciding enough labels for the test to have power, a choice
made from the confidences alone (:func:`citecal.cascade._thresholds.powered_labels`).
Bonferroni–Holm pays for the hundred thresholds tested.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from citecal.cascade._thresholds import GRID, fixed_sequence

mapie = pytest.importorskip("mapie.risk_control")


def _mapie_threshold(
    conf: np.ndarray, correct: np.ndarray, level: float, fwer: str
) -> float | None:
    controller = mapie.BinaryClassificationController(
        predict_function=lambda x: np.column_stack([1 - x, x]),
        risk=mapie.precision,
        target_level=level,
        confidence_level=0.9,  # 1 - delta
        list_predict_params=np.array(GRID[1:]),  # 1.0 decides nothing: precision undefined
        fwer_method=fwer,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MAPIE warns when nothing is valid
        controller.calibrate(conf, correct.astype(int))
    valid = controller.valid_predict_params
    return float(np.min(valid)) if len(valid) else None


@pytest.mark.parametrize("level", [0.95, 0.9, 0.8])
def test_ours_decides_at_least_as_much_as_mapie_at_the_same_guarantee(level: float) -> None:
    rng = np.random.default_rng(3)
    conf = rng.uniform(0.5, 1.0, 2000)
    correct = rng.uniform(0, 1, 2000) < np.clip(conf + 0.02, 0, 1)  # a slightly shy tier
    ours = fixed_sequence(conf, correct, 1 - level, 0.1)
    assert ours.value is not None
    for fwer in ("fixed_sequence", "bonferroni_holm"):
        theirs = _mapie_threshold(conf, correct, level, fwer)
        decided = int((conf >= theirs).sum()) if theirs is not None else 0
        assert ours.n >= decided, (fwer, theirs, ours)
        if fwer == "fixed_sequence" and theirs is not None:
            assert theirs == pytest.approx(ours.value)
    if level >= 0.9:  # MAPIE's fixed sequence starts where no test can reject
        assert _mapie_threshold(conf, correct, level, "fixed_sequence") is None
