"""Run the stages: report → citations → validation → verdicts → EvalResult.

The stages themselves are pure functions in :mod:`citecal.extract`,
:mod:`citecal.verify` and :mod:`citecal.aggregate`; this module only sequences
them, caches per-file work (each file is read and parsed once per run) and
hands the judge the claims routing gives it (:func:`citecal.verify.route_claim`;
README "Routing"). The judge is optional: without one, those claims are
``unverified`` and the result says why (graceful degradation, README "The LLM judge").
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial, wraps
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from citecal import _regex as bounded_regex
from citecal._fork import can_fork, fork_map
from citecal.aggregate import Outcome, joint_verdicts, summarize, to_result
from citecal.config import Config
from citecal.errors import InputError
from citecal.extract import coverage, extract_citations, find_claims
from citecal.models import (
    Citation,
    Classification,
    EvalResult,
    ExtractedCitation,
    ValidationResult,
    Verdict,
    report_digest,
)
from citecal.source import (
    CachingStore,
    SourceFile,
    SourceFileError,
    SourceStore,
    SymbolIndex,
    build_symbol_index,
    file_names,
    project_names,
)
from citecal.verify import (
    classify_claim,
    coverage_verdict,
    general_words,
    route_claim,
    validate_citation,
    verify_extractive,
)
from citecal.verify._excerpt import (
    ExcerptCheck,
    excerpt_summary,
    locate_citation,
    needs_location,
    reads_context,
)

if TYPE_CHECKING:
    from citecal.cascade import CascadeSpec
    from citecal.config import JudgeConfig
    from citecal.verify.judge import (
        DryRunEstimate,
        Injection,
        Judge,
        JudgeRequest,
        PromptTemplate,
        VerdictStore,
    )

Progress = Callable[[int, int], None]

MAX_CITATIONS_PER_REPORT = 20_000
"""Citations one report may hold (README "Security", resource bounds)."""

MAX_CARRIED_TEXT = 64 * 2**20
"""Characters of claim, paragraph and cited text the citations of one report may carry in all.

