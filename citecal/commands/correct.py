"""``citecal correct``: repair the failed citations of a report (README "`citecal correct`")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from citecal._io import (
    atomic_write_text,
    check_output,
    refuse_clobber,
)
from citecal.commands._options import (
    budget_line,
    cascade_choice,
    cascade_options,
    confidence_options,
    confidence_overrides,
    make_budget,
    output_options,
    spending_options,
)
from citecal.config import load_config


def run_correct(
    *,
    report: Path,
    repo: Path,
    rev: str | None,
    fmt: str,
    output: Path | None,
    corrections_path: Path | None,
    max_iterations: int,
    no_llm: bool,
    dry_run: bool,
    config_file: Path | None,
    prompt: str | None,
    model: str | None,
    no_cache: bool,
    strict: bool = False,
    semantic: bool = False,
    max_cost: float | None = None,
    yes: bool = False,
    judge_settings: dict[str, Any] | None = None,
    cascade: str | None = None,
) -> None:
    """What ``citecal correct`` and ``citecal eval --correct`` do (one implementation).

    ``judge_settings``: ``[judge]`` overrides from the command line (``--confidence``, ...).
    ``cascade``: the cascade file to evaluate through ("default", a path) or None
    (``--no-cascade``; docs/explanation/cascade.md).
    """
    from citecal.commands._judge import build_judge_or_reason
    from citecal.correct import correct_report, read_report, unified_diff
    from citecal.correct._render import render_markdown, render_table, summary_line
    from citecal.correct._rewrite import build_rewriter
    from citecal.errors import InputError
    from citecal.source import open_store

    if max_iterations < 1:
        raise InputError("--max-iterations must be at least 1")
    refuse_clobber(  # README "Security": an output never replaces an input
        [("-o/--output", output), ("--corrections", corrections_path)],
        [("REPORT", report), ("--config", config_file),
         ("--cascade", None if cascade in (None, "default") else cascade),
         ("--simulated-from", (judge_settings or {}).get("simulated_from"))],
    )  # fmt: skip
    for target in (output, corrections_path):
        check_output(target)  # a bad path fails now, before any work
    spec = None
    if cascade is not None:  # a bad cascade file fails before any work
        from citecal.cascade import load_cascade

        spec = load_cascade(cascade)
    text, bom = read_report(report)
    overrides: dict[str, dict[str, Any]] = {"judge": dict(judge_settings or {})}
    if prompt:
        overrides["judge"]["prompt"] = prompt
    repo_dir = repo if repo.is_dir() else None
    config = load_config(repo_dir, config_file, overrides)
    budget = make_budget(config.judge, max_cost, yes)
    judge, reason = (
        (None, "--no-llm")
        if no_llm
        else build_judge_or_reason(config, prompt, model, no_cache, budget)
    )
    rewriter = build_rewriter(config, judge, model) if judge is not None else None
    try:
        with open_store(repo, rev, config.validation) as store:
            run = correct_report(
                text,
                store,
                config,
                judge=judge,
                no_judge_reason=reason,
                rewriter=rewriter,
                max_iterations=max_iterations,
                report_name=str(report),
                semantic=semantic,
                cascade=spec,
            )
    finally:
        if judge is not None:
            judge.close()
    spending = budget_line(budget) if judge is not None else None
    if spending is not None:
        click.echo(spending, err=True)
    out = run.output
    if out.iterations == 0:
        total = run.before.summary.total_citations
        click.echo(
            f"nothing to fix: none of the {total} citation(s) in {report} failed; nothing written"
        )
        return
    diff = unified_diff(bom + run.original, bom + run.corrected, str(report))
    if fmt == "json":
        click.echo(out.model_dump_json(indent=2))
    elif fmt == "markdown":
        click.echo(render_markdown(out, diff), nl=False)
    else:
        click.echo(render_table(out, diff), nl=False)
    if dry_run:
        click.echo(f"dry run: {summary_line(out)}; nothing written", err=True)
    else:
        if corrections_path is not None:
            atomic_write_text(
                corrections_path, out.corrections_file().model_dump_json(indent=2) + "\n"
            )
            click.echo(f"wrote {corrections_path}", err=True)
        if output is not None:
            atomic_write_text(output, bom + run.corrected)
            click.echo(f"wrote {output}", err=True)
        elif run.changed:
            click.echo("the corrected report was not saved: pass --output FILE", err=True)
    if strict and out.remaining:
        click.echo(f"strict: {len(out.remaining)} citation(s) still fail", err=True)
        sys.exit(1)


@click.command("correct")
@click.argument("report", type=click.Path(path_type=Path))
@click.option(
    "--repo",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="Repository the report cites (a directory, or a git repository with --rev).",
)
@click.option("--rev", default=None, help="Read files at this git revision (no checkout).")
@output_options(("table", "json", "markdown"))
@click.option(
    "--corrections",
    "corrections_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the corrections file (JSON, schema_version 1) for review or `citecal push`.",
)
@click.option(
    "--max-iterations",
    type=int,
    default=3,
    show_default=True,
    help="Correction rounds at most (README '`citecal correct`').",
)
@click.option("--no-llm", is_flag=True, help="No LLM: relocate, expand/shrink and remove only.")
@click.option("--dry-run", is_flag=True, help="Show the corrections and the diff; write nothing.")
@click.option("--strict", is_flag=True, help="Exit 1 when failed citations remain.")
@click.option(
    "--semantic",
    is_flag=True,
    help="Also rank verified places with an offline embedding model (citecal[semantic]).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file (default: [tool.citecal] / citecal.toml in the repo).",
)
@click.option("--prompt", default=None, help="Judge prompt version (v1, …) or prompt file.")
@click.option("--model", default=None, help="Judge and rewrite model (default: judge.judge_model).")
@click.option("--no-cache", is_flag=True, help="Ignore the verdict cache for this run.")
@spending_options
@confidence_options
@cascade_options
def correct_command(
    report: Path,
    repo: Path,
    rev: str | None,
    fmt: str,
    output: Path | None,
    corrections_path: Path | None,
    max_iterations: int,
    no_llm: bool,
    dry_run: bool,
    strict: bool,
    semantic: bool,
    config_file: Path | None,
    prompt: str | None,
    model: str | None,
    no_cache: bool,
    max_cost: float | None,
    yes: bool,
    confidence: str | None,
    samples: int | None,
    simulated_from: Path | None,
    cascade_file: str | None,
    no_cascade: bool,
) -> None:
    """Repair the failed citations of REPORT and show what changed.

    Each round evaluates the report as `citecal eval` does and gives every failed
    citation its next strategy: relocate / expand / shrink (a place the verifier
    accepts), rewrite the claim (LLM, re-judged), remove the citation (nothing
    supports the claim). Citations that do not fail are never touched; the
    corrected report is byte-identical to REPORT elsewhere.

    \b
    Exit codes: 0 done (also when nothing needed fixing); 1 with --strict when
    failed citations remain; 2 bad input.

    \b
    Examples:
      citecal correct report.md --repo . --no-llm -o fixed.md --corrections fixes.json
      citecal correct report.md --repo ~/src/project --rev v1.2.0 --dry-run
      citecal correct report.md --repo . -f markdown > corrections.md
      citecal correct report.md --repo . --max-cost 1 -o fixed.md
    """
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
        semantic=semantic,
        max_cost=max_cost,
        yes=yes,
        judge_settings=confidence_overrides(confidence, samples, simulated_from),
        cascade=cascade_choice(cascade_file, no_cascade),
    )
