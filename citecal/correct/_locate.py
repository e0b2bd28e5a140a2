"""Where is a claim's support? Candidate locations, ranked and verified (relocate, expand, shrink).

A failed citation's claim is turned into a query: the code names it gives
(code spans, identifiers; the same ones verification requires, README
"Routing"), its other strong terms (quoted strings, numbers, code
expressions) and its words. Candidate chunks come from the repository index
(:class:`~citecal.correct.RepoIndex`): chunks that use one of the names, the
chunks of definitions with one of the names, the best BM25 chunks, and the
chunks around the original citation. Each is ranked by how much of the
claim's named code it holds, its BM25 score, whether it *is* the definition
the claim names, and its closeness to the original citation.

Inside each of the best chunks the loop cites the smallest window that holds
every strong term found there (the names of enclosing definitions count, as
they do in verification), and falls back to the whole chunk. Every window is
checked by the same verifier as ``citecal eval``
(:func:`citecal.verify.verify_extractive`): a candidate is **accepted** when
the rules say ``supports``, or when they leave it to the judge with every
named term found there and at least the original's term score (with a judge,
the judge must then say ``supports``). Nothing else is ever proposed: a claim
that names no code cannot be placed by rules, and gets no location without a
judge (README "`citecal correct`": never invent a location).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from citecal.config import Config
from citecal.correct._index import Chunk, RepoIndex, query_words, token_words
from citecal.correct._query import (
    _NAME_RE,
    _SPLIT_RE,
    MIN_LITERAL,
    ClaimQuery,
    _last,
    _norm,
    claim_query,
    is_name,
    term_weight,
)
from citecal.correct._semantic import SemanticRanker, fuse
from citecal.models import Citation, Verdict
from citecal.verify import ClaimTerm, parse_claim, verify_extractive
from citecal.verify._extractive import TERM_WEIGHTS

MAX_POSTINGS = 400
"""A name used in more chunks than this does not *generate* candidates (it still ranks them)."""
BM25_CANDIDATES = 30
CHECKED_CHUNKS = 10
NEAR_LINES = 30
MAX_DEFINITION_LINES = 80
JUDGED_EXTRA = 5
"""With a judge and no place the rules accept, the best-ranked places it is asked about."""
AMBIGUITY_MARGIN = 0.05
"""Without a judge, a best place ranked less than this above the next is not chosen."""

JudgeCheck = Callable[[str, Sequence[tuple[Citation, str, Verdict]]], list[Verdict | None]]
"""Asks the judge about (location, cited code, rule verdict) candidates of one claim."""


_GENERATED_DIRS = frozenset(
    {"dist", "build", "vendor", "node_modules", "third_party", "target", "out"}
)
_GENERATED_SUFFIXES = (".min.js", ".d.ts", ".d.cts", ".d.mts", ".bundle.js", ".cjs")
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "testdata", "testing", "benches"})
_TEST_FILE = re.compile(
    r"^(?:test_.*\.py|.*_test\.(?:py|go|rs)|.*\.(?:test|spec)\.[jt]sx?|.*Tests?\.java)$"
)


def path_role(path: str) -> str:
    """``generated`` (bundles, builds, type stubs), ``test`` or ``source``, from the path alone.

    A report about a library is almost always about its source: a built
    bundle repeats the source's names verbatim and a test names them too, so
    both rank below the source unless the original citation was there.
    """
    parts = path.lower().split("/")
    name = parts[-1]
    if _GENERATED_DIRS.intersection(parts[:-1]) or name.endswith(_GENERATED_SUFFIXES):
        return "generated"
    if _TEST_DIRS.intersection(parts[:-1]) or _TEST_FILE.match(path.rsplit("/", 1)[-1]):
        return "test"
    return "source"


_ROLE_PENALTY = {"generated": 1.5, "test": 1.2, "source": 0.0}


_TYPE_KINDS = frozenset({"class", "struct", "enum", "interface", "type", "trait"})


SHARED_DEFINITIONS = 3
"""A name defined in more places than this (``toString``, ``__init__``) says less about which."""


def definition_share(index: RepoIndex, chunk: Chunk, names: Sequence[ClaimTerm]) -> float:
    """How much being *the* definition of a claimed name counts: 1, less when many share it.

    "`toString`" names one of thirty ``toString`` methods in a Java library:
    each of them being that definition is weak evidence, and the boost shrinks
    as ``SHARED_DEFINITIONS / n`` so that the claim's other words decide. A
    qualified name (`AxiosHeaders.from`, `VersionReq::parse`) whose qualifier is
    a definition around the chunk, or the chunk's file, names that one.
    """
    assert chunk.name is not None
    key = _norm(chunk.name)
    qualifiers = {
        _norm(_last(q)) for t in names if _norm(_last(t.text)) == key and (q := _qualifier(t.text))
    }
    if qualifiers:
        around = _enclosing_names(index, chunk.path, chunk.start_line, chunk.start_line)
        stem = _norm(chunk.path.rsplit("/", 1)[-1].split(".", 1)[0])
        if qualifiers & (around | {stem}):
            return 1.0
    n = len(index.definitions_named(chunk.name))
    return 1.0 if n <= SHARED_DEFINITIONS else SHARED_DEFINITIONS / n


def _qualifier(name: str) -> str | None:
    """``AxiosHeaders`` of ``AxiosHeaders.from`` (None for a plain name)."""
    parts = _SPLIT_RE.split(name)
    return parts[-2] if len(parts) > 1 else None


_OVERLOAD = re.compile(r"^\s*@(?:[\w.]+\.)?overload\b")


def is_overload_stub(index: RepoIndex, chunk: Chunk) -> bool:
    """The chunk is a Python ``@overload`` signature (a typing stub, not the code)."""
    if not chunk.path.endswith((".py", ".pyi")):
        return False
    # The chunk starts at its decorators, or at the ``def`` right below them.
    above = index.files[chunk.path].symbols.lines(max(1, chunk.start_line - 3), chunk.start_line)
    return any(_OVERLOAD.match(line) for line in above)


def _is_type_chunk(index: RepoIndex, cid: int) -> bool:
    """The chunk is the declaration of a type (a class, struct, enum...)."""
    chunk = index.chunks[cid]
    symbols = index.files[chunk.path].symbols
    return any(
        d.kind in _TYPE_KINDS and d.start_line == chunk.start_line
        for d in symbols.definitions_in(chunk.start_line, chunk.start_line + 2)
    )


@dataclass(frozen=True, slots=True)
class Found:
    """A verified candidate location for a claim."""

    location: Citation
    verdict: Verdict
    rank: float
    accepted: bool
    via: str
    """What proposed it: ``name`` (a chunk using a claimed name), ``definition``, ``bm25``,
    ``near`` (around the original citation)."""

    @property
    def decided(self) -> bool:
        """Rules or judge say supports (else the judge has yet to decide)."""
        return self.verdict.verdict == "supports"


@dataclass
class _Ranked:
    chunk: int
    score: float
    via: str
    present: set[int] = field(default_factory=set)


def _term_lines(index: RepoIndex, path: str, term: ClaimTerm, lo: int, hi: int) -> list[int]:
    """Lines of ``path`` in ``lo..hi`` holding ``term`` (names as whole tokens)."""
    symbols = index.files[path].symbols
    if term.kind in ("code_span", "identifier") and _NAME_RE.fullmatch(term.text):
        lines = symbols.lines_with(term.text) or symbols.lines_with(_last(term.text))
        a, b = bisect.bisect_left(lines, lo), bisect.bisect_right(lines, hi)
        return lines[a:b]
    needle = "".join(term.text.lower().split())
    if not needle:
        return []
    out = []
    for n, line in enumerate(symbols.lines(lo, hi), lo):
        if needle in "".join(line.lower().split()):
            out.append(n)
    return out


def _enclosing_names(index: RepoIndex, path: str, lo: int, hi: int) -> set[str]:
    """Normalised names of definitions that hold the whole of ``lo..hi``."""
    symbols = index.files[path].symbols
    return {_norm(d.name) for d in symbols.enclosing_definitions(lo) if d.end_line >= hi} | {
        _norm(d.name) for d in symbols.definitions_in(lo, lo)
    }


def smallest_window(
    index: RepoIndex, path: str, lo: int, hi: int, query: ClaimQuery
) -> tuple[int, int] | None:
    """The shortest stretch of ``lo..hi`` holding every strong term found there.

    Names of the definitions enclosing ``lo..hi`` need no line of their own:
    verification counts an enclosing definition as found (the method around
    cited lines). None when no strong term is in the stretch.
    """
    covered = _enclosing_names(index, path, lo, hi)
    events: list[tuple[int, int]] = []
    colours = 0
    for k, term in enumerate(query.strong):
        if is_name(term) and _norm(_last(term.text)) in covered:
            continue
        lines = _term_lines(index, path, term, lo, hi)
        if lines:
            colours += 1
            events.extend((n, k) for n in lines)
    if not colours:
        return None
    events.sort()
    best: tuple[int, int] | None = None
    counts: dict[int, int] = {}
    left = 0
    for right in range(len(events)):
        counts[events[right][1]] = counts.get(events[right][1], 0) + 1
        while len(counts) == colours:
            span = (events[left][0], events[right][0])
            if best is None or span[1] - span[0] < best[1] - best[0]:
                best = span
            k = events[left][1]
            counts[k] -= 1
            if not counts[k]:
                del counts[k]
            left += 1
    if best is None:
        return None
    # A window that holds a named definition's name line cites the definition
    # whole ("`save` serialises items": the method, not its `def` line).
    a, b = best
    names = {_norm(_last(t.text)) for t in query.locators}
    for d in index.files[path].symbols.definitions_in(a, b):
        if _norm(d.name) in names and d.end_line - d.start_line < MAX_DEFINITION_LINES:
            a, b = min(a, max(lo, d.start_line)), max(b, min(hi, d.end_line))
    return a, b


class Locator:
    """Finds and verifies candidate locations for failed citations in one repository."""

    def __init__(
        self, index: RepoIndex, config: Config, semantic: SemanticRanker | None = None
    ) -> None:
        self.index = index
        self.config = config
        self.semantic = semantic

    def verify_at(self, claim: str, location: Citation) -> Verdict:
        """The rules' verdict for ``claim`` at ``location`` (as ``citecal eval`` decides it)."""
        entry = self.index.files[location.file_path]
        code = entry.source.lines(location.start_line, location.end_line)
        return verify_extractive(
            claim,
            code,
            location.start_line,
            location.end_line,
            entry.symbols,
            self.config.extractive,
            entry.source.lines,
            ignore_names=self.index.ignored_names(location.file_path),
        )

    def _fused(self, claim: str, found: list[Found]) -> list[Found]:
        """``found`` re-ordered by the fusion of its lexical ranks and semantic similarity."""
        assert self.semantic is not None
        sims = self.semantic.similarities(claim, [self.cited_code(f.location) for f in found])
        fused = fuse([f.rank for f in found], sims)
        order = sorted(range(len(found)), key=lambda i: -fused[i])
        return [found[i] for i in order]

    def _defined(self, location: Citation, documented: bool = False) -> set[str]:
        """Normalised names of definitions in ``location`` or enclosing it.

        ``documented``: the claim is about documentation ("the documented failure
        cases of `parse`"), so a range ending right above a definition (its doc
        comment) counts as that definition too.
        """
        symbols = self.index.files[location.file_path].symbols
        end = location.end_line + (1 if documented else 0)
        inside = {
            _norm(d.name)
            for d in symbols.definitions_in(location.start_line, end)
            if d.start_line <= end
        }
        return inside | _enclosing_names(
            self.index, location.file_path, location.start_line, location.end_line
        )

    def _around(self, location: Citation, query: ClaimQuery) -> frozenset[str]:
        """The claim's names that are definitions enclosing ``location``."""
        held = _enclosing_names(
            self.index, location.file_path, location.start_line, location.end_line
        )
        return frozenset(t.text for t in query.locators if _norm(_last(t.text)) in held)

    def cited_code(self, location: Citation) -> str:
        return self.index.files[location.file_path].source.lines(
            location.start_line, location.end_line
        )

    # ------------------------------------------------------------------ ranking

    def rank(
        self, query: ClaimQuery, original: Citation | None, limit: int = CHECKED_CHUNKS
    ) -> list[_Ranked]:
        """The chunks most likely to hold the claim's support, best first."""
        index = self.index
        sets: list[set[int]] = []
        candidates: dict[int, str] = {}
        for term in query.strong:
            if is_name(term):
                used = index.chunks_using(term.text)
                sets.append(used)
                if len(used) <= MAX_POSTINGS:
                    for cid in used:
                        candidates.setdefault(cid, "name")
                for path, d in index.definitions_named(term.text):
                    at = index.chunk_at(path, d.name_line)
                    if at is not None:
                        candidates[at] = "definition"
            else:
                sets.append(set())
        scores = index.bm25_scores(query.words)
        top = float(scores.max()) if len(scores) else 0.0
        if top > 0:
            for cid in np.argsort(-scores)[:BM25_CANDIDATES]:
                if scores[cid] > 0:
                    candidates.setdefault(int(cid), "bm25")
        orig_file = original.file_path if original is not None else None
        if original is not None and orig_file in index.files:
            entry = index.files[orig_file]
            lo, hi = original.start_line - NEAR_LINES, original.end_line + NEAR_LINES
            for cid in entry.chunk_ids:
                c = index.chunks[cid]
                if c.end_line >= lo and c.start_line <= hi:
                    candidates.setdefault(cid, "near")
        orig_base = orig_file.rsplit("/", 1)[-1].lower() if orig_file else None
        orig_role = path_role(orig_file) if orig_file else "source"
        roles: dict[str, float] = {}
        name_norms = {_norm(_last(t.text)) for t in query.locators}
        # The first name a claim gives is usually what it is about ("`getAdapter` throws
        # `AxiosError`"): its definition is the likely place, the others' much less so.
        subject = query.subject
        raising = query.raising
        ranked: list[_Ranked] = []
        weight = query.weight
        for cid, via in candidates.items():
            chunk = index.chunks[cid]
            present: set[int] = set()
            enclosing: set[str] | None = None
            got = 0.0
            for k, term in enumerate(query.strong):
                hit = cid in sets[k] if is_name(term) else False
                if not hit and is_name(term):
                    if enclosing is None:
                        enclosing = _enclosing_names(
                            index, chunk.path, chunk.start_line, chunk.end_line
                        )
                    hit = _norm(_last(term.text)) in enclosing
                if not hit and not is_name(term):
                    hit = bool(
                        _term_lines(index, chunk.path, term, chunk.start_line, chunk.end_line)
                    )
                if hit:
                    present.add(k)
                    got += term_weight(term)
            score = 3.0 * got / weight if query.strong else 0.0
            score += scores[cid] / top if top > 0 else 0.0
            if chunk.name is not None and _norm(chunk.name) in name_norms:
                if raising and chunk.kind == "definition" and _is_type_chunk(index, cid):
                    score -= 0.5  # "raises `X`": where X is raised, not where it is declared
                else:
                    boost = 0.8 if _norm(chunk.name) == subject else 0.15
                    score += boost * definition_share(index, chunk, query.locators)
            elif enclosing and enclosing & name_norms:
                score += 0.3 if subject in enclosing else 0.1
            if orig_file is not None and chunk.path == orig_file:
                score += 0.3
                if original is not None and (
                    chunk.end_line >= original.start_line - NEAR_LINES
                    and chunk.start_line <= original.end_line + NEAR_LINES
                ):
                    score += 0.2
            elif orig_base and chunk.path.rsplit("/", 1)[-1].lower() == orig_base:
                score += 0.3
            penalty = roles.get(chunk.path)
            if penalty is None:
                role = path_role(chunk.path)
                penalty = roles[chunk.path] = 0.0 if role == orig_role else _ROLE_PENALTY[role]
            if penalty >= _ROLE_PENALTY["generated"]:
                continue  # a bundle or type stub restates the source: never a new target
            if chunk.kind == "definition" and is_overload_stub(index, chunk):
                continue  # an `@overload` signature is a stub too: its implementation follows
            score -= penalty
            ranked.append(_Ranked(cid, score, via, present))
        ranked.sort(key=lambda r: (-r.score, index.chunks[r.chunk].lines, r.chunk))
        return ranked[:limit]

    # ------------------------------------------------------------------ candidates

    def acceptable(
        self,
        verdict: Verdict,
        query: ClaimQuery,
        floor: float,
        judge: bool,
        around: frozenset[str] = frozenset(),
    ) -> bool:
        """Rules say supports; or they leave it open with every named term found (see module).

        ``around``: the claim's names that are definitions enclosing the location; they
        count as found, as in verification (README "Routing": the method around cited
        lines), also when the rules decided from tokens alone and list them as missing.
        """
        if verdict.verdict == "supports":
            return True
        if verdict.verdict != "unverified" or not query.strong:
            return False
        missing = {t.lower() for t in verdict.missing_terms}
        if any(t.text.lower() in missing for t in query.names if t.text not in around):
            return False
        if not judge and not query.names:
            # No named code: only a distinctive literal the claim quotes (`X-Forwarded-For`,
            # `b"itsdangerous"`), found there with every other strong term, places it.
            literal = [t for t in query.strong if not is_name(t) and len(t.text) >= MIN_LITERAL]
            if not literal or any(t.text.lower() in missing for t in query.strong):
                return False
        return (verdict.score or 0.0) >= floor

    def repair(
        self,
        claim: str,
        original: Citation,
        *,
        judge: JudgeCheck | None = None,
    ) -> tuple[Found | None, list[Found]]:
        """The first nearby repaired range that verifies, and every range checked.

        README "`citecal correct`" (repair): the ranges of
        :func:`~citecal.correct._repair.repair_candidates`, in their order, each
        verified as :meth:`locate` verifies a candidate (rules; with a judge, the
        ranges the rules leave open are asked in one request). The first accepted
        one wins: it is the range most faithful to what the author wrote.
        """
        from citecal.correct._repair import repair_candidates

        entry = self.index.files.get(original.file_path)
        if entry is None:
            return None, []
        query = claim_query(claim, self.index.project)
        if not query.strong and judge is None:
            return None, []
        named = frozenset(_last(t.text).lower() for t in query.locators)
        candidates = repair_candidates(
            original, entry.source.line_count, entry.symbols.definitions, named
        )
        checked: list[Found] = []
        status: list[bool | None] = []  # True accepted, None open (judge to ask), False no
        for n, rep in enumerate(candidates):
            verdict = self.verify_at(claim, rep.location)
            around = self._around(rep.location, query)
            ok = self.acceptable(verdict, query, 0.0, judge is not None, around)
            rank = float(len(candidates) - n)
            checked.append(Found(rep.location, verdict, rank, ok, f"repair:{rep.how}"))
            decided = verdict.verdict == "supports" or (ok and judge is None)
            status.append(True if decided else None if judge is not None else False)
        if judge is not None:
            # Ask about every range the rules did not accept (they are few, and near): the
            # judge reads the code, the rules only its words.
            asked = [
                i
                for i, st in enumerate(status)
                if st is None and checked[i].verdict.verdict != "supports"
            ]
            if asked:
                answers = judge(
                    claim,
                    [
                        (
                            checked[i].location,
                            self.cited_code(checked[i].location),
                            checked[i].verdict,
                        )
                        for i in asked
                    ],
                )
                for i, v in zip(asked, answers, strict=True):
                    if v is not None and v.verdict == "supports":
                        f = checked[i]
                        checked[i] = Found(f.location, v, f.rank, True, f.via)
                        status[i] = True
                    else:
                        status[i] = False
        for i, st in enumerate(status):
            if st:
                return checked[i], checked
        return None, checked

    def locate(
        self,
        claim: str,
        original: Citation | None,
        *,
        floor: float = 0.0,
        limit: int = 5,
        judge: JudgeCheck | None = None,
        valid: bool = True,
    ) -> tuple[list[Found], list[Found]]:
        """Verified candidate locations for ``claim``, best first, and every range checked.

        Args:
            claim: the claim text.
            original: the failed citation (None: no usable original).
            floor: the original's term score; a candidate must reach it.
            limit: accepted candidates to return at most.
            judge: with a judge, candidates rules leave open are asked (top 3).
            valid: the original citation was structurally valid (its lines exist).
        """
        index = self.index
        # Only the project's own name says nothing about where: the original file's
        # name (which verification ignores there) is the best clue of all elsewhere.
        query = claim_query(claim, index.project)
        if not query.strong and judge is None:
            return [], []
        checked: list[Found] = []
        accepted: list[Found] = []
        open_: list[Found] = []
        seen: set[tuple[str, int, int]] = set()
        subject = query.subject
        kinds = {t.text: t.kind for t in parse_claim(claim).terms}
        # Cited lines that define (or sit inside) the claim's subject stay with it, in its
        # file: the range may be off, the place is not (another file that only declares or
        # mentions the subject would cite something about it, not it).
        keep_subject = (
            subject is not None
            and original is not None
            and valid
            and original.file_path in index.files
            and subject in self._defined(original)
        )
        for r in self.rank(query, original):
            chunk = index.chunks[r.chunk]
            window = smallest_window(index, chunk.path, chunk.start_line, chunk.end_line, query)
            spans = [window] if window is not None else []
            spans.append((chunk.start_line, chunk.end_line))
            for lo, hi in spans:
                key = (chunk.path, lo, hi)
                if key in seen:
                    continue
                seen.add(key)
                location = Citation(chunk.path, lo, hi)
                if original is not None and location == original:
                    continue
                verdict = self.verify_at(claim, location)
                around = self._around(location, query)
                ok = self.acceptable(verdict, query, floor, judge is not None, around)
                if (
                    ok
                    and keep_subject
                    and original is not None
                    and (
                        location.file_path != original.file_path
                        or subject not in self._defined(location, query.documented)
                    )
                ):
                    ok = False
                bonus = support_score(verdict, kinds, around) + (
                    0.5 if verdict.verdict == "supports" else 0.0
                )
                found = Found(location, verdict, r.score + bonus, ok, r.via)
                checked.append(found)
                if ok:
                    (accepted if verdict.verdict == "supports" or judge is None else open_).append(
                        found
                    )
                    break  # the smallest verifying range of this chunk
        if judge is not None and open_:
            open_.sort(key=lambda f: -f.rank)
            asked = open_[:3]
            answers = judge(
                claim,
                [(f.location, self.cited_code(f.location), f.verdict) for f in asked],
            )
            for f, v in zip(asked, answers, strict=True):
                if v is not None and v.verdict == "supports":
                    accepted.append(Found(f.location, v, f.rank + 0.5, True, f.via))
        if judge is not None and not accepted:
            # The rules accept no place: the judge reads the best-ranked ones itself (the
            # rules read words, and a paraphrase has few of them).
            asked_at = {f.location for f in open_[:3]}
            extra = sorted(
                (f for f in checked if f.location not in asked_at and not f.accepted),
                key=lambda f: -f.rank,
            )[:JUDGED_EXTRA]
            if extra:
                answers = judge(
                    claim, [(f.location, self.cited_code(f.location), f.verdict) for f in extra]
                )
                for f, v in zip(extra, answers, strict=True):
                    if v is not None and v.verdict == "supports":
                        accepted.append(Found(f.location, v, f.rank + 0.5, True, f.via))
        accepted.sort(key=lambda f: (-f.rank, f.location.end_line - f.location.start_line))
        accepted = distinct_places(accepted)
        lexical_gap = accepted[0].rank - accepted[1].rank if len(accepted) > 1 else None
        if self.semantic is not None and len(accepted) > 1:
            accepted = self._fused(claim, accepted)
        if (
            judge is None
            and lexical_gap is not None
            and lexical_gap < AMBIGUITY_MARGIN
            and not accepted[0].decided
        ):
            # Two places fit about equally well and nothing decides between them: the loop
            # does not guess; they are listed for a person (README "`citecal correct`").
            return [], accepted[:limit]
        return accepted[:limit], checked


