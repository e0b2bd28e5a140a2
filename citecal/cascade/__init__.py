"""Trust or escalate: verifiers with thresholds set on people's labels (README "The cascade")."""

from citecal.cascade._cascade import (
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
from citecal.cascade._verifier import LocalVerifier, load_verifier, save_verifier, train_verifier

__all__ = [
    "FEATURE_NAMES",
    "VERDICTS",
    "CascadeCost",
    "CascadeSpec",
    "FeatureInput",
    "Item",
    "LocalVerifier",
    "Threshold",
    "Tier",
    "TierSpec",
    "TierThreshold",
    "calibrate_cascade",
    "feature_matrix",
    "features",
    "fixed_sequence",
    "judge_cost",
    "load_cascade",
    "load_verifier",
    "min_labels",
    "parse_agreement",
    "run_cascade",
    "save_cascade",
    "save_verifier",
    "train_verifier",
]