Every citation carries its claim, its paragraph and the cited lines into the
output, so a paragraph of thousands of citations costs its length times their
number: a 128 KB report wrote a 1 GB JSON at 2.1 GB of memory. The sum bounds
the output and the memory behind it (README "Security", resource bounds)."""


class _CarriedText:
    """The running sum behind :data:`MAX_CARRIED_TEXT`, checked as citations are read."""

    __slots__ = ("n", "total")

    def __init__(self, extracted: Sequence[ExtractedCitation]) -> None:
        if len(extracted) > MAX_CITATIONS_PER_REPORT:
            raise InputError(
                f"report has {len(extracted):,} citations; citecal evaluates at most "
                f"{MAX_CITATIONS_PER_REPORT:,} per report (split the report)"
            )
        self.n = len(extracted)
        self.total = 0
        for ex in extracted:  # known before any file is read
            self.add(len(ex.claim_text) + len(ex.context))

    def add(self, chars: int) -> None:
        self.total += chars
        if self.total > MAX_CARRIED_TEXT:
            raise InputError(
                f"report: its {self.n:,} citations would carry more than "
                f"{MAX_CARRIED_TEXT // 2**20} MB of claim, paragraph and cited text into the "
                "output (each carries its paragraph and cited lines; split the long "
                "paragraphs, narrow the cited ranges, or split the report)"
            )

    def add_cited(self, validation: ValidationResult) -> None:
        self.add(len(validation.cited_content or ""))


@dataclass
class _FileCache:
    """Per-run cache of parsed files: tree-sitter runs at most once per path."""

    store: SourceStore
    indexes: dict[str, SymbolIndex] = field(default_factory=dict)
    context: _FileCache | None = None  # where [[item]] citations are read (--context)
    project: frozenset[str] | None = None

    def ignored_names(self, path: str) -> frozenset[str]:
        """Names a claim may use without the cited lines containing them (project, file)."""
        if self.project is None:
            self.project = project_names(self.store)
        return self.project | file_names(path)

    def read(self, path: str) -> SourceFile:
        return self.store.read(path)

    def index(self, path: str) -> SymbolIndex:
        idx = self.indexes.get(path)
        if idx is None:
            file = self.store.read(path)
            idx = build_symbol_index(file.text, file.language, lazy=True)
            self.indexes[path] = idx
        return idx


@dataclass(frozen=True)
class Analysis:
    """Stages 1–4a of one report: what is known before any LLM call."""

    outcomes: list[Outcome]
    total_claims: int
    cited_claims: int
    uncited_claims: list[str]
    warnings: list[str] = field(default_factory=list)
    """Degradations of stages 1-4a, e.g. a settings regex that ran out of time."""
    context: SourceStore | None = None


def _undecided(rule: Verdict | None, reason: str) -> Verdict:
    """A claim the judge should have decided, without a judge: unverified, evidence kept."""
    evidence = f" Rule evidence: {rule.reasoning}" if rule is not None and rule.reasoning else ""
    base = rule or Verdict(verdict="unverified", method="llm", confidence="low")
    return replace(
        base,
        verdict="unverified",
        method="llm",
        confidence="low",
        score=None,
        reasoning=f"LLM judge not used: {reason}.{evidence}",
    )


def _with_evidence(judged: Verdict, rule: Verdict | None) -> Verdict:
    """The judge's verdict, keeping the rule's term lists and hint for the correction loop."""
    if rule is None:
        return judged
    return replace(
        judged,
        matched_terms=judged.matched_terms or rule.matched_terms,
        missing_terms=judged.missing_terms or rule.missing_terms,
        hint=judged.hint or rule.hint,
        hint_lines=judged.hint_lines or rule.hint_lines,
    )


def analyse(
    report_text: str,
    store: SourceStore,
    config: Config,
    progress: Progress | None = None,
    context: SourceStore | None = None,
) -> Analysis:
    """Extract, validate, classify and run the extractive check on every citation.

    ``context`` is where ``[[item]]`` citations are looked up (default: ``store``).
    """
    bounded_regex.reset()
    extracted = extract_citations(report_text)
    carried = _CarriedText(extracted)
    claims = find_claims(report_text, config.extract)
    total_claims, cited_claims, _ = coverage(claims)
    workers = _worker_count(config, len(extracted), store)
    if workers > 1 and (context is None or isinstance(context, CachingStore)):
        outcomes = _analyse_parallel(extracted, store, config, workers, progress, context, carried)
    else:
        files = _FileCache(store, context=_FileCache(context) if context is not None else None)
        outcomes = []
        total = len(extracted)
        for n, ex in enumerate(extracted, 1):
            outcomes.append(_analyse_one(ex, files, config))
            carried.add_cited(outcomes[-1].validation)
            if progress is not None and (n % 500 == 0 or n == total):
                progress(n, total)
    return Analysis(
        outcomes=credit_siblings(outcomes),
        total_claims=total_claims,
        cited_claims=cited_claims,
        uncited_claims=[c.text for c in claims if not c.cited],
        warnings=bounded_regex.timeout_warnings(),
        context=context,
    )


def _worker_count(config: Config, n_citations: int, store: SourceStore) -> int:
    """Processes worth starting: only for big reports, only where fork exists.

    A daemonic process may not have children (``multiprocessing`` refuses),
    and a Dask worker is one: inside ``citecal eval-batch`` the cluster
    already keeps every core busy, so the report stays in-process (README
    "Many reports").
    """
    if n_citations < config.validation.parallel_min_citations:
        return 1
    if not isinstance(store, CachingStore) or not can_fork():
        return 1
    wanted = config.validation.workers or os.cpu_count() or 1
    return max(1, min(wanted, n_citations // 100))


# State a forked worker inherits; set just before the pool starts, cleared after.
# Workers read citations from the inherited list and send back only what they
# found, so neither direction pickles the report's text (claims, paragraphs).
_PARENT: tuple[CachingStore, Config, list[ExtractedCitation], CachingStore | None] | None = None
_WORKER: tuple[_FileCache, Config, list[ExtractedCitation]] | None = None

_Found = tuple[
    int,
    ValidationResult,
    Classification | None,
    Verdict | None,
    Citation,
    ExcerptCheck | None,
    str | None,
    bool,
]


def _worker_init() -> None:
    global _WORKER
    assert _PARENT is not None
    store, config, extracted, context = _PARENT
    items = _FileCache(context.reopen()) if context is not None else None
    _WORKER = (_FileCache(store.reopen(), context=items), config, extracted)


def _worker_run(chunk: list[int]) -> tuple[list[_Found], list[tuple[str, str, int]]]:
    """Findings of one chunk, and the settings regexes that timed out in this worker."""
    assert _WORKER is not None
    files, config, extracted = _WORKER
    found: list[_Found] = []
    for i in chunk:
        o = _analyse_one(extracted[i], files, config)
        found.append(
            (
                i,
                o.validation,
                o.classification,
                o.verdict,
                o.extracted.citation,
                o.excerpt,
                o.route,
                o.judge_classifies,
            )
        )
    return found, bounded_regex.timed_out()


def _analyse_parallel(
    extracted: list[ExtractedCitation],
    store: SourceStore,
    config: Config,
    workers: int,
    progress: Progress | None,
    context: SourceStore | None,
    carried: _CarriedText,
) -> list[Outcome]:
    """Stages 2-4a in forked processes, citations of one file kept in one chunk.

    Keeping a file's citations together means each file is read and parsed
    by exactly one process; chunks are many and small so the slowest one
    does not leave a core idle at the end.
    """
    global _PARENT
    assert isinstance(store, CachingStore)
    by_file: dict[str, list[int]] = {}
    for i, ex in enumerate(extracted):
        by_file.setdefault(ex.citation.file_path, []).append(i)
    target = max(50, len(extracted) // (workers * 8))
    chunks: list[list[int]] = [[]]
    for group in by_file.values():
        if len(chunks[-1]) >= target:
            chunks.append([])
        chunks[-1].extend(group)
    outcomes: list[Outcome | None] = [None] * len(extracted)
    done = 0
    assert context is None or isinstance(context, CachingStore)
    _PARENT = (store, config, extracted, context)
    general_words()  # loaded once here and inherited, not once per worker (wordfreq, ~0.3 s)
    try:
        with mp.get_context("fork").Pool(workers, initializer=_worker_init) as pool:
            for part, timeouts in pool.imap_unordered(_worker_run, chunks):
                bounded_regex.record_timeouts(timeouts)
                for i, validation, classification, verdict, cited, excerpt, route, asks in part:
                    carried.add_cited(validation)
                    ex = extracted[i]
                    if cited != ex.citation:  # resolved to lines (README "Excerpt citations")
                        ex = replace(ex, citation=cited)
                    outcomes[i] = Outcome(
                        ex, validation, classification, verdict, excerpt, route, asks
                    )
                done += len(part)
                if progress is not None:
                    progress(done, len(extracted))
    finally:
        _PARENT = None
    return [o for o in outcomes if o is not None]


_NAME_TOKEN = re.compile(r"[A-Za-z_$][\w$]*")


def sentence_groups(outcomes: Sequence[Outcome]) -> list[list[int]]:
    """Indexes of the outcomes of each sentence (a claim and its paragraph), in report order."""
    groups: dict[tuple[int, str], list[int]] = {}
    for i, o in enumerate(outcomes):
        groups.setdefault((o.extracted.paragraph_index, o.extracted.claim_text), []).append(i)
    return list(groups.values())


def credit_siblings(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """A citation is never rejected for lacking what its sentence's other citations show.

    A sentence with several citations (``… [a] [b]``) is supported by its ranges
    together (ALCE's citation recall; README "The cascade"): when a rule
    rejected one range because a name is missing and a sibling range of the
    same sentence shows that name, the rejection is withdrawn and the judge
    (or the cascade) decides.
    """
    out = list(outcomes)
    for members in sentence_groups(outcomes):
        if len(members) < 2:
            continue
        for i in members:
            o = out[i]
            v = o.verdict
            if v is None or v.verdict != "not_supports" or v.method != "extractive":
                continue
            for j in members:
                sib = outcomes[j]
                if j == i or not sib.validation.valid:
                    continue
                tokens = {
                    t.lower() for t in _NAME_TOKEN.findall(sib.validation.cited_content or "")
                }
                shown = [
                    m
                    for m in v.missing_terms
                    if (key := m.strip("`").split("(")[0].split(".")[-1].lower()) and key in tokens
                ]
                if shown:
                    names = ", ".join(f"`{m.strip('`')}`" for m in shown)
                    out[i] = replace(
                        o,
                        route="judge",
                        verdict=replace(
                            v,
                            verdict="unverified",
                            confidence="low",
                            reasoning=(
                                f"{names} shown by the sentence's other citation "
                                f"{sib.extracted.citation}: the claim is judged with all its "
                                f"citations. {v.reasoning}"
                            ),
                        ),
                    )
                    break
    return out


def _analyse_one(ex: ExtractedCitation, files: _FileCache, config: Config) -> Outcome:
    excerpt: ExcerptCheck | None = None
    if needs_location(ex):  # [[item]], a location specifier or a quoted excerpt
        if files.context is not None and reads_context(ex.citation):
            files = files.context
        ex, validation, excerpt = locate_citation(ex, files.store, config)
    else:
        validation = validate_citation(ex.citation, files.store)
    if not validation.valid:
        return Outcome(extracted=ex, validation=validation, excerpt=excerpt)
    classification: Classification = classify_claim(ex.claim_text, config.classify)
    path, start, end = ex.citation.file_path, ex.citation.start_line, ex.citation.end_line
    try:
        file = files.read(path)
        rule = verify_extractive(
            ex.claim_text,
            validation.cited_content or "",
            start,
            end,
            files.index(path),
            config.extractive,
            file.lines,
            ignore_names=files.ignored_names(path),
        )
    except SourceFileError as exc:  # validated above; a file changing mid-run lands here
        return Outcome(
            extracted=ex,
            validation=replace(validation, valid=False, error=str(exc)),
            excerpt=excerpt,
        )
    routing = route_claim(classification, rule, config.classify)
    verdict = coverage_verdict(rule, config.extractive) if routing.route == "coverage" else rule
    return Outcome(
        extracted=ex,
        validation=validation,
        classification=routing.classification,
        verdict=verdict,
        excerpt=excerpt,
        route=routing.route,
        judge_classifies=routing.classify_with_judge,
    )


def routed(analysis: Analysis, config: Config) -> list[int]:
    """Indexes of the outcomes routing gives to the judge (README "Routing")."""
    del config  # routing was decided per citation in :func:`analyse`
    return [i for i, o in enumerate(analysis.outcomes) if o.route == "judge"]


def judge_requests(
    analysis: Analysis, indexes: Sequence[int], store: SourceStore, config: Config
) -> list[JudgeRequest]:
    """Claim + cited code + a few lines of context for each routed citation."""
    from citecal.verify.judge import JudgeRequest

    k = config.judge.context_lines
    requests: list[JudgeRequest] = []
    outcomes = analysis.outcomes
    sentence_of = {i: members for members in sentence_groups(outcomes) for i in members}
    for i in indexes:
        o = outcomes[i]
        siblings = tuple(
            (str(s.extracted.citation), s.validation.cited_content or "")
            for s in (outcomes[j] for j in sentence_of[i])
            if s is not o and s.validation.valid
        )
        c = o.extracted.citation
        source = analysis.context if analysis.context and reads_context(c) else store
        file = source.read(c.file_path)
        before = file.lines(max(1, c.start_line - k), c.start_line - 1) if c.start_line > 1 else ""
        last = min(file.line_count, c.end_line + k)
        after = file.lines(c.end_line + 1, last) if c.end_line < last else ""
        requests.append(
            JudgeRequest(
                key=o.extracted.id,
                claim=o.extracted.claim_text,
                citation=str(c),
                file_path=c.file_path,
                language=o.validation.language,
                start_line=c.start_line,
                end_line=c.end_line,
                code=o.validation.cited_content or "",
                before=before,
                after=after,
                extractive=o.verdict,
                classify=o.judge_classifies,
                siblings=siblings,
            )
        )
    return requests


def _apply_verdicts(
    outcomes: list[Outcome], indexes: Sequence[int], verdicts: Mapping[str, Verdict]
) -> list[Outcome]:
    """A judge run's verdicts on the routed outcomes (the rule's evidence kept)."""
    out = list(outcomes)
    for i in indexes:
        o = out[i]
        v = verdicts.get(o.extracted.id)
        if v is None:
            continue
        classification = o.classification
        if o.judge_classifies and v.mode is not None and classification is not None:
            classification = Classification(v.mode, classification.confidence, ("judge",))
        out[i] = replace(o, verdict=_with_evidence(v, o.verdict), classification=classification)
    return out


def screen_outcomes(analysis: Analysis, store: SourceStore, config: Config) -> dict[int, Injection]:
    """Valid citations whose claim, code, context or sibling citations speak to the judge.

    Read as the judge would read them (the same request, README "Security"), by
    outcome index. Runs before every tier of the cascade, the rules included.
    """
    from citecal.verify.judge import load_patterns, request_injection

    candidates = [i for i, o in enumerate(analysis.outcomes) if o.validation.valid]
    requests = judge_requests(analysis, candidates, store, config)
    load_patterns()  # before any fork: the workers inherit them
    hits = fork_map(
        partial(request_injection, max_code_lines=config.judge.max_code_lines),
        requests,
        _worker_count(config, len(requests), store),
    )
    return {i: hit for i, hit in zip(candidates, hits, strict=True) if hit is not None}


def injection_warning(outcomes: Sequence[Outcome], held: dict[int, Injection]) -> str:
    """One warning counting the claims held back for a person."""
    from citecal.verify.judge import INJECTION_REASON

    first = min(held)
    found = held[first]
    return (
        f"{len(held)} claims not decided: {INJECTION_REASON} (text addressed to the judge,"
        f" e.g. in the {found.where} of {outcomes[first].extracted.citation}: {found.text!r});"
        " they are unverified with suggested action annotate, for a person to check"
    )


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _collections_paused(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` with Python's cyclic garbage collector paused while it runs.

    A large report allocates millions of short-lived objects (tokens, rows,
    verdicts) that reference counting frees; the cyclic collector would walk the
    live ones again and again (about a tenth of ``eval``'s time on 10 000
    citations, docs/explanation/cascade.md "Throughput") without finding cycles
    to free. It is resumed when ``fn`` returns or raises, and left alone if the
    caller had paused it already.
    """

    @wraps(fn)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return paused


