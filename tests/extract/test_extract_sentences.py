"""Sentence splitting: every trap the issue lists, and the markdown units."""

from __future__ import annotations

import pytest

from citecal.extract import split_sentences


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


@pytest.mark.parametrize(
    "text",
    [
        "The request goes through Axios.js before anything else.",
        "The handler in src/auth.py validates the token.",
        "It reads config.yaml and .env files.",
        "Inside backticks `a. B` nothing ends.",
        "Inside double backticks ``x. Y. `z`. W`` nothing ends.",
        "Abbreviations e.g. Foo never end a sentence.",
        "Abbreviations i.e. Foo never end a sentence.",
        "Compare X vs. Y here.",
        "Ask Dr. Smith about it.",
        "See the docs, cf. Section 3 for details.",
        "Pinned to version 1.6.8 of the library.",
        "Pi is about 3.14 in this code.",
        "The citation [a.py:1-5, b.py:9] stays whole.",
        "The link [Read this. Then that](http://x.com) stays whole.",
        "A note [see Fig. 3. Also B] stays whole.",
        "Lowercase after a period. continues the sentence.",
        "Python 3.11. is required",
    ],
)
def test_single_sentence(text: str) -> None:
    assert sentences(text) == [text]


def test_etc_ends_a_sentence_only_before_an_uppercase_word() -> None:
    assert sentences("It reads JSON, YAML, etc. and TOML.") == [
        "It reads JSON, YAML, etc. and TOML."
    ]
    assert sentences("It reads JSON, YAML, etc. Then it stops.") == [
        "It reads JSON, YAML, etc.",
        "Then it stops.",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One sentence. Two sentence.", ["One sentence.", "Two sentence."]),
        ("Wow! Really? Yes.", ["Wow!", "Really?", "Yes."]),
        ("It loads Axios.js. Then it calls `get`.", ["It loads Axios.js.", "Then it calls `get`."]),
        ("It ends. `login` starts the next.", ["It ends.", "`login` starts the next."]),
        ('It ends. "Quoted" starts the next.', ["It ends.", '"Quoted" starts the next.']),
        ("It ends. 3 files follow.", ["It ends.", "3 files follow."]),
        ("Version 1.6.8. Next one.", ["Version 1.6.8.", "Next one."]),
        ("Wait... Then go.", ["Wait...", "Then go."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("**Bold end.** Next sentence.", ["**Bold end.**", "Next sentence."]),
        ("(Parenthetical end.) Next one.", ["(Parenthetical end.)", "Next one."]),
        ("First line ends.\nSecond line starts.", ["First line ends.", "Second line starts."]),
        ("設定を読む。次に書く。", ["設定を読む。", "次に書く。"]),
    ],
)
def test_split(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_citation_after_period_belongs_to_previous_sentence() -> None:
    text = "It validates credentials. [a.py:1-3] Then it logs in."
    assert sentences(text) == ["It validates credentials. [a.py:1-3]", "Then it logs in."]


def test_several_citations_after_period_and_trailing_period() -> None:
    text = "It validates credentials. [a.py:1-3] [b.py:4]. Then it logs in."
    assert sentences(text) == ["It validates credentials. [a.py:1-3] [b.py:4].", "Then it logs in."]


def test_citation_after_final_period() -> None:
    assert sentences("It validates credentials. [a.py:1-3]") == [
        "It validates credentials. [a.py:1-3]"
    ]


def test_citation_before_period() -> None:
    text = "It validates credentials [a.py:1-3]. Then it logs in [b.py:4]."
    assert sentences(text) == ["It validates credentials [a.py:1-3].", "Then it logs in [b.py:4]."]


def test_markdown_units() -> None:
    text = (
        "# Title\n"
        "Intro sentence one. Intro two\n"
        "\n"
        "- item one. Still item one\n"
        "- item two\n"
        "1. numbered item\n"
        "\n"
        "| a | b |\n"
        "|---|---|\n"
        "| c. D | e |\n"
        "\n"
        "```py\n"
        "x = 1. Y = 2\n"
        "```\n"
        "\n"
        "---\n"
        "> quoted one. Quoted two\n"
    )
    assert sentences(text) == [
        "# Title",
        "Intro sentence one.",
        "Intro two",
        "- item one.",
        "Still item one",
        "- item two",
        "1. numbered item",
        "| a | b |",
        "|---|---|",
        "| c. D | e |",
        "```py\nx = 1. Y = 2\n```",
        "---",
        "> quoted one.",
        "Quoted two",
    ]


def test_ordered_list_marker_does_not_end_a_sentence() -> None:
    text = "1. First item is here.\n   Continued.\n2. Second"
    assert sentences(text) == ["1. First item is here.", "Continued.", "2. Second"]


def test_quote_continuation_marker_starts_next_sentence() -> None:
    text = "> First quoted sentence.\n> Second quoted sentence."
    assert sentences(text) == ["> First quoted sentence.", "> Second quoted sentence."]


def test_heading_is_one_unit_even_with_periods() -> None:
    assert sentences("## Step 1. Install. Then run\n\nBody.") == [
        "## Step 1. Install. Then run",
        "Body.",
    ]


def test_setext_heading() -> None:
    assert sentences("Title. Here\n=====\n\nBody text.") == ["Title. Here\n=====", "Body text."]


def test_crlf() -> None:
    text = "One here.\r\nTwo there.\r\n\r\nThree."
    assert sentences(text) == ["One here.", "Two there.", "Three."]


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\r\n\t"])
def test_empty(text: str) -> None:
    assert split_sentences(text) == []


def test_html_comment_between_sentences_is_covered() -> None:
    text = "One. <!-- note --> Two."
    assert sentences(text) == ["One.", "<!-- note --> Two."]
