"""Worked examples of chunking: what each kind of source is cut into."""

from __future__ import annotations

from citecal.chunks import chunk_text, source_kind

DOC = """# Verdict cache

The cache is keyed by model, e.g. `gpt-4o-mini`. It lives in `cache.sqlite3`.

```python
cache.get(key)
```

| key | value |
|---|---|
| model | gpt-4o |
"""

CODE = '''"""Cart."""

import os


@dataclass
class Cart:
    items: dict

    def add(self, sku):
        self.items[sku] = 1

    @property
    def empty(self):
        return not self.items


def total(cart):
    return len(cart.items)
'''


def test_markdown_sentences_headings_code_and_tables() -> None:
    chunks = chunk_text(DOC, "docs/cache.md")
    assert [(c.id, c.kind, c.content) for c in chunks] == [
        ("docs/cache.md:S:0", "heading", "# Verdict cache"),
        ("docs/cache.md:S:1", "sentence", "The cache is keyed by model, e.g. `gpt-4o-mini`."),
        ("docs/cache.md:S:2", "sentence", "It lives in `cache.sqlite3`."),
        ("docs/cache.md:S:3", "code_block", "```python\ncache.get(key)\n```"),
        ("docs/cache.md:S:4", "table_row", "| key | value |"),
        ("docs/cache.md:S:5", "table_row", "|---|---|"),
        ("docs/cache.md:S:6", "table_row", "| model | gpt-4o |"),
    ]
    s2 = chunks[2]
    assert (s2.start_line, s2.end_line) == (3, 3)
    assert (s2.previous, s2.next) == (chunks[1].content, chunks[3].content)
    assert chunks[1].text == "The cache is keyed by model, e.g. `gpt-4o-mini`. "


def test_plain_text_ignores_markdown_structure() -> None:
    text = "# not a heading. Two sentences here.\n\n    Indented is not code. Really.\n"
    assert [c.content for c in chunk_text(text, "notes.txt")] == [
        "# not a heading.",
        "Two sentences here.",
        "Indented is not code.",
        "Really.",
    ]


def test_code_definitions_with_decorators() -> None:
    chunks = chunk_text(CODE, "shop/cart.py")
    assert [(c.id, c.kind, c.name) for c in chunks] == [
        ("shop/cart.py:1-3", "code", None),
        ("shop/cart.py:6-15", "definition", "Cart"),
        ("shop/cart.py:18-19", "definition", "total"),
    ]
    assert chunks[1].content.startswith("@dataclass\nclass Cart:")
    assert chunks[0].text == '"""Cart."""\n\nimport os\n\n\n'  # blank lines join the chunk above


def test_long_definitions_are_cut_into_members() -> None:
    chunks = chunk_text(CODE, "shop/cart.py", max_lines=5)
    assert [(c.id, c.kind, c.name) for c in chunks] == [
        ("shop/cart.py:1-3", "code", None),
        ("shop/cart.py:6-8", "definition", "Cart"),
        ("shop/cart.py:10-11", "definition", "add"),
        ("shop/cart.py:13-15", "definition", "empty"),
        ("shop/cart.py:18-19", "definition", "total"),
    ]


def test_code_without_definitions_is_cut_at_blank_lines() -> None:
    script = "set -e\nmake install\n\nmake test\n"
    assert [c.id for c in chunk_text(script, "run.sh")] == ["run.sh:1-2", "run.sh:4"]
    # an unknown extension is prose: one chunk per paragraph without sentence ends
    assert [c.content for c in chunk_text("a\nb\n\n\nc", "data.unknownext")] == ["a\nb", "c"]


def test_go_definitions() -> None:
    go = "package main\n\nfunc A() int {\n\treturn 1\n}\n\ntype T struct {\n\tX int\n}\n"
    chunks = chunk_text(go, "main.go")
    assert [(c.id, c.kind, c.name) for c in chunks] == [
        ("main.go:1", "code", None),
        ("main.go:3-5", "definition", "A"),
        ("main.go:7-9", "definition", "T"),
    ]


def test_empty_and_blank_sources() -> None:
    assert chunk_text("", "a.md") == []
    [blank] = chunk_text("  \n\n", "a.md")
    assert (blank.kind, blank.text, blank.content, blank.id) == ("blank", "  \n\n", "", "a.md:S:0")


def test_source_kinds() -> None:
    assert [
        source_kind(p) for p in ("a.md", "A.MARKDOWN", "a.txt", "a.rst", "README", "a.py", "a.go")
    ] == [
        "markdown",
        "markdown",
        "text",
        "text",
        "text",
        "code",
        "code",
    ]
