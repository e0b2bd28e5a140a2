"""Untrusted text into Markdown or HTML: shown as the characters it is, never as markup.

Claims, paragraphs, quotes, file names, cited lines, judge reasoning and
annotators' notes come from reports, repositories and judges citecal does not
trust (README "Security"). Everything citecal writes as Markdown (the Argilla
fields annotators open, ``eval``/``calibrate``/``correct -f markdown``) puts
such text through :func:`md_text`, :func:`md_code` or :func:`md_fence`, and a
field Argilla shows as HTML through :func:`html_text`: no raw HTML element, no
image, no link and no autolink can come out of them, whatever the text holds.
"""

from __future__ import annotations

import html
import re

_SYNTAX = re.compile(r"([!#$&()*+\-.:<=>@\[\\\]^_`{|}~])")
"""The ASCII punctuation that means something in CommonMark, GitHub's or Argilla's Markdown
(HTML, entities, links, autolinks, emphasis, code, lists, headings, tables, math); each may
be backslash-escaped (CommonMark §2.4). ``" % ' , / ; ?`` mean nothing outside a tag or a link."""

_INDENT = re.compile(r"^[ \t]+(?=\S)", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")
_INFO = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")
_NBSP = "\u00a0"


class Markdown(str):
    """Markdown citecal composed itself, every untrusted part escaped by this module.

    ``plain`` is the same content without Markdown escapes (what metadata and
    plain-text fields hold); by default the Markdown itself.
    """

    plain: str

    def __new__(cls, markdown: str, plain: str | None = None) -> Markdown:
        obj = super().__new__(cls, markdown)
        obj.plain = markdown if plain is None else plain
        return obj


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def md_text(text: str) -> str:
    """``text`` as Markdown that renders as exactly these characters.

    Every ASCII punctuation character with a meaning in Markdown is
    backslash-escaped (:data:`_SYNTAX`), so nothing can
    start an HTML tag, an entity, a link, an image, an autolink (``<…>``,
    ``http://``, ``www.``), emphasis, a code span, a heading, a list, a table
    or math (``$``); leading spaces become no-break spaces, so an indented
    line is not a code block. Line breaks are kept (a soft break each).
    """
    escaped = _SYNTAX.sub(r"\\\1", _lines(text))
    return _INDENT.sub(lambda m: _NBSP * len(m.group().expandtabs(4)), escaped)


def md_line(text: str) -> str:
    """:func:`md_text` on one line (a table cell, a list item): line breaks become spaces."""
    return md_text(" ".join(_lines(text).split("\n")))


def md_code(text: str) -> str:
    """``text`` as an inline code span, or as escaped text when a code span would not hold it.

    A code span shows HTML as text; it is used only when ``text`` has no
    backtick, backslash or pipe (any of which could end it early, also inside
    a GitHub table cell), else :func:`md_line`'s escaped text.
    """
    one = " ".join(_lines(text).split("\n"))
    if not one.strip() or any(c in one for c in "`\\|"):
        return md_line(one)
    return f"`{one}`"


def md_fence(body: str, info: str | None = None) -> str:
    """``body`` in a fenced code block no line of it can close.

    The fence is one backtick longer than the longest run of backticks in the
    body (at least three); ``info`` (the language) is kept only when it is a
    plain name, since a backtick in it would turn the fence into text.
    """
    body = _lines(body)
    longest = max((len(m) for m in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    lang = info if info is not None and _INFO.fullmatch(info) else ""
    return f"{fence}{lang}\n{body}\n{fence}"


def html_text(text: str) -> str:
    """``text`` for a place that is read as HTML: ``&``, ``<`` and ``>`` as entities."""
    return html.escape(text, quote=False)


__all__ = ["Markdown", "html_text", "md_code", "md_fence", "md_line", "md_text"]
