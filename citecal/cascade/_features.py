"""Offline features of a (claim, cited lines) pair for the local verifier (README "The cascade").

Everything here is computable without a network or a model download, from what
both an evaluation row and a pulled annotation row carry: the claim, the cited
lines, the lines just above them (where an enclosing definition's signature
sits), the rule check's evidence (terms matched and missing, its verdict) and
the claim's mode. The same function feeds training and prediction, so the
shipped model and a team's retrained one see the same columns.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz

from citecal._fork import fork_map

FEATURE_NAMES: tuple[str, ...] = (
    "matched_terms",
    "missing_terms",
    "matched_share",
    "rule_supports",
    "rule_not_supports",
    "rule_undecided",
    "mode_extractive",
    "mode_abstractive",
    "code_names",
    "code_names_in_range",
    "code_names_in_context",
    "word_overlap",
    "word_overlap_context",
    "fuzzy_token_set",
    "numbers",
    "numbers_in_range",
    "negation",
    "quantifier",
    "design_words",
    "claim_words_log",
    "range_lines_log",
    "comment_share",
    "hint_elsewhere",
    "edge_lines_blank",
    "window_gap",
    "best_window_elsewhere",
    # Round 4: where the claim's words are around the range (docs/explanation/cascade.md).
    "outside_near_3",
    "outside_near_8",
    "outside_near_20",
    "rare_words_in_range",
    "rare_words_elsewhere",
    "subject_in_range",
    "subject_above",
    "subject_in_file",
    "next_line_continues",
    "next_line_as_deep",
)
"""The verifier's columns. A model trained on fewer (an older cascade file) reads the columns
it names: names are only ever added here, never renamed or reordered."""

_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?")
_CODE_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_CITATION = re.compile(r"\[[^\[\]\n]{1,300}\]")
_NEGATION = frozenset(["not", "never", "no", "without", "cannot", "neither", "nor", "none"])
_QUANTIFIER = frozenset(["all", "every", "each", "always", "only", "any", "both"])
_DESIGN = frozenset(
    [
        "so",
        "because",
        "purpose",
        "design",
        "designed",
        "intended",
        "allows",
        "lets",
        "ensures",
        "avoid",
        "avoids",
        "rather",
        "instead",
        "keeps",
        "makes",
    ]
)
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "be",
        "this",
        "that",
        "it",
        "its",
        "as",
        "at",
        "which",
        "when",
        "then",
        "than",
        "into",
        "out",
        "if",
        "else",
        "also",
        "can",
        "may",
        "will",
        "would",
        "so",
        "such",
        "these",
        "those",
        "their",
        "there",
        "each",
        "all",
        "any",
        "one",
        "two",
        "has",
        "have",
        "had",
        "does",
        "do",
        "not",
        "no",
        "only",
        "uses",
        "use",
        "using",
        "used",
        "returns",
        "return",
        "function",
        "method",
        "class",
        "value",
        "values",
        "call",
        "calls",
        "called",
        "line",
        "lines",
        "code",
        "file",
    ]
)
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|\"\"\"|''')")


@dataclass(frozen=True, slots=True)
class FeatureInput:
    """What the verifier reads about one citation."""

    claim: str
    code: str
    context_before: str = ""
    mode: str | None = None
    rule_verdict: str | None = None  # the rule check's verdict, unverified when it did not decide
    matched: int = 0
    missing: int = 0
    hint: bool = False  # the rule check saw a missing name elsewhere in the file
    file_lines: tuple[str, ...] | None = None  # the whole cited file, when known
    start_line: int = 0
    end_line: int = 0


_WORD_PARTS: dict[str, tuple[str, ...]] = {}
"""Identifier → its lower-cased parts, memoised: a file's names repeat on many lines."""


def _word_parts(word: str) -> tuple[str, ...]:
    hit = _WORD_PARTS.get(word)
    if hit is None:
        low = word.lower()
        if "_" in word or not (word.islower() or word.isupper()):
            hit = (low, *{part.lower() for part in _CAMEL.findall(word)})
        else:
            hit = (low,)
        if len(_WORD_PARTS) < 500_000:
            _WORD_PARTS[word] = hit
    return hit


