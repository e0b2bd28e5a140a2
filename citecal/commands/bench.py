"""``citecal bench groundtruth``: score citecal's verdicts against people's labels."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from citecal._io import check_output
from citecal.commands._emit import emit_text
from citecal.commands._options import output_options
from citecal.config import load_config

if TYPE_CHECKING:
    from citecal.bench import GroundTruth
    from citecal.models import EvalResult

DEFAULT_DATASET = Path("datasets") / "groundtruth"


@click.group("bench")
def bench_command() -> None:
    """Benchmarks against people's labels (datasets/groundtruth)."""


@bench_command.command("groundtruth")
@click.option(
    "--dataset",
    type=click.Path(path_type=Path),
    default=DEFAULT_DATASET,
    show_default=True,
    help="Directory of label sets (one sub-directory per package).",
)
@click.option(
    "--sources",
    type=click.Path(path_type=Path),
    default=None,
    help="Fetched package sources (default: .citecal/groundtruth next to the dataset's repo).",
)
@click.option("--only", multiple=True, help="Score only this label set (repeatable).")
@click.option("--no-llm", is_flag=True, help="Rules only: what they do not decide is undecided.")
@click.option("--prompt", default=None, help="Judge prompt version or file.")
@click.option("--model", default=None, help="Judge model.")
@click.option("--concurrency", type=click.IntRange(1, 256), default=None)
@click.option("--no-cache", is_flag=True, help="Ignore the verdict cache.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file.",
)
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    default=None,
    help="Exit 1 when a figure is worse than this baseline JSON.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write this run's figures as the new baseline.",
)
@output_options(("table", "json", "markdown"))
def groundtruth_command(
    dataset: Path,
    sources: Path | None,
    only: tuple[str, ...],
    no_llm: bool,
    prompt: str | None,
    model: str | None,
    concurrency: int | None,
    no_cache: bool,
    config_file: Path | None,
    baseline: Path | None,
    write_baseline: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Precision, recall, false supports/rejects and decision coverage against people.

    \b
    Positive = "supports" (a person's score >= 2; citecal's verdict `supports`).
    Exit codes: 0 scored, 1 below --baseline, 2 bad input.

    \b
    Examples:
      citecal bench groundtruth --no-llm
      citecal bench groundtruth --no-llm --baseline datasets/groundtruth/baseline.json
      citecal bench groundtruth -f markdown -o groundtruth.md
    """
    check_output(output)  # before any judge call
    check_output(write_baseline)
    from citecal._io import read_text_file
    from citecal.bench import (
        check_baseline_sets,
        load_groundtruth,
        read_baseline,
        regressions,
        render_bench_markdown,
        render_bench_table,
        run_groundtruth,
    )
    from citecal.bench import write_baseline as save_baseline
    from citecal.commands.eval import build_judge_or_reason
    from citecal.pipeline import evaluate_report
    from citecal.source import open_store

    root = sources or dataset.resolve().parents[1] / ".citecal" / "groundtruth"
    sets = load_groundtruth(dataset, root, only)
    base = read_baseline(baseline) if baseline is not None else None
    if base is not None and baseline is not None:
        check_baseline_sets(base, [t.id for t in sets], baseline)
    overrides: dict[str, dict[str, Any]] = {"judge": {}}
    if concurrency:
        overrides["judge"]["concurrency"] = concurrency
    if prompt:
        overrides["judge"]["prompt"] = prompt
    config = load_config(None, config_file, overrides)
    judge, reason = (
        (None, "--no-llm") if no_llm else build_judge_or_reason(config, prompt, model, no_cache)
    )
    if judge is None and not no_llm:
        click.echo(f"warning: no judge ({reason}): judged claims stay undecided", err=True)

    def evaluate(truth: GroundTruth) -> EvalResult:
        with open_store(truth.sources, None, config.validation) as store:
            return evaluate_report(
                read_text_file(truth.report_path, "report"),
                store,
                config,
                judge=judge,
                no_judge_reason=reason,
                report_name=str(truth.report_path),
            )

    try:
        report = run_groundtruth(sets, evaluate, judge.model if judge is not None else None)
    finally:
        if judge is not None:
            judge.close()
    if fmt == "json":
        text = report.model_dump_json(indent=2) + "\n"
    elif fmt == "markdown":
        text = render_bench_markdown(report)
    else:
        console = Console(record=True, width=120, file=io.StringIO())
        render_bench_table(report, console)
        text = console.export_text()
    emit_text(text, output)
    if write_baseline is not None:
        save_baseline(write_baseline, report)
        click.echo(f"wrote baseline {write_baseline}", err=True)
    if base is not None:
        worse = regressions(report.overall, base)
        for line in worse:
            click.echo(f"regression: {line}", err=True)
        if worse:
            sys.exit(1)
