"""The driver of ``citecal eval-batch``: plan tasks, submit them, follow them, sum them up.

:func:`run_batch` is the library call behind the command. It never holds
citation rows: workers write them (:mod:`._tasks`, :mod:`._tables`) and send
back counts, which the driver adds up and hands to a progress callback as
each task finishes.
"""

from __future__ import annotations

import contextlib
import time
import uuid
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from citecal.batch._manifest import ManifestEntry
from citecal.batch._tables import BatchOutput
from citecal.batch._tasks import BatchTask, JobSettings, TaskResult, make_tasks, run_task
from citecal.errors import CitecalError, InputError, ServiceError
from citecal.verify.judge import SpendingNotApproved

if TYPE_CHECKING:
    from distributed import Client

DEFAULT_TASK_SIZE = 20
"""Reports per task: big enough that scheduling costs little per report (docs/explanation/scale.md),
small enough that a lost worker costs little work and the last tasks balance."""


class BatchError(ServiceError):
    """A task failed on the cluster in a way that stops the batch (exit 2)."""


class BatchInterrupted(CitecalError):
    """Ctrl-C: the batch stopped; committed parts are kept for ``--resume`` (exit 130)."""

    exit_code = 130


@dataclass
class Plan:
    """What a run will do, known before anything is submitted."""

    entries: int
    skipped: int
    tasks: list[BatchTask]
    recovered: int = 0

    @property
    def todo(self) -> int:
        return sum(len(t.entries) for t in self.tasks)


@dataclass
class Progress:
    """Running totals, passed to the progress callback after every finished task."""

    total: int
    done: int = 0
    errors: int = 0
    citations: int = 0
    tasks_done: int = 0
    tasks: int = 0
    started: float = field(default_factory=time.perf_counter)
    totals: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    estimate: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    warnings: set[str] = field(default_factory=set)
    task_seconds: float = 0.0
    task_cpu_seconds: float = 0.0
    cpu_by_worker: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, r: TaskResult) -> None:
        self.done += r.reports + r.errors
        self.errors += r.errors
        self.citations += r.citations
        self.tasks_done += 1
        for name, value in r.totals.items():
            self.totals[name] += value
        for name, value in r.estimate.items():
            self.estimate[name] += value
        self.warnings |= r.warnings
        self.task_seconds += r.seconds
        self.task_cpu_seconds += r.cpu_seconds
        self.cpu_by_worker[r.worker] += r.cpu_seconds

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started


class BatchSummary(BaseModel):
    """What ``citecal eval-batch --format json`` prints (schema_version 1)."""

    schema_version: int = 1
    output: str = Field(description="The output directory.")
    manifest_reports: int = Field(description="Rows in the manifest.")
    skipped: int = Field(description="Reports already in the output (--resume).")
    evaluated: int = Field(description="Reports evaluated in this run.")
    errors: int = Field(description="Reports of this run that went to errors.parquet.")
    citations: int = Field(description="Citations evaluated in this run.")
    tasks: int
    workers: int
    seconds: float
    reports_per_second: float | None
    citations_per_second: float | None
    validity_rate: float | None = Field(description="Over all citations of this run.")
    overall_precision: float | None = Field(description="All supports / all decided, this run.")
    totals: dict[str, float] = Field(description="Summary counts added over this run's reports.")
    dashboard: str | None = None
    max_cost_usd: float | None = Field(
        None, description="The run's spending cap (--max-cost, judge.max_cost_usd), or null."
    )
    spent_usd: float = Field(0.0, description="What this run spent on the judge (USD).")
    budget_left_usd: float | None = Field(
        None, description="What was left of the cap at the end, or null without one."
    )


class DryRunSummary(BaseModel):
    """What ``citecal eval-batch --dry-run --format json`` prints: the judge cost of the batch."""

    schema_version: int = 1
    reports: int
    errors: int
    citations: int
    claims: int = Field(description="Claims the judge would see.")
    cache_hits: int = Field(description="Of those, answered from the verdict cache.")
    held_back: int = Field(
        0, description="Of those, never sent: possible prompt injection (README 'Security')."
    )
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    models: list[str]
    warnings: list[str]


def plan(
    entries: Sequence[ManifestEntry],
    output: BatchOutput,
    *,
    resume: bool,
    task_size: int,
    dry_run: bool = False,
) -> Plan:
    """Tasks still to run; refuses to mix a new batch into a used output directory.

    Raises:
        InputError: ``output`` already holds a batch and ``resume`` is off.
    """
    recovered = 0
    done: set[str] = set()
    if not dry_run:
        output.create()
        if output.has_data() and not resume:
            raise InputError(
                f"{output.root} already holds a batch: pass --resume to continue it, "
                "or choose another --output"
            )
        recovered = output.recover()
        done = output.done_ids()
    todo = [e for e in entries if e.id not in done]
    return Plan(len(entries), len(entries) - len(todo), make_tasks(todo, task_size), recovered)


