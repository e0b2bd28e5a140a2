"""Tasks of a batch: one (repository, revision, group of reports) each, run on a Dask worker.

What travels to a worker is small: paths, revisions, ids and the user's
settings (:class:`JobSettings`), never a store or a file's contents. A worker
opens the store once per task, so a repository's tree is listed and its
cited files read once for all the task's reports, evaluates each report with
the same :func:`~citecal.pipeline.evaluate_report` that ``citecal eval``
runs, writes the task's rows as one committed part (:mod:`._tables`) and
returns only counts (:class:`TaskResult`). Results therefore never pile up
in the driver or the scheduler, whatever the batch size.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citecal._io import read_text_file
from citecal.batch._manifest import ManifestEntry
from citecal.batch._tables import BatchOutput, citation_rows, correction_rows, report_row
from citecal.config import Config, config_from_layers, repo_config_layers
from citecal.errors import InputError
from citecal.models import EvalResult, Summary
from citecal.source import CachingStore, open_store

if TYPE_CHECKING:
    from citecal.batch._cluster import ClusterLedger
    from citecal.cascade import CascadeSpec
    from citecal.verify.judge import Budget, Judge

Layers = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One unit of work: reports that share a repository and revision."""

    key: str
    repo: str
    rev: str | None
    entries: tuple[ManifestEntry, ...]


@dataclass(frozen=True)
class JobSettings:
    """Everything a worker needs besides the task; sent with every task (small).

    The user's settings are resolved by the driver: ``below`` is the user
    config file, ``above`` the ``--config`` file and the driver's
    ``CITECAL_*``/``OPENAI_*`` environment. The worker puts each repository's
    own layers in between, as ``citecal eval`` does, and never reads its own
    host's environment or user config (README "Security"; a remote worker's
    environment is not the user's).
    """

    output: str
    below: Layers
    above: Layers
    overrides: dict[str, dict[str, Any]]
    no_llm: bool = False
    prompt: str | None = None
    model: str | None = None
    use_cache: bool = True
    cache_dir: str | None = None
    slots: Callable[[], AbstractAsyncContextManager[object]] | None = None
    dry_run: bool = False
    correct: bool = False
    """``eval-batch --correct``: each report is corrected too (README "`citecal correct`");
    its evaluation is the loop's first round, and its corrections go to corrections.parquet."""
    max_cost: float | None = None
    """The batch's spending cap in USD (README "Security"), or None."""
    yes: bool = False
    """``--yes``: no cap and no refusal above ``judge.confirm_above_usd``."""
    ledger: ClusterLedger | None = None
    """The batch's one spending ledger on the scheduler."""
    cascade: CascadeSpec | None = None
    """The cascade every report goes through (docs/explanation/cascade.md), loaded by the
    driver; None: ``--no-cascade``."""

    def budget(self, config: Config) -> Budget:
        """This task's view of the batch's spending rules (nobody to ask on a worker)."""
        from citecal.verify.judge import Budget

        ledger = self.ledger.bind() if self.ledger is not None else None
        return Budget(
            self.max_cost,
            confirm_above=config.judge.confirm_above_usd,
            approved=self.yes,
            ledger=ledger,
        )

    def config_for(self, repo: str) -> Config:
        """The settings ``citecal eval --repo REPO`` would use, with the user's layers."""
        base = config_from_layers(self.below)  # README "Security": tighten, never loosen
        own = [(layer.source, layer.settings) for layer in repo_config_layers(Path(repo), base)]
        own = [(source, settings) for source, settings in own if settings]
        return config_from_layers(self.below + own + self.above, self.overrides)


@dataclass
class TaskResult:
    """What a task sends back: counts only (rows went to Parquet on the worker)."""

    key: str
    reports: int = 0
    errors: int = 0
    citations: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU time of the task's thread (wall ``seconds`` minus waiting and other processes)."""
    worker: str = ""
    """Host and process that ran the task (for per-worker figures)."""
    totals: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    """Sums of the summary's counts (``total_citations``, ``llm_calls``, ``cost_usd``, ...)."""
    estimate: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    """Dry run: requests, calls, prompt/completion tokens, cost, cache hits."""
    warnings: set[str] = field(default_factory=set)
    """Dry run: the estimates' warnings (e.g. no price for the model)."""


