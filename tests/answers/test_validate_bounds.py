"""``citecal validate`` on hostile input: nesting depth and the quote search are bounded (issue 25).

A 400 KB file of nested arrays grew ijson's prefix stack to 23 GB; a deeply
nested JSON Lines record raised a RecursionError traceback; a long quote
against long evidence ran rapidfuzz for minutes with Ctrl-C ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.answers import check_citation, validate_item
from citecal.answers._stream import MAX_JSON_DEPTH
from citecal.answers._validate import QUOTE_FUZZY_MAX_CHARS, QuoteSearch
from citecal.cli import cli
from citecal.config import AnswersConfig

CFG = AnswersConfig()
DEEP = 5_000  # deeper than Python's recursion limit, small enough to build before the fix


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("deep.jsonl", "[" * DEEP + "]" * DEEP + "\n", "line 1"),
        ("deep.json", '{"a":' * DEEP + "1" + "}" * DEEP, "the document"),
        ("array.json", '[{"answer": "x", "citations": ' + "[" * DEEP + "]" * DEEP + "}]", "item 1"),
        # just past the stated limit, where Python's parser would still succeed
        ("limit.jsonl", "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1) + "\n", "line 1"),
    ],
)
def test_deep_nesting_is_one_line_exit_2_and_no_output(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    src = tmp_path / name
    src.write_text(text)
    out = tmp_path / "validation.json"
    code, _, stderr = run("validate", str(src), "-f", "json", "-o", str(out))
    assert code == 2, stderr
    assert stderr == (
        f"Error: answers file: {where} is nested deeper than {MAX_JSON_DEPTH} levels "
        "(citecal validate reads at most that depth)\n"
    )
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [src]


def test_ordinary_nesting_still_validates(tmp_path: Path) -> None:
    src = tmp_path / "ok.json"
    item = {"answer": "x", "evidence": [{"text": "x", "meta": {"a": [[1]]}}], "citations": []}
    src.write_text(json.dumps([item]))
    code, stdout, _ = run("validate", str(src), "-f", "json")
    assert code == 1  # no citations: FAIL, but read
    assert json.loads(stdout)["total_qa"] == 1


def citation(quote: str, idx: int | None = 0) -> dict[str, object]:
    c: dict[str, object] = {"source": "s", "relevance": 0.9, "quote": quote}
    if idx is not None:
        c["evidence_idx"] = idx
    return c


def test_long_quote_must_be_verbatim() -> None:
    evidence = ["lorem ipsum dolor sit amet " * 400]
    verbatim = ("lorem ipsum dolor sit amet " * 30).strip()
    assert len(verbatim) > QUOTE_FUZZY_MAX_CHARS
    ok = check_citation(citation(verbatim), 0, "a", evidence, CFG)
    assert ok.quote_found is True and ok.valid
    near = verbatim.replace("dolor", "dolour", 1)
    c = check_citation(citation(near), 0, "a", evidence, CFG)
    assert c.quote_found is False and c.quote_score == 0.0
    assert c.errors == [
        f"quote not found in evidence[0] (best match 0%); a piece of {len(near)} characters "
        f"must appear verbatim (fuzzy search stops at {QUOTE_FUZZY_MAX_CHARS})"
    ]
    # short quotes keep their fuzzy match
    short = check_citation(citation("lorem ipsum dolour sit"), 0, "a", evidence, CFG)
    assert short.quote_found is True


def test_an_items_quote_searches_share_one_budget() -> None:
    evidence = ["abcdefghij " * 100]  # 1100 characters once normalised: 1099
    search = QuoteSearch(evidence, budget=5_000)
    first = check_citation(citation("abcdefghij abcdefghij"), 0, "a", evidence, CFG, search=search)
    assert first.quote_found is True
    # a fuzzy search would cost 17 × 1099 characters, more than is left
    fuzzy = check_citation(citation("abcdefghij abcdexghij"), 1, "a", evidence, CFG, search=search)
    assert fuzzy.quote_found is False
    assert fuzzy.errors[0].endswith("fuzzy search skipped: the item's search budget is spent")
    for _ in range(3):
        last = check_citation(citation("abcdefghij"), 2, "a", evidence, CFG, search=search)
    assert last.quote_found is None and not last.valid
    assert last.errors[0].startswith("quote not checked against evidence[0]: the item's quote")


def test_hostile_item_is_bounded_by_the_budget() -> None:
    # 300 unindexed citations × 40 evidence texts of 50 000 characters: 600 MB of verbatim
    # scans and 300 × 40 fuzzy searches unbounded; the budget stops them
    evidence = [f"{n} " + "word " * 10_000 for n in range(40)]
    item = {"answer": "a", "evidence": evidence}
    item["citations"] = [citation("word wurd word " * 30, idx=None) for _ in range(300)]
    result = validate_item(item, CFG)
    unchecked = [c for c in result.citations if c.quote_found is None]
    assert unchecked and unchecked[-1].errors[-1].startswith("quote not checked")
