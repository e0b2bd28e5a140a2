"""Code masking and the CommonMark backtick rule."""

from __future__ import annotations

import gc

import pytest

from citecal.extract import mask_code
from citecal.extract._markdown import inline_code_spans, line_starts, parse_markdown, paused_gc


def spans(text: str) -> list[str]:
    return [text[s:e] for s, e in inline_code_spans(text, 0, len(text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a `b` c", ["`b`"]),
        ("a ``b ` c`` d", ["``b ` c``"]),
        ("a ` b", []),
        ("``a` b", []),
        ("`a` `b`", ["`a`", "`b`"]),
        ("```a``` and `` b ``", ["```a```", "`` b ``"]),
        ("\\`not code` but `this`", ["` but `"]),
        ("`code\\` ends here", ["`code\\`"]),
        ("`multi\nline`", ["`multi\nline`"]),
        ("``", []),
        ("`a`` b`", ["`a`` b`"]),
    ],
)
def test_inline_code_spans(text: str, expected: list[str]) -> None:
    assert spans(text) == expected


def test_mask_code_blanks_code_and_keeps_length_and_lines() -> None:
    text = "Text `code [a.py:1]` more.\r\n\r\n```py\nx = [b.py:2]\n```\n\n<!-- c -->\nEnd [c.py:3]."
    masked = mask_code(text)
    assert len(masked) == len(text)
    assert masked == (
        "Text                 more.\r\n\r\n     \n            \n   \n\n          \nEnd [c.py:3]."
    )


def test_mask_code_leaves_prose_untouched() -> None:
    text = "# Title\n\nPlain [a.py:1] prose, with e.g. dots.\n"
    assert mask_code(text) == text


@pytest.mark.parametrize("text", ["", "`", "```", "~~~\n", "\r\n", "<!--", "    indented"])
def test_mask_code_degenerate(text: str) -> None:
    assert len(mask_code(text)) == len(text)


def test_line_starts_handles_every_line_ending() -> None:
    assert line_starts("a\nb\r\nc\rd") == [0, 2, 5, 7]
    assert line_starts("") == [0]


def test_blocks_of_a_small_report() -> None:
    text = "# T\n\npara\n\n- item\n\n```\ncode\n```\n\n---\n\n| a |\n|---|\n| b |\n"
    doc = parse_markdown(text)
    got = [(b.kind, text[b.start : b.end], b.paragraph_index, b.claimable) for b in doc.blocks]
    assert got == [
        ("heading", "# T", 0, False),
        ("paragraph", "para", 1, True),
        ("paragraph", "- item", 2, True),
        ("code", "```\ncode\n```", -1, False),
        ("rule", "---", -1, False),
        ("table_row", "| a |", 3, False),
        ("table_row", "|---|", 3, False),
        ("table_row", "| b |", 3, True),
    ]


def test_paused_gc_restores_the_collector_state() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError), paused_gc():
        1 / 0  # noqa: B018
    assert gc.isenabled()
