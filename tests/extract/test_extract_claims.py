"""Claim text, clause assignment, section / paragraph / context, occurrence and ids."""

from __future__ import annotations

import pytest

from citecal.config import ExtractConfig
from citecal.extract import extract_citations, find_claims
from citecal.extract._claims import MAX_CLAIM_CHARS


def claims(text: str) -> list[tuple[str, str]]:
    return [(str(c.citation), c.claim_text) for c in extract_citations(text)]


# --------------------------------------------------------------------------- claim text


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        (
            "The AuthManager class validates credentials [src/auth.py:10-25].",
            "The AuthManager class validates credentials",
        ),
        (
            "The AuthManager class validates credentials. [src/auth.py:10-25]",
            "The AuthManager class validates credentials",
        ),
        (
            "- The `login` function checks passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "* The `login` function checks passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "+ The `login` function checks passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "12. The `login` function checks passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "- [x] The `login` function checks passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "> - The `login` function checks passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "The **`login`** function *checks* passwords [a.py:1].",
            "The `login` function checks passwords",
        ),
        (
            "The `**kwargs` and `*args` are passed on [a.py:1].",
            "The `**kwargs` and `*args` are passed on",
        ),
        ("The **bold** `*args*` stay [a.py:1].", "The bold `*args*` stay"),
        ("The `login()` function returns [a.py:1].", "The `login()` function returns"),
        ("The `a[^1]` and `f( )` code stays [a.py:1].", "The `a[^1]` and `f( )` code stays"),
        ("Calls `run()` (see [a.py:1]).", "Calls `run()`"),
        ("Calls `run()` ([a.py:1]).", "Calls `run()`"),
        ("Errors are wrapped (see [a.py:1]).", "Errors are wrapped"),
        ("Errors are wrapped (cf. [a.py:1]).", "Errors are wrapped"),
        ("Errors are wrapped (Source: [a.py:1]).", "Errors are wrapped"),
        ("Errors are wrapped (see below) [a.py:1].", "Errors are wrapped (see below)"),
        (
            "The  `login`\n  function   checks [a.py:1] passwords.",
            "The `login` function checks passwords",
        ),
        ("See [the docs](http://x.com/a) for `login` [a.py:1].", "See the docs for `login`"),
        (
            "The __init__ method and snake_case_name stay [a.py:1].",
            "The __init__ method and snake_case_name stay",
        ),
        ("Is the `login` function safe [a.py:1]?", "Is the `login` function safe?"),
        ("It returns `None`: always [a.py:1];", "It returns `None`: always"),
        ("The value `a  b` collapses [a.py:1].", "The value `a b` collapses"),
        ("Hidden <!-- comment --> text is dropped [a.py:1].", "Hidden text is dropped"),
        ("The parser[a.py:1]tokenizes input.", "The parser tokenizes input"),
        ("The parser tokenizes input (see [a.py:1]).", "The parser tokenizes input"),
        ("The parser tokenizes input ([a.py:1]).", "The parser tokenizes input"),
        ("The parser tokenizes input[^1] [a.py:1].", "The parser tokenizes input"),
        ("[^1]: The parser tokenizes input [a.py:1].", "The parser tokenizes input"),
    ],
)
def test_claim_text(text: str, claim: str) -> None:
    [c] = extract_citations(text)
    assert c.claim_text == claim


def test_parenthesised_citations_leave_no_empty_parentheses() -> None:
    text = "The parser tokenizes input ([a.py:1], [b.py:2])."
    assert claims(text) == [
        ("[a.py:1]", "The parser tokenizes input"),
        ("[b.py:2]", "The parser tokenizes input"),
    ]


def test_heading_claim_and_section() -> None:
    [c] = extract_citations("## The `Auth` module [a.py:1] ##\n")
    assert (c.claim_text, c.section) == ("The `Auth` module", "The `Auth` module")


def test_quoted_paragraph_second_line() -> None:
    text = "> First quoted claim [a.py:1].\n> Second quoted claim [b.py:2].\n"
    assert claims(text) == [
        ("[a.py:1]", "First quoted claim"),
        ("[b.py:2]", "Second quoted claim"),
    ]


def test_table_row_claim_is_cells_text() -> None:
    text = (
        "| Name | What |\n|---|---|\n| `login` | Checks the password [a.py:1-5] |\n"
        "|  | empty first cell [b.py:2] |\n"
    )
    assert claims(text) == [
        ("[a.py:1-5]", "`login` | Checks the password"),
        ("[b.py:2]", "empty first cell"),
    ]


def test_html_block_claim_drops_tags() -> None:
    text = "<div>\nThe widget renders [a.py:1]\n</div>\n"
    assert claims(text) == [("[a.py:1]", "The widget renders")]


