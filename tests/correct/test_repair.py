"""Repair before relocating (issue 21): each repair kind, and the removal rule.

A reversed range, a zero or negative start, an end past the file, a range a few
lines off or too wide: the nearby repaired range is tried and verified first.
A citation whose claim is supported nearby is repaired, never removed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from correct_factories import CART, judge_config

from citecal.config import Config
from citecal.correct import CorrectionRun, correct_report
from citecal.correct._repair import fixed_range, repair_candidates
from citecal.models import Citation
from citecal.source import build_symbol_index, open_store
from citecal.testing import FakeOpenAIServer
from citecal.testing.openai_server import ChatRequest, Reply, heuristic_verdict

DEFS = build_symbol_index(CART, "python").definitions
LINES = CART.count("\n")  # 14


def _ranges(lo: int, hi: int) -> list[tuple[int, int, str]]:
    return [
        (r.location.start_line, r.location.end_line, r.how)
        for r in repair_candidates(Citation("pkg/cart.py", lo, hi), LINES, DEFS)
    ]


def test_fixed_range_swaps_and_clamps() -> None:
    assert fixed_range(Citation("f", 11, 8), 14) == (8, 11, ["swap"])
    assert fixed_range(Citation("f", 0, 6), 14) == (1, 6, ["clamp"])
    assert fixed_range(Citation("f", -3, 6), 14) == (1, 6, ["clamp"])
    assert fixed_range(Citation("f", 13, 30), 14) == (13, 14, ["clamp"])
    assert fixed_range(Citation("f", 40, 45), 14) is None  # nothing of it is in the file
    assert fixed_range(Citation("f", 8, 11), 14) == (8, 11, [])


def test_repair_kinds_in_order() -> None:
    # Reversed: the swapped range first (here the whole method), then its neighbours.
    assert _ranges(11, 8)[:3] == [(8, 11, "swap"), (5, 6, "adjacent"), (13, 14, "adjacent")]
    # Zero start: clamped to line 1.
    assert _ranges(0, 6)[0] == (1, 6, "clamp")
    # Past the end: clamped to the last line; then the method around it.
    assert _ranges(13, 30)[:2] == [(13, 14, "clamp"), (8, 11, "adjacent")]
    # The class around it comes after the functions: a shorter place first.
    assert (4, 14, "enclosing") in _ranges(13, 30)
    # A few lines off, inside a method: the method enclosing it.
    assert _ranges(9, 10)[0] == (8, 11, "enclosing")
    # Too wide: the definitions it holds, largest first.
    assert _ranges(4, 14)[:3] == [(8, 11, "inner"), (5, 6, "inner"), (13, 14, "inner")]
    # A few lines off between definitions: the adjacent ones, before and after.
    assert [r for r in _ranges(12, 12) if r[2] == "adjacent"] == [
        (8, 11, "adjacent"),
        (13, 14, "adjacent"),
    ]
    # ... the one the claim names first.
    named = repair_candidates(
        Citation("pkg/cart.py", 12, 12), LINES, DEFS, frozenset({"total_quantity"})
    )
    assert (named[0].location.start_line, named[0].how) == (13, "adjacent")
    # Too wide: the definition the claim names before the biggest.
    wide = repair_candidates(
        Citation("pkg/cart.py", 4, 14), LINES, DEFS, frozenset({"total_quantity"})
    )
    assert (wide[0].location.start_line, wide[0].how) == (13, "inner")
    # Shifts by half the length either way come last.
    assert _ranges(9, 10)[-2:] == [(8, 9, "shift"), (10, 11, "shift")]


def _run(shop: Path, text: str, judge: object = None) -> CorrectionRun:
    with open_store(shop) as store:
        return correct_report(
            text,
            store,
            Config() if judge is None else judge.config,  # type: ignore[attr-defined]
            judge=None if judge is None else judge.judge,  # type: ignore[attr-defined]
            no_judge_reason="--no-llm" if judge is None else None,
        )


@pytest.mark.parametrize(
    ("claim", "cited", "repaired", "how"),
    [
        ("`add_item` raises `ValueError` on a negative `quantity`", "11-8", "8-11", "swap"),
        ("`__init__` sets `self.items` to an empty dict", "0-6", "1-6", "clamp"),
        ("`total_quantity` sums `self.items`", "13-30", "13-14", "clamp"),
    ],
)
def test_each_repair_kind_without_a_judge(
    shop: Path, claim: str, cited: str, repaired: str, how: str
) -> None:
    text = f"{claim} [pkg/cart.py:{cited}].\n"
    run = _run(shop, text)
    (c,) = run.output.corrections
    assert (str(c.new), c.evidence["repair"], c.iteration) == (
        f"[pkg/cart.py:{repaired}]",
        how,
        1,
    )
    assert c.strategy in ("repair", "relocate", "expand", "shrink")
    assert run.corrected == text.replace(cited, repaired)


def test_a_reversed_range_whose_claim_is_supported_is_repaired_never_removed(shop: Path) -> None:
    text = "`add_item` raises `ValueError` on a negative `quantity` [pkg/cart.py:11-8].\n"
    run = _run(shop, text)
    assert [c.strategy for c in run.output.corrections] == ["repair"]
    assert run.output.uncited_claims == [] and run.output.remaining == []
    assert "[pkg/cart.py:8-11]" in run.corrected


class _Judge:
    """A judge of the local server (see :func:`_handler`)."""

    def __init__(self, server: FakeOpenAIServer, tmp_path: Path) -> None:
        from citecal.verify.judge import build_judge

        self.config = judge_config(server.base_url, tmp_path)
        self.judge = build_judge(self.config.judge)


def _handler(request: ChatRequest) -> Reply | None:
    """The heuristic judge, except that more than four cited lines never support (too wide)
    and that every name the claim gives in backticks must be in the cited code."""
    claims = request.claims
    if not claims:
        return None
    answers = []
    for c in claims:
        verdict = heuristic_verdict(c.claim, c.code)
        named = [n.rsplit(".", 1)[-1] for n in re.findall(r"`([^`]+)`", c.claim)]
        if c.code.count("\n") >= 4 or any(n not in c.code for n in named):
            verdict = {**verdict, "supports": False, "score": 0.1, "confidence": "high"}
        answers.append({"claim_id": c.n, **verdict})
    if request.is_batch:
        return Reply.json({"results": answers} if request.response_format else answers)
    return Reply(content=json.dumps({k: v for k, v in answers[0].items() if k != "claim_id"}))


@pytest.fixture
def judged(tmp_path: Path) -> Iterator[_Judge]:
    with FakeOpenAIServer(handler=_handler) as srv:
        j = _Judge(srv, tmp_path)
        try:
            yield j
        finally:
            j.judge.close()


def test_too_wide_is_cut_to_the_definition_it_is_about(shop: Path, judged: _Judge) -> None:
    # The rules accept the whole class; the judge finds it too wide (more than four lines)
    # and accepts the method the claim is about.
    text = "`total_quantity` sums the values of `self.items` [pkg/cart.py:4-14].\n"
    run = _run(shop, text, judged)
    (c,) = run.output.corrections
    assert (str(c.new), c.strategy, c.evidence["repair"]) == (
        "[pkg/cart.py:13-14]",
        "shrink",
        "inner",
    )


def test_with_a_judge_a_claim_naming_defined_code_is_not_removed(
    shop: Path, judged: _Judge
) -> None:
    text = "`Cart` emails a receipt through `smtplib` [pkg/mailer.py:1-3].\n"
    run = _run(shop, text, judged)
    assert all(c.strategy != "remove" for c in run.output.corrections)
    (left,) = run.output.remaining
    assert left.reason == "the claim names `Cart`, which the repository defines: left for review"


def test_with_a_judge_a_claim_nothing_supports_is_removed_with_the_candidates_checked(
    shop: Path, judged: _Judge
) -> None:
    text = "The `refund` helper calls `issue_refund` on a refund [pkg/refunds.py:1-5].\n"
    run = _run(shop, text, judged)
    (c,) = [c for c in run.output.corrections if c.strategy == "remove"]
    assert c.new is None and isinstance(c.evidence["checked"], list)
    assert c.evidence["reasoning"].startswith("no candidate supports the claim")
    assert run.corrected == ("The `refund` helper calls `issue_refund` on a refund.\n")


def test_with_a_judge_a_reversed_supported_range_is_repaired_never_removed(
    shop: Path, judged: _Judge
) -> None:
    text = "`add_item` raises `ValueError` on a negative `quantity` [pkg/cart.py:11-8].\n"
    run = _run(shop, text, judged)
    assert [(c.strategy, str(c.new)) for c in run.output.corrections] == [
        ("repair", "[pkg/cart.py:8-11]")
    ]
    assert run.output.uncited_claims == []


def test_with_a_judge_a_few_lines_off_moves_to_the_adjacent_definition(
    shop: Path, judged: _Judge
) -> None:
    # Valid lines only the rules object to: without a judge they stay (needs a judge).
    text = "`total_quantity` sums `self.items` [pkg/cart.py:9-10].\n"
    (left,) = _run(shop, text).output.remaining
    assert left.reason.startswith("needs a judge")
    run = _run(shop, text, judged)
    (c,) = run.output.corrections
    assert (str(c.new), c.evidence["repair"]) == ("[pkg/cart.py:13-14]", "adjacent")


def test_with_a_judge_a_claim_naming_no_code_is_not_removed(shop: Path, judged: _Judge) -> None:
    text = "The module retries three times before giving up [pkg/missing.py:1-3].\n"
    run = _run(shop, text, judged)
    assert run.output.corrections == [] and run.corrected == text
    (left,) = run.output.remaining
    assert left.reason.startswith("the claim names no code, so an empty search proves nothing")
