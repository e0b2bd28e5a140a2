"""Judge confidence sources through the real openai client and OpenAI's response shapes.

README "Judge confidence": ``logprob`` (the verdict token's probability), ``consistency``
(K samples, ``n=K`` or K requests), ``simulated`` (K few-shot variants), their fallbacks
(no logprobs, ``n`` ignored or rejected) and what K answers cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from citecal.config import JudgeConfig
from citecal.testing import FakeOpenAIServer, Reply
from citecal.testing.realistic_judge import RealisticJudge, tokenize
from citecal.verify.judge import JudgeRequest, build_judge, estimate_cost
from citecal.verify.judge._client import Choice, TokenLogprob
from citecal.verify.judge._confidence import (
    aggregate,
    logprob_confidences,
    token_index,
    verdict_offsets,
    verdict_probability,
)
from citecal.verify.judge._parse import JudgeAnswer
from citecal.verify.judge._prompts import load_prompt, with_examples

MakeConfig = Callable[..., JudgeConfig]
MakeRequest = Callable[..., JudgeRequest]


@pytest.fixture
def realistic() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(mode="realistic", seed=3) as srv:
        yield srv


def _config(srv: FakeOpenAIServer, tmp_path: Path, **kw: Any) -> JudgeConfig:
    settings: dict[str, Any] = {
        "base_url": srv.base_url,
        "cache_path": str(tmp_path / "cache.sqlite3"),
        "timeout_s": 5.0,
        "escalation_model": None,
    }
    settings.update(kw)
    return JudgeConfig(**settings)


def _requests(make_request: MakeRequest, n: int, file_path: str = "src/cart.py") -> list[Any]:
    return [make_request(i, file_path=file_path) for i in range(n)]


def _lp(token: str, logprob: float, top: list[tuple[str, float]]) -> TokenLogprob:
    return TokenLogprob(token, logprob, tuple(token.encode()), tuple(top))


# --------------------------------------------------------------------------- pure parsing


def test_the_verdict_value_is_found_in_single_and_batch_answers() -> None:
    single = '<think>"supports": true</think>```json\n{"reasoning": "a", "supports": false}\n```'
    spot = verdict_offsets(single)[1]
    assert single[spot.offset : spot.offset + 5] == "false"  # the fenced answer, not the think
    batch = json.dumps(
        {
            "results": [
                {"claim_id": 2, "reasoning": "x {y}", "supports": False, "confidence": "high"},
                {"claim_id": 1, "reasoning": "z", "supports": True, "confidence": "low"},
            ]
        }
    )
    spots = verdict_offsets(batch, 2)
    assert batch[spots[1].offset : spots[1].offset + 4] == "true"
    assert batch[spots[2].offset : spots[2].offset + 5] == "false"
    # No ids and exactly `count` items: numbered in order, as parse_batch numbers them.
    bare = '[{"verdict": "not_supported"}, {"verdict": "Supported"}]'
    spots = verdict_offsets(bare, 2)
    assert bare[spots[1].offset :].startswith('"not_supported')
    assert spots[2].answer.verdict == "supports"


def test_token_index_follows_bytes_when_a_character_is_split_over_tokens() -> None:
    text = '{"reasoning": "é", "supports": true}'
    raw = text.encode()
    cut = raw.index("é".encode()) + 1  # é is two bytes: split between two tokens
    tokens = [
        TokenLogprob("?", -0.1, tuple(raw[:cut])),
        TokenLogprob("?", -0.1, tuple(raw[cut : cut + 1])),
        TokenLogprob(raw[cut + 1 :].decode(), -0.1, tuple(raw[cut + 1 :])),
    ]
    assert token_index(tokens, text, text.index("true")) == 2
    # Strings that do not spell the text and no bytes: nothing is guessed.
    assert token_index([TokenLogprob("x", -0.1)], text, 3) is None


def test_the_verdict_probability_is_renormalised_over_the_two_verdicts() -> None:
    # p(true) = 0.6, p(false) = 0.3, junk 0.1: the verdict's share of the verdict mass is 2/3.
    tok = _lp(" true", math.log(0.6), [(" true", math.log(0.6)), (" false", math.log(0.3))])
    assert math.isclose(verdict_probability(tok, True, True) or 0, 0.6 / 0.9, abs_tol=1e-12)
    # No alternative for the other verdict: the rest counts against it (conservative).
    alone = _lp(" true", math.log(0.6), [(" true", math.log(0.6)), (" the", math.log(0.1))])
    assert math.isclose(verdict_probability(alone, True, True) or 0, 0.6, abs_tol=1e-12)
    # The same verdict spelled twice (" true" / "true") counts once per spelling, both sides.
    two = _lp("true", math.log(0.5), [("true", math.log(0.5)), (" true", math.log(0.3))])
    assert math.isclose(verdict_probability(two, True, True) or 0, 0.8, abs_tol=1e-12)
    # A verdict word: "Not" and "Supported" name opposite sides.
    word = _lp("Not", math.log(0.7), [("Not", math.log(0.7)), ("Supported", math.log(0.2))])
    assert math.isclose(verdict_probability(word, False, False) or 0, 0.7 / 0.9, abs_tol=1e-12)
    # The token does not name the verdict the answer gives: no value.
    assert verdict_probability(_lp(" false", -0.1, []), True, True) is None


def test_logprob_confidences_reads_each_claim_of_a_batch_choice() -> None:
    text = json.dumps(
        {"results": [{"claim_id": 1, "supports": True}, {"claim_id": 2, "supports": False}]}
    )
    p = [0.9, 0.7]
    tokens = []
    seen = 0
    for piece in tokenize(text):
        if piece.strip() in ("true", "false"):
            prob = p[seen]
            seen += 1
            other = " false" if piece.strip() == "true" else " true"
            tokens.append(
                _lp(piece, math.log(prob), [(piece, math.log(prob)), (other, math.log(1 - prob))])
            )
        else:
            tokens.append(_lp(piece, -0.001, [(piece, -0.001)]))
    got = logprob_confidences(Choice(text, tuple(tokens)), 2)
    assert got == pytest.approx({1: 0.9, 2: 0.7}, abs=1e-12)
    assert logprob_confidences(Choice(text, None), 2) == {}  # a server without logprobs


def test_the_majority_and_its_share() -> None:
    def a(verdict: str) -> JudgeAnswer:
        return JudgeAnswer(verdict=verdict, confidence="high")  # type: ignore[call-arg]

    m = aggregate([a("supports"), a("not_supports"), a("supports"), a("partial"), a("supports")])
    assert (m.answer.verdict, m.agreeing, m.total, m.share, m.supports_share) == (
        "supports",
        3,
        5,
        0.6,
        0.6,
    )
    # partial sides with not_supports (README "Calibration"); ties go to the first answer.
    m = aggregate([a("partial"), a("supports"), a("not_supports"), a("supports")])
    assert (m.answer.verdict, m.share) == ("partial", 0.5)


# --------------------------------------------------------------------------- through HTTP


def test_logprob_confidence_is_the_probability_the_model_put_on_its_verdict(
    realistic: FakeOpenAIServer, tmp_path: Path, make_request: MakeRequest
) -> None:
    judge_model = realistic.realistic
    assert isinstance(judge_model, RealisticJudge)
    reqs = _requests(make_request, 7)  # one batch of 5 and one of 2
    run = build_judge(_config(realistic, tmp_path, confidence="logprob")).judge(reqs)
    assert realistic.calls == 2
    body = realistic.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    for r in reqs:
        v = run.verdicts[r.key]
        belief = judge_model.belief("gpt-4o-mini", r.claim, r.code)
        said = v.verdict == "supports"
        expected = belief.right if said == belief.truth else 1 - belief.right
        assert v.confidence_source == "logprob"
        assert math.isclose(v.confidence_value or 0, expected, abs_tol=1e-9)
        assert math.isclose(v.score or 0, expected if said else 1 - expected, abs_tol=1e-9)
        assert v.confidence == "high"  # its words: always high, whatever it knows
    assert not run.warnings


def test_without_logprobs_the_judge_falls_back_to_its_words(
    tmp_path: Path, make_request: MakeRequest
) -> None:
    with FakeOpenAIServer(mode="realistic", realistic=RealisticJudge(logprobs=False)) as srv:
        run = build_judge(_config(srv, tmp_path, confidence="logprob")).judge(
            _requests(make_request, 3)
        )
    for v in run.verdicts.values():
        assert (v.confidence_source, v.confidence_value) == ("verbal", 1.0)
    assert any(
        "3 answers came without a usable verdict-token probability" in w for w in run.warnings
    )


def test_a_server_that_rejects_logprobs_is_asked_without_them_once(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply.status_error(400, "logprobs is not supported by this model"))
    run = build_judge(make_config(confidence="logprob")).judge(_requests(make_request, 2))
    assert server.calls == 2
    assert "logprobs" in server.requests[0].body and "logprobs" not in server.requests[1].body
    assert all(v.confidence_source == "verbal" for v in run.verdicts.values())
    assert any("rejected logprobs" in w for w in run.warnings)


def test_consistency_asks_k_samples_in_one_request_and_counts_their_tokens(
    realistic: FakeOpenAIServer, tmp_path: Path, make_request: MakeRequest
) -> None:
    reqs = _requests(make_request, 1)
    plain = build_judge(_config(realistic, tmp_path, cache=False)).judge(reqs)
    realistic.reset()
    run = build_judge(
        _config(realistic, tmp_path, confidence="consistency", samples=5, cache=False)
    ).judge(reqs)
    assert realistic.calls == 1
    body = realistic.requests[0].body
    assert (body["n"], body["temperature"]) == (5, 0.7)
    # One prompt, five answers: the prompt is billed once, every answer counts.
    assert run.prompt_tokens == plain.prompt_tokens
    assert run.completion_tokens == 5 * plain.completion_tokens
    v = run.verdicts["c0"]
    assert v.confidence_source == "consistency" and v.tokens == run.tokens
    agreeing = int(v.reasoning.split(" of ")[0])
    assert math.isclose(v.confidence_value or 0, agreeing / 5, abs_tol=1e-12)


def test_a_server_that_ignores_n_gets_one_request_per_sample(
    tmp_path: Path, make_request: MakeRequest
) -> None:
    with FakeOpenAIServer(mode="realistic", honour_n=False) as srv:
        reqs = _requests(make_request, 1)
        run = build_judge(
            _config(srv, tmp_path, confidence="consistency", samples=4, cache=False)
        ).judge(reqs)
        assert srv.calls == 4  # n=4 answered with one choice, then three more, one each
        assert [r.body.get("n") for r in srv.requests].count(4) == 1
    assert any("returned 1 choice(s) for n=4" in w for w in run.warnings)
    assert " of 4 samples agree" in run.verdicts["c0"].reasoning


def test_a_server_that_rejects_n_gets_k_requests(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    server.script(Reply.status_error(400, "n must be 1 for this model"))
    run = build_judge(make_config(confidence="consistency", samples=3)).judge(
        _requests(make_request, 1)
    )
    assert server.calls == 4  # the rejected n=3, then three requests
    assert all("n" not in r.body for r in server.requests[1:])
    v = run.verdicts["c0"]
    assert (v.confidence_source, v.confidence_value) == ("consistency", 1.0)  # deterministic
    assert any("rejected n=3" in w for w in run.warnings)


def test_simulated_annotators_ask_each_variant_and_agree(
    realistic: FakeOpenAIServer, tmp_path: Path, make_request: MakeRequest
) -> None:
    base = load_prompt("v3")
    variants = [with_examples(base, f"Example {i}: ...", f"v3+sim{i}", "test") for i in range(3)]
    judge = build_judge(
        _config(realistic, tmp_path, confidence="simulated", samples=3), variants=variants
    )
    run = judge.judge(_requests(make_request, 2))
    assert realistic.calls == 3
    systems = {r.system for r in realistic.requests}
    assert len(systems) == 3 and all(f"Example {i}" in s for i, s in enumerate(sorted(systems)))
    for v in run.verdicts.values():
        assert v.confidence_source == "simulated"
        assert v.confidence_value in (2 / 3, 1.0)
        assert "simulated annotators agree" in v.reasoning


def test_simulated_needs_its_variants() -> None:
    from citecal.errors import InputError

    with pytest.raises(InputError, match="needs 5 few-shot variants"):
        build_judge(JudgeConfig(base_url="http://127.0.0.1:9/v1", confidence="simulated"))


def test_the_cache_keys_on_how_the_answer_was_asked(
    realistic: FakeOpenAIServer, tmp_path: Path, make_request: MakeRequest
) -> None:
    reqs = _requests(make_request, 1)

    def ask(**kw: Any) -> int:
        before = realistic.calls
        build_judge(_config(realistic, tmp_path, **kw)).judge(reqs)
        return realistic.calls - before

    assert ask() == 1 and ask() == 0  # verbal, then from the cache
    assert ask(confidence="logprob") == 1 and ask(confidence="logprob") == 0
    assert ask(confidence="consistency") == 1
    assert ask(confidence="consistency", samples=3) == 1  # K changes the answer
    assert ask(confidence="consistency", sample_temperature=1.0) == 1
    assert ask(confidence="consistency") == 0
    assert ask(temperature=0.3) == 1  # so does the temperature of a plain answer
    judge = build_judge(_config(realistic, tmp_path))
    before = realistic.calls
    judge.for_repeat(1).judge(reqs)
    judge.for_repeat(1).judge(reqs)
    assert realistic.calls - before == 1  # a repeat is asked once, then cached apart


def test_numeric_confidence_decides_escalation(
    realistic: FakeOpenAIServer, tmp_path: Path, make_request: MakeRequest
) -> None:
    judge_model = realistic.realistic
    assert isinstance(judge_model, RealisticJudge)
    reqs = _requests(make_request, 5)
    config = _config(
        realistic, tmp_path, confidence="logprob", escalation_model="gpt-4o", cache=False
    )
    run = build_judge(config).judge(reqs)
    for r in reqs:
        v = run.verdicts[r.key]
        first = v.escalated_from or v
        assert (v.escalated_from is not None) == ((first.confidence_value or 0) < 0.7)


# --------------------------------------------------------------------------- cost of K


def test_the_dry_run_counts_k_answers(tmp_path: Path, make_request: MakeRequest) -> None:
    reqs = _requests(make_request, 7)
    base = JudgeConfig(cache=False)
    plain = estimate_cost(reqs, base)
    one = estimate_cost(reqs, JudgeConfig(cache=False, confidence="consistency", samples=5))
    many = estimate_cost(
        reqs, JudgeConfig(cache=False, confidence="consistency", samples=5, use_n=False)
    )
    assert (one.calls, one.prompt_tokens) == (plain.calls, plain.prompt_tokens)
    assert one.completion_tokens == 5 * plain.completion_tokens
    assert (many.calls, many.prompt_tokens) == (5 * plain.calls, 5 * plain.prompt_tokens)
    assert many.completion_tokens == 5 * plain.completion_tokens
    assert (one.samples, one.confidence_source) == (5, "consistency")
    lp = estimate_cost(reqs, JudgeConfig(cache=False, confidence="logprob"))
    assert (lp.calls, lp.tokens, lp.samples) == (plain.calls, plain.tokens, 1)


def test_the_spending_cap_reserves_k_answers(
    realistic: FakeOpenAIServer, tmp_path: Path, make_request: MakeRequest
) -> None:
    """A request for K samples reserves its prompt plus K answers of max_tokens (README
    "Security": what a request can cost at most, before it is sent)."""
    from citecal.verify.judge import Budget, answer_ceiling, request_ceiling
    from citecal.verify.judge._prompts import render_messages

    req = make_request(0)
    config = _config(realistic, tmp_path, confidence="consistency", samples=5, cache=False)
    messages = render_messages(load_prompt("v3"), [req], config.max_code_lines, 3)
    one = request_ceiling(messages, answer_ceiling(1, config), "gpt-4o-mini", config)
    five = request_ceiling(messages, 5 * answer_ceiling(1, config), "gpt-4o-mini", config)
    assert 0 < one < five
    # A cap between one answer's ceiling and five's: the request for five is not sent.
    run = build_judge(config, budget=Budget((one + five) / 2)).judge([req])
    assert realistic.calls == 0 and run.budget_reached == 1
    run = build_judge(config, budget=Budget(five * 1.01)).judge([req])
    assert realistic.calls == 1 and run.verdicts["c0"].confidence_source == "consistency"


def test_k_rambling_samples_are_each_cut_at_max_tokens_and_the_cap_holds(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    """README "Security" with README "Judge confidence": a request for n=K samples sets
    ``max_tokens``, the server cuts each choice there, and K long answers cannot take the
    spending past the cap (each request reserved its prompt plus K times max_tokens)."""
    from citecal.verify.judge import Budget, answer_ceiling

    answer = {"reasoning": "Let me think. " * 4000, "supports": True, "confidence": "high"}
    server.handler = lambda req: Reply.json(answer)
    config = make_config(
        confidence="consistency", samples=5, max_tokens=64, max_tokens_per_claim=32
    )
    budget = Budget(0.02)
    run = build_judge(config, budget=budget).judge(_requests(make_request, 3))
    assert server.requests and all(
        r.body.get("n") == 5 and r.body.get("max_tokens") == answer_ceiling(len(r.claims), config)
        for r in server.requests
    )
    assert {len(r.claims) for r in server.requests} == {1, 3}  # the batch, then each alone
    assert run.completion_tokens <= sum(5 * r.body["max_tokens"] for r in server.requests)
    assert run.cost_usd <= 0.02 and budget.spent() <= 0.02
    # Cut answers are not JSON: no verdict is made up from them.
    assert all(v.verdict == "unverified" for v in run.verdicts.values())


def test_llama_cpps_http_500_for_n_is_a_refusal_not_an_outage(
    server: FakeOpenAIServer, make_config: MakeConfig, make_request: MakeRequest
) -> None:
    """llama-server answers n > 1 with HTTP 500 "Only one completion choice is allowed"."""
    server.script(Reply.status_error(500, "Only one completion choice is allowed"))
    run = build_judge(make_config(confidence="consistency", samples=3)).judge(
        _requests(make_request, 1)
    )
    assert server.calls == 4  # not retried as a server error: three single requests instead
    assert run.verdicts["c0"].confidence_source == "consistency"
    assert any("rejected n=3" in w for w in run.warnings)