def _parts(text: str) -> set[str]:
    """Lower-cased words and identifier parts (``getUserName`` → get, user, name)."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        out.update(_word_parts(word))
    return out


_LINE_PARTS: dict[str, frozenset[str]] = {}
"""A line's text → its parts, memoised: lines such as ``return value`` or ``}`` recur
across a repository's files, and a line is tokenised once per run, not once per file."""


def _text_parts(line: str) -> frozenset[str]:
    hit = _LINE_PARTS.get(line)
    if hit is None:
        hit = frozenset(_parts(line))
        if len(_LINE_PARTS) < 200_000:
            _LINE_PARTS[line] = hit
    return hit


def _share(found: int, total: int, empty: float = 0.5) -> float:
    return found / total if total else empty


class _FileWords:
    """One file's words, tokenised lazily and once: per line, and a key → the lines it is on.

    The window features ask, for a claim's few keys, which lines hold them. A key
    that is a part of a line's words is a substring of the lower-cased line, so
    the lower-cased text is scanned for it (``str.find``, at C speed) and only the
    lines it occurs on are tokenised to confirm (each line at most once per file):
    the cost follows what the claims ask for, not the size of the files.
    """

    __slots__ = ("_line_parts", "_starts", "_text", "_where", "lines")

    def __init__(self, lines: tuple[str, ...]) -> None:
        self.lines = lines
        lowered = [line.lower() for line in lines]
        self._text = "\n".join(lowered)
        starts = [0] * len(lowered)
        at = 0
        for n, line in enumerate(lowered):
            starts[n] = at
            at += len(line) + 1
        self._starts = starts
        self._line_parts: list[frozenset[str] | None] = [None] * len(lines)
        self._where: dict[str, list[int]] = {}

    def line_parts(self, n: int) -> frozenset[str]:
        """The parts of 0-based line ``n``."""
        parts = self._line_parts[n]
        if parts is None:
            parts = self._line_parts[n] = _text_parts(self.lines[n])
        return parts

    def parts(self, lo: int, hi: int) -> set[str]:
        """The parts of lines ``lo..hi`` (1-based, inclusive)."""
        out: set[str] = set()
        for n in range(max(0, lo - 1), min(hi, len(self.lines))):
            out |= self.line_parts(n)
        return out

    def positions(self, key: str) -> list[int]:
        """The 0-based lines whose parts include ``key``, in order."""
        hit = self._where.get(key)
        if hit is not None:
            return hit
        found: list[int] = []
        text, starts = self._text, self._starts
        at = text.find(key) if key else -1
        while at >= 0:
            n = bisect_right(starts, at) - 1
            if key in self.line_parts(n):
                found.append(n)
            if n + 1 >= len(starts):
                break
            at = text.find(key, starts[n + 1])  # the next line: one hit per line is enough
        self._where[key] = found
        return found


_FILE_CACHE: dict[int, _FileWords] = {}


def _file_words(lines: tuple[str, ...]) -> _FileWords:
    """The file's words, kept once per file (the cache is keyed by the tuple's identity)."""
    hit = _FILE_CACHE.get(id(lines))
    if hit is not None and hit.lines is lines:
        return hit
    if len(_FILE_CACHE) > 256:  # callers go file by file; keep the newest files
        for key in list(_FILE_CACHE)[:128]:
            del _FILE_CACHE[key]
    words = _FileWords(lines)
    _FILE_CACHE[id(lines)] = words
    return words


