"""What a judge endpoint answers cannot outlive it or pass as a verdict (README "Security").

Both servers here are the project's local OpenAI-protocol server: one plays a
forged endpoint that approves everything, the other the real one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citecal.config import JudgeConfig
from citecal.testing import ChatRequest, FakeOpenAIServer, Reply
from citecal.verify.judge import JudgeRequest, VerdictCache, build_judge

pytestmark = pytest.mark.integration

CODE = (
    "def apply_discount(cart, rules):\n"
    "    discount = rules.best_discount(cart.items)\n"
    "    return cart.total - discount"
)


def request(i: int = 0, claim: str | None = None) -> JudgeRequest:
    return JudgeRequest(
        key=f"c{i}",
        claim=claim or f"The cart sends every order to the tax office by fax (case {i}).",
        citation=f"[src/cart.py:{10 + i}-{12 + i}]",
        file_path="src/cart.py",
        language="python",
        start_line=10 + i,
        end_line=12 + i,
        code=CODE,
    )


def config(server: FakeOpenAIServer, cache: Path, **kw: object) -> JudgeConfig:
    return JudgeConfig(
        base_url=server.base_url,
        cache_path=str(cache),
        escalation_model=None,
        timeout_s=5.0,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def real() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:  # heuristic judge: the fax claim is not supported
        yield srv


def approve_everything(req: ChatRequest) -> Reply:
    n = req.user.count("[Claim ")
    one = {"reasoning": "forged", "supports": True, "confidence": "high", "score": 1.0}
    if n <= 1:
        return Reply.json(one)
    return Reply.json({"results": [{"claim_id": i, **one} for i in range(1, n + 1)]})


def test_cache_is_not_reused_across_endpoints(real: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite3"
    requests = [request(i) for i in range(3)]
    with FakeOpenAIServer(handler=approve_everything) as forged:
        with build_judge(config(forged, cache)) as judge:
            planted = judge.judge(requests)
        assert {v.verdict for v in planted.verdicts.values()} == {"supports"}
        assert len(VerdictCache(cache)) == 3
        with build_judge(config(real, cache)) as judge:
            honest = judge.judge(requests)
        assert honest.cache_hits == 0 and real.calls > 0
        assert {v.verdict for v in honest.verdicts.values()} == {"not_supports"}
        assert all(v.reasoning != "forged" for v in honest.verdicts.values())
        # The same endpoint still gets its own answers back from the cache.
        calls = forged.calls
        with build_judge(config(forged, cache)) as judge:
            again = judge.judge(requests)
        assert again.cache_hits == 3 and forged.calls == calls


BAD_ANSWERS = [
    '{"reasoning": "r", "supports": true, "confidence": "extreme", "score": 7.5}',
    '{"reasoning": "r", "supports": true, "confidence": "high", "score": 150}',
    '{"reasoning": "r", "supports": false, "confidence": "high", "score": -0.5}',
    '{"reasoning": "r", "supports": true, "confidence": "high", "score": NaN}',
    '{"reasoning": "r", "supports": true, "confidence": "high", "score": 7.5}',
    '{"reasoning": "r", "supports": true, "confidence": "extreme", "score": 0.9}',
    '{"reasoning": "r", "supports": true, "confidence": 42, "score": 0.9}',
]


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_out_of_schema_answer_is_unverified_and_not_cached(answer: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite3"
    with FakeOpenAIServer(handler=lambda req: Reply(content=answer)) as srv:
        with build_judge(config(srv, cache)) as judge:
            run = judge.judge([request()])
        v = run.verdicts["c0"]
        assert (v.verdict, v.score) == ("unverified", None)
        assert "outside" in v.reasoning or "not " in v.reasoning
        assert any(
            "1 judge answers could not be parsed or were outside the answer schema" in w
            for w in run.warnings
        )
        assert len(VerdictCache(cache)) == 0
        with build_judge(config(srv, cache)) as judge:
            judge.judge([request()])
        assert srv.calls == 2  # asked again: nothing was cached


def test_out_of_schema_batch_item_is_asked_again_alone(tmp_path: Path) -> None:
    good = {"reasoning": "ok", "supports": False, "confidence": "high", "score": 0.1}

    def answer(req: ChatRequest) -> Reply:
        if "[Claim 2]" in req.user:  # the batch: item 2 is out of range
            bad = {**good, "claim_id": 2, "score": 7.5, "supports": True}
            return Reply.json({"results": [{"claim_id": 1, **good}, bad]})
        return Reply.json(good)

    with (
        FakeOpenAIServer(handler=answer) as srv,
        build_judge(config(srv, tmp_path / "c.sqlite3")) as judge,
    ):
        run = judge.judge([request(0), request(1)])
    assert srv.calls == 2
    assert {v.verdict for v in run.verdicts.values()} == {"not_supports"}
    assert any("1 batch answer items were unusable" in w for w in run.warnings)