_SUMMED = tuple(
    name
    for name, info in Summary.model_fields.items()
    if info.annotation in (int, float, "int", "float")
)
"""Summary fields that add up across reports (counts and cost; not the rates)."""


def task_key(repo: str, rev: str | None, entries: Sequence[ManifestEntry]) -> str:
    """Deterministic key: a retried task rewrites the same parts instead of adding new ones."""
    h = hashlib.sha256(f"{repo}\x1f{rev or ''}".encode())
    for e in entries:
        h.update(b"\x1f" + e.id.encode())
    return h.hexdigest()[:20]


def make_tasks(entries: Sequence[ManifestEntry], task_size: int) -> list[BatchTask]:
    """Group reports by (repository, revision), then cut groups into tasks of ``task_size``.

    Groups keep manifest order within; rows that cannot be evaluated at all
    (``problem``) form their own tasks so they never hold up a store.
    """
    groups: dict[tuple[str, str | None, bool], list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault((e.repo, e.rev, e.problem is not None), []).append(e)
    tasks: list[BatchTask] = []
    for (repo, rev, _), members in groups.items():
        for i in range(0, len(members), task_size):
            chunk = tuple(members[i : i + task_size])
            tasks.append(BatchTask(task_key(repo, rev, chunk), repo, rev, chunk))
    return tasks


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _error_row(entry: ManifestEntry, message: str) -> dict[str, Any]:
    return {
        "report_id": entry.id,
        "manifest_row": entry.row,
        "report": entry.report or None,
        "repo": entry.repo or None,
        "rev": entry.rev,
        "error": message,
    }


def _add(totals: defaultdict[str, float], figures: Mapping[str, float]) -> None:
    for name, value in figures.items():
        totals[name] += value


def _add_summary(totals: defaultdict[str, float], summary: Summary) -> None:
    _add(totals, {name: getattr(summary, name) for name in _SUMMED})


def run_task(task: BatchTask, job: JobSettings) -> TaskResult:
    """Evaluate (or, with ``job.dry_run``, estimate) every report of ``task`` on this worker.

    Per-report input errors (missing or unreadable report, unknown revision,
    bad repository config) become error rows; a judge error that must stop a
    run (:class:`~citecal.errors.JudgeError`) propagates and stops the batch,
    as it stops ``citecal eval``.
    """
    t0, cpu0 = time.perf_counter(), time.thread_time()
    result = TaskResult(key=task.key)
    errors: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    reports: list[dict[str, Any]] = []
    corrections: list[dict[str, Any]] = []
    todo = [e for e in task.entries if e.problem is None]
    errors += [_error_row(e, e.problem) for e in task.entries if e.problem is not None]
    store: CachingStore | None = None
    if todo:
        try:
            config = job.config_for(task.repo)
            # The cluster already keeps every core busy: no process pool per report.
            config.validation.workers = 1
            store = open_store(Path(task.repo), task.rev, config.validation)
        except InputError as exc:
            errors += [_error_row(e, _one_line(exc)) for e in todo]
    if store is not None:
        with store:
            if job.dry_run:
                _estimate(todo, store, config, job, result, errors)
            else:
                _evaluate(todo, store, config, job, result, errors, citations, reports, corrections)
    result.errors = len(errors)
    if not job.dry_run:
        BatchOutput(job.output).write_part(task.key, citations, reports, errors, corrections)
    result.seconds = time.perf_counter() - t0
    result.cpu_seconds = time.thread_time() - cpu0
    result.worker = f"{socket.gethostname()}:{os.getpid()}"
    return result


def _judge_cache(job: JobSettings) -> Any:
    from citecal.verify.judge import DirectoryVerdictCache

    return DirectoryVerdictCache(job.cache_dir) if job.cache_dir else None


def _evaluate(
    todo: Sequence[ManifestEntry],
    store: CachingStore,
    config: Config,
    job: JobSettings,
    result: TaskResult,
    errors: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    reports: list[dict[str, Any]],
    corrections: list[dict[str, Any]] | None = None,
) -> None:
    from citecal.pipeline import evaluate_report

    judge: Judge | None = None
    reason: str | None = "--no-llm"
    index: Any = None  # the correction index of the task's repository, built once (--correct)
    if not job.no_llm:
        # Imported only when used: the judge brings the openai SDK (~18 MB per worker).
        from citecal.verify.judge import JudgeUnavailable, build_judge

        try:
            judge = build_judge(
                config.judge,
                prompt=job.prompt,
                model=job.model,
                use_cache=job.use_cache,
                cache=_judge_cache(job),
                slots=job.slots,
                budget=job.budget(config),
                variants=_variants(config, job),
            )
            reason = None
        except JudgeUnavailable as exc:
            reason = str(exc)
    try:
        for entry in todo:
            t = time.perf_counter()
            try:
                text = read_text_file(entry.report, "report")
                if job.correct:
                    from citecal.correct import correct_report

                    run = correct_report(
                        text.removeprefix("\ufeff"),
                        store,
                        config,
                        judge=judge,
                        no_judge_reason=reason,
                        report_name=entry.report,
                        index=index,
                        cascade=job.cascade,
                    )
                    index = run.index or index
                    evaluated: EvalResult = run.before
                    if corrections is not None:
                        rows = correction_rows(entry.id, run.output)
                        corrections += rows
                        result.totals["corrections"] += len(rows)
                else:
                    evaluated = evaluate_report(
                        text,
                        store,
                        config,
                        judge=judge,
                        no_judge_reason=reason,
                        report_name=entry.report,
                        cascade=job.cascade,
                    )
            except InputError as exc:
                errors.append(_error_row(entry, _one_line(exc)))
                continue
            citations += citation_rows(entry.id, evaluated)
            reports.append(report_row(entry.id, entry.row, evaluated, time.perf_counter() - t))
            result.reports += 1
            result.citations += len(evaluated.citations)
            _add_summary(result.totals, evaluated.summary)
            result.totals["reports_with_warnings"] += bool(evaluated.warnings)
    finally:
        if judge is not None:
            judge.close()


def _variants(config: Config, job: JobSettings) -> tuple[Any, ...]:
    """The simulated annotators' prompts (README "Judge confidence"), when the judge needs them.

    The command checked the table before the batch started; each worker mines the
    same variants from it (seeded, so every worker asks the same K prompts).
    """
    if config.judge.confidence != "simulated":
        return ()
    from citecal.calibrate import simulated_prompts

    return simulated_prompts(config.judge, job.prompt)


def _estimate(
    todo: Sequence[ManifestEntry],
    store: CachingStore,
    config: Config,
    job: JobSettings,
    result: TaskResult,
    errors: list[dict[str, Any]],
) -> None:
    from citecal.pipeline import estimate_report

    cache = _judge_cache(job)
    for entry in todo:
        try:
            text = read_text_file(entry.report, "report")
            est, analysis = estimate_report(
                text,
                store,
                config,
                prompt=job.prompt,
                model=job.model,
                use_cache=job.use_cache,
                cache=cache,
                variants=_variants(config, job),
                cascade=job.cascade,
            )
        except InputError as exc:
            errors.append(_error_row(entry, _one_line(exc)))
            continue
        result.reports += 1
        result.citations += len(analysis.outcomes)
        figures = {
            "requests": est.requests,
            "cache_hits": est.cache_hits,
            "held_back": est.held_back,
            "calls": est.calls,
            "prompt_tokens": est.prompt_tokens,
            "completion_tokens": est.completion_tokens,
            "cost_usd": est.cost_usd,
            "model:" + est.model: 1,
        }
        _add(result.estimate, figures)
        result.warnings.update(est.warnings)
