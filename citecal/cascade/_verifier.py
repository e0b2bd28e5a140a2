"""The local verifier: a logistic model over offline features (README "The cascade").

Trained with scikit-learn, stored as plain JSON — feature names, the scaler's
means and scales, coefficients and intercept — so loading a model file reads
numbers and cannot run code (no pickle, no joblib). Prediction is a dot product
with numpy; scikit-learn is needed only to train.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from citecal._io import atomic_write_text, read_text_file
from citecal._json import loads
from citecal.cascade._features import FEATURE_NAMES
from citecal.errors import InputError

MODEL_SCHEMA_VERSION = 1
MAX_MODEL_BYTES = 8 * 2**20
"""Largest verifier model file read (README "Security")."""
M = TypeVar("M", bound=BaseModel)


class LocalVerifier(BaseModel):
    """A trained verifier: P(the cited lines support the claim) from :data:`FEATURE_NAMES`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = MODEL_SCHEMA_VERSION
    kind: str = Field("logistic", description="The only kind: standardised logistic regression.")
    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    trained_on: dict[str, object] = Field(default_factory=dict, description="Labels, sets, hash.")

    @model_validator(mode="after")
    def _shapes(self) -> LocalVerifier:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ValueError("features, mean, scale and coef must have the same length")
        unknown = [f for f in self.features if f not in FEATURE_NAMES]
        if unknown or len(set(self.features)) != n:
            raise ValueError(
                f"model features differ from this citecal's ({', '.join(unknown) or 'repeated'}); "
                "retrain it"
            )
        values = [*self.mean, *self.scale, *self.coef, self.intercept]
        if not all(np.isfinite(values)) or any(s <= 0 for s in self.scale):
            raise ValueError("model parameters must be finite, scales positive")
        return self

    def predict(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Support probabilities for the rows of ``x``."""
        if x.shape[0] == 0:
            return np.zeros(0)
        if x.shape[1] == len(FEATURE_NAMES) and tuple(self.features) != FEATURE_NAMES:
            # A model of an older citecal reads the columns it was trained on.
            x = x[:, [FEATURE_NAMES.index(f) for f in self.features]]
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.coef) + self.intercept
        out: NDArray[np.float64] = 1.0 / (1.0 + np.exp(-np.clip(logit, -40, 40)))
        return out

    @property
    def version(self) -> str:
        """A short content hash, recorded on every verdict the verifier gives."""
        blob = json.dumps([self.coef, self.intercept, self.mean, self.scale]).encode()
        return "local@" + hashlib.sha256(blob).hexdigest()[:10]


DEFAULT_C = 0.03
"""The verifier's regularisation (inverse strength). Strong shrinking ranks best on the
round-3 ground truth, leave one package out: natural ROC AUC 0.914 against 0.893 at C = 1
(docs/explanation/cascade.md says how it was chosen, and that new packages re-test it)."""


def train_verifier(
    x: NDArray[np.float64],
    y: NDArray[np.bool_],
    *,
    c: float = DEFAULT_C,
    meta: dict[str, object] | None = None,
) -> LocalVerifier:
    """Fit the verifier on feature rows ``x`` and people's support labels ``y``.

    Raises:
        InputError: fewer than 10 labels, or labels of one class only.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    if len(y) < 10 or len(set(y.tolist())) < 2:
        raise InputError(
            f"the local verifier needs at least 10 labels of both kinds (got {len(y)}, "
            f"{int(np.sum(y))} supported)"
        )
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression(C=c, max_iter=2000).fit((x - scaler.mean_) / scale, y)
    return LocalVerifier(
        features=list(FEATURE_NAMES),
        mean=[float(v) for v in scaler.mean_],
        scale=[float(v) for v in scale],
        coef=[float(v) for v in model.coef_[0]],
        intercept=float(model.intercept_[0]),
        trained_on=dict(meta or {}),
    )


def validate_json(model: type[M], text: str, where: str, what: str) -> M:
    """``text`` as ``model``; every way it can fail is one InputError naming ``where``.

    Numbers are bounded as for every JSON input (:func:`citecal._json.loads`: no
    NaN, Infinity or 5 000-digit integer).
    """
    data = loads(text, where, what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        at = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{where}: not {what}: {at}: {err['msg']}") from None


def load_verifier(path: Path) -> LocalVerifier:
    """Read a model file (JSON only; see the module docstring)."""
    text = read_text_file(path, "verifier model", MAX_MODEL_BYTES)
    return validate_json(LocalVerifier, text, str(path), "a citecal verifier model")


def save_verifier(path: Path, model: LocalVerifier) -> None:
    atomic_write_text(path, model.model_dump_json(indent=2) + "\n")


__all__ = [
    "DEFAULT_C",
    "LocalVerifier",
    "load_verifier",
    "save_verifier",
    "train_verifier",
]
