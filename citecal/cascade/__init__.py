"""Trust or escalate: verifiers with thresholds set on people's labels (README "The cascade")."""

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
    VERDICTS,
    CascadeSpec,
    Item,
    Tier,
    TierSpec,
    TierThreshold,
    calibrate_cascade,
    load_cascade,
    parse_agreement,
    run_cascade,
    save_cascade,
)
from citecal.cascade._features import FEATURE_NAMES, FeatureInput, feature_matrix, features
from citecal.cascade._thresholds import Threshold, fixed_sequence, min_labels
from citecal.cascade._verifier import LocalVerifier, load_verifier, save_verifier, train_verifier

__all__ = [
    "BAND_EDGES",
    "BAND_NAMES",
    "FEATURE_NAMES",
    "VERDICTS",
    "Calibrator",
    "CascadeSpec",
    "FeatureInput",
    "Item",
    "LocalVerifier",
    "RiskBand",
    "Threshold",
    "Tier",
    "TierSpec",
    "TierThreshold",
    "band_of",
    "calibrate_cascade",
    "feature_matrix",
    "features",
    "fit_calibrator",
    "fixed_sequence",
    "load_cascade",
    "load_verifier",
    "min_labels",
    "parse_agreement",
    "risk_ranks",
    "run_cascade",
    "save_cascade",
    "save_verifier",
    "shift_check",
    "train_verifier",
]
