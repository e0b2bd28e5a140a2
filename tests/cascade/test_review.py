"""The review list: calibrated p_supports, risk ranks, evidence, the proposed place, the
default cascade and --no-cascade (issue 30), and the judge-verifier disagreement (issue 29 1c)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from citecal.cascade import Calibrator, feature_matrix, fit_calibrator, load_cascade, risk_ranks
from citecal.cascade._apply import feature_input, judge_disagrees, lines_above, read_lines
from citecal.cascade._calibration import disagreement_threshold, risk_bands, shift_check
from citecal.cli import cli
from citecal.config import Config
from citecal.models import Verdict
from citecal.pipeline import analyse, evaluate_report
from citecal.source import open_store

STORE_PY = '''"""A small key-value store."""

import json

DEFAULT_TIMEOUT = 30


class Store:
    """Keeps values in memory and writes them to disk."""

    def __init__(self, path):
        self.path = path
        self.values = {}

    def get(self, key, default=None):
        return self.values.get(key, default)

    def put(self, key, value):
        if not isinstance(key, str):
            raise TypeError("keys must be strings")
        self.values[key] = value

    def save(self):
        with open(self.path, "w") as handle:
            json.dump(self.values, handle, sort_keys=True)

    def load(self):
        with open(self.path) as handle:
            self.values = json.load(handle)
'''

REPORT = """# The store

The `Store` class keeps its values in a dictionary called `values` [store.py:8-13].

The `put` method raises `TypeError` when the key is not a string [store.py:15-16].

The `save` method writes the values as JSON with sorted keys [store.py:23-25].

