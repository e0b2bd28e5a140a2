"""What a run may spend on the judge (README "Security", issue 25 item 16).

``--max-cost USD`` (or ``judge.max_cost_usd``) stops judging at the cap:
costs are counted as answers arrive, a request whose estimate does not fit in
what is left is not sent, and the claims left abstain with the reason
``budget reached``. With no cap, a run whose estimate passes
``judge.confirm_above_usd`` (USD 5) asks first, or, with nobody to ask,
refuses in one line with exit 2 before any request. Every test talks to the
local OpenAI-protocol server through the real ``openai`` client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.config import JudgeConfig, PriceConfig
from citecal.testing import FakeOpenAIServer
from citecal.verify.judge import (
    Budget,
    JudgeRequest,
    SpendingNotApproved,
    build_judge,
    load_prompt,
    render_messages,
    request_ceiling,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
REPORT = str(EXAMPLES / "report.md")
REPO = str(EXAMPLES / "shopcart")
ANNOTATIONS = ROOT / "datasets" / "annotations" / "annotations.parquet"

# A price that makes a request cost dollars, not fractions of a cent: USD 1 per 1000 tokens.
DEAR = {model: {"input": 1000.0, "output": 1000.0} for model in ("gpt-4o-mini", "gpt-4o")}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def request(i: int) -> JudgeRequest:
    return JudgeRequest(
        key=f"c{i}",
        claim=f"The cart sends every order to the tax office by fax (case {i}).",
        citation=f"[src/m{i}.py:1-2]",
        file_path=f"src/m{i}.py",
        language="python",
        start_line=1,
        end_line=2,
        code="def apply_discount(cart, rules):\n    return cart.total - rules.best(cart)",
    )


def judge_config(server: FakeOpenAIServer, tmp_path: Path, **kw: object) -> JudgeConfig:
    return JudgeConfig(
        base_url=server.base_url,
        cache_path=str(tmp_path / "cache.sqlite3"),
        escalation_model=None,
        concurrency=1,
        timeout_s=5.0,
        pricing={k: PriceConfig(**v) for k, v in DEAR.items()},
        **kw,  # type: ignore[arg-type]
    )


def test_the_default_threshold_is_stated() -> None:
    assert JudgeConfig().confirm_above_usd == 5.0
    assert JudgeConfig().max_cost_usd is None


def test_judging_stops_at_the_cap_and_the_rest_abstain(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    config = judge_config(server, tmp_path)
    requests = [request(i) for i in range(6)]
    # A request reserves what it can cost at most: its prompt and its max_tokens.
    one = request_ceiling(
        render_messages(load_prompt(config.prompt), [requests[0]], 200, 3),
        config.max_tokens,
        "gpt-4o-mini",
        config,
    )
    cap = 2.5 * one  # room for two requests' ceilings, not three
    budget = Budget(cap)
    with build_judge(config, budget=budget) as judge:
        run = judge.judge(requests)
    judged = [v for v in run.verdicts.values() if v.verdict != "unverified"]
    left = [v for v in run.verdicts.values() if v.abstain_reason == "budget reached"]
    # The answers cost less than their ceilings, so the counted spending leaves room for a
    # third request once two answers are in.
    assert len(judged) == server.calls >= 2
    assert len(judged) + len(left) == 6 and left
    assert all(v.verdict == "unverified" and v.score is None for v in left)
    assert all(v.reasoning.startswith("budget reached") for v in left)
    assert run.cost_usd == pytest.approx(budget.spent()) and budget.spent() <= cap
    assert budget.left() == pytest.approx(cap - budget.spent())
    assert run.budget_reached == len(left)
    assert any(
        "budget reached" in w and f"{len(left)} claims not judged" in w for w in run.warnings
    )


def test_a_zero_cap_sends_nothing(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with build_judge(judge_config(server, tmp_path), budget=Budget(0.0)) as judge:
        run = judge.judge([request(0), request(1)])
    assert server.calls == 0
    assert {v.abstain_reason for v in run.verdicts.values()} == {"budget reached"}


def test_with_no_cap_a_dear_run_is_refused_before_any_request(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    config = judge_config(server, tmp_path)
    asked: list[float] = []
    refused = pytest.raises(SpendingNotApproved, match=r"above judge.confirm_above_usd \(\$5.00\)")
    with build_judge(config, budget=Budget(confirm_above=5.0)) as judge, refused:
        judge.judge([request(i) for i in range(6)])
    assert server.calls == 0

    def no(estimate: float, spent: float) -> bool:
        asked.append(estimate)
        return False

    with (
        build_judge(config, budget=Budget(confirm_above=5.0, approve=no)) as judge,
        pytest.raises(SpendingNotApproved),
    ):
        judge.judge([request(i) for i in range(6)])
    assert len(asked) == 1 and asked[0] > 5.0 and server.calls == 0
    with build_judge(config, budget=Budget(confirm_above=5.0, approve=lambda e, s: True)) as judge:
        run = judge.judge([request(i) for i in range(6)])
    assert server.calls == 6 and run.budget_reached == 0


def run_cli(args: list[str], server: FakeOpenAIServer, tmp_path: Path) -> tuple[int, str, str]:
    config = tmp_path / "dear.toml"
    config.write_text(
        "[judge]\nescalation_model = ''\n"
        + "".join(
            f'[judge.pricing."{m}"]\ninput = {p["input"]}\noutput = {p["output"]}\n'
            for m, p in DEAR.items()
        )
    )
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "k",
        "CITECAL_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
    }
    result = CliRunner().invoke(cli, [*args, "--config", str(config)], env=env)
    return result.exit_code, result.stdout, result.stderr


def test_eval_max_cost_reports_spent_and_left(server: FakeOpenAIServer, tmp_path: Path) -> None:
    code, out, err = run_cli(
        ["eval", REPORT, "--repo", REPO, "-f", "json", "--max-cost", "2"], server, tmp_path
    )
    assert code == 0, err
    doc = json.loads(out)
    s = doc["summary"]
    left = [c for c in doc["citations"] if c["abstain_reason"] == "budget reached"]
    assert left and s["budget_reached"] == len(left)
    assert all(c["verdict"] == "unverified" for c in left)
    assert s["max_cost_usd"] == 2.0
    assert 0 < s["cost_usd"] <= 2.0
    assert s["budget_left_usd"] == pytest.approx(2.0 - s["cost_usd"])
    assert s["llm_calls"] == server.calls
    assert f"judge budget: ${s['cost_usd']:.4f} spent of $2.0000" in err
    assert any("budget reached" in w for w in doc["warnings"])


def test_eval_without_a_cap_refuses_a_dear_run_in_one_line(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "eval.json"
    code, _, err = run_cli(
        ["eval", REPORT, "--repo", REPO, "-f", "json", "-o", str(out)], server, tmp_path
    )
    assert code == 2
    assert err.startswith("Error: the judge would cost ~$") and err.count("\n") == 1
    assert "pass --max-cost USD to cap it, or --yes to spend it" in err
    assert server.calls == 0 and not out.exists()
    code, _, err = run_cli(
        ["eval", REPORT, "--repo", REPO, "-f", "json", "-o", str(out), "--yes"], server, tmp_path
    )
    assert code == 0, err
    assert server.calls > 0 and out.exists()


def test_max_cost_is_a_finite_amount(server: FakeOpenAIServer, tmp_path: Path) -> None:
    for bad in ("nan", "inf", "-1", "lots"):
        code, _, err = run_cli(
            ["eval", REPORT, "--repo", REPO, "--max-cost", bad], server, tmp_path
        )
        assert code == 2 and "--max-cost" in err, (bad, err)
    assert server.calls == 0


def test_correct_max_cost_zero_spends_nothing(server: FakeOpenAIServer, tmp_path: Path) -> None:
    code, _, err = run_cli(
        ["correct", REPORT, "--repo", REPO, "-f", "json", "--max-cost", "0"], server, tmp_path
    )
    assert code == 0, err
    assert server.calls == 0
    assert "judge budget: $0.0000 spent of $0.0000, $0.0000 left" in err


def test_correct_without_a_cap_refuses_a_dear_run(server: FakeOpenAIServer, tmp_path: Path) -> None:
    code, _, err = run_cli(["correct", REPORT, "--repo", REPO], server, tmp_path)
    assert code == 2 and err.startswith("Error: the judge would cost ~$")
    assert server.calls == 0


def test_rejudge_max_cost(server: FakeOpenAIServer, tmp_path: Path) -> None:
    table = pd.read_parquet(ANNOTATIONS)
    source = tmp_path / "a.parquet"
    table[table["report_id"].isin({"report-01", "report-02"})].to_parquet(source)
    out = tmp_path / "b.parquet"
    code, _, err = run_cli(
        ["rejudge", str(source), "--prompt", "v3", "-o", str(out), "--max-cost", "2"],
        server,
        tmp_path,
    )
    assert code == 0, err
    new = pd.read_parquet(out)
    abstained = new[new["judge_reasoning"].str.startswith("budget reached", na=False)]
    assert len(abstained) and (abstained["llm_verdict"] == "unverified").all()
    assert "judge budget: $" in err and "spent of $2.0000" in err
    code, _, err = run_cli(
        ["rejudge", str(source), "--prompt", "v3", "-o", str(tmp_path / "c.parquet")],
        server,
        tmp_path,
    )
    assert code == 2 and err.startswith("Error: the judge would cost ~$")


def test_a_person_at_a_terminal_is_asked_once() -> None:
    from citecal.commands._options import make_budget

    runner = CliRunner()
    budget = make_budget(JudgeConfig(), None, False, ask=True)
    with runner.isolation(input="n\n"), pytest.raises(SpendingNotApproved):
        budget.check_estimate(12.0)
    with runner.isolation(input="y\n"):
        budget.check_estimate(12.0)
    assert budget.approved
    budget.check_estimate(1000.0)  # a yes holds for the run: no second question
    assert make_budget(JudgeConfig(), None, False, ask=False).approve is None
    assert make_budget(JudgeConfig(), 1.0, False, ask=True).cap == 1.0
    capped = make_budget(JudgeConfig(max_cost_usd=2.0), None, False)
    assert capped.cap == 2.0 and capped.left() == 2.0
