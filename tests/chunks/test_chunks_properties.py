"""Seed 004's properties of chunking, checked on generated documents and code (hypothesis).

Property 1 provenance completeness, 2 split-then-join gives the source back
(exactly, not modulo whitespace), 6 neighbours are the real adjacent chunks,
7 no two chunks of a source share an index. Properties 3-5 are in
``test_chunks_evaluate.py`` and ``test_sentence_citations.py``.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.chunks import Chunk, chunk_text

PROSE = st.lists(
    st.sampled_from(
        [*list("abcXYZ019 .!?,;:\n\n\t\r#-*_`[]()|>\"'"), "é", "。", "e.g.", "Dr.", "a.py", "…"]
    ),
    max_size=120,
).map("".join)
CODE_LINES = [
    "def f(a, b):",
    "    return a + b",
    "class A:",
    "    x = 1",
    "    def m(self):",
    "        pass",
    "@decorator",
    "    @property",
    "import os",
    "",
    "   ",
    "# comment",
    '"""doc"""',
    "async def g():",
    "    if x:",
    "        return (",
    "\tbroken(",
]
CODE = st.lists(st.sampled_from(CODE_LINES), max_size=40).map("\n".join) | st.lists(
    st.sampled_from(CODE_LINES), max_size=40
).map(lambda lines: "\r\n".join(lines) + "\n")


def check_partition(text: str, chunks: list[Chunk], source: str) -> None:
    # property 2: split then join is the identity
    assert "".join(c.text for c in chunks) == text
    # property 7: indexes are unique (and are the positions)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert len({c.id for c in chunks}) == len(chunks)
    pos = 0
    for c in chunks:
        # property 1: provenance complete
        assert c.source == source and c.id.startswith(source + ":")
        # the content is the chunk's text without surrounding whitespace, where it says
        assert text[c.start : c.end] == c.content
        assert c.content == c.text.strip() or c.kind == "blank"
        assert text[pos : pos + len(c.text)] == c.text
        assert 1 <= c.start_line <= c.end_line <= text.count("\n") + 1
        pos += len(c.text)
    # property 6: the context is the actual adjacent chunk
    for before, after in itertools.pairwise(chunks):
        assert (before.next_id, before.next) == (after.id, after.content)
        assert (after.previous_id, after.previous) == (before.id, before.content)
    if chunks:
        assert chunks[0].previous_id is None and chunks[-1].next_id is None


@settings(max_examples=300, deadline=None)
@given(PROSE)
def test_markdown_chunks_partition_the_document(text: str) -> None:
    check_partition(text, chunk_text(text, "doc.md"), "doc.md")


@settings(max_examples=300, deadline=None)
@given(PROSE)
def test_plain_text_chunks_partition_the_document(text: str) -> None:
    chunks = chunk_text(text, "notes.txt")
    check_partition(text, chunks, "notes.txt")
    assert all(c.kind in ("sentence", "blank") for c in chunks)


@settings(max_examples=300, deadline=None)
@given(CODE)
def test_code_chunks_partition_the_file(code: str) -> None:
    chunks = chunk_text(code, "m.py")
    check_partition(code, chunks, "m.py")
    for c in chunks:
        if c.kind != "blank":  # a code chunk's id is its line citation
            lines = (
                f"{c.start_line}" if c.start_line == c.end_line else f"{c.start_line}-{c.end_line}"
            )
            assert c.id == f"m.py:{lines}"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_any_text_in_any_kind(text: str) -> None:
    for source in ("a.md", "a.txt", "a.py", "a.go"):
        check_partition(text, chunk_text(text, source), source)
