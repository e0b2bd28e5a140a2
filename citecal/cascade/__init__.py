"""Trust or escalate: verifiers with thresholds set on people's labels (README "The cascade").

Reading, running and fitting a cascade load here; the annotation-table rows
(pandas) and the renderers (rich) load on first use (PEP 562), so ``eval
--cascade`` pays for neither.
"""

from typing import TYPE_CHECKING

from citecal._lazy import lazy_getattr
from citecal.cascade._calibration import (
    BAND_EDGES,
    BAND_NAMES,
    Calibrator,
    RiskBand,
    band_of,
    fit_calibrator,
    risk_ranks,
    shift_check,
)
from citecal.cascade._cascade import (
    MAX_CASCADE_BYTES,
    VERDICTS,
    CascadeCost,
    CascadeSpec,
    Item,
    Tier,
    TierSpec,
    TierThreshold,
    calibrate_cascade,
    judge_cost,
    load_cascade,
    parse_agreement,
    run_cascade,
    save_cascade,
)
from citecal.cascade._features import FEATURE_NAMES, FeatureInput, feature_matrix, features
from citecal.cascade._thresholds import Threshold, fixed_sequence, min_labels
from citecal.cascade._training import LOCAL_TIERS, Row, fit_cascade, input_of, rule_of
from citecal.cascade._verifier import LocalVerifier, load_verifier, save_verifier, train_verifier

if TYPE_CHECKING:
    from citecal.cascade._annotations import judge_sources, judge_tiers, rows_from_table
    from citecal.cascade._render import (
        render_cascade,
        render_cascade_html,
        render_cascade_markdown,
        render_cascade_table,
    )

_LAZY: dict[str, str] = {
    "judge_sources": "citecal.cascade._annotations",
    "judge_tiers": "citecal.cascade._annotations",
    "render_cascade": "citecal.cascade._render",
    "render_cascade_html": "citecal.cascade._render",
    "render_cascade_markdown": "citecal.cascade._render",
    "render_cascade_table": "citecal.cascade._render",
    "rows_from_table": "citecal.cascade._annotations",
}

__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = [
    "BAND_EDGES",
    "BAND_NAMES",
    "FEATURE_NAMES",
    "LOCAL_TIERS",
    "MAX_CASCADE_BYTES",
    "VERDICTS",
    "Calibrator",
    "CascadeCost",
    "CascadeSpec",
    "FeatureInput",
    "Item",
    "LocalVerifier",
    "RiskBand",
    "Row",
    "Threshold",
    "Tier",
    "TierSpec",
    "TierThreshold",
    "band_of",
    "calibrate_cascade",
    "feature_matrix",
    "features",
    "fit_calibrator",
    "fit_cascade",
    "fixed_sequence",
    "input_of",
    "judge_cost",
    "judge_sources",
    "judge_tiers",
    "load_cascade",
    "load_verifier",
    "min_labels",
    "parse_agreement",
    "render_cascade",
    "render_cascade_html",
    "render_cascade_markdown",
    "render_cascade_table",
    "risk_ranks",
    "rows_from_table",
    "rule_of",
    "run_cascade",
    "save_cascade",
    "save_verifier",
    "shift_check",
    "train_verifier",
]
