"""Citation syntaxes, non-citations, positions and raw text."""

from __future__ import annotations

import pytest

from citecal.extract import extract_citations, parse_citation_group
from citecal.models import LINE_NUMBER_OVERFLOW, Citation


def cites(text: str) -> list[tuple[str, int, int]]:
    return [
        (c.citation.file_path, c.citation.start_line, c.citation.end_line)
        for c in extract_citations(text)
    ]


# --------------------------------------------------------------------------- parse_citation_group


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("src/auth.py:10-25", [Citation("src/auth.py", 10, 25)]),
        ("src/auth.py:42", [Citation("src/auth.py", 42, 42)]),
        ("a.py:1-5, b.py:9", [Citation("a.py", 1, 5), Citation("b.py", 9, 9)]),
        ("a.py:1-5; b.py:9", [Citation("a.py", 1, 5), Citation("b.py", 9, 9)]),
        (
            "a.py:1-5;b.py:9,c.py:3",
            [Citation("a.py", 1, 5), Citation("b.py", 9, 9), Citation("c.py", 3, 3)],
        ),
        ("a.py:10–25", [Citation("a.py", 10, 25)]),  # en dash
        ("a.py:10—25", [Citation("a.py", 10, 25)]),  # em dash
        ("a.py:10 - 25", [Citation("a.py", 10, 25)]),
        ("a.py:L10-L25", [Citation("a.py", 10, 25)]),
        ("a.py:L10", [Citation("a.py", 10, 10)]),
        ("a.py:L10-25", [Citation("a.py", 10, 25)]),
        ("./lib/core/Axios.js:100-150", [Citation("lib/core/Axios.js", 100, 150)]),
        (
            "packages/@scope/my-pkg_v2/index.test.ts:3",
            [Citation("packages/@scope/my-pkg_v2/index.test.ts", 3, 3)],
        ),
        (" a.py:3 ", [Citation("a.py", 3, 3)]),
        ("a.py:25-10", [Citation("a.py", 25, 10)]),  # kept as written: validation reports it
        ("a.py:0", [Citation("a.py", 0, 0)]),
        ("a.py:-1-2", [Citation("a.py", -1, 2)]),  # kept: validation says invalid_range
        ("a.py:3-1234567890123456789", [Citation("a.py", 3, LINE_NUMBER_OVERFLOW)]),
        ("C:\\src\\a.py:10", [Citation("C:\\src\\a.py", 10, 10)]),
        ("../../etc/passwd:1", [Citation("../../etc/passwd", 1, 1)]),
        ("/abs/path.py:7", [Citation("/abs/path.py", 7, 7)]),
        ("Makefile:3", [Citation("Makefile", 3, 3)]),
        ("données/été.py:4", [Citation("données/été.py", 4, 4)]),
        ("a.py:1-5,", [Citation("a.py", 1, 5)]),
    ],
)
def test_parse_citation_group_accepts(inner: str, expected: list[Citation]) -> None:
    assert parse_citation_group(inner) == expected


@pytest.mark.parametrize(
    "inner",
    [
        "",
        " ",
        "x",
        "1",
        "^1",
        "^note:3",
        "see a.py",
        "a.py",
        "a.py:",
        "a.py:x",
        "a.py:10-",
        "a.py: 10",
        ":10",
        "./:10",
        "http://example.com:80",
        "https://example.com/a.py:80",
        "10:30",
        "a.py:1-5, see also b",
        "see the note: 10",
        "`a.py`:3",
        "a.py:1.5",
    ],
)
def test_parse_citation_group_rejects(inner: str) -> None:
    assert parse_citation_group(inner) is None


# --------------------------------------------------------------------------- extraction


def test_seed_example_values() -> None:
    text = "The AuthManager class validates credentials [src/auth.py:10-25]."
    [c] = extract_citations(text)
    assert c.citation == Citation("src/auth.py", 10, 25)
    assert c.claim_text == "The AuthManager class validates credentials"
    assert c.position == text.index("[")
    assert c.raw == "[src/auth.py:10-25]"
    assert c.occurrence == 0


def test_group_shares_position_and_raw_in_written_order() -> None:
    text = "Login and logout live here [a.py:1-5; b.py:9]."
    found = extract_citations(text)
    assert [str(c.citation) for c in found] == ["[a.py:1-5]", "[b.py:9]"]
    assert {c.position for c in found} == {text.index("[")}
    assert {c.raw for c in found} == {"[a.py:1-5; b.py:9]"}


def test_raw_keeps_what_was_written() -> None:
    text = "Cited with L lines [./a.py:L10–L25]."
    [c] = extract_citations(text)
    assert c.raw == "[./a.py:L10–L25]"
    assert str(c.citation) == "[a.py:10-25]"


def test_ordered_by_position_across_blocks() -> None:
    text = (
        "# H\n\nFirst [a.py:1].\n\n- second [b.py:2]\n"
        "\n| c [c.py:3] | d |\n|---|---|\n| e [e.py:5] | f |\n"
    )
    found = extract_citations(text)
    assert [c.citation.file_path for c in found] == ["a.py", "b.py", "c.py", "e.py"]
    positions = [c.position for c in found]
    assert positions == sorted(positions)
    for c in found:
        assert text[c.position] == "["
        assert text[c.position : c.position + len(c.raw)] == c.raw


