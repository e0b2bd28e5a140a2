"""Prompt files: loading, version ids, rendering of claims and code with context."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from citecal.errors import InputError
from citecal.verify.judge import (
    JudgeRequest,
    available_prompts,
    code_block,
    load_prompt,
    render_messages,
)


def test_builtin_v1_has_all_sections_and_a_hashed_version() -> None:
    p = load_prompt("v1")
    assert "v1" in available_prompts()
    assert re.fullmatch(r"v1@[0-9a-f]{8}", p.version)
    assert "SUPPORTED" in p.system and "{claim}" in p.single and "{items}" in p.batch
    assert "[Claim {n}]" in p.batch_item
    assert load_prompt("v1").version == p.version  # stable


def test_unknown_version_lists_available() -> None:
    with pytest.raises(InputError, match=r"unknown prompt version 'v99': available: v1, v2"):
        load_prompt("v99")


def test_prompt_file_by_path_gets_its_own_version(tmp_path: Path) -> None:
    text = (
        "## system\nBe strict.\n## single\nC: {claim}\n{code}\n"
        '## batch\n{items}\n## batch_item\n[Claim {n}]: "{claim}"\n{code}\n'
    )
    f = tmp_path / "strict.md"
    f.write_text(text)
    p = load_prompt(str(f))
    assert p.name == "strict" and p.version.startswith("strict@")
    f.write_text(text + "\nExtra.\n")
    assert load_prompt(str(f)).version != p.version  # any edit is a new version


def test_prompt_file_missing_sections_is_input_error(tmp_path: Path) -> None:
    f = tmp_path / "bad.md"
    f.write_text("## system\nhi\n## single\n{claim}\n")
    with pytest.raises(InputError, match=r"missing section\(s\) ## batch, ## batch_item"):
        load_prompt(str(f))
    with pytest.raises(InputError, match="not found"):
        load_prompt(str(tmp_path / "nope.md"))


def test_code_block_marks_cited_lines_and_context(
    make_request: Callable[..., JudgeRequest],
) -> None:
    block = code_block(make_request(), max_code_lines=200)
    lines = block.split("\n")
    assert lines[0] == "```python" and lines[-1] == "```"
    assert lines[1] == " 8   import rules"
    assert lines[3] == "10 > def apply_discount(cart, rules):"
    assert lines[5] == "12 >     return cart.total - discount"
    assert lines[8] == "15   def other():"
    assert sum(" > " in line for line in lines) == 3  # only the cited lines carry ">"


def test_code_block_limits_context_and_cuts_long_code(
    make_request: Callable[..., JudgeRequest],
) -> None:
    block = code_block(make_request(), max_code_lines=200, context_lines=1)
    assert "import rules" not in block and " 9   from cart import Cart" in block
    assert "def other" not in block
    long = make_request(code="\n".join(f"x{i} = {i}" for i in range(50)))
    cut = code_block(long, max_code_lines=10)
    assert "19 > x9 = 9" in cut and "x10 = 10" not in cut
    assert "... (40 more cited lines not shown)" in cut


def test_fence_grows_when_code_holds_backticks(
    make_request: Callable[..., JudgeRequest],
) -> None:
    block = code_block(make_request(code='doc = """\n```sh\nrun\n```\n"""'), 200)
    assert block.startswith("````python\n") and block.endswith("\n````")


def test_messages_single_and_batch_numbering(make_request: Callable[..., JudgeRequest]) -> None:
    p = load_prompt("v1")
    single = render_messages(p, [make_request(0, claim="Claim with {code} braces")], 200)
    assert single[0] == {"role": "system", "content": p.system}
    assert 'Claim: "Claim with {code} braces"' in single[1]["content"]  # not re-expanded
    batch = render_messages(p, [make_request(i) for i in range(3)], 200)[1]["content"]
    assert re.findall(r"\[Claim (\d)\]", batch) == ["1", "2", "3"]
    assert re.findall(r"\[Code (\d)\] from \[src/cart.py:10-12\]", batch) == ["1", "2", "3"]
    assert "Evaluate each of the 3 claims" in batch
    assert '"claim_id": 1' in batch


def test_v2_shows_the_rule_evidence_and_asks_for_a_mode_when_told(
    make_request: Callable[..., JudgeRequest],
) -> None:
    from dataclasses import replace

    from citecal.models import Verdict

    evidence = Verdict(
        verdict="unverified",
        method="extractive",
        confidence="low",
        matched_terms=("send",),
        missing_terms=("retry",),
        hint="`retry` is defined at lines 40-52 (function), outside the cited range 10-20",
    )
    plain = make_request(0)
    judged = replace(plain, extractive=evidence, classify=True)
    prompt = load_prompt("v2")
    user = render_messages(prompt, [judged], 200)[1]["content"]
    assert "found in the cited lines: send; not found there: retry; hint: `retry` is defined" in (
        user
    )
    assert 'Also classify the claim: "mode"' in user
    bare = render_messages(prompt, [plain], 200)[1]["content"]
    assert "Rule-based check: no code terms to look for." in bare
    assert "Also classify" not in bare
    # v1 has no {evidence} placeholder: its rendering is unchanged by the new fields.
    v1 = load_prompt("v1")
    assert render_messages(v1, [judged], 200) == render_messages(v1, [plain], 200)


def test_default_prompt_is_v3_and_older_versions_stay_loadable() -> None:
    from citecal.config import JudgeConfig

    assert JudgeConfig().prompt == "v3"
    assert {"v1", "v2", "v3"} <= set(available_prompts())
    assert len({load_prompt(v).version for v in ("v1", "v2", "v3")}) == 3
