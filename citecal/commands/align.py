"""``citecal align``: search for a judge prompt that agrees better with people's labels."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citecal._io import atomic_write_text, check_output, refuse_clobber
from citecal.commands._options import finite_dollars
from citecal.config import load_config
from citecal.errors import InputError

# The bounds of AlignSettings.check (citecal/align/_search.py), repeated here so that
# `citecal --help` does not import the search; tests/align pins that they agree.
MAX_SEED = 2**32 - 1
MIN_RESAMPLES, MAX_RESAMPLES = 100, 100_000

if TYPE_CHECKING:
    from citecal.align import AlignResult, AlignSettings


@click.command("align")
@click.argument("annotations", type=click.Path(path_type=Path))
@click.option("--prompt", required=True, help="Start prompt: version (v1, …) or prompt file.")
@click.option("--model", default=None, help="Judge model (default: judge.judge_model).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the better prompt (Markdown with provenance front matter); "
    "required unless --dry-run. Nothing is written when no candidate beats the start.",
)
@click.option(
    "--folds",
    type=click.IntRange(2, 50),
    default=5,
    show_default=True,
    help="Folds by report: candidates learn from the others, are scored on this one.",
)
@click.option(
    "--metric",
    type=click.Choice(["weighted_kappa", "agreement", "spearman_rho", "f1"]),
    default="weighted_kappa",
    show_default=True,
    help="Figure that picks the winner.",
)
@click.option(
    "--examples",
    type=click.IntRange(0, 50),
    default=6,
    show_default=True,
    help="Few-shot examples per few-shot candidate (0: no few-shot candidates).",
)
@click.option(
    "--edits",
    type=click.IntRange(0, 20),
    default=4,
    show_default=True,
    help="Instruction edits to ask the prompt critic for (0: no critic).",
)
@click.option(
    "--max-candidates",
    type=click.IntRange(1, 50),
    default=10,
    show_default=True,
    help="Candidates to score at most (singles first, then combinations).",
)
@click.option(
    "--max-calls",
    type=click.IntRange(1),
    default=None,
    help="Send no request past this many calls (judge and critic, re-asks included).",
)
@click.option(
    "--max-cost",
    type=float,
    default=None,
    metavar="USD",
    callback=finite_dollars,
    help="Send no request whose prompt and max_tokens do not fit in what is left of USD.",
)
@click.option(
    "-y",
    "--yes",
    "yes",
    is_flag=True,
    help="Spend without asking when no --max-cost is set and the estimate is above "
    "judge.confirm_above_usd (USD 5).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=0,
    show_default=True,
    help="Fold and bootstrap seed.",
)
@click.option(
    "--resamples",
    type=click.IntRange(MIN_RESAMPLES, MAX_RESAMPLES),
    default=1000,
    show_default=True,
    help="Paired bootstrap resamples.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the whole result (every candidate, the comparison) as JSON.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the verdict cache.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the calls, tokens and cost the search would take; call nothing.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file ([judge] section).",
)
def align_command(
    annotations: Path,
    prompt: str,
    model: str | None,
    output: Path | None,
    folds: int,
    metric: str,
    examples: int,
    edits: int,
    max_candidates: int,
    max_calls: int | None,
    max_cost: float | None,
    yes: bool,
    seed: int,
    resamples: int,
    json_path: Path | None,
    no_cache: bool,
    dry_run: bool,
    config_file: Path | None,
) -> None:
    """Search for a judge prompt that agrees better with the labels in ANNOTATIONS.

    Candidates (instruction edits proposed by a prompt critic, few-shot examples
    mined from disagreements, combinations of the best) are built on training
    folds and scored on held-out reports; the best is written to OUTPUT only
    when a paired comparison with the start prompt shows it better (README
    "Aligning the judge").

    \b
    Exit codes: 0 a better prompt was written (or --dry-run), 1 no candidate
    was shown better than the start (nothing written), 2 bad input or judge
    unavailable.

    \b
    Examples:
      citecal align ann.parquet --prompt v1 -o prompts/v1-aligned.md
      citecal align ann.parquet --prompt v1 --metric agreement --max-calls 200 -o p.md
      citecal align ann.parquet --prompt v1 --dry-run
    """
    from citecal.align import AlignSettings, align_prompt
    from citecal.annotations import read_table
    from citecal.calibrate import load_annotations
    from citecal.commands._progress import progress_bar

    refuse_clobber(  # README "Security": an output never replaces an input
        [("-o/--output", output), ("--json", json_path)],
        [("ANNOTATIONS", annotations), ("--prompt", _file(prompt)), ("--config", config_file)],
    )
    if not dry_run:
        if output is None:
            raise InputError("-o/--output is required (unless --dry-run)")
        check_output(output)
    if json_path is not None:
        check_output(json_path)
    table = read_table(annotations)
    load_annotations(annotations)  # validates the human columns before any call
    config = load_config(None, config_file, {}).judge
    settings = AlignSettings(
        folds=folds,
        metric=metric,
        seed=seed,
        examples=examples,
        edits=edits,
        max_candidates=max_candidates,
        max_calls=max_calls,
        max_cost=max_cost,
        resamples=resamples,
    )
    settings.check()
    from citecal.align._dryrun import search_estimate

    line, estimate = search_estimate(
        table, config, prompt=prompt, model=model, settings=settings, use_cache=not no_cache
    )
    if dry_run:
        click.echo(line)
        return
    from citecal.commands._options import make_budget

    # README "Security": every request reserves from one ledger before it is sent; with no
    # cap, a search estimated above judge.confirm_above_usd asks first (or is refused).
    budget = make_budget(config, max_cost, yes, max_calls=max_calls)
    budget.check_estimate(estimate)
    from citecal.verify.judge import load_prompt, prompt_warning

    steering = prompt_warning(load_prompt(prompt))
    if steering is not None:
        click.echo(f"warning: {steering}", err=True)
    with progress_bar() as bar:
        task = bar.add_task("aligning", total=None)

        from rich.markup import escape

        def progress(what: str, done: int, total: int) -> None:
            # a candidate's name can carry a prompt file's name: escaped (README "Security")
            bar.update(task, description=escape(what), completed=done, total=total)

        result = align_prompt(
            table,
            config,
            prompt=prompt,
            model=model,
            settings=settings,
            use_cache=not no_cache,
            input_name=str(annotations),
            progress=progress,
            budget=budget,
        )
    click.echo(render_result(result, settings))
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if json_path is not None:
        atomic_write_text(json_path, result.model_dump_json(indent=2) + "\n")
    if result.kept and output is not None:
        atomic_write_text(output, result.prompt_file())
        click.echo(f"wrote {output} ({result.winner})")
        return
    click.echo(
        f"no candidate was shown better than the start prompt {result.parent}: nothing written"
    )
    sys.exit(1)


def _file(prompt: str) -> Path | None:
    """``--prompt`` when it names a file (else a version name such as ``v1``)."""
    return Path(prompt) if Path(prompt).is_file() else None


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _ci(ci: list[float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def render_result(result: AlignResult, settings: AlignSettings) -> str:
    """The candidates' out-of-sample scores, the decision and what it cost, as text."""
    import io

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    # Names, edits and reasons are untrusted text (a critic's edit, a file name, a model):
    # escaped, so "[/bold]" is printed, never read as markup (STYLE "Things to avoid").
    console = Console(width=110, record=True, file=io.StringIO())
    console.print(
        escape(
            f"align {result.input}: {result.n_records} records, {result.n_annotations} "
            f"annotations, {result.n_reports} reports, {result.folds} folds by report; start "
            f"{result.parent}; metric {result.metric} (out of sample)"
        )
    )
    grid = Table(title="Candidates (scored on reports they did not learn from)")
    grid.add_column("Candidate")
    grid.add_column(escape(result.metric), justify="right")
    grid.add_column("95% CI")
    grid.add_column("Gain", justify="right")
    grid.add_column("Gain 95% CI (paired)")
    grid.add_row("start", _num(result.before.value), _ci(result.before.ci), "", "")
    for c in result.candidates:
        mark = " *" if c.name == result.winner else ""
        grid.add_row(
            escape(c.name + mark),
            _num(c.score.value),
            _ci(c.score.ci),
            _num(c.gain.value),
            _ci(c.gain.ci),
        )
    console.print(grid)
    for c in result.candidates:
        for text in c.instructions if c.kind == "edit" else []:
            console.print(escape(f"  {c.name}: {text}"), soft_wrap=True)
    console.print(
        escape(
            f"{'kept' if result.kept else 'not kept'}: {result.winner or '—'} ({result.reason})"
        ),
        soft_wrap=True,
    )
    console.print(
        f"calls: {result.calls} ({result.judge_calls} judge, {result.critic_calls} critic), "
        f"{result.cache_hits} cache hit(s), {result.tokens} tokens, ${result.cost_usd:.4f}"
    )
    if result.stopped:
        console.print(escape(f"stopped: {result.stopped}; best so far kept"), soft_wrap=True)
    return console.export_text()