@_collections_paused
def evaluate_report(
    report_text: str,
    store: SourceStore,
    config: Config | None = None,
    *,
    judge: Judge | None = None,
    no_judge_reason: str | None = None,
    report_name: str = "<report>",
    progress: Progress | None = None,
    judge_progress: Callable[[int], None] | None = None,
    context: SourceStore | None = None,
    cascade: CascadeSpec | None = None,
    review: int = 10,
) -> EvalResult:
    """Evaluate every citation of a report against a source store.

    Args:
        report_text: the Markdown report.
        store: where cited files are read (directory or git revision).
        config: settings; the defaults (README "Configuration") when omitted.
        judge: the LLM judge for abstractive claims; ``None`` degrades gracefully.
        no_judge_reason: why there is no judge (shown as a warning when claims
            needed one), e.g. ``"--no-llm"`` or "OPENAI_API_KEY is not set".
        report_name: shown in the output's ``report`` field.
        progress: called with (done, total) during stages 1–4a.
        judge_progress: called with the number of judged claims as they finish.
        context: where ``[[item]]`` citations are looked up (``--context``;
            default ``store``).
        cascade: tiers with calibrated thresholds (README "The cascade"): a
            claim is decided by the first tier confident enough, else escalated,
            and after the last tier it abstains ("needs a person"). With a
            calibrated verifier every valid row gets ``p_supports``, its risk rank
            and band (docs/explanation/cascade.md, "The review list").
        review: how many of the riskiest citations get their evidence and a
            proposed place (the review list; 0: none).
    """
    config = config or Config()
    analysis = analyse(report_text, store, config, progress, context)
    outcomes = list(analysis.outcomes)
    warnings: list[str] = list(analysis.warnings)
    calls = tokens = 0
    cost = 0.0
    # README "Security": a claim whose text or code speaks to the judge goes to a person,
    # whatever a rule, the local verifier or a judge would decide; no tier sees it.
    from citecal.verify.judge import hold_back

    held = screen_outcomes(analysis, store, config)
    for i, found in held.items():
        o = outcomes[i]
        outcomes[i] = replace(o, route="held", verdict=hold_back(o.verdict, found))
    if held:
        warnings.append(injection_warning(outcomes, held))
        analysis = replace(analysis, outcomes=outcomes)
    indexes = [i for i in routed(analysis, config) if i not in held]
    decided_by: dict[str, int] = {}
    if cascade is not None:
        from citecal.cascade._apply import pre_judge

        outcomes, indexes, decided_by = pre_judge(
            outcomes,
            cascade,
            store,
            judge is not None,
            _worker_count(config, len(outcomes), store),
        )
        analysis = replace(analysis, outcomes=outcomes)
    if judge is not None and indexes and cascade is not None and cascade.tier("judge"):
        # README "The cascade": each judge model in turn, cheapest first.
        from citecal.cascade._apply import run_judge_tiers

        requests = judge_requests(analysis, indexes, store, config)
        outcomes, judged_by, runs, tier_warnings = run_judge_tiers(
            outcomes,
            indexes,
            cascade,
            judge,
            dict(zip(indexes, requests, strict=True)),
            _apply_verdicts,
            judge_progress,
        )
        decided_by.update(judged_by)
        calls = sum(r.calls for r in runs)
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in runs)
        cost = sum(r.cost_usd for r in runs)
        warnings.extend(dict.fromkeys([w for r in runs for w in r.warnings] + tier_warnings))
    elif judge is not None and indexes:
        run = judge.judge(judge_requests(analysis, indexes, store, config), judge_progress)
        outcomes = _apply_verdicts(outcomes, indexes, run.verdicts)
        calls, tokens = run.calls, run.prompt_tokens + run.completion_tokens
        cost = run.cost_usd
        warnings.extend(run.warnings)
        if cascade is not None:
            from citecal.cascade._apply import post_judge

            outcomes, judged_by = post_judge(outcomes, indexes, cascade, judge.model)
            decided_by.update(judged_by)
    elif cascade is not None:
        for_person = sum(
            o.verdict is not None and o.verdict.abstain_reason == "needs a person" for o in outcomes
        )
        if for_person:
            reason = no_judge_reason or "no LLM judge configured"
            warnings.append(
                f"{for_person} citations no tier of the cascade could decide are unverified, "
                f"for a person (the review list ranks them): {reason}"
            )
    elif indexes:
        reason = no_judge_reason or "no LLM judge configured"
        for i in indexes:
            o = outcomes[i]
            outcomes[i] = replace(o, verdict=_undecided(o.verdict, reason))
        warnings.append(f"{len(indexes)} claims need the LLM judge and are unverified: {reason}")
    rows = joint_verdicts([to_result(o, config.extractive.context_lines) for o in outcomes])
    calibrator = cascade.calibrator if cascade is not None else None
    if calibrator is not None:
        from citecal.cascade._review import rank_rows
        from citecal.cascade._review import review as review_rows

        rows = rank_rows(rows, calibrator)
        if review > 0:
            rows = review_rows(rows, store, review, config)
    summary = summarize(
        rows,
        total_claims=analysis.total_claims,
        cited_claims=analysis.cited_claims,
        llm_calls=calls,
        llm_tokens=tokens,
        cost_usd=cost,
    )
    summary = summary.model_copy(update=excerpt_summary(rows))
    if judge is not None:  # README "Judge confidence": how sure, and K answers paid for
        summary = summary.model_copy(
            update={
                "confidence_source": judge.confidence,
                "confidence_samples": judge.samples
                if judge.confidence in ("consistency", "simulated")
                else 1,
            }
        )
    if cascade is not None:
        from citecal.cascade._apply import summary_of

        abstained = sum(
            o.verdict is not None and o.verdict.abstain_reason == "needs a person" for o in outcomes
        )
        disagreed = sum(
            o.verdict is not None and o.verdict.abstain_reason == "judge and verifier disagree"
            for o in outcomes
        )
        summary = summary.model_copy(
            update={"cascade": summary_of(cascade, decided_by, abstained, disagreed)}
        )
    if calibrator is not None:
        from citecal.cascade._review import band_counts, shift_of

        ranked = sum(r.risk_rank is not None for r in rows)
        summary = summary.model_copy(
            update={
                "risk_bands": band_counts(rows, calibrator),
                "review_size": min(review, ranked),
                "shift": shift_of(rows, calibrator),
            }
        )
    if judge is not None and judge.budget.cap is not None:  # README "Security": spending cap
        summary = summary.model_copy(
            update={
                "budget_reached": sum(r.abstain_reason == "budget reached" for r in rows),
                "max_cost_usd": judge.budget.cap,
                "budget_left_usd": round(judge.budget.left() or 0.0, 8),
            }
        )
    return EvalResult(
        report=report_name,
        report_sha256=report_digest(report_text),
        repo=store.name,
        rev=store.rev,
        context=context.name if context is not None else None,
        summary=summary,
        citations=rows,
        failed_citations=[r for r in rows if r.failure_type is not None],
        uncited_claims=analysis.uncited_claims,
        warnings=warnings,
    )