def _task_failure(task: BatchTask, exc: BaseException) -> CitecalError:
    """One line for a task that failed on the cluster (the remote error, or a dead worker)."""
    if isinstance(exc, SpendingNotApproved):  # README "Security": the spending threshold
        return SpendingNotApproved(f"{exc} (finished reports are kept: rerun with --resume)")
    if isinstance(exc, CitecalError):
        return exc  # e.g. JudgeError: stops the batch as it stops `citecal eval`
    where = f"{task.repo}" + (f" at {task.rev}" if task.rev else "")
    first = (str(exc).strip().splitlines() or [""])[0]
    return BatchError(
        f"a task of {len(task.entries)} reports from {where} failed on the cluster: "
        f"{type(exc).__name__}: {first[:300]} (finished reports are kept: rerun with --resume)"
    )


def run_plan(
    client: Client,
    the_plan: Plan,
    job: JobSettings,
    on_progress: Callable[[Progress], None] | None = None,
) -> Progress:
    """Submit every task of ``the_plan`` and wait, reporting progress as tasks finish.

    Raises:
        CitecalError: a task failed (a judge error, a worker bug, workers
            that kept dying): the batch stops, finished parts stay committed.
    """
    from distributed import as_completed

    progress = Progress(total=the_plan.todo, tasks=len(the_plan.tasks))
    if on_progress is not None:
        on_progress(progress)
    if not the_plan.tasks:
        return progress
    run = uuid.uuid4().hex[:8]
    futures = client.map(
        run_task,
        the_plan.tasks,
        job=job,
        key=[f"citecal-eval-{t.key}-{run}" for t in the_plan.tasks],
        pure=False,
    )
    by_key = {f.key: t for f, t in zip(futures, the_plan.tasks, strict=True)}
    try:
        for future in as_completed(futures, loop=client.loop):
            if future.status == "cancelled":
                raise BatchError(
                    "the cluster cancelled a task (scheduler restarted or client disconnected); "
                    "finished reports are kept: rerun with --resume"
                )
            if future.status != "finished":
                raise _task_failure(by_key[future.key], future.exception())
            progress.add(future.result())
            future.release()
            if on_progress is not None:
                on_progress(progress)
    finally:
        client.cancel([f for f in futures if not f.done()])
    return progress


def summarize_run(
    output: BatchOutput,
    the_plan: Plan,
    progress: Progress,
    workers: int,
    dashboard: str | None,
    max_cost: float | None = None,
) -> BatchSummary:
    """The batch summary of one run (rates over this run's citations)."""
    t = progress.totals
    decided = t["extractive_checked"] + t["abstractive_checked"]
    supports = t["extractive_supports"] + t["abstractive_supports"]
    seconds = progress.elapsed
    evaluated = progress.done - progress.errors
    return BatchSummary(
        output=str(output.root),
        manifest_reports=the_plan.entries,
        skipped=the_plan.skipped,
        evaluated=evaluated,
        errors=progress.errors,
        citations=progress.citations,
        tasks=len(the_plan.tasks),
        workers=workers,
        seconds=round(seconds, 3),
        reports_per_second=round(progress.done / seconds, 2) if seconds else None,
        citations_per_second=round(progress.citations / seconds, 1) if seconds else None,
        validity_rate=t["valid_citations"] / t["total_citations"] if t["total_citations"] else None,
        overall_precision=supports / decided if decided else None,
        totals={k: round(float(v), 8) for k, v in sorted(t.items())},
        dashboard=dashboard,
        max_cost_usd=max_cost,
        spent_usd=round(float(t["cost_usd"]), 8),
        budget_left_usd=(
            round(max(0.0, max_cost - float(t["cost_usd"])), 8) if max_cost is not None else None
        ),
    )


def summarize_dry_run(progress: Progress) -> DryRunSummary:
    """The judge cost of the whole batch, from the tasks' estimates."""
    e = progress.estimate
    return DryRunSummary(
        reports=progress.done - progress.errors,
        errors=progress.errors,
        citations=progress.citations,
        claims=int(e["requests"]),
        cache_hits=int(e["cache_hits"]),
        held_back=int(e["held_back"]),
        calls=int(e["calls"]),
        prompt_tokens=int(e["prompt_tokens"]),
        completion_tokens=int(e["completion_tokens"]),
        cost_usd=round(float(e["cost_usd"]), 6),
        models=sorted(k.split(":", 1)[1] for k in e if k.startswith("model:")),
        warnings=sorted(progress.warnings),
    )


@dataclass(frozen=True)
class BatchOptions:
    """The knobs of :func:`evaluate_batch` (the command's flags)."""

    output: str
    scheduler: str | None = None
    workers: int | None = None
    resume: bool = False
    no_llm: bool = False
    dry_run: bool = False
    correct: bool = False
    """Run ``citecal correct`` on every report too: rows in ``corrections.parquet``."""
    config_file: str | None = None
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompt: str | None = None
    model: str | None = None
    use_cache: bool = True
    cache_dir: str | None = None
    task_size: int = DEFAULT_TASK_SIZE
    max_cost: float | None = None
    """``--max-cost USD`` (default ``judge.max_cost_usd``): the whole batch's cap."""
    yes: bool = False
    """``--yes``: spend above ``judge.confirm_above_usd`` without a cap."""
    cascade: str | None = "default"
    """The cascade file ("default": the shipped one; None: ``--no-cascade``)."""