def best_window(
    lines: tuple[str, ...] | None, keys: set[str], start: int, end: int
) -> tuple[int, int, int] | None:
    """(claim keys the cited window holds, most any same-sized window holds, its first line).

    Windows step by half their width over the whole file; None when nothing to compare.
    """
    if not lines or not keys or start < 1 or end < start:
        return None
    width = end - start + 1
    words = _file_words(lines)
    hits = [pos for pos in (words.positions(k) for k in keys) if pos]
    if not hits:
        return None

    # counts[j, i]: lines before i holding key j; a window [lo, lo + width) holds key j when
    # counts[j, lo + width] > counts[j, lo]. Every window at once, in numpy.
    n = len(lines)
    counts = np.zeros((len(hits), n + 1), dtype=np.int32)
    for j, pos in enumerate(hits):
        counts[j, np.asarray(pos, dtype=np.intp) + 1] = 1
    np.cumsum(counts, axis=1, out=counts)

    def held(lo: NDArray[np.intp]) -> NDArray[np.intp]:
        a = np.minimum(lo, n)
        b = np.minimum(lo + width, n)
        out: NDArray[np.intp] = (counts[:, b] > counts[:, a]).sum(axis=0)
        return out

    cited = int(held(np.asarray([start - 1]))[0])
    step = max(1, width // 2)
    values = held(np.arange(0, max(1, n - width + 1), step))
    best, best_at = cited, start - 1
    top = int(values.max())
    if top > cited:
        best, best_at = top, int(np.argmax(values)) * step
    return cited, best, best_at + 1


def claim_keys(claim: str) -> set[str]:
    """The claim's content words and code names, as the window features look for them."""
    text = _CITATION.sub(" ", claim)
    names = [n.strip() for n in _BACKTICK.findall(text) if n.strip()]
    keys = {w for w in (x.lower() for x in _WORD.findall(text)) if len(w) > 2 and w not in _STOP}
    keys.update(k for k in (_name_key(n) for n in names) if k)
    return keys


def _name_key(name: str) -> str:
    low = name.lower()
    return re.split(r"[(\s]", low, maxsplit=1)[0].split(".")[-1] or low


def _window_features(item: FeatureInput, keys: set[str]) -> tuple[float, float]:
    """How much better the best same-sized window of the file matches the claim.

    Natural reports mostly miss by a few lines (README "The cascade"): when a
    window next to the cited one holds clearly more of the claim's words and
    names, the citation is probably misplaced. (gap share, best window elsewhere)
    """
    found = best_window(item.file_lines, keys, item.start_line, item.end_line)
    if found is None:
        return 0.0, 0.0
    cited, best, first = found
    if best <= cited:
        return 0.0, 0.0
    width = item.end_line - item.start_line + 1
    elsewhere = first + width - 1 < item.start_line or first > item.end_line
    return (best - cited) / best, float(elsewhere)


def _code_parts(item: FeatureInput) -> tuple[set[str], set[str]]:
    """The words of the cited lines, and of them with the lines above: from the file's
    per-line words when the item's text is those lines (no second tokenising), else parsed."""
    lines, lo, hi = item.file_lines, item.start_line, item.end_line
    if lines and 1 <= lo <= hi <= len(lines) and item.code == "\n".join(lines[lo - 1 : hi]):
        words = _file_words(lines)
        code = words.parts(lo, hi)
        if not item.context_before:
            return code, set(code)
        above = max(1, lo - item.context_before.count("\n") - 1)
        if item.context_before == "\n".join(lines[above - 1 : lo - 1]):
            return code, code | words.parts(above, lo - 1)
        return code, code | _parts(item.context_before)
    code = _parts(item.code)
    return code, code | _parts(item.context_before)


_BLOCK_START = ("def ", "func ", "fn ", "public ", "private ", "class ", "//", "#", "/*", "*")
_CLOSERS = frozenset(["", "}", "})", ")", "];", "end"])


def _placement_features(
    item: FeatureInput, keys: set[str], subject: str | None, cited: set[str]
) -> tuple[float, ...]:
    """Natural reports recall ranges from memory (docs/explanation/cascade.md): a claim
    whose words sit just outside the range, whose rare words the range lacks, whose
    subject is defined above it, or whose code goes on past its last line is probably
    cited a few lines off."""
    lines, lo, hi = item.file_lines, item.start_line, item.end_line
    if not lines or not keys or not 1 <= lo <= hi <= len(lines):
        return (0.0,) * 10
    words = _file_words(lines)
    where = {x: words.positions(x) for x in keys}

    def within(pos: list[int], a: int, b: int) -> bool:
        """Some 0-based line of ``pos`` is in the 1-based lines ``a..b``."""
        i = bisect_left(pos, a - 1)
        return i < len(pos) and pos[i] <= b - 1

    near = []
    for k in (3, 8, 20):
        a = max(1, lo - k)
        near.append(
            sum(
                x not in cited and (within(p, a, lo - 1) or within(p, hi + 1, hi + k))
                for x, p in where.items()
            )
            / len(keys)
        )
    size = len(lines) + 1
    weight = {x: math.log(size / (1 + len(p))) for x, p in where.items()}
    total = sum(weight.values()) or 1.0
    rare_in = sum(w for x, w in weight.items() if x in cited) / total
    rare_out = sum(w for x, w in weight.items() if x not in cited and where[x]) / total
    if subject:
        spot = where[subject] if subject in where else words.positions(subject)
        subj = (
            float(subject in cited),
            float(within(spot, max(1, lo - 3), lo - 1)),
            float(bool(spot)),
        )
    else:
        subj = (0.5, 0.5, 0.5)
    after = lines[hi].strip() if hi < len(lines) else ""
    goes_on = after not in _CLOSERS and not after.startswith(_BLOCK_START)

    def indent(text: str) -> int:
        return len(text) - len(text.lstrip())

    deep = (
        hi < len(lines) and indent(lines[hi]) >= indent(lines[lo - 1]) and lines[hi].strip() != ""
    )
    return (*near, rare_in, rare_out, *subj, float(goes_on), float(deep))


def features(item: FeatureInput) -> NDArray[np.float64]:
    """One row of :data:`FEATURE_NAMES` for ``item``."""
    claim = _CITATION.sub(" ", item.claim)
    code = item.code
    code_low = code.lower()
    context_low = item.context_before.lower()
    names = [n.strip() for n in _BACKTICK.findall(claim) if n.strip()]
    name_keys = [_name_key(n) for n in names]
    in_range = sum(k in code_low for k in name_keys)
    in_context = sum(k in code_low or k in context_low for k in name_keys)
    claim_words = [
        w for w in (x.lower() for x in _WORD.findall(claim)) if len(w) > 2 and w not in _STOP
    ]
    code_parts, context_parts = _code_parts(item)
    overlap = sum(w in code_parts for w in claim_words)
    overlap_ctx = sum(w in context_parts for w in claim_words)
    numbers = _NUMBER.findall(claim)
    in_code = set(_CODE_NUMBER.findall(code)) if numbers else set()
    numbers_found = sum(n in in_code for n in numbers)
    tokens = {w.lower() for w in _WORD.findall(claim)}
    lines = code.splitlines() or [""]
    comments = sum(bool(_COMMENT.match(line)) for line in lines)
    rule = item.rule_verdict or "unverified"
    total_terms = item.matched + item.missing
    keys = set(claim_words) | {k for k in name_keys if k}
    row = (
        float(item.matched),
        float(item.missing),
        _share(item.matched, total_terms),
        float(rule == "supports"),
        float(rule == "not_supports"),
        float(rule not in ("supports", "not_supports")),
        float(item.mode == "extractive"),
        float(item.mode == "abstractive"),
        float(len(names)),
        _share(in_range, len(names), 1.0),
        _share(in_context, len(names), 1.0),
        _share(overlap, len(claim_words)),
        _share(overlap_ctx, len(claim_words)),
        fuzz.token_set_ratio(claim.lower(), code_low[:1500]) / 100.0,
        float(len(numbers)),
        _share(numbers_found, len(numbers), 1.0),
        float(bool(tokens & _NEGATION)),
        float(bool(tokens & _QUANTIFIER)),
        float(bool(tokens & _DESIGN)),
        math.log1p(len(claim_words)),
        math.log1p(len(lines)),
        comments / len(lines),
        float(item.hint and item.missing > 0),
        float(not lines[0].strip().strip("{}();")) + float(not lines[-1].strip().strip("{}();")),
        *_window_features(item, keys),
        *_placement_features(item, keys, name_keys[0] if name_keys else None, code_parts),
    )
    return np.asarray(row, dtype=np.float64)


def feature_matrix(items: list[FeatureInput], workers: int = 1) -> NDArray[np.float64]:
    """Rows of :func:`features`, one per item (shape ``(len(items), len(FEATURE_NAMES))``).

    ``workers`` > 1 computes them in forked processes, in contiguous slices (callers
    pass items file by file, so each file's words are indexed by one process).
    """
    if not items:
        return np.zeros((0, len(FEATURE_NAMES)))
    return np.vstack(fork_map(features, items, workers))


__all__ = [
    "FEATURE_NAMES",
    "FeatureInput",
    "best_window",
    "claim_keys",
    "feature_matrix",
    "features",
]
