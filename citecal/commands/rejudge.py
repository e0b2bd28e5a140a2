"""``citecal rejudge``: the same annotations, judged again with another prompt or model."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from citecal._io import check_output, refuse_clobber
from citecal.commands._options import (
    FiniteFloatRange,
    ask_with_bar_paused,
    budget_line,
    make_budget,
    spending_options,
)
from citecal.config import load_config
from citecal.errors import InputError


@click.command("rejudge")
@click.argument("annotations", type=click.Path(path_type=Path))
@click.option(
    "--prompt",
    "prompt",
    required=True,
    help="Judge prompt version (v1, …) or prompt file.",
)
@click.option("--model", default=None, help="Judge model (default: judge.judge_model).")
@click.option(
    "-o",
    "--output",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="New annotation table (.parquet, .csv or .jsonl), written atomically "
    "(required unless --anchor).",
)
@click.option(
    "--anchor",
    is_flag=True,
    help="Re-judge only the anchor set (records whose 2+ annotators all agree) and report "
    "how the judge does on it.",
)
@click.option(
    "--min-agreement",
    type=FiniteFloatRange(0, 1),
    default=None,
    help="With --anchor: exit 1 when the judge agrees with fewer anchors than this share.",
)
@click.option(
    "--few-shot-from",
    "few_shot_from",
    type=click.Path(path_type=Path),
    default=None,
    help="Annotation table to mine disagreement examples from, appended to the prompt.",
)
@click.option(
    "--split-by",
    type=click.Choice(["report"]),
    default="report",
    show_default=True,
    help="Few-shot examples never come from a report of ANNOTATIONS (no leakage).",
)
@click.option(
    "--examples",
    "n_examples",
    type=click.IntRange(1, 50),
    default=6,
    show_default=True,
    help="Few-shot examples at most.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the verdict cache.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the judge calls, tokens and cost it would take; call nothing, write nothing.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file ([judge] section).",
)
@spending_options
def rejudge_command(
    annotations: Path,
    prompt: str,
    model: str | None,
    output: Path | None,
    anchor: bool,
    min_agreement: float | None,
    few_shot_from: Path | None,
    split_by: str,
    n_examples: int,
    no_cache: bool,
    dry_run: bool,
    config_file: Path | None,
    max_cost: float | None,
    yes: bool,
) -> None:
    """Re-run the judge on the claim–code pairs of ANNOTATIONS; keep the human scores.

    Writes a table with the same rows and human columns and new llm_verdict,
    llm_confidence, llm_score, judge_model, prompt_version and judge_reasoning,
    ready for `citecal calibrate ANNOTATIONS --compare OUTPUT`. Verdicts are cached.

    With --anchor only the records people agree on (2+ annotators, all on one
    side of "supports") are judged, and the judge's agreement with them is
    printed next to the previous judge's: a check before a new prompt or model
    is used (README "Drift alarms").

    \b
    Exit codes: 0 done, 1 with --min-agreement when the judge falls short on the
    anchors, 2 bad input or judge unavailable.

    \b
    Examples:
      citecal rejudge ann.parquet --prompt prompts/v2.md -o ann-v2.parquet
      citecal rejudge ann.parquet --prompt v1 --few-shot-from older.parquet -o ann-fs.parquet
      citecal rejudge ann.parquet --anchor --prompt v2 --min-agreement 0.85
      citecal rejudge ann.parquet --prompt v2 --model gpt-4o --dry-run
      citecal rejudge ann.parquet --prompt v3 --max-cost 2 -o ann-v3.parquet
    """
    from citecal.annotations import read_table, write_table
    from citecal.calibrate import load_annotations
    from citecal.calibrate._fewshot import mine_few_shot
    from citecal.commands._progress import progress_bar
    from citecal.verify.judge import prompt_with_examples, rejudge_frame, rejudge_requests

    refuse_clobber(  # README "Security": an output never replaces an input
        [("-o/--output", output)],
        [("ANNOTATIONS", annotations), ("--few-shot-from", few_shot_from),
         ("--prompt", Path(prompt) if Path(prompt).is_file() else None),
         ("--config", config_file)],
    )  # fmt: skip
    if dry_run:
        output = None
    elif output is None and not anchor:
        raise InputError("-o/--output is required (unless --anchor)")
    if min_agreement is not None and not anchor:
        raise InputError("--min-agreement needs --anchor")
    if output is not None:
        if output.suffix.lower() not in (".parquet", ".csv", ".jsonl"):
            raise InputError(
                f"cannot tell the output format from {output.name!r}: use .parquet, .csv or .jsonl"
            )
        check_output(output)  # before any judge call
    table = read_table(annotations)
    load_annotations(annotations)  # validates the human columns before any API call
    all_records = int(table["record_id"].nunique())
    if anchor:
        from citecal.calibrate._anchor import anchor_records

        table = anchor_records(table)
    requests = rejudge_requests(table)
    config = load_config(None, config_file, {}).judge
    from citecal.verify.judge import load_prompt, prompt_warning

    steering = prompt_warning(load_prompt(prompt))  # README "Security"
    if steering is not None:
        click.echo(f"warning: {steering}", err=True)
    with tempfile.TemporaryDirectory(prefix="citecal-rejudge-") as tmp:
        prompt_spec = prompt
        if few_shot_from is not None:  # mined for --dry-run too: same errors, same prompt
            few = mine_few_shot(read_table(few_shot_from), table, k=n_examples, split_by=split_by)
            excluded = ", ".join(few.excluded_reports) or "none"
            click.echo(
                f"few-shot: {few.n_examples} example(s) from {few_shot_from} "
                f"({few.candidates} disagreeing record(s) available); reports of "
                f"{annotations} left out to avoid leakage: {excluded}",
                err=True,
            )
            if few.n_examples:
                prompt_spec = str(prompt_with_examples(prompt, few, Path(tmp)))
        if dry_run:  # counts the few-shot examples' tokens: they go with every call
            from citecal.pipeline import dry_run_line, estimate_requests

            est = estimate_requests(
                requests, config, prompt=prompt_spec, model=model, use_cache=not no_cache
            )
            click.echo(dry_run_line(est, unit="records"))
            return
        budget = make_budget(config, max_cost, yes)
        with progress_bar() as bar:
            ask_with_bar_paused(budget, bar)
            task = bar.add_task("judging records", total=len(requests))
            new, run = rejudge_frame(
                table,
                config,
                prompt=prompt_spec,
                model=model,
                use_cache=not no_cache,
                requests=requests,
                progress=lambda done: bar.update(task, completed=done),
                budget=budget,
            )
    fmt = write_table(new, output) if output is not None else None
    versions = sorted(set(new["prompt_version"].dropna().astype(str)))
    changed = int(
        (
            table.drop_duplicates("record_id").set_index("record_id")["llm_verdict"]
            != new.drop_duplicates("record_id").set_index("record_id")["llm_verdict"]
        ).sum()
    )
    click.echo(
        f"rejudged {len(requests)} record(s) ({len(table)} annotation rows) with prompt "
        f"{', '.join(versions) or prompt}: {run.calls} API call(s), {run.cache_hits} cache "
        f"hit(s), ${run.cost_usd:.4f}; {changed} verdict(s) changed"
        + (f"; wrote {output} ({fmt})" if output is not None else "")
    )
    for warning in run.warnings:
        click.echo(f"warning: {warning}", err=True)
    spending = budget_line(budget)
    if spending is not None:
        click.echo(spending, err=True)
    if anchor:
        from citecal.calibrate._anchor import anchor_check

        check = anchor_check(table, new, all_records)
        click.echo(check.line(", ".join(versions) or prompt))
        if min_agreement is not None and check.new_rate < min_agreement:
            click.echo(
                f"anchor check failed: agreement {check.new_rate:.3f} < {min_agreement:g}",
                err=True,
            )
            sys.exit(1)
