"""Text as a model reads it: the views the injection screen looks at (README "Security").

A model reads through what a pattern over raw characters does not: full-width
and mathematical letters, Cyrillic and Greek look-alikes (``аnswеr`` with a
Cyrillic ``а`` and ``е``), characters that render as nothing (zero-widths, the
combining grapheme joiner U+034F, the Mongolian vowel separator U+180E, bidi
controls, variation selectors), Unicode tag characters (U+E0020–E007E spell
ASCII invisibly: "ASCII smuggling"), accents, leetspeak (``1gn0r3``), and text
encoded as base64, hex, rot13, ``\\x69``/``&#105;``/``%69`` escapes, or split
over comment lines and string literals. :func:`views` returns one string
holding every reading of a text, each folded the same way (:func:`fold`), so one
set of patterns written in plain lower-case words recognises all of them.

The confusable letters come from Unicode's confusables data as shipped by the
``confusable-homoglyphs`` package (read from the installed package, never
downloaded): a character whose listed look-alike is one ASCII letter or digit is
folded to it. Chinese, Japanese and Korean characters are not folded (the table
pairs some of them with Latin shapes), so patterns in those languages still see
their own script. Pure functions.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources
from urllib.parse import unquote

import regex

# Characters that render as nothing, or nearly: every format character (Cf: zero-widths,
# bidi controls, U+180E, the tag block U+E0000–E007F, soft hyphen, word joiner, BOM), the
# combining grapheme joiner, Hangul and Khmer fillers, variation selectors.
_INVISIBLE = regex.compile(
    r"[\p{Cf}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\uffa0"
    r"\ufe00-\ufe0f\U000e0100-\U000e01ef]"
)
_MARKS = regex.compile(r"\p{Mn}+")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x9FFF),  # CJK radicals, kana, CJK unified ideographs, Hangul compatibility
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # half- and full-width forms (NFKC handles them)
    (0x20000, 0x3FFFF),  # CJK extensions
)


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str]:
    """Non-ASCII character → the ASCII letter or digit it looks like (Unicode confusables)."""
    data = json.loads(
        resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    )
    table: dict[int, str] = {}
    for char, glyphs in data.items():
        if len(char) != 1 or char.isascii() or _is_cjk(ord(char)):
            continue
        for g in glyphs:
            c = g.get("c", "")
            if len(c) == 1 and c.isascii() and c.isalnum():
                table[ord(char)] = c.lower()
                break
    return table


def fold(text: str) -> str:
    """``text`` as the patterns compare it: NFKC, nothing invisible, lower case, no accents,
    confusable letters as the ASCII letters they look like."""
    if text.isascii():
        return text.lower()
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).lower()
    text = unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFD", text)))
    return text.translate(_fold_table()).lower()


# ---------------------------------------------------------------------------- readings

# Comment and docstring leaders at a line start; string literal boundaries between pieces
# ("ignore previous " "instructions", 'a' + 'b', "x" \ "y"); escape sequences as text.
_COMMENT_LEADER = re.compile(
    r"^[ \t]*(?:#+|//+|/\*+|\*+/?|--+|;+|%+|<!--|-->|'''|\"\"\"|rem\b|::)[ \t]?", re.M
)
_LITERAL_JOIN = re.compile(r"[\"'`]\s*(?:[+.,&\\]|\.\.|\|\|)?\s*[\"'`]")
_ESCAPED_WS = re.compile(r"\\[nrt]")
_NOISE = re.compile(r"[\"'`*~|>]+")
_WS = re.compile(r"\s+")


def prose(text: str) -> str:
    """Folded ``text`` as one line of words: comment leaders, literal boundaries and quotes
    gone, so a phrase split over comment lines or string pieces reads as one phrase."""
    text = _COMMENT_LEADER.sub(" ", text)
    text = _LITERAL_JOIN.sub(" ", text)
    text = _ESCAPED_WS.sub(" ", text)
    text = _NOISE.sub(" ", text)
    return _WS.sub(" ", text).strip()


_LEET_TOKEN = re.compile(
    r"\b(?=[a-z0-9@$!|+]*[a-z])(?=[a-z0-9@$!|+]*[0134578@$!|+])[a-z0-9@$!|+]{3,}"
)
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s",
     "!": "i", "|": "l", "+": "t"}
)  # fmt: skip


def _leet(text: str) -> str | None:
    if not _LEET_TOKEN.search(text):
        return None
    return _LEET_TOKEN.sub(lambda m: m.group(0).translate(_LEET), text)


_ROT13 = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)

_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"\b(?:[0-9a-fA-F]{2}[ :]?){10,}")
_ESCAPES = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3})")
_ENTITY_OR_PERCENT = re.compile(r"&#?\w+;|%[0-9a-fA-F]{2}")
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_·]){3,}[^\W\d_](?![^\W\d_])")


def _readable(raw: bytes) -> str | None:
    """Decoded bytes when they read as text in some language, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    letters = sum(ch.isalpha() for ch in text)
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    if len(text) < 4 or printable < 0.95 * len(text) or letters < 0.5 * len(text.replace(" ", "")):
        return None
    return text


