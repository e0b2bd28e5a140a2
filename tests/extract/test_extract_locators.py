"""Location specifiers and excerpts in reports: ``[[item:spec]]`` and ``[path:spec]``."""

from __future__ import annotations

import pytest

from citecal.extract import extract_citations
from citecal.extract._citations import parse_citation_group, parse_item_group
from citecal.models import Citation


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("ctx-001", [Citation("ctx-001", 0, 0, item="ctx-001")]),
        ("ctx-001:L42", [Citation("ctx-001", 42, 42, location="L42", item="ctx-001")]),
        ("ctx-001:L42-67", [Citation("ctx-001", 42, 67, location="L42-67", item="ctx-001")]),
        ("ctx-001:42–67", [Citation("ctx-001", 42, 67, location="42–67", item="ctx-001")]),
        ("ctx-001:p12", [Citation("ctx-001", 0, 0, location="p12", item="ctx-001")]),
        ("ctx-001:sec-intro", [Citation("ctx-001", 0, 0, location="sec-intro", item="ctx-001")]),
        ("talk:2:15", [Citation("talk", 0, 0, location="2:15", item="talk")]),
        ("talk:1:02:15", [Citation("talk", 0, 0, location="1:02:15", item="talk")]),
        ("ctx-001:general", [Citation("ctx-001", 0, 0, location="general", item="ctx-001")]),
        ("docs/a.md:S:3", [Citation("docs/a.md", 0, 0, location="S:3", item="docs/a.md")]),
        ("ctx-1:wat", [Citation("ctx-1", 0, 0, location="wat", item="ctx-1")]),
        (
            "a:L1, b:p2",
            [
                Citation("a", 1, 1, location="L1", item="a"),
                Citation("b", 0, 0, location="p2", item="b"),
            ],
        ),
        ("wiki link", None),
        ("", None),
        ("http://x", None),
    ],
)
def test_item_brackets(inner: str, expected: list[Citation] | None) -> None:
    assert parse_item_group(inner) == expected


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("doc.md:p12", [Citation("doc.md", 0, 0, location="p12")]),
        ("doc.md:sec-getting-started", [Citation("doc.md", 0, 0, location="sec-getting-started")]),
        ("talk.vtt:2:15", [Citation("talk.vtt", 0, 0, location="2:15")]),
        ("doc.md:general", [Citation("doc.md", 0, 0, location="general")]),
        ("docs/a.md:S:3", [Citation("docs/a.md", 0, 0, location="S:3")]),
        ("./doc.md:S:0", [Citation("doc.md", 0, 0, location="S:0")]),
        ("a.py:10-25", [Citation("a.py", 10, 25)]),  # line citations are unchanged
        ("a.py:L3", [Citation("a.py", 3, 3)]),
        ("note:general", None),  # a path needs a dot or a slash
        ("10:30", None),
    ],
)
def test_single_brackets(inner: str, expected: list[Citation] | None) -> None:
    assert parse_citation_group(inner) == expected


def test_citation_text_is_stable() -> None:
    assert str(Citation("ctx-001.md", 51, 100, location="p2", item="ctx-001")) == "[[ctx-001:p2]]"
    assert str(Citation("ctx", 0, 0, item="ctx")) == "[[ctx]]"
    assert str(Citation("doc.md", 3, 3, location="S:3")) == "[doc.md:S:3]"
    assert str(Citation("a.py", 3, 3)) == "[a.py:3]"


def test_excerpts_quoted_sentence_and_none() -> None:
    report = (
        'The team agreed that "the deadline is March 15th" [[ctx-1:L42]]. '
        "Budget is tight [[ctx-2]] and hiring paused [[ctx-3:p2]].\n\n"
        "Earlier sentence here.\n\n- [[ctx-4]]\n\n"
        'The parser returns "ok" [a.py:3]. The `f("x")` call [a.py:7]. Plain [a.py:9].\n'
    )
    got = [(str(e.citation), e.excerpt, e.excerpt_quoted) for e in extract_citations(report)]
    assert got == [
        ("[[ctx-1:L42]]", "the deadline is March 15th", True),
        ("[[ctx-2]]", "Budget is tight", False),
        ("[[ctx-3:p2]]", "and hiring paused", False),
        ("[[ctx-4]]", None, False),  # a bare marker: nothing to check
        ("[a.py:3]", "ok", True),
        ("[a.py:7]", None, False),  # quotes inside code are not excerpts
        ("[a.py:9]", None, False),  # line citations quote only in quotation marks
    ]


def test_item_brackets_leave_no_brackets_in_claims() -> None:
    [e] = extract_citations("Hiring is paused [[ctx-001:sec-budget]].\n")
    assert e.claim_text == "Hiring is paused"
    assert e.raw == "[[ctx-001:sec-budget]]"
    [link] = extract_citations("A [[wiki]](http://x) link and a real one [a.py:1].\n")
    assert str(link.citation) == "[a.py:1]"
