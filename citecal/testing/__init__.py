"""Test support shipped with citecal: a local OpenAI-compatible server.

Lives in the package (not under ``tests/``) so the judge benchmark and the
calibration notebook can use the same server as the test suite.
"""

from citecal.testing.openai_server import (
    CRITIC_EDITS,
    MODES,
    ChatRequest,
    FakeOpenAIServer,
    PromptClaim,
    Reply,
    heuristic_verdict,
    sensitive_verdict,
)

__all__ = [
    "CRITIC_EDITS",
    "MODES",
    "ChatRequest",
    "FakeOpenAIServer",
    "PromptClaim",
    "Reply",
    "heuristic_verdict",
    "sensitive_verdict",
]