# --------------------------------------------------------------------------- clauses


def test_clause_split_at_comma_and() -> None:
    text = (
        "The `login` function checks the password [a.py:1-5],"
        " and `logout` clears the session [a.py:7-9]."
    )
    assert claims(text) == [
        ("[a.py:1-5]", "The `login` function checks the password"),
        ("[a.py:7-9]", "`logout` clears the session"),
    ]


@pytest.mark.parametrize("joiner", ["; ", ", but ", ", while ", ", whereas ", ", or ", ";"])
def test_clause_split_boundaries(joiner: str) -> None:
    text = f"The parser reads files [a.py:1]{joiner}the lexer splits tokens [b.py:2]."
    assert claims(text) == [
        ("[a.py:1]", "The parser reads files"),
        ("[b.py:2]", "the lexer splits tokens"),
    ]


def test_no_boundary_between_citations_gives_whole_sentence() -> None:
    text = "The parser reads files [a.py:1] and the lexer splits tokens [b.py:2]."
    whole = "The parser reads files and the lexer splits tokens"
    assert claims(text) == [("[a.py:1]", whole), ("[b.py:2]", whole)]


def test_adjacent_brackets_share_the_whole_sentence() -> None:
    text = "The session is stored in Redis [a.py:1-5][b.py:2]."
    whole = "The session is stored in Redis"
    assert claims(text) == [("[a.py:1-5]", whole), ("[b.py:2]", whole)]


def test_one_bracket_with_several_citations_shares_the_sentence() -> None:
    text = "The session is stored in Redis [a.py:1-5, b.py:9], and expires [c.py:3]."
    assert claims(text) == [
        ("[a.py:1-5]", "The session is stored in Redis"),
        ("[b.py:9]", "The session is stored in Redis"),
        ("[c.py:3]", "expires"),
    ]


def test_boundary_before_first_citation_is_ignored() -> None:
    text = "Tokens expire, and sessions are refreshed by the worker [a.py:1]."
    assert claims(text) == [("[a.py:1]", "Tokens expire, and sessions are refreshed by the worker")]


def test_words_without_boundary_between_citations_give_whole_sentence() -> None:
    text = "The `login` [a.py:1], `logout` [a.py:2], and `refresh` [a.py:3] functions live in auth."
    whole = "The `login`, `logout`, and `refresh` functions live in auth"
    assert claims(text) == [("[a.py:1]", whole), ("[a.py:2]", whole), ("[a.py:3]", whole)]
    text = "The parser reads [a.py:1]; the writer [b.py:2] and reader [c.py:3] differ."
    whole = "The parser reads; the writer and reader differ"
    assert claims(text) == [("[a.py:1]", whole), ("[b.py:2]", whole), ("[c.py:3]", whole)]


def test_three_clauses() -> None:
    text = "It parses input [a.py:1], while it validates [b.py:2]; it renders output [c.py:3]."
    assert claims(text) == [
        ("[a.py:1]", "It parses input"),
        ("[b.py:2]", "it validates"),
        ("[c.py:3]", "it renders output"),
    ]


def test_partial_clauses_group_adjacent_citations() -> None:
    text = "Reads config [a.py:1] [b.py:2]; writes the cache [c.py:3]."
    assert claims(text) == [
        ("[a.py:1]", "Reads config"),
        ("[b.py:2]", "Reads config"),
        ("[c.py:3]", "writes the cache"),
    ]


def test_citation_only_clause_falls_back_to_sentence() -> None:
    text = "The cache is warmed at start [a.py:1]; [b.py:2]."
    assert claims(text) == [
        ("[a.py:1]", "The cache is warmed at start"),
        ("[b.py:2]", "The cache is warmed at start"),
    ]


def test_citation_only_list_items_fall_back_to_previous_sentence() -> None:
    text = (
        "- [x.py:1]\n\nLogin is handled in these places:\n\n- [a.py:1-3]\n- [b.py:4-9]\n\n"
        "# Password hashing\n\n- [c.py:1]\n"
    )
    assert claims(text) == [
        ("[x.py:1]", ""),  # nothing before it
        ("[a.py:1-3]", "Login is handled in these places"),
        ("[b.py:4-9]", "Login is handled in these places"),
        ("[c.py:1]", "Password hashing"),  # the section's heading
    ]


@pytest.mark.parametrize(
    "text",
    [
        "The `login` function checks the password.\nSource: [a.py:1-5]",
        "The `login` function checks the password.\n\n**Source:** [a.py:1-5]",
        "The `login` function checks the password. See also: [a.py:1-5].",
        "The `login` function checks the password.\n\n- [a.py:1-5]",
    ],
)
def test_label_or_bare_citation_backs_previous_sentence(text: str) -> None:
    [c] = extract_citations(text)
    assert c.claim_text == "The `login` function checks the password"
    [claim] = find_claims(text, ExtractConfig())
    assert (claim.text, claim.cited) == ("The `login` function checks the password", True)