# --------------------------------------------------------------------------- dry runs


def estimate_requests(
    requests: Sequence[JudgeRequest],
    config: JudgeConfig,
    *,
    prompt: str | None = None,
    model: str | None = None,
    use_cache: bool = True,
    cache: VerdictStore | None = None,
    variants: Sequence[PromptTemplate] = (),
) -> DryRunEstimate:
    """What judging ``requests`` would cost, without a network call: the one dry run.

    ``citecal eval --dry-run`` and ``eval-batch --dry-run`` come here through
    :func:`estimate_report`, ``citecal rejudge --dry-run`` with the requests of
    an annotation table; all three count calls, tokens and dollars the same way.
    """
    from citecal.verify.judge import estimate_cost

    return estimate_cost(
        requests, config, prompt, model=model, use_cache=use_cache, cache=cache, variants=variants
    )


def estimate_report(
    report_text: str,
    store: SourceStore,
    config: Config,
    *,
    prompt: str | None = None,
    model: str | None = None,
    use_cache: bool = True,
    cache: VerdictStore | None = None,
    context: SourceStore | None = None,
    variants: Sequence[PromptTemplate] = (),
    cascade: CascadeSpec | None = None,
) -> tuple[DryRunEstimate, Analysis]:
    """The dry run of one report: the claims routing gives the judge, estimated.

    With ``cascade``, the claims its rules and local tiers would escalate (a rule's
    verdict the cascade does not certify goes to the judge too).

    Returns the estimate and the analysis (its citations, for batch counts).
    """
    analysis = analyse(report_text, store, config, context=context)
    indexes = routed(analysis, config)
    if cascade is not None:  # the claims the cascade would escalate to a judge
        from citecal.cascade._apply import pre_judge

        outcomes, indexes, _ = pre_judge(analysis.outcomes, cascade, store, True)
        analysis = replace(analysis, outcomes=outcomes)
    requests = judge_requests(analysis, indexes, store, config)
    est = estimate_requests(
        requests,
        config.judge,
        prompt=prompt,
        model=model,
        use_cache=use_cache,
        cache=cache,
        variants=variants,
    )
    return est, analysis


def dry_run_line(est: DryRunEstimate, unit: str = "claims") -> str:
    """The one-line summary every ``--dry-run`` prints."""
    cached = f" ({est.cache_hits} more answered from the cache)" if est.cache_hits else ""
    if est.held_back:
        cached += f" ({est.held_back} held back: possible prompt injection)"
    if est.samples > 1:  # README "Judge confidence": K answers per claim, counted below
        cached += f" ({est.confidence_source}: {est.samples} answers per claim)"
    elif est.confidence_source != "verbal":
        cached += f" ({est.confidence_source})"
    return (
        f"dry run: {est.requests - est.cache_hits - est.held_back} {unit} would go to the judge"
        f" ({est.model}){cached} in "
        f"{est.calls} calls, ~{est.prompt_tokens + est.completion_tokens} tokens "
        f"(~{est.prompt_tokens} in, ~{est.completion_tokens} out), ~${est.cost_usd:.4f}; "
        "nothing was sent"
    )
