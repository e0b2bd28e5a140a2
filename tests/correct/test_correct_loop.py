"""The correction loop without an LLM: every rule-based strategy, limits, untouched text, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from correct_factories import REPORT

from citecal.config import Config
from citecal.correct import CorrectionsFile, correct_report
from citecal.errors import InputError
from citecal.source import open_store


def _run(shop: Path, text: str = REPORT, **kw: object):  # type: ignore[no-untyped-def]
    with open_store(shop) as store:
        return correct_report(text, store, Config(), no_judge_reason="--no-llm", **kw)  # type: ignore[arg-type]


def test_each_strategy_and_the_corrected_text(shop: Path) -> None:
    run = _run(shop)
    by = {c.original.end_line: c for c in run.output.corrections}
    # Without a judge (issue 21) only the structurally invalid citation moves: the past-end
    # range has nothing to repair in the file and is relocated. The valid ones only the rules
    # object to, and the missing file's claim nothing proves unsupported: they stay.
    assert list(by) == [45]
    assert by[45].strategy == "relocate" and str(by[45].new) == "[pkg/cart.py:13-14]"
    assert by[45].iteration == 1 and run.output.iterations == 2
    reasons = {left.citation: left.reason for left in run.output.remaining}
    assert set(reasons) == {"[pkg/cart.py:8-11]", "[pkg/cart.py:8-9]", "[pkg/refunds.py:1-5]"}
    assert all(r.startswith("needs a judge") for r in reasons.values())
    assert run.output.uncited_claims == []
    assert run.corrected == REPORT.replace("[pkg/cart.py:40-45]", "[pkg/cart.py:13-14]")
    # every proposal was checked by the verifier at its new place
    for c in run.output.corrections:
        if c.new is not None:
            assert c.verdict_after in ("supports", "unverified")
            assert c.evidence["method"] == "extractive" and c.evidence["candidates"]


def test_a_citation_that_verifies_is_never_touched(shop: Path) -> None:
    run = _run(shop)
    assert all(c.original.start_line != 4 for c in run.output.corrections)
    assert "The `Cart` class defines `add_item` [pkg/cart.py:4-11]." in run.corrected


def test_nothing_to_fix_makes_no_round(shop: Path) -> None:
    text = "The `Cart` class defines `add_item` [pkg/cart.py:4-11].\n"
    run = _run(shop, text)
    assert run.output.iterations == 0 and run.output.corrections == []
    assert run.corrected == text


def test_iteration_limit_stops_before_the_last_strategy(shop: Path) -> None:
    run = _run(shop, max_iterations=1)
    assert run.output.iterations == 1
    assert {c.strategy for c in run.output.corrections} == {"relocate"}
    left = next(x for x in run.output.remaining if x.citation == "[pkg/refunds.py:1-5]")
    assert left.reason == "no place in the repository verifies the claim"
    assert "[pkg/refunds.py:1-5]" in run.corrected
    with pytest.raises(InputError):
        _run(shop, max_iterations=0)


def test_stops_early_when_nothing_is_left_to_try(shop: Path) -> None:
    run = _run(shop, max_iterations=10)
    assert run.output.iterations == 2


def test_untouched_text_is_byte_identical(shop: Path) -> None:
    # Odd spacing, CRLF line ends, Unicode, code blocks and other brackets survive as they are.
    text = (
        "# Shop  \r\n\r\n"
        "Ünïcode prose [not a citation] and a [link](http://x).\r\n"
        "```\r\n[pkg/cart.py:40-45] in code is not a citation\r\n```\r\n"
        "The `total_quantity` method sums `self.items` [pkg/cart.py:L40–L45, pkg/cart.py:4-11].\r\n"
        "\tTrailing tab line\t\r\n"
    )
    run = _run(shop, text)
    assert run.corrected == text.replace("[pkg/cart.py:L40–L45,", "[pkg/cart.py:L13–L14,")


def test_removal_needs_no_evidence_in_the_cited_lines(shop: Path) -> None:
    # No file defines or uses these names, but the cited line holds their words: code that
    # generates names (accessors built from strings) is not proof of absence, so the
    # citation stays for a person instead of being dropped (without a judge, nothing is).
    text = "`getNegativeQuantity` and `hasNegativeQuantity` are generated [pkg/cart.py:10].\n"
    run = _run(shop, text)
    assert run.output.corrections == []
    (left,) = run.output.remaining
    assert left.reason.startswith("needs a judge")
    assert run.corrected == text


def test_corrections_file_schema(shop: Path) -> None:
    run = _run(shop)
    data = json.loads(run.output.corrections_file().model_dump_json())
    assert list(data) == ["schema_version", "report", "report_sha256", "iterations", "corrections"]
    assert data["schema_version"] == 1
    for c in data["corrections"]:
        assert list(c) == [
            "position",
            "original",
            "strategy",
            "new",
            "new_claim",
            "evidence",
            "verdict_before",
            "verdict_after",
            "iteration",
        ]
        assert REPORT[c["position"] :].startswith(
            f"[{c['original']['file_path']}:{c['original']['start_line']}"
        )
    CorrectionsFile.model_validate(data)
    with pytest.raises(ValueError):
        CorrectionsFile.model_validate({**data, "schema_version": 2})
