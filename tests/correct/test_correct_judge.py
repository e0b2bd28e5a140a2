"""The loop with a judge: rewrite (LLM, re-judged) and shrink (candidates judged), through the
local OpenAI-protocol server (``citecal.testing``), never a mock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from correct_factories import CART, judge_config

from citecal.correct import CorrectionRun, correct_report
from citecal.correct._rewrite import build_rewriter
from citecal.source import open_store
from citecal.testing import FakeOpenAIServer
from citecal.testing.openai_server import ChatRequest, Reply, heuristic_verdict

REWRITE = "The `Cart` class keeps its items in `self.items`"


def handler(request: ChatRequest) -> Reply | None:
    """Rewrite prompts get a fixed rewrite (none for the shrink claim); judge prompts the
    heuristic judge, except that more than five cited lines never support (too broad)."""
    if "You repair claims" in request.system:
        claim = "" if "refuses" in request.user else REWRITE
        return Reply.json({"claim": claim})
    claims = request.claims
    if not claims:
        return None
    answers = []
    for c in claims:
        verdict = heuristic_verdict(c.claim, c.code)
        if c.code.count("\n") >= 5:
            verdict = {**verdict, "supports": False, "score": 0.1, "confidence": "high"}
        answers.append({"claim_id": c.n, **verdict})
    if request.is_batch:
        return Reply.json({"results": answers} if request.response_format else answers)
    return Reply(content=json.dumps({k: v for k, v in answers[0].items() if k != "claim_id"}))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(handler=handler) as srv:
        yield srv


def _run(shop: Path, server: FakeOpenAIServer, tmp_path: Path, text: str) -> CorrectionRun:
    from citecal.verify.judge import build_judge

    config = judge_config(server.base_url, tmp_path)
    judge = build_judge(config.judge)
    try:
        with open_store(shop) as store:
            return correct_report(
                text, store, config, judge=judge, rewriter=build_rewriter(config, judge)
            )
    finally:
        judge.close()


def test_rewrite_is_judged_and_replaces_only_the_claim(
    shop: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    text = "# Shop\n\n- The `Cart` class stores prices in euros [pkg/cart.py:4-6].\n- Other.\n"
    run = _run(shop, server, tmp_path, text)
    (c,) = run.output.corrections
    assert (c.strategy, c.iteration, c.verdict_after) == ("rewrite", 1, "supports")
    assert c.new_claim == REWRITE and c.evidence["prompt"] == "rewrite_v1"
    assert run.corrected == text.replace("The `Cart` class stores prices in euros", REWRITE)
    assert run.output.remaining == []


def test_shrink_to_the_lines_the_judge_accepts(
    shop: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    text = "`add_item` refuses a negative quantity with `ValueError` [pkg/cart.py:1-14].\n"
    run = _run(shop, server, tmp_path, text)
    (c,) = run.output.corrections
    # round 1: the rewrite (the claim's own ladder step) came back empty; round 2: locate
    assert (c.strategy, c.iteration, c.verdict_after) == ("shrink", 2, "supports")
    assert str(c.new) == "[pkg/cart.py:8-11]" and c.evidence["method"] == "llm"
    assert run.corrected == text.replace("[pkg/cart.py:1-14]", "[pkg/cart.py:8-11]")
    assert CART.split("\n")[7].startswith("    def add_item")
