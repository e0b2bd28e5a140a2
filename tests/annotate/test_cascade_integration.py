"""A team retrains the cascade on its own labels: pull from the real stack, calibrate
--write-cascade.

The pulled table comes from the same real-stack round trip as the estimate tests
(push a judged evaluation, an annotator answers, pull); the cascade fitted on it
carries a verifier retrained on those records and thresholds for the judge model
the records were judged by, and ``eval --cascade`` uses the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from annotate_factories import ROOT
from click.testing import CliRunner
from test_estimate_integration import pulled

from citecal.cascade import load_cascade
from citecal.cli import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
EXAMPLES = ROOT / "datasets" / "examples"
__all__ = ["pulled"]


def test_cascade_is_refitted_on_a_pulled_table(pulled: dict, tmp_path: Path) -> None:
    out = tmp_path / "cascade.json"
    res = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(pulled["table"]),
            "--write-cascade",
            str(out),
            "--agreement",
            "0.8",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    spec = load_cascade(out)
    assert spec.labels["records"] == 24 and spec.verifier is not None
    assert spec.verifier.trained_on["n"] == 24
    table = pd.read_parquet(pulled["table"])
    models = set(table["judge_model"].dropna())
    assert [t.kind for t in spec.tiers] == ["rules", "local"] + ["judge"] * len(models)
    assert {t.model for t in spec.tiers[2:]} == models
    costs = [t.cost_per_1000 for t in spec.tiers[2:] if t.cost_per_1000 is not None]
    assert costs == sorted(costs)  # cheapest judge first
    shown = json.loads(res.stdout)
    assert "verifier" not in shown and len(shown["tiers"]) == len(spec.tiers)
    assert sum(t.decided for t in spec.tiers) + spec.abstained == 24
    run = CliRunner().invoke(
        cli,
        [
            "eval",
            str(EXAMPLES / "report.md"),
            "--repo",
            str(EXAMPLES / "shopcart"),
            "--no-llm",
            "--cascade",
            str(out),
            "-f",
            "json",
        ],
    )
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)["summary"]["cascade"]
    assert summary["labels"] == 24 and summary["source"] == str(pulled["table"])