@pytest.mark.parametrize(
    "text",
    [
        "A [link](http://x.com/a.py:3) here.",
        "A [a.py:3](http://x.com) link whose text looks like a citation.",
        "An image ![a.py:3](img.png).",
        "A reference link [a.py:3][ref] here.",
        "A reference link [text][a.py:3] here.",
        "A footnote[^1] and [^a.py:3].",
        "- [ ] a task\n- [x] done task",
        "A numeric ref [1] and [12].",
        "No line [src/a.py] here.",
        "A URL [http://localhost:8080] here.",
        "A time [10:30] here.",
        "An escaped \\[a.py:3] bracket.",
        "Inline `[a.py:3]` code.",
        "Double ``x [a.py:3] ` y`` code.",
        "```\n[a.py:3]\n```",
        "```python title=x.py\n[a.py:3]\n```",
        "~~~\n[a.py:3]\n~~~",
        "````\n```\n[a.py:3]\n```\n````",
        "- item\n\n  ```\n  [a.py:3]\n  ```",
        "> ```\n> [a.py:3]\n> ```",
        "Para.\n\n    [a.py:3] indented code",
        "<!-- [a.py:3] -->",
        "Text <!-- hidden [a.py:3] --> more.",
        "[a.py:3]: http://example.com/definition",
    ],
)
def test_not_citations(text: str) -> None:
    assert extract_citations(text) == []


def test_unclosed_fence_runs_to_end() -> None:
    assert extract_citations("Before [a.py:1].\n\n```\n[b.py:2]\n\nstill code [c.py:3]\n") != []
    assert cites("Before [a.py:1].\n\n```\n[b.py:2]\n\nstill code [c.py:3]\n") == [("a.py", 1, 1)]


def test_fence_needs_matching_length_to_close() -> None:
    text = "````\n```\n[a.py:1]\n````\nAfter [b.py:2]."
    assert cites(text) == [("b.py", 2, 2)]


def test_unbalanced_backtick_is_literal() -> None:
    text = "An unbalanced ` backtick then [a.py:3]."
    assert cites(text) == [("a.py", 3, 3)]


def test_group_wrapped_over_two_lines() -> None:
    text = "Login and logout are both here [src/auth.py:1-5,\n  src/auth.py:9].\n"
    found = extract_citations(text)
    assert [str(c.citation) for c in found] == ["[src/auth.py:1-5]", "[src/auth.py:9]"]
    assert {c.claim_text for c in found} == {"Login and logout are both here"}


def test_adjacent_citation_brackets_are_both_citations() -> None:
    text = "Both are here [a.py:1-5][b.py:2]."
    assert cites(text) == [("a.py", 1, 5), ("b.py", 2, 2)]


def test_double_brackets_yield_inner_citation() -> None:
    assert cites("Wiki style [[a.py:3]].") == [("a.py", 3, 3)]


def test_citation_next_to_link_is_found() -> None:
    text = "See [the docs](http://x.com) for [a.py:3]."
    assert cites(text) == [("a.py", 3, 3)]


def test_citation_in_heading_table_and_quote() -> None:
    text = (
        "## Login [a.py:1]\n\n> Quoted claim [b.py:2].\n"
        "\n| x | y |\n|---|---|\n| cell [c.py:3] | z |\n"
    )
    assert cites(text) == [("a.py", 1, 1), ("b.py", 2, 2), ("c.py", 3, 3)]


def test_yaml_front_matter_is_not_prose() -> None:
    text = "---\ntitle: Auth [a.py:1]\nauthor: bot\n---\n# Overview\n\nThe claim holds [b.py:2].\n"
    [c] = extract_citations(text)
    assert (str(c.citation), c.section, c.paragraph_index) == ("[b.py:2]", "Overview", 1)
    crlf = text.replace("\n", "\r\n")
    [c] = extract_citations(crlf)
    assert (c.section, c.position) == ("Overview", crlf.index("[b.py"))


def test_unclosed_front_matter_is_ordinary_text() -> None:
    text = "---\ntitle: Auth [a.py:1]\n\nThe claim holds [b.py:2].\n"
    assert cites(text) == [("a.py", 1, 1), ("b.py", 2, 2)]


def test_leading_rule_and_setext_heading_are_not_front_matter() -> None:
    text = "---\nThe claim holds [a.py:1].\n---\n\nMore [b.py:2].\n"
    found = extract_citations(text)
    assert [(c.citation.file_path, c.section) for c in found] == [
        ("a.py", "The claim holds."),
        ("b.py", "The claim holds."),
    ]


def test_over_nested_quote_is_still_scanned() -> None:
    # markdown-it stops nesting at 20 levels; the rest must not vanish silently.
    text = ">" * 30 + " deep claim [a.py:3]."
    assert cites(text) == [("a.py", 3, 3)]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\n\n\t\r\n",
        "[",
        "]",
        "[[[",
        "`",
        "```",
        "[a.py:",
        "<!--",
        "\x00",
        "\u2028",
        "#",
        "|",
        ">",
    ],
)
def test_degenerate_inputs(text: str) -> None:
    assert extract_citations(text) == []


def test_crlf_positions_are_offsets_in_original_text() -> None:
    text = "# Title\r\n\r\nFirst claim here [a.py:1-2].\r\nSecond one [b.py:3].\r\n"
    found = extract_citations(text)
    assert [c.position for c in found] == [text.index("[a.py"), text.index("[b.py")]
    assert [c.claim_text for c in found] == ["First claim here", "Second one"]
    assert found[0].section == "Title"


def test_lone_cr_line_endings() -> None:
    text = "# Title\r\rClaim one [a.py:1].\r```\r[x.py:1]\r```\r"
    found = extract_citations(text)
    assert [(c.citation.file_path, c.section) for c in found] == [("a.py", "Title")]