@dataclass(frozen=True)
class Started:
    """Handed to ``on_start`` once the cluster is up and the plan is known."""

    plan: Plan
    workers: int
    dashboard: str | None
    judge_unavailable: str | None


def evaluate_batch(
    entries: Sequence[ManifestEntry],
    options: BatchOptions,
    *,
    on_start: Callable[[Started], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> BatchSummary | DryRunSummary:
    """Evaluate every manifest entry on a Dask cluster; rows go to ``options.output``.

    The library call behind ``citecal eval-batch`` (README "Many reports").

    Raises:
        InputError: bad settings, unknown prompt, or a used output directory without resume.
        ServiceError: the scheduler cannot be reached; :class:`BatchError` when a task fails.
        JudgeError: the judge failed in a way that stops a run.
    """
    from pathlib import Path

    from citecal.batch._cluster import (
        ClusterLedger,
        check_scheduler_address,
        connect,
        dashboard_link,
        drop_ledger,
        judge_slots,
    )
    from citecal.config import config_from_layers, config_layers
    from citecal.verify.judge import JudgeUnavailable, build_judge

    if options.scheduler is not None:
        check_scheduler_address(options.scheduler)  # before the output directory is made

    config_file = Path(options.config_file) if options.config_file else None
    below = config_layers(None, None, include_env=False)  # the user config file
    above = config_layers(None, config_file, include_user=False)  # --config, environment
    config = config_from_layers(below + above, options.overrides)
    max_cost = options.max_cost if options.max_cost is not None else config.judge.max_cost_usd
    cascade = None
    if options.cascade is not None:  # a bad file fails before the cluster
        from citecal.cascade import load_cascade

        cascade = load_cascade(options.cascade)
    unavailable: str | None = None
    if not options.no_llm:
        try:  # fail fast on a bad prompt; say once why the judge cannot run
            build_judge(config.judge, prompt=options.prompt, model=options.model, use_cache=False)
        except JudgeUnavailable as exc:
            unavailable = str(exc)
    output = BatchOutput(options.output)
    # README "Many reports": one run at a time writes into an output directory
    held = output.lock() if not options.dry_run else contextlib.nullcontext()
    with held:
        the_plan = plan(
            entries,
            output,
            resume=options.resume,
            task_size=options.task_size,
            dry_run=options.dry_run,
        )
        cache_dir = options.cache_dir or str(output.root / "judge-cache")
        if not the_plan.tasks:  # everything is done already: no cluster needed
            if on_start is not None:
                on_start(Started(the_plan, 0, None, unavailable))
            progress = Progress(total=0)
            if options.dry_run:
                return summarize_dry_run(progress)
            return summarize_run(output, the_plan, progress, 0, None, max_cost)
        with connect(options.scheduler, options.workers) as client:
            workers = len(client.scheduler_info().get("workers", {}))
            slots, handle, ledger = None, None, None
            if not options.no_llm and not options.dry_run and unavailable is None:
                batch_id = uuid.uuid4().hex
                slots, handle = judge_slots(
                    client, config.judge.concurrency, f"citecal-judge-{batch_id}"
                )
                if max_cost is not None or not options.yes:  # one ledger for the cluster
                    ledger = ClusterLedger.create(client, f"citecal-budget-{batch_id}", max_cost)
            job = JobSettings(
                output=str(output.root.absolute()),
                below=below,
                above=above,
                overrides=options.overrides,
                no_llm=options.no_llm,
                prompt=options.prompt,
                model=options.model,
                use_cache=options.use_cache,
                cache_dir=str(Path(cache_dir).absolute()) if options.use_cache else None,
                slots=slots,
                dry_run=options.dry_run,
                max_cost=max_cost,
                yes=options.yes,
                ledger=ledger,
                correct=options.correct,
                cascade=cascade,
            )
            if on_start is not None:
                on_start(Started(the_plan, workers, dashboard_link(client), unavailable))
            progress = run_plan(client, the_plan, job, on_progress)
            if handle is not None:
                # Only after a finished run: when a batch stops early, tasks still running
                # on the cluster release their leases after the driver has gone, and the
                # semaphore must outlive them (the scheduler forgets it when it stops).
                with warnings.catch_warnings():
                    # Leases of a worker that died are counted until they time out.
                    warnings.simplefilter("ignore", RuntimeWarning)
                    handle.close()
            if ledger is not None:
                drop_ledger(client, ledger)
            if options.dry_run:
                return summarize_dry_run(progress)
            return summarize_run(
                output, the_plan, progress, workers, dashboard_link(client), max_cost
            )
