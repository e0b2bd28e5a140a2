"""Active sampling over two rounds, a random-order census, and ``status``, on the real stack.

The evaluation is judged by the local OpenAI-protocol server; ``push --strategy
active`` draws round 1, two annotators answer it through the API, a second push
draws round 2 from records no round drew, they answer that too; ``pull`` brings
every record's probabilities back and ``estimate`` and ``status`` use them.
Resources are named ``test_…`` and removed at the end.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import argilla as rg
import pandas as pd
import pytest
from annotate_factories import ROOT, Stack
from click.testing import CliRunner

from citecal.cli import cli
from citecal.testing import FakeOpenAIServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

EXAMPLES = ROOT / "datasets" / "examples"


def _records(owner: rg.Argilla, name: str, ws: str) -> list[dict[str, Any]]:
    ds = owner.datasets(name, workspace=ws)
    items: list[dict[str, Any]] = owner.api.http_client.get(
        f"/api/v1/datasets/{ds.id}/records", params={"limit": 1000, "include": ["responses"]}
    ).json()["items"]
    return items


def _answer(client: rg.Argilla, record: dict[str, Any], score: int) -> None:
    body = {"values": {"supports_claim": {"value": score}}, "status": "submitted"}
    resp = client.api.http_client.post(f"/api/v1/records/{record['id']}/responses", json=body)
    assert resp.status_code == 201, resp.text


@pytest.fixture(scope="module")
def stack_env(argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tag = uuid.uuid4().hex[:8]
    tmp: Path = tmp_path_factory.mktemp("active")
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
        ws = rg.Workspace(name=f"test_ws_active_{tag}", client=owner).create()
        annotators = []
        for k in range(2):
            user = rg.User(
                username=f"test_active_{tag}_{k}",
                password="test-password-1",
                role="annotator",
                client=owner,
            ).create()
            user.add_to_workspace(ws)
            key = owner.api.http_client.get(f"/api/v1/users/{user.id}").json()["api_key"]
            annotators.append((user, rg.Argilla(api_url=argilla_stack.url, api_key=key, retries=0)))
    try:
        yield {
            "env": env,
            "eval": evaluation,
            "owner": owner,
            "ws": ws.name,
            "annotators": [c for _, c in annotators],
            "tmp": tmp,
            "tag": tag,
        }
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for d in ws.datasets:
                d.delete()
            for user, _ in annotators:
                user.delete()
            ws.delete()


def _cli(env: dict, *args: str) -> Any:
    return CliRunner().invoke(cli, list(args), env=env["env"])


@pytest.fixture(scope="module")
def rounds(stack_env: dict) -> dict:
    e = stack_env
    name = f"test_active_{e['tag']}"
    answered: set[str] = set()
    pushed = []
    for sample in (8, 6):
        res = _cli(
            e, "push", str(e["eval"]), "--dataset", name, "--workspace", e["ws"],
            "--sample", str(sample), "--strategy", "active", "--seed", "4",
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        assert "active round" in res.output
        records = _records(e["owner"], name, e["ws"])
        pushed.append({r["external_id"] for r in records} - answered)
        for n, rec in enumerate(records):
            if rec["external_id"] in answered:
                continue
            for k, client in enumerate(e["annotators"]):
                _answer(client, rec, (n * 5 + k * (n % 3 == 0)) % 4)
            answered.add(rec["external_id"])
    table = e["tmp"] / "active.parquet"
    res = _cli(e, "pull", "--dataset", name, "--workspace", e["ws"], "-o", str(table))
    assert res.exit_code == 0, res.output
    return {
        "name": name,
        "table": table,
        "pushed": pushed,
        "records": _records(e["owner"], name, e["ws"]),
    }


def test_probabilities_round_trip_through_the_stack(rounds: dict) -> None:
    table = pd.read_parquet(rounds["table"])
    first, second = rounds["pushed"]
    assert first and second and not first & second  # round 2 drew only new records
    assert set(table["sampling_strategy"]) == {"active"}
    meta = {r["external_id"]: r["metadata"] for r in rounds["records"]}
    for row in table.itertuples():
        per_round = [float(x) for x in meta[row.record_id]["_sampling_probabilities"].split(",")]
        assert len(per_round) == 2  # round-1 records got round 2's probability too
        escape = (1 - per_round[0]) * (1 - per_round[1])
        assert row.sampling_probability == pytest.approx(1 - escape, rel=1e-12)
        assert row.sampling_weight == pytest.approx(1 / (1 - escape), rel=1e-12)
        assert row.sampling_round == (1 if row.record_id in first else 2)
        assert row.sampling_drawn == len(first if row.record_id in first else second)
        assert row.sampling_order is not None and row.sampling_order >= 0


def test_estimate_says_active_and_its_gain(stack_env: dict, rounds: dict) -> None:
    res = _cli(
        stack_env, "estimate", str(stack_env["eval"]), "-a", str(rounds["table"]),
        "-f", "json", "--target-width", "0.1",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["design"] == "active"
    assert data["sampling"].startswith("active sample, 2 round(s)")
    assert data["uniform_labels"] is not None and data["uniform_labels"] > 0
    assert data["plan"]["target_width"] == 0.1
    assert data["plan"]["labels_uniform"] is not None


def test_status_reports_progress_agreement_and_interval(stack_env: dict, rounds: dict) -> None:
    res = _cli(
        stack_env, "status", "--dataset", rounds["name"], "--workspace", stack_env["ws"],
        "--format", "json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    n = len(rounds["pushed"][0]) + len(rounds["pushed"][1])
    assert (data["records"], data["answered"], data["complete"]) == (n, n, n)
    assert [a["submitted"] for a in data["annotators"]] == [n, n]
    # Both annotators answered every record; they differ where n % 3 == 0 (score + 1):
    # agreement on 'supports' is the share of records where both sides of 2 agree.
    table = pd.read_parquet(rounds["table"])
    wide = table.pivot(index="record_id", columns="annotator", values="human_score") >= 2
    same = float((wide.iloc[:, 0] == wide.iloc[:, 1]).mean())
    assert all(a["agreement"] == pytest.approx(same) for a in data["annotators"])
    assert data["design"] == "active" and data["interval"]["ci"] is not None
    table_out = _cli(
        stack_env, "status", "--dataset", rounds["name"], "--workspace", stack_env["ws"]
    )
    assert table_out.exit_code == 0, table_out.output
    assert f"{n} records pushed, {n} answered, {n} with ≥ 2 answers" in table_out.output


def test_partly_labelled_census_in_random_order_is_a_random_sample(stack_env: dict) -> None:
    e = stack_env
    name = f"test_census_{e['tag']}"
    res = _cli(e, "push", str(e["eval"]), "--dataset", name, "--workspace", e["ws"])
    assert res.exit_code == 0, res.output
    records = sorted(
        _records(e["owner"], name, e["ws"]), key=lambda r: r["metadata"]["_sampling_order"]
    )
    assert len(records) > 12
    for n, rec in enumerate(records[:12]):  # the first 12 served
        _answer(e["annotators"][0], rec, (n * 3) % 4)
    table = e["tmp"] / "census.parquet"
    assert (
        _cli(e, "pull", "--dataset", name, "--workspace", e["ws"], "-o", str(table)).exit_code == 0
    )
    res = _cli(e, "estimate", str(e["eval"]), "-a", str(table), "-f", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["design"] == "census (random order)"
    # The same labels without the recorded order: refused with the reason and the fix.
    plain = pd.read_parquet(table)
    plain["sampling_order"] = None
    plain.to_parquet(e["tmp"] / "unordered.parquet")
    res = _cli(e, "estimate", str(e["eval"]), "-a", str(e["tmp"] / "unordered.parquet"))
    assert res.exit_code == 2
    assert "not a random sample" in res.output and "push the evaluation" in res.output