The store encrypts every value with AES before writing it [store.py:23-25].
"""


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "store.py").write_text(STORE_PY)
    report = tmp_path / "report.md"
    report.write_text(REPORT)
    return report, repo


def _eval(report: Path, repo: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    res = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json", *extra]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_platt_and_isotonic_worked_example() -> None:
    # Platt: p = 1 / (1 + exp(-(a * logit(raw) + b))). raw 0.5 has logit 0, so with
    # a = 2, b = -1: 1 / (1 + e) = 0.268941...; raw 0.8: logit = ln 4, z = 2 ln 4 - 1,
    # p = 16 / (16 + e) = 0.854763...
    platt = Calibrator(kind="platt", a=2.0, b=-1.0)
    got = platt([0.5, 0.8])
    assert math.isclose(got[0], 1 / (1 + math.e), abs_tol=1e-12)
    assert math.isclose(got[1], 16 / (16 + math.e), abs_tol=1e-12)
    # Isotonic: linear between knots, flat outside them.
    iso = Calibrator(kind="isotonic", knots_x=[0.2, 0.6], knots_y=[0.1, 0.5])
    assert np.allclose(iso([0.0, 0.4, 0.9]), [0.1, 0.3, 0.5])


def test_fit_calibrator_bands_and_ranks() -> None:
    rng = np.random.default_rng(7)
    raw = rng.uniform(0, 1, 400)
    supported = rng.uniform(0, 1, 400) < raw  # raw is already calibrated
    cal = fit_calibrator(raw, supported)
    assert cal.kind == "platt" and cal.n == 400 and len(cal.scores) == 400
    assert math.isclose(cal.a, 1.0, abs_tol=0.35) and math.isclose(cal.b, 0.0, abs_tol=0.35)
    assert [b.name for b in cal.bands] == ["high", "elevated", "moderate", "low"]
    assert sum(b.labels for b in cal.bands) == 400
    assert cal.bands[0].share is not None and cal.bands[-1].share is not None
    assert cal.bands[0].share > 0.7 > 0.2 > cal.bands[-1].share
    # Bands on hand-made numbers: [0, .35) holds 0.1 and 0.3 (one unsupported): 50%.
    bands = risk_bands([0.1, 0.3, 0.5, 0.9, 1.0], [False, True, True, True, True])
    assert (bands[0].labels, bands[0].unsupported, bands[0].share) == (2, 1, 0.5)
    assert bands[-1].labels == 2  # 1.0 is in the last band
    assert risk_ranks([0.9, None, 0.1, 0.1]) == [3, None, 1, 2]


def test_disagreement_threshold_and_shift_check() -> None:
    # Below 0.30: 20 labels, 2 supported (10%) passes; below 0.35 a third is supported.
    p = [0.1] * 18 + [0.2] * 2 + [0.32] * 10 + [0.9] * 10
    y = [False] * 18 + [True] * 2 + [True] * 10 + [True] * 10
    assert disagreement_threshold(p, y) == 0.3
    assert disagreement_threshold(p, y, min_labels=21) is None
    same = np.linspace(0, 1, 200).tolist()
    assert shift_check(same, same) == pytest.approx(1.0)
    p_value = shift_check([0.05] * 40, same)
    assert p_value is not None and p_value < 0.01
    assert shift_check([0.5] * 5, same) is None  # too few to say anything


def test_p_supports_is_the_calibrated_verifier_probability(tiny: tuple[Path, Path]) -> None:
    report, repo = tiny
    spec = load_cascade("default")
    assert spec.verifier is not None and spec.calibrator is not None
    config = Config()
    with open_store(repo) as store:
        result = evaluate_report(report.read_text(), store, config, cascade=spec)
        outcomes = analyse(report.read_text(), store, config).outcomes
        cache: dict[str, tuple[str, ...]] = {}
        lines = read_lines(store, "store.py", cache)
    inputs = [
        feature_input(o, lines_above(lines, o.extracted.citation.start_line), lines)
        for o in outcomes
    ]
    expected = spec.calibrator(spec.verifier.predict(feature_matrix(inputs)))
    got = [r.p_supports for r in result.citations]
    assert got == pytest.approx(expected.round(4).tolist(), abs=1e-9)


def test_review_list_order_and_proposed_place(tiny: tuple[Path, Path]) -> None:
    report, repo = tiny
    out = _eval(report, repo)
    rows = out["citations"]
    ranked = sorted(rows, key=lambda r: r["risk_rank"])
    assert [r["risk_rank"] for r in ranked] == [1, 2, 3, 4]
    probs = [r["p_supports"] for r in ranked]
    assert probs == sorted(probs)  # rank 1 is the lowest p_supports
    first = ranked[0]
    assert first["citation"] == "[store.py:15-16]" and first["risk_band"] == "high"
    assert first["proposed_citation"] == "[store.py:18-21]"  # where `put` is
    assert "not in the cited lines: `put`, `TypeError`" in first["risk_evidence"]
    assert all(r["proposed_citation"] is None for r in ranked if r["p_supports"] >= 0.65)
    summary = out["summary"]
    assert summary["review_size"] == 4
    assert sum(b["citations"] for b in summary["risk_bands"]) == 4
    # The local tier certifies its not_supports (the shipped thresholds); the rest go to a person.
    assert (first["verdict"], first["method"]) == ("not_supports", "local")
    others = [r for r in rows if r is not first]
    assert all(r["verdict"] == "unverified" and r["suggested_action"] == "annotate" for r in others)
    # The table and Markdown show the list, riskiest first.
    res = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(repo), "--no-llm", "--review", "2"]
    )
    assert "Most likely unsupported (2 of 4 valid citations" in res.stdout
    assert "probably belongs at [store.py:18-21]" in res.stdout
    md = (
        CliRunner()
        .invoke(cli, ["eval", str(report), "--repo", str(repo), "--no-llm", "-f", "markdown"])
        .stdout
    )
    assert "| 1 | `[store.py:15-16]` |" in md and "`[store.py:18-21]`" in md


def test_no_cascade_is_the_rules_alone(tiny: tuple[Path, Path]) -> None:
    report, repo = tiny
    out = _eval(report, repo, "--no-cascade")
    assert all(r["p_supports"] is None and r["risk_rank"] is None for r in out["citations"])
    assert out["summary"]["cascade"] is None and out["summary"]["risk_bands"] == []
    put = next(r for r in out["citations"] if r["citation"] == "[store.py:15-16]")
    assert (put["verdict"], put["method"]) == ("not_supports", "extractive")  # the rule stands
    default = _eval(report, repo)
    put = next(r for r in default["citations"] if r["citation"] == "[store.py:15-16]")
    assert put["method"] == "local"  # the rules' not_supports is not certified; the verifier's is
    res = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(repo), "--cascade", "default", "--no-cascade"]
    )
    assert res.exit_code == 2 and "exclude each other" in res.output


def test_gate_fails_on_the_riskiest_band(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    report, repo = tiny
    cfg = tmp_path / "gate.toml"
    cfg.write_text("[gate]\nmax_high_risk = 0\nmin_precision = 0\n")
    args = ["eval", str(report), "--repo", str(repo), "--no-llm", "--gate", "--config", str(cfg)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1
    assert "1 citation(s) in the high-risk band of p_supports (> 0)" in res.stdout
    cfg.write_text("[gate]\nmax_high_risk = 1\nmin_precision = 0\n")
    assert CliRunner().invoke(cli, args).exit_code == 0


def test_judge_supports_the_verifier_strongly_doubts_goes_to_a_person() -> None:
    judged = Verdict(verdict="supports", method="llm", confidence="high", score=0.95)
    out = judge_disagrees(judged, 0.04, 0.25)
    assert (out.verdict, out.abstain_reason) == ("unverified", "judge and verifier disagree")
    assert out.reasoning.startswith("judge and verifier disagree: the judge says supports")
    assert judge_disagrees(judged, 0.30, 0.25) is judged  # not strongly doubted
    assert judge_disagrees(judged, 0.04, None) is judged  # no cut set on labels
    assert judge_disagrees(judged, None, 0.25) is judged  # no verifier
    rejected = Verdict(verdict="not_supports", method="llm", confidence="high", score=0.05)
    assert judge_disagrees(rejected, 0.04, 0.25) is rejected  # agreement: nothing to ask
    rule = Verdict(verdict="supports", method="extractive", confidence="high")
    assert judge_disagrees(rule, 0.04, 0.25) is rule  # only a judge's verdict


def test_old_cascade_files_without_a_calibrator_still_load(tmp_path: Path) -> None:
    data = json.loads(load_cascade("default").model_dump_json())
    data.pop("calibrator")
    verifier = data["verifier"]
    keep = 26  # the round-3 columns, before the placement features
    for key in ("features", "mean", "scale", "coef"):
        verifier[key] = verifier[key][:keep]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    spec = load_cascade(old)
    assert spec.calibrator is None and spec.verifier is not None
    x = feature_matrix([])
    assert spec.verifier.predict(x).shape == (0,)


def test_a_rules_verdict_no_longer_overrides_the_judge_by_default(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    """The labels judge (always right) accepts the `put` citation the rules reject."""
    from citecal.testing import FakeOpenAIServer
    from citecal.testing.labels_judge import LabelledClaim, LabelsJudge, SupportRange

    report, repo = tiny
    claim = "The `put` method raises `TypeError` when the key is not a string"
    judge = LabelsJudge(
        [
            LabelledClaim(
                claim,
                (SupportRange("store.py", 15, 16),),
                (("store.py", 15, 16, True),),
            )
        ]
    )
    # The shipped cascade with a local tier that never decides, so the judge is asked: with
    # and without the disagreement cut.
    data = json.loads(load_cascade("default").model_dump_json())
    local = next(t for t in data["tiers"] if t["kind"] == "local")
    for th in local["thresholds"].values():
        th["value"] = None
    with_cut = tmp_path / "with-cut.json"
    with_cut.write_text(json.dumps(data))
    data["calibrator"]["disagree_below"] = None
    no_cut = tmp_path / "no-cut.json"
    no_cut.write_text(json.dumps(data))

    def put_row(*extra: str) -> dict:  # type: ignore[type-arg]
        res = CliRunner().invoke(
            cli,
            ["eval", str(report), "--repo", str(repo), "-f", "json", *extra],
            env={
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "test-key",
                "CITECAL_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
            },
        )
        assert res.exit_code == 0, res.output
        rows = json.loads(res.stdout)["citations"]
        return next(r for r in rows if r["citation"] == "[store.py:15-16]")  # type: ignore[no-any-return]

    with FakeOpenAIServer(handler=judge) as server:
        plain = put_row("--no-cascade", "--no-cache")
        assert (plain["verdict"], plain["method"]) == ("not_supports", "extractive")
        judged = put_row("--cascade", str(no_cut), "--no-cache")
        assert (judged["verdict"], judged["method"]) == ("supports", "llm")
        doubted = put_row("--cascade", str(with_cut), "--no-cache")  # a person decides
        assert doubted["verdict"] == "unverified"
        assert doubted["abstain_reason"] == "judge and verifier disagree"
        assert doubted["suggested_action"] == "annotate"
        assert doubted["p_supports"] < load_cascade("default").calibrator.disagree_below  # type: ignore[union-attr]
        default = put_row("--no-cache")  # the certified local tier decides before the judge
        assert (default["verdict"], default["method"]) == ("not_supports", "local")
