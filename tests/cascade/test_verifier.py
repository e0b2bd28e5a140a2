"""The local verifier: training, JSON model files that cannot run code, the cascade spec."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citecal.cascade import (
    FEATURE_NAMES,
    FeatureInput,
    Item,
    TierSpec,
    calibrate_cascade,
    features,
    load_cascade,
    load_verifier,
    parse_agreement,
    run_cascade,
    save_verifier,
    train_verifier,
)
from citecal.errors import InputError


def _data(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(FEATURE_NAMES)))
    y = (x[:, 2] + 0.3 * rng.normal(size=n)) > 0
    return x, y


def test_trained_model_round_trips_as_plain_json(tmp_path: Path) -> None:
    x, y = _data()
    model = train_verifier(x, y)
    path = tmp_path / "m.json"
    save_verifier(path, model)
    again = load_verifier(path)
    assert np.allclose(again.predict(x), model.predict(x))
    acc = ((model.predict(x) >= 0.5) == y).mean()
    assert acc > 0.85
    assert json.loads(path.read_text())["kind"] == "logistic"


def test_a_model_file_cannot_execute_code(tmp_path: Path) -> None:
    """A pickle payload (what joblib/pickle model files are) is refused, and never run."""
    import pickle

    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            import os

            return (os.system, (f"touch {marker}",))

    path = tmp_path / "evil.json"
    path.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(InputError):
        load_verifier(path)
    x, y = _data()
    doc = json.loads(train_verifier(x, y).model_dump_json())
    doc["coef"][0] = f"__import__('os').system('touch {marker}')"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError):
        load_verifier(path)
    assert not marker.exists()


def test_model_with_other_features_is_refused(tmp_path: Path) -> None:
    x, y = _data()
    doc = json.loads(train_verifier(x, y).model_dump_json())
    doc["features"][0] = "something_else"
    (tmp_path / "m.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="retrain"):
        load_verifier(tmp_path / "m.json")


def test_features_see_names_in_range_and_in_the_enclosing_signature() -> None:
    i = FEATURE_NAMES.index
    inside = features(
        FeatureInput("`load` reads the file", "    return open(p).read()\n", "def load(p):")
    )
    assert inside[i("code_names_in_range")] == 0.0
    assert inside[i("code_names_in_context")] == 1.0
    assert features(FeatureInput("no names", "x = 1"))[i("code_names")] == 0.0


def test_parse_agreement() -> None:
    assert parse_agreement("0.95") == {"supports": 0.95, "not_supports": 0.95}
    assert parse_agreement("supports=0.98, not_supports=0.9") == {
        "supports": 0.98,
        "not_supports": 0.9,
    }
    for bad in ("nan", "1.2", "supports=0.9", "maybe=0.9,supports=0.9", "x"):
        with pytest.raises(InputError):
            parse_agreement(bad)


def test_calibrated_cascade_decides_first_confident_tier_and_abstains_after() -> None:
    rng = np.random.default_rng(3)
    items = []
    for _ in range(600):
        human = bool(rng.uniform() < 0.5)
        p = float(np.clip((0.8 if human else 0.2) + rng.normal(0, 0.25), 0, 1))
        rule = "not_supports" if (not human and rng.uniform() < 0.5) else None
        items.append(Item(rule=rule, local=p, human=human))
    spec = calibrate_cascade(
        items,
        [TierSpec("rules"), TierSpec("local")],
        {"supports": 0.95, "not_supports": 0.9},
        0.1,
        {"n": 600, "source": "synthetic"},
    )
    rules, local = spec.tiers
    assert rules.thresholds["not_supports"].value is not None  # the rule never errs: it decides
    assert rules.thresholds["supports"].value is None  # it never says supports
    assert local.thresholds["supports"].value is not None
    assert rules.decided + local.decided + spec.abstained == 600
    assert run_cascade(spec, Item(rule="not_supports", local=0.99)) == ("rules", "not_supports")
    assert run_cascade(spec, Item(rule=None, local=0.999)) == ("local", "supports")
    assert run_cascade(spec, Item(rule=None, local=0.5)) is None


def test_shipped_default_cascade_loads() -> None:
    spec = load_cascade("default")
    assert [t.kind for t in spec.tiers] == ["rules", "local"] and spec.verifier is not None
