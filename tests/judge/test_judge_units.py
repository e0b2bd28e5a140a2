"""Pure parts: batching, pricing, Retry-After, cache keys, the server's heuristic."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest

from citecal.config import JudgeConfig, PriceConfig
from citecal.models import Verdict
from citecal.testing import heuristic_verdict
from citecal.verify.judge import (
    JudgeRequest,
    VerdictCache,
    cache_key,
    cost_usd,
    find_price,
    is_loopback_url,
    make_batches,
    retry_after_s,
)

CFG = JudgeConfig()


def test_batches_group_by_file_in_first_seen_order(
    make_request: Callable[..., JudgeRequest],
) -> None:
    files = ["a.py", "b.py", "a.py", "a.py", "c.py", "a.py", "b.py", "a.py", "a.py"]
    reqs = [make_request(i, file_path=f) for i, f in enumerate(files)]
    batches = make_batches(reqs, 3)
    assert [[r.key for r in b] for b in batches] == [
        ["c0", "c2", "c3"],
        ["c5", "c7", "c8"],
        ["c1", "c6"],
        ["c4"],
    ]
    assert all(len({r.file_path for r in b}) == 1 for b in batches)


def test_pricing_lookup_and_cost() -> None:
    pricing = JudgeConfig().pricing
    assert find_price("gpt-4o-mini", pricing) == PriceConfig(input=0.15, output=0.60)
    assert find_price("openai/gpt-4o-mini", pricing) == pricing["gpt-4o-mini"]
    assert find_price("gpt-4o-mini-2024-07-18", pricing) == pricing["gpt-4o-mini"]
    assert find_price("gpt-4o-2024-08-06", pricing) == pricing["gpt-4o"]
    assert find_price("llama3.1:8b", pricing) is None
    # seed §14.2: 750 input + 200 output tokens on gpt-4o-mini = $0.0002325
    assert cost_usd("gpt-4o-mini", 750, 200, pricing) == pytest.approx(0.0002325, abs=1e-12)
    assert cost_usd("gpt-4o", 750, 200, pricing) == pytest.approx(0.00675, abs=1e-12)


def test_retry_after_forms() -> None:
    def resp(**headers: str) -> httpx.Response:
        return httpx.Response(429, headers=headers)

    assert retry_after_s(resp(**{"Retry-After": "2"})) == 2.0
    assert retry_after_s(resp(**{"retry-after-ms": "250"})) == 0.25
    assert retry_after_s(resp(**{"Retry-After": "100000"})) == 300.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 27 <= (retry_after_s(resp(**{"Retry-After": later})) or 0) <= 30
    assert retry_after_s(resp(**{"Retry-After": "soon"})) is None
    assert retry_after_s(resp()) is None


def test_loopback_detection() -> None:
    assert is_loopback_url("http://127.0.0.1:8000/v1")
    assert is_loopback_url("http://localhost:11434/v1")
    assert is_loopback_url("http://[::1]:8080/v1")
    assert not is_loopback_url("https://openrouter.ai/api/v1")
    assert not is_loopback_url("http://10.0.0.5:8000/v1")


def test_cache_key_depends_on_everything_the_answer_depends_on(
    make_request: Callable[..., JudgeRequest],
) -> None:
    r = make_request(0)
    url = "http://127.0.0.1:1/v1"

    def key(model: str, prompt: str, req: JudgeRequest, endpoint: str = url) -> str:
        return cache_key(model, prompt, req, endpoint=endpoint)

    base = key("m", "v1@x", r)
    assert base == key("m", "v1@x", make_request(0))
    assert base == key("m", "v1@x", make_request(0).__class__(**{**r.__dict__, "key": "z"}))
    assert base == key("m", "v1@x", r, endpoint="HTTP://127.0.0.1:1/v1/")
    assert base != key("m2", "v1@x", r)
    assert base != key("m", "v1@y", r)
    assert base != key("m", "v1@x", make_request(0, claim="other"))
    assert base != key("m", "v1@x", make_request(0, code="pass"))
    assert base != key("m", "v1@x", r.__class__(**{**r.__dict__, "before": ""}))
    assert base != key("m", "v1@x", r, endpoint="http://127.0.0.1:2/v1")
    assert base != key("m", "v1@x", r, endpoint="https://api.openai.com/v1")


def test_cache_roundtrip(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "sub" / "c.sqlite3")
    assert not (tmp_path / "sub").exists()  # lazy: nothing touched before first use
    v = Verdict("supports", "llm", "high", 0.9, "ok", model="m", prompt_version="v1@x", tokens=9)
    assert cache.get("k") is None
    cache.put("k", v)
    got = cache.get("k")
    assert got is not None and got.cached and got.tokens == 0
    assert (got.verdict, got.confidence, got.score, got.reasoning) == (
        "supports",
        "high",
        0.9,
        "ok",
    )
    assert len(cache) == 1
    cache.close()
    again = VerdictCache(tmp_path / "sub" / "c.sqlite3")
    assert again.get("k") is not None  # persistent
    again.close()


def test_heuristic_judge_is_deterministic_and_documented() -> None:
    code = "def apply_discount(cart, rules):\n    return rules.best_discount(cart.items)"
    yes = heuristic_verdict("The cart rules apply the best discount", code)
    assert yes["supports"] is True and yes["confidence"] == "high" and yes["score"] == 1.0
    no = heuristic_verdict("Payments are encrypted with AES", code)
    assert no["supports"] is False and no["score"] == 0.0
    mid = heuristic_verdict("Discount rules are cached in Redis", code)
    # terms: discount, rules, cached, redis -> 2 of 4 found -> 0.5 -> supports, low confidence
    assert (mid["supports"], mid["score"], mid["confidence"]) == (True, 0.5, "low")