def decoded_runs(text: str) -> list[str]:
    """Base64 and hex runs of ``text`` that decode to readable text."""
    out: list[str] = []
    for m in _B64_RUN.finditer(text):
        run = m.group(0)
        if run.isalpha() and (run.islower() or run.isupper()):
            continue  # a plain word or identifier, not an encoding
        pad = "=" * (-len(run.rstrip("=")) % 4)
        for decoder in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                raw = decoder(run.rstrip("=") + pad)
            except (binascii.Error, ValueError):
                continue
            got = _readable(raw)
            if got is not None:
                out.append(got)
                break
    for m in _HEX_RUN.finditer(text):
        try:
            raw = bytes.fromhex(re.sub(r"[ :]", "", m.group(0)))
        except ValueError:
            continue
        got = _readable(raw)
        if got is not None:
            out.append(got)
    return out


def _unescaped(text: str) -> str | None:
    if not (_ESCAPES.search(text) or _ENTITY_OR_PERCENT.search(text)):
        return None

    def one(m: re.Match[str]) -> str:
        try:
            return codecs.decode(m.group(0), "unicode_escape")
        except UnicodeDecodeError:
            return m.group(0)

    out = _ESCAPES.sub(one, text)
    out = html.unescape(out)
    return unquote(out)


def hidden_readings(text: str) -> list[str]:
    """What ``text`` says besides its plain reading (tags, escapes, encodings), unfolded."""
    out: list[str] = []
    tags = _TAGS.findall(text)
    if tags:
        out.append(" ".join("".join(chr(ord(c) - 0xE0000) for c in t) for t in tags))
    unescaped = _unescaped(text)
    if unescaped is not None:
        out.append(unescaped)
    out.extend(decoded_runs(text))
    return out


def readings(text: str) -> tuple[str, str]:
    """Every reading of ``text`` (see the module doc): ``(prose, lines)``.

    ``prose`` holds one line per reading (plain, decoded, leetspeak, letter-spaced,
    rot13), each folded and made one line of words; ``lines`` the folded plain and
    decoded readings with their line structure, for patterns about lines
    (``## system``).
    """
    plain = fold(text)
    hidden = [fold(h) for h in hidden_readings(text)]
    prosed = [prose(plain), *(prose(h) for h in hidden)]
    first = prosed[0]
    leet = _leet(first)
    if leet is not None and leet != first:
        prosed.append(leet)
    spaced = _SPACED.sub(lambda m: re.sub(r"[ .\-_·]", "", m.group(0)), plain)
    if spaced != plain:
        prosed.append(prose(spaced))
    prosed.append(first.translate(_ROT13))
    return "\n".join(prosed), "\n".join([plain, *hidden])


def suspicious(text: str) -> str | None:
    """Why ``text`` hides something from a reader, or None: it is sent to the judge alone.

    Invisible or tag characters, a word mixing scripts (look-alike letters), or an
    encoded run that decodes to readable text. None of these is an instruction by
    itself; the screen's patterns look for those in every reading (:func:`views`).
    """
    if text.isascii():
        return "an encoded run decodes to text" if decoded_runs(text) else None
    if _INVISIBLE.search(text.lstrip("\ufeff")):
        return "invisible characters"
    nfkc = unicodedata.normalize("NFKC", text)
    table = _fold_table()
    for word in re.findall(r"[^\W\d_]{2,}", nfkc):
        if any(c.isascii() for c in word) and any(ord(c) in table for c in word):
            return f"a word mixing scripts ({word!r})"
    if decoded_runs(text):
        return "an encoded run decodes to text"
    return None


__all__ = ["decoded_runs", "fold", "hidden_readings", "prose", "readings", "suspicious"]