def distinct_places(found: Sequence[Found]) -> list[Found]:
    """``found`` (best first) without the places overlapping a better one.

    A line and the definition around it are one place, not two: kept both, they
    would fill the list of alternatives a person is shown and, ranked within
    the ambiguity margin, make the loop refuse to choose between a place and
    itself.
    """
    kept: list[Found] = []
    for f in found:
        a = f.location
        if not any(
            k.location.file_path == a.file_path
            and k.location.start_line <= a.end_line
            and a.start_line <= k.location.end_line
            for k in kept
        ):
            kept.append(f)
    return kept


def support_score(verdict: Verdict, kinds: Mapping[str, str], around: frozenset[str]) -> float:
    """The verifier's term score, with the claim's names that enclose the place counted found.

    Verification counts an enclosing definition only for a name the claim calls a
    definition ("the `Group` function"); the locator accepts a place inside any
    definition the claim names (:meth:`Locator.acceptable`). Ranking by the plain
    score would put a line *about* ``Group`` elsewhere above a line *inside*
    ``Group``: the name's weight is given back here, so both rank on the same terms.
    """
    score = verdict.score or 0.0
    if not around or not verdict.missing_terms:
        return score
    terms = (*verdict.matched_terms, *verdict.missing_terms)
    total = sum(TERM_WEIGHTS.get(kinds.get(t, "word"), 1.0) for t in terms)
    back = sum(
        TERM_WEIGHTS.get(kinds.get(t, "word"), 1.0) for t in verdict.missing_terms if t in around
    )
    return min(1.0, score + back / total) if total else score


def has_evidence(claim: str, code: str, matched: Sequence[str], ignore: frozenset[str]) -> bool:
    """Does the cited code show anything of the claim's named code? (guards removal)

    A name counts when it was matched, or when most of its words are in the
    code: ``getContentType`` for a line registering ``'Content-Type'``
    accessors (code that generates the name the claim uses).
    """
    query = claim_query(claim, ignore)
    if not query.names:
        return bool(matched)
    found = {m.lower() for m in matched}
    words = set(query_words(code))
    for term in query.names:
        if term.text.lower() in found:
            return True
        parts = [w for w in token_words(_last(term.text)) if len(w) > 2]
        if parts and sum(w in words for w in parts) * 3 >= 2 * len(parts):
            return True
    return False


__all__ = [
    "Found",
    "JudgeCheck",
    "Locator",
    "definition_share",
    "distinct_places",
    "has_evidence",
    "is_overload_stub",
    "path_role",
    "smallest_window",
    "support_score",
]
