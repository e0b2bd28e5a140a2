"""``citecal eval-batch``: evaluate the reports of a manifest on a Dask cluster."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from citecal.commands._options import (
    cascade_choice,
    cascade_options,
    confidence_options,
    confidence_overrides,
    spending_options,
)
from citecal.errors import InputError

if TYPE_CHECKING:
    from citecal.batch import BatchOutput, BatchSummary, DryRunSummary, Progress, Started


def _default_output(manifest: Path) -> Path:
    """``reports.csv`` → ``reports.eval/`` next to it."""
    return manifest.with_name(f"{manifest.stem}.eval")


class _Feedback:
    """Live progress on a terminal (rich bar), a line per 10 % elsewhere (CI logs)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        self.console = Console(stderr=True)
        self.interactive = self.console.is_terminal
        self.bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("reports · {task.fields[rate]} citations/s · ETA"),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
            disable=not self.interactive,
        )
        self.task: Any = None
        self.next_line = 0.1

    def start(self, started: Started) -> None:
        p = started.plan
        skipped = f", {p.skipped} already done (--resume)" if p.skipped else ""
        recovered = f", {p.recovered} unfinished parts removed" if p.recovered else ""
        click.echo(
            f"{p.entries} reports in the manifest{skipped}{recovered}: "
            f"{p.todo} to evaluate in {len(p.tasks)} tasks on {started.workers} workers",
            err=True,
        )
        if started.dashboard:
            click.echo(f"Dask dashboard: {started.dashboard}", err=True)
        if started.judge_unavailable:
            click.echo(
                f"warning: {started.judge_unavailable}: claims that need the judge are unverified",
                err=True,
            )
        self.bar.start()
        self.task = self.bar.add_task("eval-batch", total=p.todo, rate="0")

    def update(self, progress: Progress) -> None:
        if self.task is None:
            return
        elapsed = max(progress.elapsed, 1e-9)
        rate = f"{progress.citations / elapsed:,.0f}"
        self.bar.update(self.task, completed=progress.done, rate=rate)
        share = progress.done / progress.total if progress.total else 1.0
        if not self.interactive and progress.done and share >= self.next_line:
            left = elapsed / progress.done * (progress.total - progress.done)
            click.echo(
                f"eval-batch: {progress.done}/{progress.total} reports, {rate} citations/s, "
                f"ETA {left:.0f}s",
                err=True,
            )
            while self.next_line <= share:
                self.next_line += 0.1

    def stop(self) -> None:
        self.bar.stop()


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _print_summary(summary: BatchSummary, output: BatchOutput) -> None:
    t = summary.totals
    rate = f"{summary.reports_per_second or 0:,.1f} reports/s, "
    rate += f"{summary.citations_per_second or 0:,.0f} citations/s"
    click.echo(
        f"evaluated {summary.evaluated} reports ({summary.errors} errors) with "
        f"{summary.citations:,} citations in {summary.seconds:.1f}s on {summary.workers} "
        f"workers: {rate}"
    )
    total = t.get("total_citations", 0)
    decided = (
        f"decided {int(t['decided']):,} ({_pct(t['decided'] / total if total else None)}), "
        if "decided" in t
        else ""
    )
    click.echo(
        f"validity {_pct(summary.validity_rate)}, overall precision "
        f"{_pct(summary.overall_precision)}, {decided}unverified {int(t.get('unverified', 0)):,}, "
        f"LLM calls {int(t.get('llm_calls', 0)):,}, tokens {int(t.get('llm_tokens', 0)):,}, "
        f"cost ${t.get('cost_usd', 0.0):.4f}"
    )
    if summary.max_cost_usd is not None:  # README "Security": the spending cap
        reached = int(t.get("budget_reached", 0))
        click.echo(
            f"judge budget: ${summary.spent_usd:.4f} spent of ${summary.max_cost_usd:.4f}, "
            f"${summary.budget_left_usd or 0.0:.4f} left"
            + (f"; {reached:,} claims not judged (budget reached)" if reached else "")
        )
    names = ", ".join(str(output.table_dir(n)) for n in ("citations", "reports", "errors"))
    click.echo(f"wrote {names}")
    if summary.errors:
        errors = output.read("errors", columns=["manifest_row", "error"]).to_pylist()
        errors.sort(key=lambda r: r["manifest_row"])
        for row in errors[:3]:
            click.echo(f"  error (manifest row {row['manifest_row']}): {row['error']}", err=True)
        if len(errors) > 3:
            click.echo(f"  … {len(errors) - 3} more in errors.parquet", err=True)
    warned = int(t.get("reports_with_warnings", 0))
    if warned:
        example = ""
        for batch in output.scan("reports", columns=["warnings"]):
            first = next((w[0] for w in batch.column(0).to_pylist() if w), None)
            if first is not None:
                example = f", e.g. {first!r}"
                break
        click.echo(
            f"warning: {warned} reports have warnings{example} "
            "(reports.parquet, column `warnings`)",
            err=True,
        )


def _print_dry_run(est: DryRunSummary) -> None:
    cached = f" ({est.cache_hits} more answered from the cache)" if est.cache_hits else ""
    if est.held_back:
        cached += f" ({est.held_back} held back: possible prompt injection)"
    errors = (
        f" ({est.errors} could not be read: see a real run's errors.parquet)" if est.errors else ""
    )
    click.echo(
        f"dry run: {est.reports} reports{errors}, {est.citations:,} citations; "
        f"{est.claims - est.cache_hits - est.held_back:,} claims would go to the judge "
        f"({', '.join(est.models) or '—'}){cached} in {est.calls:,} calls, "
        f"~{est.prompt_tokens + est.completion_tokens:,} tokens (~{est.prompt_tokens:,} in, "
        f"~{est.completion_tokens:,} out), ~${est.cost_usd:.4f}; nothing was sent"
    )
    for warning in est.warnings:
        click.echo(f"warning: {warning}", err=True)


