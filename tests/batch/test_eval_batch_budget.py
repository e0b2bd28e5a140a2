"""``citecal eval-batch --max-cost``: one spending cap for the whole cluster (README "Security").

Two worker processes judge against the local OpenAI-protocol server through
the real ``openai`` client; the ledger they share lives on the scheduler.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.compute as pc
import pytest
from batch_factories import Row
from click.testing import CliRunner

from citecal.batch import BatchOutput, BatchSummary
from citecal.cli import cli
from citecal.testing import FakeOpenAIServer

pytestmark = pytest.mark.integration


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def invoke(
    server: FakeOpenAIServer, tmp_path: Path, price: float, *args: str
) -> tuple[int, str, str]:
    config = tmp_path / "dear.toml"
    config.write_text(
        "[judge]\nescalation_model = ''\nconcurrency = 2\n"
        f'[judge.pricing."gpt-4o-mini"]\ninput = {price}\noutput = {price}\n'
    )
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "k",
        "CITECAL_CACHE_PATH": "",
        "CITECAL_ESCALATION_MODEL": "",
    }
    res = CliRunner().invoke(cli, [*args, "--config", str(config), "--no-cache"], env=env)
    return res.exit_code, res.stdout, res.stderr


def test_the_cap_holds_across_workers_and_the_tables_say_what_was_left(
    cluster: str, batch: tuple[Path, list[Row]], server: FakeOpenAIServer, tmp_path: Path
) -> None:
    manifest, _ = batch
    out = tmp_path / "out"
    code, stdout, stderr = invoke(
        server, tmp_path, 1000.0,
        "eval-batch", str(manifest), "-o", str(out), "--scheduler", cluster,
        "--task-size", "1", "-f", "json", "--max-cost", "3",
    )  # fmt: skip
    assert code == 0, stderr
    summary = BatchSummary.model_validate_json(stdout)
    t = summary.totals
    assert summary.max_cost_usd == 3.0
    assert 0 < summary.spent_usd <= 3.0 and summary.spent_usd == pytest.approx(t["cost_usd"])
    assert summary.budget_left_usd == pytest.approx(3.0 - summary.spent_usd)
    assert t["llm_calls"] == server.calls > 0
    assert t["budget_reached"] > 0
    output = BatchOutput(out)
    left = output.read("citations", filter=pc.field("abstain_reason") == "budget reached")
    assert left.num_rows == t["budget_reached"]
    assert set(left.column("verdict").to_pylist()) == {"unverified"}
    reports = output.read("reports", columns=["max_cost_usd", "budget_left_usd"]).to_pylist()
    assert {r["max_cost_usd"] for r in reports} == {3.0}
    assert all(0 <= r["budget_left_usd"] <= 3.0 for r in reports)


def test_the_table_summary_prints_spent_and_left(
    cluster: str, batch: tuple[Path, list[Row]], server: FakeOpenAIServer, tmp_path: Path
) -> None:
    manifest, _ = batch
    code, stdout, stderr = invoke(
        server, tmp_path, 1000.0,
        "eval-batch", str(manifest), "-o", str(tmp_path / "out"), "--scheduler", cluster,
        "--max-cost", "0",
    )  # fmt: skip
    assert code == 0, stderr
    assert server.calls == 0
    assert "judge budget: $0.0000 spent of $0.0000, $0.0000 left; " in stdout
    assert "claims not judged (budget reached)" in stdout


def test_with_no_cap_a_dear_batch_is_refused_in_one_line(
    cluster: str, batch: tuple[Path, list[Row]], server: FakeOpenAIServer, tmp_path: Path
) -> None:
    manifest, _ = batch
    out = tmp_path / "out"
    args = ["eval-batch", str(manifest), "-o", str(out), "--scheduler", cluster]
    code, _, stderr = invoke(server, tmp_path, 100_000.0, *args)
    assert code == 2
    assert stderr.splitlines()[-1].startswith("Error: the judge would cost ~$")
    assert "pass --max-cost USD to cap it, or --yes to spend it" in stderr
    assert "rerun with --resume" in stderr
    assert server.calls == 0
    code, _, stderr = invoke(server, tmp_path, 100_000.0, *args, "--resume", "--yes")
    assert code == 0, stderr
    assert server.calls > 0
