"""The labels judge: a judge that is always right, answering from people's labels.

README "Ground truth" (``--judge labels``): with this judge the local
OpenAI-protocol server (:class:`~citecal.testing.FakeOpenAIServer`) answers
every claim of a citecal judge prompt from the ground-truth labels instead of
a model, so a benchmark's remaining misses are the pipeline's (retrieval,
strategy, bookkeeping), never the judge's.

The rule: a citation people labelled (this claim at exactly this range) is
answered with their label (score >= 2: supports). Any other range **supports**
the claim when it overlaps (same file, intersecting lines) a range people said
supports that claim — the citation of a label of that claim with a score >= 2,
or the ``correct`` location of a label of that claim. Anything else is "not
supports". (A range a few lines off that people scored 1 overlaps its own
support: the label decides it, not the overlap.)

The claim in a prompt is the claim citecal extracted, which differs from the
label's hand-copied text by punctuation, case and sometimes a leading clause:
a claim finds its labels by normalised equality, else containment, else the
best word overlap of at least :data:`MIN_OVERLAP`, else the label most of whose
words it holds (:data:`MIN_COVER`, clearly ahead of the next). A claim no label matches is
answered "not supports" with low confidence and counted in
:attr:`LabelsJudge.unmatched`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citecal.testing.openai_server import ChatRequest, PromptClaim, Reply

if TYPE_CHECKING:
    from citecal.bench import GroundTruth

MIN_OVERLAP = 0.6
"""Jaccard overlap of words above which a prompt's claim is a label's claim."""

MIN_COVER = 0.7
"""Else: share of a label's words in the prompt's claim above which it is that label's claim."""

_CITATION_RE = re.compile(r"\[(?P<path>[^\[\]]+):(?P<start>-?[0-9]+)(?:-(?P<end>-?[0-9]+))?\]")
_WORD_RE = re.compile(r"[a-z0-9_]+")