@click.command("eval-batch")
@click.argument("manifest", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output directory (default: MANIFEST's name with .eval, next to it).",
)
@click.option("--scheduler", default=None, help="Use a running Dask scheduler (tcp://host:8786).")
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    default=None,
    help="Worker processes of the local cluster (default: one per CPU).",
)
@click.option("--no-llm", is_flag=True, help="Skip the LLM judge: abstractive claims unverified.")
@click.option("--resume", is_flag=True, help="Continue a batch in OUTPUT: skip finished reports.")
@click.option("--dry-run", is_flag=True, help="Estimate the judge's calls and cost for the batch.")
@click.option(
    "--correct",
    is_flag=True,
    help="Also run `citecal correct` on every report: its corrections go to "
    "OUTPUT/corrections.parquet (the report files are not changed).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Summary format (the rows always go to Parquet in OUTPUT).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file (each repository's own [tool.citecal] still applies).",
)
@click.option("--prompt", default=None, help="Judge prompt version (v1, …) or prompt file.")
@click.option("--model", default=None, help="Judge model (default: judge.judge_model).")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=None,
    help="Judge requests in flight across the whole cluster.",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the verdict cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Verdict cache shared by all workers (default: OUTPUT/judge-cache).",
)
@click.option(
    "--task-size",
    type=click.IntRange(1, 10_000),
    default=None,
    help="Reports per task (default 20).",
)
@spending_options
@confidence_options
@cascade_options
def eval_batch_command(
    manifest: Path,
    output: Path | None,
    scheduler: str | None,
    workers: int | None,
    no_llm: bool,
    resume: bool,
    dry_run: bool,
    correct: bool,
    fmt: str,
    config_file: Path | None,
    prompt: str | None,
    model: str | None,
    concurrency: int | None,
    no_cache: bool,
    cache_dir: Path | None,
    task_size: int | None,
    max_cost: float | None,
    yes: bool,
    confidence: str | None,
    samples: int | None,
    simulated_from: Path | None,
    cascade_file: str | None,
    no_cascade: bool,
) -> None:
    """Evaluate every report of MANIFEST on a Dask cluster, into Parquet tables.

    MANIFEST is CSV, JSONL or Parquet with columns report, repo and optional
    rev, id (paths relative to the manifest). Rows go to OUTPUT/citations.parquet,
    reports.parquet and errors.parquet; see README "Many reports".

    \b
    Exit codes: 0 done (bad rows are in errors.parquet), 2 bad input or a failed cluster.

    \b
    Examples:
      citecal eval-batch reports.csv --no-llm
      citecal eval-batch reports.csv -o out/ --workers 4
      citecal eval-batch reports.jsonl -o out/ --scheduler tcp://10.0.0.5:8786 --resume
      citecal eval-batch reports.parquet --dry-run
      citecal eval-batch reports.csv -o out/ --max-cost 20
      citecal eval-batch reports.csv -o out/ --correct
    """
    from citecal.batch import (
        BatchInterrupted,
        BatchOptions,
        BatchOutput,
        BatchSummary,
        evaluate_batch,
        read_manifest,
    )

    if correct and dry_run:
        raise InputError("--correct and --dry-run exclude each other")
    if scheduler is not None and workers is not None:
        raise InputError(
            "--workers starts a local cluster; with --scheduler the cluster has its own"
        )
    entries = read_manifest(manifest)
    out = output if output is not None else _default_output(manifest)
    # Workers read the simulated annotators' table too: its absolute path.
    table = simulated_from.resolve() if simulated_from is not None else None
    overrides: dict[str, dict[str, Any]] = {
        "judge": confidence_overrides(confidence, samples, table)
    }
    if concurrency:
        overrides["judge"]["concurrency"] = concurrency
    if prompt:
        overrides["judge"]["prompt"] = prompt
    if not no_llm:  # a bad --simulated-from table fails here, before any worker starts
        from citecal.commands._judge import simulated_variants
        from citecal.config import load_config

        simulated_variants(load_config(None, config_file, overrides), prompt)
    options = BatchOptions(
        output=str(out),
        scheduler=scheduler,
        workers=workers,
        resume=resume,
        no_llm=no_llm,
        dry_run=dry_run,
        correct=correct,
        config_file=str(config_file) if config_file else None,
        overrides=overrides,
        prompt=prompt,
        model=model,
        use_cache=not no_cache,
        cache_dir=str(cache_dir) if cache_dir else None,
        task_size=task_size or 20,
        max_cost=max_cost,
        yes=yes,
        cascade=cascade_choice(cascade_file, no_cascade),
    )
    feedback = _Feedback()
    try:
        result = evaluate_batch(
            entries, options, on_start=feedback.start, on_progress=feedback.update
        )
    except KeyboardInterrupt:
        raise BatchInterrupted(
            f"interrupted: finished reports are kept in {out}; continue with --resume"
        ) from None
    finally:
        feedback.stop()
    if fmt == "json":
        click.echo(result.model_dump_json(indent=2))
    elif isinstance(result, BatchSummary):
        _print_summary(result, BatchOutput(out))
    else:
        _print_dry_run(result)
    sys.stdout.flush()
