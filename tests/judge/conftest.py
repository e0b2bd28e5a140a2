"""Fixtures for judge tests: a real local OpenAI-compatible server and request factories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from citecal.config import JudgeConfig
from citecal.testing import FakeOpenAIServer
from citecal.verify.judge import JudgeRequest

CODE = (
    "def apply_discount(cart, rules):\n"
    "    discount = rules.best_discount(cart.items)\n"
    "    return cart.total - discount"
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def make_config(server: FakeOpenAIServer, tmp_path: Path) -> Callable[..., JudgeConfig]:
    """JudgeConfig against the local server with fast timeouts and a temp cache.

    Escalation is off unless a test turns it on, so call counts are exact.
    """

    def make(**overrides: Any) -> JudgeConfig:
        settings: dict[str, Any] = {
            "base_url": server.base_url,
            "cache_path": str(tmp_path / "judge-cache.sqlite3"),
            "timeout_s": 2.0,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
            "escalation_model": None,
        }
        settings.update(overrides)
        return JudgeConfig(**settings)

    return make


def _make_request(
    i: int = 0,
    file_path: str = "src/cart.py",
    claim: str | None = None,
    code: str = CODE,
) -> JudgeRequest:
    return JudgeRequest(
        key=f"c{i}",
        claim=claim or f"The cart applies the best discount from the rules (case {i}).",
        citation=f"[{file_path}:10-12]",
        file_path=file_path,
        language="python",
        start_line=10,
        end_line=12,
        code=code,
        before="import rules\nfrom cart import Cart",
        after="\n\ndef other():",
    )


@pytest.fixture
def make_request() -> Callable[..., JudgeRequest]:
    """Factory of JudgeRequests: ``make_request(i, file_path=..., claim=..., code=...)``."""
    return _make_request