def normalise_claim(text: str) -> str:
    """Lower-cased, markup and punctuation dropped, whitespace collapsed."""
    return " ".join(_WORD_RE.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class SupportRange:
    """A range people said supports a claim."""

    file_path: str
    start_line: int
    end_line: int

    def overlaps(self, path: str, start: int, end: int) -> bool:
        lo, hi = min(start, end), max(start, end)
        return path == self.file_path and lo <= self.end_line and self.start_line <= hi


@dataclass(frozen=True, slots=True)
class LabelledClaim:
    """One claim of the ground truth and every range people said supports it."""

    claim: str
    ranges: tuple[SupportRange, ...]
    labelled: tuple[tuple[str, int, int, bool], ...] = ()
    """(path, start, end, supports) of the citations people labelled for this claim."""


def parse_citation(text: str) -> tuple[str, int, int] | None:
    """``(path, start, end)`` of ``[path:start-end]`` (reversed or zero lines kept as written)."""
    m = _CITATION_RE.search(text)
    if m is None:
        return None
    start = int(m.group("start"))
    return m.group("path").strip(), start, int(m.group("end") or start)


class LabelsJudge:
    """Answers judge prompts from labelled claims (a ``handler`` for FakeOpenAIServer)."""

    def __init__(self, claims: Iterable[LabelledClaim]) -> None:
        merged: dict[str, set[SupportRange]] = {}
        self.labelled: dict[tuple[str, str, int, int], bool] = {}
        for c in claims:
            key = normalise_claim(c.claim)
            merged.setdefault(key, set()).update(c.ranges)
            for path, start, end, supports in c.labelled:
                self.labelled[(key, path, start, end)] = supports
        self.claims = {
            k: tuple(sorted(v, key=lambda r: (r.file_path, r.start_line)))
            for k, v in merged.items()
        }
        self._words = {k: frozenset(k.split()) for k in self.claims}
        self._lock = threading.Lock()
        self.answered = 0
        self.unmatched = 0

    @classmethod
    def from_groundtruth(cls, sets: Iterable[GroundTruth]) -> LabelsJudge:
        """Every label of ``sets``: its citation when people scored it >= 2, its ``correct``."""
        claims: list[LabelledClaim] = []
        for truth in sets:
            for label in truth.labels.citations:
                ranges: list[SupportRange] = []
                if label.human_score >= 2:
                    path, start, end, _ = label.key
                    ranges.append(SupportRange(path, min(start, end), max(start, end)))
                if label.correct is not None:
                    c = label.correct
                    ranges.append(SupportRange(c.file_path, c.start_line, c.end_line))
                path, start, end, _ = label.key
                labelled = ((path, start, end, label.human_score >= 2),)
                claims.append(LabelledClaim(label.claim, tuple(ranges), labelled))
        return cls(claims)

    def matching(self, claim: str) -> list[str]:
        """The labelled claims (normalised) that ``claim`` is; empty when none matches."""
        key = normalise_claim(claim)
        if key in self.claims:
            return [key]
        if len(key) >= 20:
            inside = [k for k in self.claims if len(k) >= 20 and (key in k or k in key)]
            if inside:
                return inside
        words = frozenset(key.split())
        best, best_score = None, 0.0
        for k, other in self._words.items():
            union = len(words | other)
            score = len(words & other) / union if union else 0.0
            if score > best_score:
                best, best_score = k, score
        if best is not None and best_score >= MIN_OVERLAP:
            return [best]
        # A claim citecal extracted with a clause the label left out: most of the label's
        # words are in it, and clearly more than of any other label's.
        cover = sorted(
            ((len(words & other) / len(other), k) for k, other in self._words.items() if other),
            reverse=True,
        )
        if (
            cover
            and cover[0][0] >= MIN_COVER
            and (len(cover) == 1 or cover[0][0] - cover[1][0] >= 0.2)
        ):
            return [cover[0][1]]
        return []

    def verdict(self, claim: str, citation: str) -> dict[str, Any]:
        """The answer for one claim cited at ``citation`` (``[path:start-end]``)."""
        keys = self.matching(claim)
        where = parse_citation(citation)
        with self._lock:
            self.answered += 1
            self.unmatched += not keys
        if not keys or where is None:
            why = "no label for this claim" if not keys else "no citation in the prompt"
            return {"reasoning": why, "supports": False, "confidence": "low", "score": 0.5}
        path, start, end = where
        for key in keys:
            said = self.labelled.get((key, path, start, end))
            if said is not None:
                return {
                    "reasoning": "people labelled this citation: "
                    + ("supported" if said else "not supported"),
                    "supports": said,
                    "confidence": "high",
                    "score": 1.0 if said else 0.0,
                    "mode": "abstractive",
                }
        ranges = [r for key in keys for r in self.claims[key]]
        hit = next((r for r in ranges if r.overlaps(path, start, end)), None)
        if hit is not None:
            reasoning = f"people said {hit.file_path}:{hit.start_line}-{hit.end_line} supports it"
        else:
            reasoning = (
                "people said "
                + (
                    ", ".join(f"{r.file_path}:{r.start_line}-{r.end_line}" for r in ranges)
                    or "nothing"
                )
                + " supports it"
            )
        return {
            "reasoning": reasoning,
            "supports": hit is not None,
            "confidence": "high",
            "score": 1.0 if hit is not None else 0.0,
            "mode": "abstractive",
        }

    def content(self, request: ChatRequest) -> str:
        """The answer text for a whole judge request (single or batch)."""
        claims: list[PromptClaim] = request.claims
        rf = request.response_format or {}
        schema_name = str(rf.get("json_schema", {}).get("name", "")) if rf else ""
        if not (request.is_batch or "batch" in schema_name):
            c = claims[0] if claims else PromptClaim(1, "", "")
            return json.dumps(self.verdict(c.claim, c.citation))
        items = [{"claim_id": c.n, **self.verdict(c.claim, c.citation)} for c in claims]
        return json.dumps({"results": items} if rf else items)

    def __call__(self, request: ChatRequest) -> Reply:
        return Reply(content=self.content(request))


__all__ = [
    "MIN_OVERLAP",
    "LabelledClaim",
    "LabelsJudge",
    "SupportRange",
    "normalise_claim",
    "parse_citation",
]
