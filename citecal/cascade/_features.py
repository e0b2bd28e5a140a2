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
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz

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
)

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


def _parts(text: str) -> set[str]:
    """Lower-cased words and identifier parts (``getUserName`` → get, user, name)."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        out.add(word.lower())
        if "_" in word or not (word.islower() or word.isupper()):
            out.update(part.lower() for part in _CAMEL.findall(word))
    return out


def _share(found: int, total: int, empty: float = 0.5) -> float:
    return found / total if total else empty


_PARTS_CACHE: dict[int, tuple[tuple[str, ...], dict[str, list[int]]]] = {}


def _positions(lines: tuple[str, ...]) -> dict[str, list[int]]:
    """Word/identifier part → the 0-based lines it is on; computed once per file."""
    hit = _PARTS_CACHE.get(id(lines))
    if hit is not None and hit[0] is lines:
        return hit[1]
    where: dict[str, list[int]] = {}
    for n, line in enumerate(lines):
        for part in _parts(line):
            where.setdefault(part, []).append(n)
    if len(_PARTS_CACHE) > 256:  # callers go file by file; keep the newest files
        for key in list(_PARTS_CACHE)[:128]:
            del _PARTS_CACHE[key]
    _PARTS_CACHE[id(lines)] = (lines, where)
    return where


def _window_features(item: FeatureInput, keys: set[str]) -> tuple[float, float]:
    """How much better the best same-sized window of the file matches the claim.

    Natural reports mostly miss by a few lines (README "The cascade"): when a
    window next to the cited one holds clearly more of the claim's words and
    names, the citation is probably misplaced. (gap share, best window elsewhere)
    """
    lines = item.file_lines
    if not lines or not keys or item.start_line < 1 or item.end_line < item.start_line:
        return 0.0, 0.0
    width = item.end_line - item.start_line + 1
    where = _positions(lines)
    hits = [where[k] for k in keys if k in where]
    if not hits:
        return 0.0, 0.0

    def score(lo: int) -> int:
        hi = lo + width
        return sum(
            bisect_left(pos, lo) < len(pos) and pos[bisect_left(pos, lo)] < hi for pos in hits
        )

    cited = score(item.start_line - 1)
    step = max(1, width // 2)
    best, best_at = cited, item.start_line - 1
    for lo in range(0, max(1, len(lines) - width + 1), step):
        value = score(lo)
        if value > best:
            best, best_at = value, lo
    if best <= cited:
        return 0.0, 0.0
    elsewhere = best_at + width <= item.start_line - 1 or best_at >= item.end_line
    return (best - cited) / best, float(elsewhere)


def features(item: FeatureInput) -> NDArray[np.float64]:
    """One row of :data:`FEATURE_NAMES` for ``item``."""
    claim = _CITATION.sub(" ", item.claim)
    code = item.code
    code_low = code.lower()
    context_low = item.context_before.lower()
    names = [n.strip() for n in _BACKTICK.findall(claim) if n.strip()]
    name_keys = [
        re.split(r"[(\s]", n.lower(), maxsplit=1)[0].split(".")[-1] or n.lower() for n in names
    ]
    in_range = sum(k in code_low for k in name_keys)
    in_context = sum(k in code_low or k in context_low for k in name_keys)
    claim_words = [
        w for w in (x.lower() for x in _WORD.findall(claim)) if len(w) > 2 and w not in _STOP
    ]
    code_parts = _parts(code)
    context_parts = code_parts | _parts(item.context_before)
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
        *_window_features(item, set(claim_words) | {k for k in name_keys if k}),
    )
    return np.asarray(row, dtype=np.float64)


def feature_matrix(items: list[FeatureInput]) -> NDArray[np.float64]:
    """Rows of :func:`features`, one per item (shape ``(len(items), len(FEATURE_NAMES))``)."""
    if not items:
        return np.zeros((0, len(FEATURE_NAMES)))
    return np.vstack([features(i) for i in items])


__all__ = ["FEATURE_NAMES", "FeatureInput", "feature_matrix", "features"]
