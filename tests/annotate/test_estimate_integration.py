"""push --sample → annotate → pull → estimate on the real local Argilla stack.

The evaluation is judged by the local OpenAI-protocol server; push draws a
stratified sample and records its sampling weights as hidden metadata; an
annotator answers through the API; pull brings the weights back as columns;
``citecal estimate`` joins the pulled labels to the evaluation by record id
and uses the weights. Resources are named ``test_…`` and removed at the end.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import argilla as rg
import pandas as pd
import pytest
from annotate_factories import ROOT, Stack
from click.testing import CliRunner

from citecal.cli import cli
from citecal.testing import FakeOpenAIServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

EXAMPLES = ROOT / "datasets" / "examples"


@pytest.fixture(scope="module")
def pulled(argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tag = uuid.uuid4().hex[:8]
    tmp: Path = tmp_path_factory.mktemp("estimate")
    env = {"ARGILLA_API_URL": argilla_stack.url, "ARGILLA_API_KEY": argilla_stack.api_key}
    evaluation = tmp / "eval.json"
    with FakeOpenAIServer() as server:
        judged = CliRunner().invoke(
            cli,
            [
                "eval",
                str(EXAMPLES / "report.md"),
                "--repo",
                str(EXAMPLES / "shopcart"),
                "-f",
                "json",
                "-o",
                str(evaluation),
            ],
            env={
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "test-key",
                "CITECAL_CACHE_PATH": str(tmp / "cache.sqlite3"),
            },
        )
    assert judged.exit_code in (0, 1), judged.output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_estimate_{tag}", client=owner).create()
        user = rg.User(
            username=f"test_estimate_{tag}",
            password="test-password-1",
            role="annotator",
            client=owner,
        ).create()
        user.add_to_workspace(ws)
    key = owner.api.http_client.get(f"/api/v1/users/{user.id}").json()["api_key"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        annotator = rg.Argilla(api_url=argilla_stack.url, api_key=key, retries=0)
    dataset = f"test_estimate_{tag}"
    try:
        push = CliRunner().invoke(
            cli,
            [
                "push",
                str(evaluation),
                "--dataset",
                dataset,
                "--workspace",
                ws.name,
                "--sample",
                "24",
                "--strategy",
                "stratified",
                "--seed",
                "3",
            ],
            env=env,
        )
        assert push.exit_code == 0, push.output
        ds = owner.datasets(dataset, workspace=ws.name)
        records = owner.api.http_client.get(
            f"/api/v1/datasets/{ds.id}/records", params={"limit": 1000}
        ).json()["items"]
        for n, rec in enumerate(records):
            body = {"values": {"supports_claim": {"value": (n * 7) % 4}}, "status": "submitted"}
            resp = annotator.api.http_client.post(
                f"/api/v1/records/{rec['id']}/responses", json=body
            )
            assert resp.status_code == 201, resp.text
        table = tmp / "annotations.parquet"
        pull = CliRunner().invoke(
            cli, ["pull", "--dataset", dataset, "--workspace", ws.name, "-o", str(table)], env=env
        )
        assert pull.exit_code == 0, pull.output
        yield {
            "eval": evaluation,
            "table": table,
            "records": records,
            "result": json.loads(evaluation.read_text()),
        }
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for d in ws.datasets:
                d.delete()
            user.delete()
            ws.delete()


def test_pulled_table_carries_the_sampling_weights(pulled: dict) -> None:
    table = pd.read_parquet(pulled["table"])
    valid = [c for c in pulled["result"]["citations"] if c["valid"]]
    assert len(table) == len(pulled["records"]) == 24
    assert set(table["sampling_strategy"]) == {"stratified"}
    # Inverse inclusion probabilities of a stratified sample add up to the population.
    assert table["sampling_weight"].sum() == pytest.approx(len(valid))
    assert (table["sampling_weight"] >= 1.0).all()


def test_estimate_joins_pulled_labels_to_the_evaluation(pulled: dict) -> None:
    res = CliRunner().invoke(
        cli, ["estimate", str(pulled["eval"]), "-a", str(pulled["table"]), "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["n_labelled"] == 24  # every pulled record joined its citation by record id
    assert data["sampling"].startswith("weighted sample (stratified)")
    lo, hi = data["corrected"]["ci"]
    assert 0.0 <= lo <= data["corrected"]["estimate"] <= hi <= 1.0
    gate = CliRunner().invoke(
        cli,
        [
            "estimate",
            str(pulled["eval"]),
            "-a",
            str(pulled["table"]),
            "--fail-under",
            "precision=0.99",
        ],
    )
    assert gate.exit_code == 1 and "gate failed: precision" in gate.stderr


def test_calibration_checks_run_on_the_pulled_table(pulled: dict, tmp_path: Path) -> None:
    saved = tmp_path / "calibration.json"
    mapping = tmp_path / "map.json"
    res = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(pulled["table"]),
            "-f",
            "json",
            "-o",
            str(saved),
            "--save-map",
            str(mapping),
            "--map-method",
            "platt",
            "--judged",
            str(pulled["eval"]),
            "--resamples",
            "200",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(saved.read_text())
    assert len(data["judge"]["record_id"]) == 24
    assert data["estimate"]["n_labelled"] == 24
    assert json.loads(mapping.read_text())["method"] == "platt"
    again = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(pulled["table"]),
            "--baseline",
            str(saved),
            "--resamples",
            "200",
            "--fail-under",
            "agreement_rate=1.01",
        ],
    )
    assert again.exit_code == 1  # the gate, not drift: the same judge raises no alarm
    assert "no alarm" in again.stdout and "gate failed: agreement_rate" in again.stderr