def test_label_without_previous_sentence_keeps_label() -> None:
    [c] = extract_citations("Source: [a.py:1-5]")
    assert c.claim_text == "Source"


def test_bibliography_list_under_a_label_gets_the_label() -> None:
    # A "Sources:" list cites no particular sentence: say so rather than guess.
    text = "The `login` function checks the password.\n\nSources:\n\n- [a.py:1-5]\n- [b.py:2]"
    assert claims(text) == [("[a.py:1-5]", "Sources"), ("[b.py:2]", "Sources")]


def test_runaway_sentence_gives_each_citation_local_text() -> None:
    words = " ".join(f"word{i}" for i in range(600))
    text = f"{words} [a.py:1] and then the lexer splits tokens [b.py:2] {words}"
    found = extract_citations(text)
    assert len(found) == 2
    assert all(len(c.claim_text) <= MAX_CLAIM_CHARS for c in found)
    assert found[0].claim_text.endswith("word598 word599")
    assert found[1].claim_text == "and then the lexer splits tokens"


def test_runaway_sentence_with_one_citation_keeps_text_before_it() -> None:
    words = " ".join(f"word{i}" for i in range(600))
    [c] = extract_citations(f"{words} [a.py:1] {words.replace('word', 'after')}")
    assert len(c.claim_text) <= MAX_CLAIM_CHARS
    assert c.claim_text.endswith("word599")


# --------------------------------------------------------------------------- location fields


REPORT = """\
# Authentication

Intro paragraph without citations.

The `login` function checks the password [src/auth.py:10-25]. It hashes with bcrypt [src/hash.py:3].

## Sessions

- Sessions live in Redis [src/session.py:1-9].
- Expiry is ten minutes [src/session.py:12].

```python
# [src/nope.py:1] is code
```

| Setting | Meaning |
|---|---|
| `ttl` | Session lifetime [src/config.py:4] |
"""


def test_section_paragraph_context_position() -> None:
    found = extract_citations(REPORT)
    got = [(c.citation.file_path, c.section, c.paragraph_index) for c in found]
    assert got == [
        ("src/auth.py", "Authentication", 2),
        ("src/hash.py", "Authentication", 2),
        ("src/session.py", "Sessions", 4),
        ("src/session.py", "Sessions", 5),
        ("src/config.py", "Sessions", 6),
    ]
    para = (
        "The `login` function checks the password [src/auth.py:10-25]."
        " It hashes with bcrypt [src/hash.py:3]."
    )
    assert found[0].context == para and found[1].context == para
    assert found[2].context == "- Sessions live in Redis [src/session.py:1-9]."
    assert found[4].context == (
        "| Setting | Meaning |\n|---|---|\n| `ttl` | Session lifetime [src/config.py:4] |"
    )
    for c in found:
        assert REPORT[c.position : c.position + len(c.raw)] == c.raw


def test_section_is_empty_before_first_heading() -> None:
    [c] = extract_citations("Preamble claim [a.py:1].\n\n# Later\n")
    assert (c.section, c.paragraph_index) == ("", 0)


def test_code_blocks_and_rules_do_not_count_as_paragraphs() -> None:
    text = "```\ncode\n```\n\n---\n\nFirst real paragraph [a.py:1].\n"
    [c] = extract_citations(text)
    assert c.paragraph_index == 0


# --------------------------------------------------------------------------- occurrence and ids


def test_occurrence_counts_same_claim_and_citation() -> None:
    text = (
        "Same claim [a.py:1].\n\nSame claim [a.py:1].\n"
        "\nOther claim [a.py:1].\n\nSame claim [a.py:1]."
    )
    found = extract_citations(text)
    assert [c.occurrence for c in found] == [0, 1, 0, 2]
    assert len({c.id for c in found}) == 4


def test_ids_are_stable_across_runs_and_edits_elsewhere() -> None:
    text = "First claim here [a.py:1].\n\nSecond claim here [b.py:2]."
    ids = [c.id for c in extract_citations(text)]
    assert ids == [c.id for c in extract_citations(text)]
    edited = "# New heading\n\nNew intro.\n\n" + text
    assert [c.id for c in extract_citations(edited)] == ids


def test_lsyntax_and_plain_syntax_share_an_id() -> None:
    a = extract_citations("Claim text here [a.py:L3-L9].")
    b = extract_citations("Claim text here [./a.py:3-9].")
    assert a[0].id == b[0].id
