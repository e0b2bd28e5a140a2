"""Hypothesis properties of the citation parser and the sentence splitter."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from citecal.config import ExtractConfig
from citecal.extract import (
    ABBREVIATIONS,
    extract_citations,
    find_claims,
    mask_code,
    parse_citation_group,
    split_sentences,
)
from citecal.extract._citations import parse_item_group
from citecal.extract._lines import line_starts
from citecal.extract._markdown import _markdown_it_leaves
from citecal.extract._simple import simple_leaves

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies

_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-@.", min_size=1, max_size=8)
PATHS = (
    st.lists(_SEGMENT, min_size=1, max_size=4)
    .map("/".join)
    .filter(lambda p: not p.isdigit() and not p.startswith("./"))
)
LINES = st.integers(min_value=0, max_value=10**7)
WORDS = st.lists(
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8).filter(
        lambda w: w not in ABBREVIATIONS  # "sec." legitimately does not end a sentence
    ),
    min_size=1,
    max_size=6,
)
DASHES = st.sampled_from(["-", "–", "—", " - "])


@dataclass(frozen=True)
class Rendered:
    path: str
    start: int
    end: int
    text: str


@st.composite
def citation_texts(draw: st.DrawFn) -> Rendered:
    """One citation written in any accepted style, with the values it must parse to."""
    path = draw(PATHS)
    start = draw(LINES)
    single = draw(st.booleans())
    end = start if single else draw(LINES)
    prefix = draw(st.sampled_from(["", "L"]))
    dot = draw(st.sampled_from(["", "./"]))
    text = f"{dot}{path}:{prefix}{start}"
    if not single:
        text += f"{draw(DASHES)}{prefix}{end}"
    return Rendered(path, start, end, text)


@st.composite
def reports(draw: st.DrawFn) -> tuple[str, list[tuple[str, int, int]]]:
    """A report of sentences carrying citation groups, and the citations it holds in order."""
    parts: list[str] = []
    expected: list[tuple[str, int, int]] = []
    for _ in range(draw(st.integers(1, 8))):
        words = draw(WORDS)
        group = draw(st.lists(citation_texts(), min_size=1, max_size=3))
        sep = draw(st.sampled_from([", ", "; ", ",", ";"]))
        bracket = "[" + sep.join(c.text for c in group) + "]"
        after_period = draw(st.booleans())
        sentence = " ".join([words[0].capitalize(), *words[1:]])
        parts.append(f"{sentence}. {bracket}" if after_period else f"{sentence} {bracket}.")
        parts.append(draw(st.sampled_from([" ", "\n", "\n\n", "\r\n", "\r\n\r\n"])))
        expected.extend((c.path, c.start, c.end) for c in group)
    return "".join(parts), expected


MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            *"[]()`~#>-*_|:;,.!?\\<!/ \t\n\r0123456789aAbBLx–é漢",
            *("a.py:", "[a.py:1-2]", "```", "~~~", "<!--", "-->", "    ", "\r\n", "e.g.", "1. "),
        ]
    ),
    max_size=120,
).map("".join)


# --------------------------------------------------------------------------- citation parser


@SETTINGS
@given(citation_texts())
def test_parse_citation_group_round_trip(cit: Rendered) -> None:
    [parsed] = parse_citation_group(cit.text) or [None]
    assert parsed is not None
    assert (parsed.file_path, parsed.start_line, parsed.end_line) == (cit.path, cit.start, cit.end)


@SETTINGS
@given(reports())
def test_rendered_citations_are_all_found(report: tuple[str, list[tuple[str, int, int]]]) -> None:
    text, expected = report
    found = extract_citations(text)
    assert [(c.citation.file_path, c.citation.start_line, c.citation.end_line) for c in found] == (
        expected
    )
    for c in found:
        assert text[c.position] == "["
        assert text[c.position : c.position + len(c.raw)] == c.raw
        assert c.claim_text  # every generated sentence has words


@SETTINGS
@given(st.text(max_size=400))
def test_any_text_never_raises(text: str) -> None:
    extract_citations(text)
    find_claims(text, ExtractConfig())
    split_sentences(text)
    assert len(mask_code(text)) == len(text)


@SETTINGS
@given(MARKDOWNISH)
@example("[[a.py:1-2]]")  # an item citation: its raw text has two brackets each side
def test_markdownish_text_positions_and_raw(text: str) -> None:
    for c in extract_citations(text):
        assert text[c.position] == "["
        assert text[c.position : c.position + len(c.raw)] == c.raw
        if c.raw.startswith("[[") and c.raw.endswith("]]"):
            parsed = parse_item_group(c.raw[2:-2])
        else:
            parsed = parse_citation_group(c.raw[1:-1])
        assert c.citation in (parsed or [])
        assert c.paragraph_index >= 0
        assert c.raw in c.context
    assert len(mask_code(text)) == len(text)


@SETTINGS
@given(
    citation_texts(),
    st.sampled_from(["```", "~~~", "````", "~~~~~"]),
    st.sampled_from(["", "python", "js title=a.js", "text {.x}"]),
    WORDS,
)
def test_no_citations_inside_fences(cit: Rendered, fence: str, info: str, words: list[str]) -> None:
    body = f"{' '.join(words)} [{cit.text}]\n[{cit.text}] {' '.join(words)}."
    text = f"Before the fence [{cit.text}].\n\n{fence}{info}\n{body}\n{fence}\n\nAfter it.\n"
    found = extract_citations(text)
    assert len(found) == 1
    assert found[0].position == text.index("[")


@SETTINGS
@given(citation_texts(), st.integers(1, 3), WORDS)
def test_no_citations_inside_inline_code(cit: Rendered, ticks: int, words: list[str]) -> None:
    fence = "`" * ticks
    code = f"{fence}{' '.join(words)} [{cit.text}]{fence}"
    text = f"The code {code} is quoted, and the claim holds [{cit.text}]."
    found = extract_citations(text)
    assert [c.position for c in found] == [text.rindex("[")]
    assert code in found[0].claim_text


CODE_BODIES = st.text("abcXY_()[]^*<>|!#:;,.- ", min_size=1, max_size=10).filter(
    lambda b: b.strip() == b and b  # no edge spaces: CommonMark would strip one
)


@SETTINGS
@given(
    st.lists(st.tuples(WORDS, CODE_BODIES), min_size=1, max_size=3),
    citation_texts(),
    st.sampled_from(["- ", "", "> ", "1. ", "# "]),
)
def test_code_spans_survive_in_claims(
    parts: list[tuple[list[str], str]], cit: Rendered, prefix: str
) -> None:
    code = [f"`{body}`" for _, body in parts]
    sentence = " ".join(f"{' '.join(words)} {c}" for (words, _), c in zip(parts, code, strict=True))
    text = f"{prefix}The {sentence} here ([{cit.text}])."
    [found] = extract_citations(text)
    for c in code:  # verbatim, but for whitespace runs (collapsed everywhere in claims)
        assert " ".join(c.split()) in found.claim_text


# --------------------------------------------------------------------------- sentence splitter


def _check_spans(text: str) -> None:
    spans = split_sentences(text)
    prev_end = 0
    covered = bytearray(len(text))
    for s, e in spans:
        assert prev_end <= s < e <= len(text)
        assert not text[s].isspace() and not text[e - 1].isspace()
        covered[s:e] = b"\x01" * (e - s)
        prev_end = e
    for i, ch in enumerate(text):
        assert covered[i] or ch.isspace(), (i, ch, text)


@SETTINGS
@given(MARKDOWNISH)
def test_spans_are_ordered_disjoint_and_cover_markdownish_text(text: str) -> None:
    _check_spans(text)


@SETTINGS
@given(st.text(max_size=300))
def test_spans_cover_any_text(text: str) -> None:
    _check_spans(text)


_NAME = st.text("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-", min_size=1, max_size=6)
FILE_NAMES = st.builds(
    lambda dirs, stem, ext: "/".join([*dirs, f"{stem}.{ext}"]),
    st.lists(_NAME, max_size=3),
    _NAME,
    st.sampled_from(["py", "js", "Js", "TS", "go", "tar.gz", "d.ts", "X"]),
)
VERSIONS = st.lists(st.integers(0, 999), min_size=2, max_size=4).map(
    lambda xs: ".".join(map(str, xs))
)
CODE_SPANS = st.builds(
    lambda ticks, body: f"{ticks}{body}{ticks}",
    st.sampled_from(["`", "``"]),
    st.text("abcXYZ. !?;\n", min_size=1, max_size=12).filter(
        # a blank line would end the paragraph, and the code span with it
        lambda b: b.strip() and all(line.strip() for line in b.split("\n")[1:-1])
    ),
)
ABBREVIATED = st.sampled_from(["e.g. Foo", "i.e. Bar", "vs. Baz", "Dr. Who", "cf. Qux"])
CITATIONS = st.lists(citation_texts(), min_size=1, max_size=3).map(
    lambda cs: "[" + ", ".join(c.text for c in cs) + "]"
)
TRAPS = st.one_of(FILE_NAMES, VERSIONS, CODE_SPANS, ABBREVIATED, CITATIONS)


@SETTINGS
@given(st.lists(st.tuples(WORDS, TRAPS, st.sampled_from([".", "!", "?"])), min_size=1, max_size=6))
def test_never_splits_inside_names_versions_code_citations(
    items: list[tuple[list[str], str, str]],
) -> None:
    sentences = [
        f"{words[0].capitalize()} {trap} {' '.join(words[1:]) or 'here'}{end}"
        for words, trap, end in items
    ]
    text = " ".join(sentences)
    assert [text[s:e] for s, e in split_sentences(text)] == sentences


SIMPLE_LINES = st.sampled_from(
    [
        *("- a", "* b [a.py:1]", "+ c", "1. d", "2. e", "1) f", "10. g", "3) h"),
        *("# h", "## h #", "###### x", "####### x", "#5 x", "#", "#\tx"),
        *("plain text.", "**bold** x", "__init__ y", "1.5 m", "2024. x", ":x", "=x"),
        *("", "   ", "\t", "\x0c", "\xa0x"),
        *("-", "- ", "--", "---", "***", "* * *", "_ _ _", "===", "-\tx", "1.", "1.\tx"),
        *("> q", "```", "~~~", "<div>", "<!-- c -->", "[x]: y", "    code", "  two", "\tcode"),
        *("- # x", "- > x", "- 1. x", "- - x", "- [ ] task", "- [x]: y", "-     code", "- ***"),
        *("```", "```py", "``` `x`", "````", "~~~", "~~~~ a`b", "  ```", "``` \t", "~~~x"),
        *("| a | b |", "|---|---|", "a | b", "x [a.py:1] | y"),
    ]
)
SIMPLEISH = st.tuples(
    st.lists(SIMPLE_LINES, max_size=12), st.sampled_from(["\n", "\r\n", "\r"])
).map(lambda t: t[1].join(t[0]))


@SETTINGS
@given(SIMPLEISH)
def test_simple_structure_shortcut_matches_markdown_it(text: str) -> None:
    starts = line_starts(text)
    leaves = simple_leaves(text, starts)
    assume(leaves is not None)
    assert leaves == _markdown_it_leaves(text, starts)
