"""The judge end to end: real openai client, real HTTP, the local scriptable server."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import openai
import pytest

from citecal.config import JudgeConfig
from citecal.errors import JudgeError
from citecal.testing import ChatRequest, FakeOpenAIServer, Reply
from citecal.verify.judge import (
    JudgeRequest,
    JudgeUnavailable,
    build_judge,
    estimate_cost,
    load_prompt,
)

pytestmark = pytest.mark.integration

MakeConfig = Callable[..., JudgeConfig]
MakeRequest = Callable[..., JudgeRequest]

SUPPORTS = {"reasoning": "ok", "supports": True, "confidence": "high", "score": 0.95}


def batch_answer(ids: list[int], **fields: object) -> str:
    return json.dumps([{"claim_id": i, **SUPPORTS, **fields} for i in ids])


# --------------------------------------------------------------------------- basics


def test_batches_by_file_numbered_claims_and_verdict_fields(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    files = ["a.py"] * 6 + ["b.py"]
    reqs = [make_request(i, file_path=f) for i, f in enumerate(files)]
    judge = build_judge(make_config(structured_outputs=False))
    done: list[int] = []
    run = judge.judge(reqs, progress=done.append)
    assert run.calls == 3 == server.calls
    sizes = sorted(len(r.claims) for r in server.requests)
    assert sizes == [1, 1, 5]
    five = next(r for r in server.requests if len(r.claims) == 5)
    assert [c.n for c in five.claims] == [1, 2, 3, 4, 5]
    assert '[Claim 1]: "The cart applies' in five.user
    one_b = next(r for r in server.requests if "b.py" in r.user)
    assert 'Claim: "' in one_b.user and "[Claim 1]" not in one_b.user  # single template
    assert done[-1] == 7 and done == sorted(done)  # cumulative count of finished requests
    assert set(run.verdicts) == {r.key for r in reqs}
    v = run.verdicts["c0"]
    assert v.method == "llm" and v.model == "gpt-4o-mini"
    assert v.prompt_version == load_prompt("v3").version
    assert v.verdict in ("supports", "not_supports") and v.score is not None
    assert not v.cached and v.escalated_from is None
    # usage: verdict tokens add up exactly to the API's usage totals
    assert sum(x.tokens for x in run.verdicts.values()) == run.tokens > 0
    assert sum(x.cost_usd for x in run.verdicts.values()) == pytest.approx(run.cost_usd)
    assert run.warnings == []


def test_usage_and_cost_from_api_usage(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply(content=batch_answer([1, 2]), usage=(1000, 200)))
    run = build_judge(make_config()).judge([make_request(0), make_request(1)])
    assert (run.calls, run.prompt_tokens, run.completion_tokens) == (1, 1000, 200)
    # gpt-4o-mini: 1000 * 0.15/1M + 200 * 0.60/1M = 0.00015 + 0.00012
    assert run.cost_usd == pytest.approx(0.00027, abs=1e-12)
    assert [v.tokens for v in run.verdicts.values()] == [600, 600]
    assert run.verdicts["c0"].cost_usd == pytest.approx(0.000135, abs=1e-12)


def test_unknown_model_costs_zero_with_one_warning(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    files = ["a.py", "b.py", "c.py"]
    run = build_judge(make_config(), model="llama3.1:8b").judge(
        [make_request(i, file_path=f) for i, f in enumerate(files)]
    )
    assert run.calls == 3 and run.cost_usd == 0.0 and run.tokens > 0
    assert [w for w in run.warnings if "no price" in w] == [
        "no price for model llama3.1:8b: its cost is counted as 0"
        " (add it to [judge.pricing] in your config file)"
    ]
    assert {r.model for r in server.requests} == {"llama3.1:8b"}


def test_structured_outputs_requested_and_wrapped_batch_parsed(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    run = build_judge(make_config()).judge([make_request(0), make_request(1)])
    rf = server.requests[0].response_format
    assert rf is not None and rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "citecal_judge_batch"
    assert all(v.verdict != "unverified" for v in run.verdicts.values())


def test_structured_output_rejected_falls_back_once_and_remembers(
    tmp_path: Path, make_request: MakeRequest
) -> None:
    with FakeOpenAIServer(reject_response_format=True) as srv:
        cfg = JudgeConfig(base_url=srv.base_url, cache=False, escalation_model=None)
        judge = build_judge(cfg)
        reqs = [make_request(i, file_path=f"f{i}.py") for i in range(4)]
        run = judge.judge(reqs)
        assert all(v.verdict != "unverified" for v in run.verdicts.values())
        rejected = [r for r in srv.requests if r.response_format is not None]
        assert 1 <= len(rejected) <= 4  # only the ones in flight before the switch
        assert run.calls == 4
        assert len([w for w in run.warnings if "structured outputs" in w]) == 1
        srv.reset()
        run2 = judge.judge(reqs)
        assert all(r.response_format is None for r in srv.requests)
        assert run2.calls == 4 == srv.calls and run2.warnings == []


# --------------------------------------------------------------------------- batch answers


def test_missing_batch_item_retried_alone_once(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(
        Reply(content=batch_answer([1, 3]), usage=(300, 30)),
        Reply.json({**SUPPORTS, "supports": False}, usage=(100, 10)),
    )
    run = build_judge(make_config()).judge([make_request(i) for i in range(3)])
    assert run.calls == 2 == server.calls
    retry = server.requests[1]
    assert len(retry.claims) == 1 and "(case 1)" in retry.claims[0].claim
    assert "[Claim 1]" not in retry.user
    assert run.verdicts["c1"].verdict == "not_supports"
    assert run.verdicts["c1"].tokens == 110 + 110  # own call + its share of the batch
    assert run.verdicts["c0"].verdict == "supports" == run.verdicts["c2"].verdict


def test_missing_item_whose_retry_fails_is_unverified(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply(content=batch_answer([1])), Reply(content="I am not sure."))
    run = build_judge(make_config()).judge([make_request(0), make_request(1)])
    assert server.calls == 2  # retried alone exactly once
    v = run.verdicts["c1"]
    assert (v.verdict, v.confidence, v.score) == ("unverified", "low", None)
    assert "could not be parsed" in v.reasoning
    assert any("1 judge answers could not be parsed" in w for w in run.warnings)


def test_extra_and_unknown_ids_ignored(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    items = json.loads(batch_answer([1, 2, 7]))
    items.append({"claim_id": 1, "supports": False, "confidence": "high"})
    server.script(Reply.json(items))
    run = build_judge(make_config()).judge([make_request(0), make_request(1)])
    assert server.calls == 1
    assert run.verdicts["c0"].verdict == "supports"  # first answer for an id wins


def test_malformed_answers_become_unverified_low(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(
        Reply(content='{"supports": tru'),  # broken JSON content
        Reply(raw=b"<html>bad gateway page</html>"),  # not even a JSON body
    )
    reqs = [make_request(0, file_path="a.py"), make_request(1, file_path="b.py")]
    run = build_judge(make_config(concurrency=1)).judge(reqs)
    for v in run.verdicts.values():
        assert (v.verdict, v.confidence, v.method) == ("unverified", "low", "llm")
    assert any("2 judge answers could not be parsed" in w for w in run.warnings)


# --------------------------------------------------------------------------- faults


def test_rate_limit_retry_after_is_honoured(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply.status_error(429, "slow down", headers={"Retry-After": "1"}))
    t0 = time.monotonic()
    run = build_judge(make_config()).judge([make_request(0)])
    assert server.calls == 2
    gap = server.requests[1].received_at - server.requests[0].received_at
    assert gap >= 1.0  # backoff alone would be <= 0.05 s in this config
    assert time.monotonic() - t0 < 5
    assert run.verdicts["c0"].verdict == "supports" and run.calls == 1
    assert run.warnings == ["judge requests retried 1 times after HTTP 429"]


def test_server_error_retried_then_success(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply.status_error(500), Reply.status_error(503))
    run = build_judge(make_config()).judge([make_request(0)])
    assert server.calls == 3 and run.calls == 1
    assert run.verdicts["c0"].verdict == "supports"
    assert "HTTP 500/503" in run.warnings[0]


def test_server_error_four_times_stops_the_run(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(*[Reply.status_error(500, "upstream exploded")] * 4)
    with pytest.raises(JudgeError, match=r"HTTP 500 .* after 3 retries: upstream exploded"):
        build_judge(make_config()).judge([make_request(0)])
    assert server.calls == 4


def test_exponential_backoff_grows(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(*[Reply.status_error(502)] * 3)
    build_judge(make_config(backoff_base_s=0.1, backoff_max_s=10)).judge([make_request(0)])
    t = [r.received_at for r in server.requests]
    gaps = [b - a for a, b in itertools.pairwise(t)]
    # equal jitter: retry k waits between base*2^k/2 and base*2^k (+ scheduling slack)
    assert 0.05 <= gaps[0] < 0.1 + 0.3
    assert 0.1 <= gaps[1] < 0.2 + 0.3
    assert 0.2 <= gaps[2] < 0.4 + 0.3


def test_auth_error_not_retried_and_names_the_key(
    make_request: MakeRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer(api_key="right-key") as srv:
        cfg = JudgeConfig(base_url=srv.base_url, cache=False, escalation_model=None)
        with pytest.raises(JudgeError, match=r"HTTP 401 .*not retried.*check OPENAI_API_KEY"):
            build_judge(cfg).judge([make_request(0)])
        assert srv.calls == 1
        monkeypatch.setenv("OPENAI_API_KEY", "right-key")
        assert build_judge(cfg).judge([make_request(0)]).calls == 1


def test_unknown_model_is_a_clear_error(make_request: MakeRequest) -> None:
    with FakeOpenAIServer(known_models=["gpt-4o-mini"]) as srv:
        cfg = JudgeConfig(base_url=srv.base_url, cache=False, escalation_model=None)
        with pytest.raises(JudgeError, match=r"HTTP 404 .*check the model name 'nope'"):
            build_judge(cfg, model="nope").judge([make_request(0)])
        assert srv.calls == 1


def test_timeout_retried_once_then_unverified(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply(delay_s=2, content="{}"), Reply(delay_s=2, content="{}"))
    t0 = time.monotonic()
    run = build_judge(make_config(timeout_s=0.3)).judge([make_request(0)])
    assert time.monotonic() - t0 < 1.9  # never waited for the 2 s answers
    assert server.calls == 2
    v = run.verdicts["c0"]
    assert (v.verdict, v.confidence) == ("unverified", "low") and "timed out" in v.reasoning
    assert run.warnings == [
        "LLM judge timed out (after 0.3s, retried once) on 1 claims: unverified"
    ]


def test_timeout_once_then_answer(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply(delay_s=2, content="{}"))
    run = build_judge(make_config(timeout_s=0.3)).judge([make_request(0)])
    assert server.calls == 2 and run.verdicts["c0"].verdict == "supports"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_endpoint_degrades_with_one_warning(
    tmp_path: Path, make_request: MakeRequest
) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    cfg = JudgeConfig(base_url=url, cache_path=str(tmp_path / "c.db"), timeout_s=2)
    reqs = [make_request(i, file_path=f"f{i % 3}.py") for i in range(7)]
    run = build_judge(cfg).judge(reqs)  # must not raise
    assert all(v.verdict == "unverified" for v in run.verdicts.values())
    assert run.calls == 0
    assert len(run.warnings) == 1
    assert run.warnings[0].startswith(f"LLM judge unreachable at {url}")
    assert run.warnings[0].endswith(": 7 claims unverified")


def test_missing_key_is_judge_unavailable(
    monkeypatch: pytest.MonkeyPatch, make_request: MakeRequest
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(JudgeUnavailable, match=r"OPENAI_API_KEY is not set"):
        build_judge(JudgeConfig(base_url="https://openrouter.ai/api/v1"))
    with pytest.raises(JudgeUnavailable, match=r"MY_KEY is not set"):
        build_judge(JudgeConfig(api_key_env="MY_KEY"))


def test_loopback_endpoint_needs_no_key(
    server: FakeOpenAIServer,
    make_config: MakeConfig,
    make_request: MakeRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    run = build_judge(make_config()).judge([make_request(0)])
    assert run.calls == 1
    assert server.requests[0].headers["authorization"] == "Bearer citecal-local"


# --------------------------------------------------------------------------- concurrency


@pytest.mark.parametrize("concurrency", [2, 5])
def test_concurrency_overlaps_up_to_the_limit(
    concurrency: int, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    with FakeOpenAIServer(latency_s=0.2) as srv:
        reqs = [make_request(i, file_path=f"f{i}.py") for i in range(10)]
        cfg = make_config(base_url=srv.base_url, concurrency=concurrency, cache=False)
        t0 = time.monotonic()
        run = build_judge(cfg).judge(reqs)
        wall = time.monotonic() - t0
    assert run.calls == 10
    assert srv.max_in_flight == concurrency
    waves = -(-10 // concurrency)
    assert wall < waves * 0.2 + 0.9  # slack for a loaded machine


def test_judge_works_inside_a_running_event_loop(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    with build_judge(make_config()) as judge:

        async def notebook_cell() -> int:
            return judge.judge([make_request(0)]).calls  # sync call from a running loop

        assert asyncio.run(notebook_cell()) == 1
    assert judge.cache is not None and judge.cache._conn is None  # closed on exit


# --------------------------------------------------------------------------- escalation


def _by_model(low_for: str) -> Callable[[ChatRequest], Reply]:
    def handler(req: ChatRequest) -> Reply:
        if req.model == low_for:
            return Reply.json({"reasoning": "unsure", "supports": True, "confidence": "low"})
        return Reply.json({"reasoning": "sure", "supports": False, "confidence": "high"})

    return handler


def test_low_confidence_escalates_and_keeps_both(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.handler = _by_model("gpt-4o-mini")
    run = build_judge(make_config(escalation_model="gpt-4o")).judge([make_request(0)])
    assert [r.model for r in server.requests] == ["gpt-4o-mini", "gpt-4o"]
    v = run.verdicts["c0"]
    assert (v.verdict, v.confidence, v.model, v.reasoning) == (
        "not_supports",
        "high",
        "gpt-4o",
        "sure",
    )
    first = v.escalated_from
    assert first is not None
    assert (first.verdict, first.confidence, first.model) == ("supports", "low", "gpt-4o-mini")
    assert v.score == 0.0 and first.score == 0.67  # DESIGN.md mapping when no score given
    assert run.calls == 2 and v.tokens == run.tokens
    assert v.cost_usd == pytest.approx(run.cost_usd)


def test_escalation_threshold_and_batched_items_escalate_singly(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    confidences = ["high", "medium", "low"]
    server.script(
        Reply.json(
            [
                {"claim_id": i + 1, "supports": True, "confidence": c}
                for i, c in enumerate(confidences)
            ]
        )
    )
    cfg = make_config(escalation_model="gpt-4o", confidence_threshold=0.7)
    run = build_judge(cfg).judge([make_request(i) for i in range(3)])
    escalations = [r for r in server.requests if r.model == "gpt-4o"]
    assert len(escalations) == 2 and all(len(r.claims) == 1 for r in escalations)
    assert run.verdicts["c0"].escalated_from is None
    assert run.verdicts["c1"].escalated_from is not None
    assert run.verdicts["c2"].escalated_from is not None
    server.reset()
    server.script(Reply.json({"supports": True, "confidence": "medium"}))
    low_threshold = make_config(escalation_model="gpt-4o", confidence_threshold=0.5, cache=False)
    build_judge(low_threshold).judge([make_request(9)])
    assert server.calls == 1  # medium (0.6) is not below 0.5


@pytest.mark.parametrize("escalation", [None, "", "gpt-4o-mini"])
def test_escalation_disabled(
    escalation: str | None,
    server: FakeOpenAIServer,
    make_config: MakeConfig,
    make_request: MakeRequest,
) -> None:
    server.handler = _by_model("gpt-4o-mini")
    judge = build_judge(make_config(escalation_model=escalation))
    assert judge.escalation_model is None
    run = judge.judge([make_request(0)])
    assert server.calls == 1 and run.verdicts["c0"].confidence == "low"


def test_escalation_model_unknown_to_endpoint_is_skipped_with_warning(
    make_request: MakeRequest, tmp_path: Path
) -> None:
    with FakeOpenAIServer(known_models=["llama3"], handler=_by_model("llama3")) as srv:
        cfg = JudgeConfig(base_url=srv.base_url, cache=False, judge_model="llama3")
        run = build_judge(cfg).judge([make_request(0, file_path="a.py"), make_request(1)])
    assert all(v.model == "llama3" and v.escalated_from is None for v in run.verdicts.values())
    assert len([w for w in run.warnings if "escalation model 'gpt-4o' not found" in w]) == 1


# --------------------------------------------------------------------------- cache


def test_cache_second_run_makes_zero_calls(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.handler = _by_model("gpt-4o-mini")
    cfg = make_config(escalation_model="gpt-4o")
    reqs = [make_request(i, file_path=f"f{i % 2}.py") for i in range(5)]
    first = build_judge(cfg).judge(reqs)
    calls = server.calls
    assert first.calls == calls > 0 and first.cache_hits == 0
    second = build_judge(cfg).judge(reqs)
    assert server.calls == calls  # zero API calls
    assert second.calls == 0 and second.tokens == 0 and second.cost_usd == 0.0
    assert second.cache_hits == 10  # 5 first-pass + 5 escalation answers
    for key, v in second.verdicts.items():
        old = first.verdicts[key]
        assert v.cached and (v.verdict, v.model, v.score) == (old.verdict, old.model, old.score)
        assert v.escalated_from is not None and v.escalated_from.cached


def test_cache_bypass_and_prompt_change(
    server: FakeOpenAIServer,
    make_config: MakeConfig,
    make_request: MakeRequest,
    tmp_path: Path,
) -> None:
    cfg = make_config()
    build_judge(cfg).judge([make_request(0)])
    assert build_judge(cfg, use_cache=False).judge([make_request(0)]).calls == 1
    fresh = make_config(cache_path=str(tmp_path / "other.db"))
    build_judge(fresh, use_cache=False).judge([make_request(0)])
    assert not (tmp_path / "other.db").exists()  # no writes either
    prompt = tmp_path / "v2.md"
    prompt.write_text(Path(_v1_path()).read_text() + "\n")  # same text, new version
    assert build_judge(cfg, prompt=str(prompt)).judge([make_request(0)]).calls == 1
    assert build_judge(cfg).judge([make_request(0)]).calls == 0


def _v1_path() -> str:
    from importlib import resources

    return str(resources.files("citecal.verify.judge").joinpath("prompts", "judge", "v1.md"))


def test_failures_are_not_cached(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply(content="garbage"))
    cfg = make_config()
    assert build_judge(cfg).judge([make_request(0)]).verdicts["c0"].verdict == "unverified"
    again = build_judge(cfg).judge([make_request(0)])
    assert again.calls == 1 and again.verdicts["c0"].verdict == "supports"


# --------------------------------------------------------------------------- dry run


def test_dry_run_estimate_makes_no_calls(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    reqs = [make_request(i, file_path=f"f{i % 3}.py") for i in range(12)]
    cfg = make_config()
    est = estimate_cost(reqs, cfg)
    assert server.calls == 0
    assert est.requests == 12 and est.calls == 3  # 4 claims per file, batch size 5
    assert est.completion_tokens == 3 * (4 * 120 + 20)
    assert est.cost_usd == pytest.approx(
        (est.prompt_tokens * 0.15 + est.completion_tokens * 0.60) / 1e6, abs=1e-12
    )
    run = build_judge(cfg).judge(reqs)
    assert run.calls == est.calls
    assert 0.5 < est.prompt_tokens / run.prompt_tokens < 2.0  # same prompts, chars/4 both sides
    cached = estimate_cost(reqs, cfg, use_cache=True)
    assert cached.calls == 0 and cached.cache_hits == 12
    other = estimate_cost(reqs, cfg, model="mystery-model")
    assert other.cost_usd == 0.0 and other.warnings == [
        "no price for model mystery-model: cost estimated as 0"
    ]


def test_server_lists_models_to_the_openai_client(server: FakeOpenAIServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    assert [m.id for m in client.models.list()] == ["gpt-4o-mini", "gpt-4o"]
    client.close()


def test_dropped_connection_is_retried_once(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply(drop=True))
    run = build_judge(make_config()).judge([make_request(0)])
    assert server.calls == 2 and run.calls == 1
    assert run.verdicts["c0"].verdict == "supports" and run.warnings == []
    server.reset()
    server.script(Reply(drop=True), Reply(drop=True))
    run = build_judge(make_config(cache=False)).judge([make_request(0)])
    assert server.calls == 2  # retried once only; the second drop marks the endpoint down
    assert run.verdicts["c0"].verdict == "unverified"
    assert len(run.warnings) == 1 and "unreachable" in run.warnings[0]


def test_rejected_temperature_is_dropped_once(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    def reasoning_model(req: ChatRequest) -> Reply | None:
        if "temperature" in req.body:
            return Reply.status_error(
                400, "Unsupported value: 'temperature' does not support 0.0 with this model."
            )
        return None

    server.handler = reasoning_model
    judge = build_judge(make_config())
    run = judge.judge([make_request(0)])
    assert [("temperature" in r.body) for r in server.requests] == [True, False]
    assert run.verdicts["c0"].verdict == "supports" and run.calls == 1
    assert len([w for w in run.warnings if "rejected temperature=0.0" in w]) == 1


def test_server_command_mode_points_the_command_at_itself() -> None:
    import sys

    from citecal.testing.openai_server import main

    probe = (
        "import os, sys, openai\n"
        "c = openai.OpenAI()\n"
        "ok = [m.id for m in c.models.list()] == ['gpt-4o-mini', 'gpt-4o']\n"
        "sys.exit(7 if ok else 3)\n"
    )
    assert main(["--", sys.executable, "-c", probe]) == 7  # exit code passed through


def test_spent_quota_is_not_retried(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    quota = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    server.script(Reply(status=429, body=quota), *[Reply.status_error(429, "slow down")] * 4)
    with pytest.raises(JudgeError, match=r"HTTP 429 .*not retried.*quota exhausted"):
        build_judge(make_config()).judge([make_request(0)])
    assert server.calls == 1
    with pytest.raises(JudgeError, match=r"HTTP 429 .*after 3 retries.*rate limited"):
        build_judge(make_config()).judge([make_request(0)])
    assert server.calls == 5


def test_identical_claims_are_judged_once(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    twin = make_request(0).__class__(**{**make_request(0).__dict__, "key": "twin"})
    done: list[int] = []
    run = build_judge(make_config()).judge([make_request(0), twin, make_request(1)], done.append)
    assert server.calls == 1 and len(server.requests[0].claims) == 2
    assert run.verdicts["twin"].verdict == run.verdicts["c0"].verdict
    assert run.verdicts["twin"].tokens == 0  # per-citation tokens still add up to the total
    assert sum(v.tokens for v in run.verdicts.values()) == run.tokens
    assert done[-1] == 3
