"""``citecal eval``: verify every citation of a report against a repository."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from citecal._io import check_output, read_text_file, refuse_clobber
from citecal.commands._emit import emit_text
from citecal.commands._judge import build_judge_or_reason
from citecal.commands._options import (
    ask_with_bar_paused,
    budget_line,
    cascade_choice,
    cascade_options,
    confidence_options,
    confidence_overrides,
    make_budget,
    output_options,
    spending_options,
)
from citecal.errors import InputError

if TYPE_CHECKING:
    from citecal.cascade import CascadeSpec
    from citecal.config import Config
    from citecal.models import EvalResult
    from citecal.source import SourceStore

# Stage modules are imported inside the command: ``citecal --help`` stays fast and
# one command's heavy dependencies never load for another.


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not enabled,
    )


def _dry_run(
    report_text: str,
    store: SourceStore,
    config: Config,
    prompt: str | None,
    model: str | None = None,
    use_cache: bool = True,
    context: SourceStore | None = None,
    exclude_reports: tuple[str, ...] = (),
    cascade: CascadeSpec | None = None,
) -> None:
    from citecal.commands._judge import simulated_variants
    from citecal.pipeline import dry_run_line, estimate_report

    est, _ = estimate_report(
        report_text,
        store,
        config,
        prompt=prompt,
        model=model,
        use_cache=use_cache,
        context=context,
        variants=simulated_variants(config, prompt, exclude_reports),
        cascade=cascade,
    )
    click.echo(dry_run_line(est))


def _render(result: EvalResult, fmt: str, output: Path | None) -> None:
    from citecal.render import render_json, render_markdown, render_table

    if fmt == "table" and output is None:
        console = Console()
        if not console.is_terminal:  # piped or CI log: wide enough to keep rows on one line
            console = Console(width=max(console.width, 140))
        render_table(result, console)
        return
    if fmt == "json":
        text = render_json(result)
    elif fmt == "markdown":
        text = render_markdown(result)
    else:
        console = Console(record=True, width=140, file=io.StringIO())
        render_table(result, console)
        text = console.export_text()
    emit_text(text, output)


@click.command("eval")
@click.argument("report", type=click.Path(path_type=Path))
@click.option(
    "--repo",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="Repository the report cites (a directory checkout, or a git repo with --rev).",
)
@click.option("--rev", default=None, help="Read files at this git revision (no checkout).")
@click.option(
    "--context",
    "context_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Directory of the items [[id]] citations name (default: the repository).",
)
@output_options(("table", "json", "markdown"))
@click.option("--no-llm", is_flag=True, help="Skip the LLM judge: abstractive claims unverified.")
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when a citation failed or is unverified, or the report has no citations.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file (default: [tool.citecal] / citecal.toml in the repo).",
)
@click.option("--prompt", default=None, help="Judge prompt version (v1, …) or prompt file.")
@click.option("--model", default=None, help="Judge model (default: judge.judge_model).")
@click.option(
    "--concurrency", type=click.IntRange(1, 256), default=None, help="Parallel judge requests."
)
@click.option("--no-cache", is_flag=True, help="Ignore the verdict cache for this run.")
@click.option("--dry-run", is_flag=True, help="Show judge calls, tokens and cost; call nothing.")
@spending_options
@confidence_options
@click.option(
    "--gate", "gate", is_flag=True, help="Apply the quality gate ([gate] thresholds); FAIL exits 1."
)
@click.option(
    "--fail-on",
    type=click.Choice(["fail", "warn"]),
    default="fail",
    show_default=True,
    help="With --gate: exit 1 on FAIL, or on WARN too.",
)
@click.option(
    "--correct",
    "correct",
    is_flag=True,
    help="Repair the failed citations as `citecal correct` does (README: `citecal correct`).",
)
@click.option(
    "--corrections",
    "corrections_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --correct: write the corrections file (JSON).",
)
@click.option(
    "--max-iterations",
    type=int,
    default=3,
    show_default=True,
    help="With --correct: correction rounds at most.",
)
@click.option(
    "--calibration",
    "calibration",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Recalibration map (`citecal calibrate --save-map`): scores become calibrated.",
)
@cascade_options
@click.option(
    "--review",
    "review",
    type=click.IntRange(0, 10_000),
    default=10,
    show_default=True,
    help="Citations in the review list 'Most likely unsupported' (0: none).",
)
def eval_command(
    report: Path,
    repo: Path,
    rev: str | None,
    context_dir: Path | None,
    fmt: str,
    output: Path | None,
    no_llm: bool,
    strict: bool,
    config_file: Path | None,
    prompt: str | None,
    model: str | None,
    concurrency: int | None,
    no_cache: bool,
    dry_run: bool,
    max_cost: float | None,
    yes: bool,
    confidence: str | None,
    samples: int | None,
    simulated_from: Path | None,
    gate: bool,
    fail_on: str,
    correct: bool,
    corrections_path: Path | None,
    max_iterations: int,
    calibration: Path | None,
    cascade_file: str | None,
    no_cascade: bool,
    review: int,
) -> None:
    """Verify every citation of REPORT against the repository.

    \b
    Exit codes: 0 evaluated; 1 with --strict when a citation failed or is
    unverified, or there is no citation, or with --gate when the gate is FAIL (or
    WARN with --fail-on warn); 2 bad input.

    \b
    Examples:
      citecal eval report.md --repo . --no-llm
      citecal eval report.md --repo ~/src/project --rev v1.2.0 -f json -o eval.json
      citecal eval report.md --repo . --dry-run
      citecal eval report.md --repo . --max-cost 0.50
      citecal eval report.md --repo . --confidence consistency --samples 5
      citecal eval report.md --repo . --strict -f markdown > citations.md
      citecal eval report.md --repo . --no-llm --gate
      citecal eval answer.md --context notes/ --no-llm
      citecal eval report.md --repo . --no-llm --correct -o fixed.md
      citecal eval report.md --repo . --calibration judge-map.json -f json
      citecal eval report.md --repo . --no-llm --review 20
      citecal eval report.md --repo . --no-cascade
    """
    chosen = cascade_choice(cascade_file, no_cascade)
    cascade_path = None if chosen in (None, "default") else chosen
    refuse_clobber(  # README "Security": an output never replaces an input
        [("-o/--output", output), ("--corrections", corrections_path)],
        [("REPORT", report), ("--config", config_file), ("--calibration", calibration),
         ("--cascade", cascade_path), ("--simulated-from", simulated_from)],
    )  # fmt: skip
    if correct:
        if context_dir is not None or gate:
            raise InputError("--correct cannot be combined with --context or --gate")
        if calibration is not None:
            raise InputError("--calibration cannot be combined with --correct")
        from citecal.commands.correct import run_correct

        run_correct(
            report=report,
            repo=repo,
            rev=rev,
            fmt=fmt,
            output=output,
            corrections_path=corrections_path,
            max_iterations=max_iterations,
            no_llm=no_llm,
            dry_run=dry_run,
            config_file=config_file,
            prompt=prompt,
            model=model,
            no_cache=no_cache,
            strict=strict,
            max_cost=max_cost,
            yes=yes,
            judge_settings=confidence_overrides(confidence, samples, simulated_from),
            cascade=chosen,
        )
        return
    if corrections_path is not None:
        raise InputError("--corrections needs --correct")
    from citecal.config import describe_repo_layer, load_config, repo_config_layers, user_base
    from citecal.pipeline import evaluate_report
    from citecal.record_ids import report_key
    from citecal.source import open_store

    check_output(output)  # a bad -o fails now, not after paid judge calls
    mapping = None
    if calibration is not None:  # a bad map fails now too
        from citecal.calibrate._recalibrate import read_map

        mapping = read_map(calibration)
    cascade = None
    if chosen is not None:  # a bad cascade file fails before any work too
        from citecal.cascade import load_cascade

        cascade = load_cascade(chosen)
    report_text = read_text_file(report, "report")
    overrides: dict[str, dict[str, Any]] = {
        "judge": confidence_overrides(confidence, samples, simulated_from)
    }
    if concurrency:
        overrides["judge"]["concurrency"] = concurrency
    if prompt:
        overrides["judge"]["prompt"] = prompt
    repo_dir = repo if repo.is_dir() else None
    config = load_config(repo_dir, config_file, overrides)
    for layer in repo_config_layers(repo_dir, user_base()):  # say what the repo set (docs)
        for line in describe_repo_layer(layer):
            click.echo(line, err=True)
    store = open_store(repo, rev, config.validation)
    context = open_store(context_dir, None, config.validation) if context_dir is not None else None
    # A report in the simulated annotators' table never lends them its own labels.
    own = (report_key(str(report), store.name),)
    if dry_run:
        _dry_run(
            report_text,
            store,
            config,
            prompt,
            model,
            use_cache=not no_cache,
            context=context,
            exclude_reports=own,
            cascade=cascade,
        )
        return
    budget = make_budget(config.judge, max_cost, yes)
    judge, reason = (
        (None, "--no-llm")
        if no_llm
        else build_judge_or_reason(config, prompt, model, no_cache, budget, own)
    )
    interactive = sys.stderr.isatty()
    try:
        with _progress(interactive) as bar:
            ask_with_bar_paused(budget, bar)
            task = bar.add_task("checking citations", total=None)
            judged = bar.add_task("judging claims", total=None, visible=False)

            def on_progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            def on_judged(done: int) -> None:
                bar.update(judged, completed=done, visible=True)

            result = evaluate_report(
                report_text,
                store,
                config,
                judge=judge,
                no_judge_reason=reason,
                report_name=str(report),
                progress=on_progress,
                judge_progress=on_judged,
                context=context,
                cascade=cascade,
                review=review,
            )
    finally:
        if judge is not None:
            judge.close()
    if rev is not None:  # README "`citecal rebase`": a report that records its revision
        from citecal.correct import stale_citation_warning

        stale = stale_citation_warning(result, report_text, repo, rev)
        if stale is not None:
            result = result.model_copy(update={"warnings": [*result.warnings, stale]})
    if mapping is not None:
        from citecal.calibrate._recalibrate import apply_to_eval

        result = apply_to_eval(result, mapping, str(calibration))
    if gate:
        from citecal.answers import eval_gate

        result = result.model_copy(update={"gate": eval_gate(result, config.gate)})
    for warning in result.warnings:
        if fmt != "table" or output is not None:
            click.echo(f"warning: {warning}", err=True)
    spending = budget_line(budget) if judge is not None else None
    if spending is not None:
        click.echo(spending, err=True)
    _render(result, fmt, output)
    if result.gate is not None and (fmt != "table" or output is not None):
        click.echo(f"gate: {result.gate.status}", err=True)
        for reason in result.gate.reasons:
            click.echo(f"  - {reason}", err=True)
    if strict:
        problems = result.strict_failures()
        if problems:
            click.echo(f"strict: {'; '.join(problems)}", err=True)
            sys.exit(1)
    if result.gate is not None and (
        result.gate.status == "FAIL" or (fail_on == "warn" and result.gate.status == "WARN")
    ):
        sys.exit(1)
