"""``citecal bench groundtruth``: score citecal's verdicts against people's labels."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from citecal._io import check_output, check_replace, refuse_clobber
from citecal.commands._emit import emit_text
from citecal.commands._options import FiniteFloatRange, output_options
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
@click.option(
    "--judge",
    "judge_kind",
    type=click.Choice(["llm", "labels"]),
    default="llm",
    show_default=True,
    help="labels: a judge that answers from the labels themselves (always right), served by "
    "the local OpenAI-protocol test server: what is left is the pipeline's own loss.",
)
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
@click.option(
    "--folds",
    type=click.Choice(["package"]),
    default=None,
    help="Score the cascade leave-one-package-out: trained and tuned on the other packages.",
)
@click.option(
    "--agreement",
    default="supports=0.98,not_supports=0.90",
    show_default=True,
    help="Agreement the cascade's thresholds guarantee: one level or one per verdict.",
)
@click.option(
    "--delta",
    type=FiniteFloatRange(0.001, 0.5),
    default=0.1,
    show_default=True,
    help="Probability that the guarantee fails.",
)
@click.option(
    "--cascade",
    "cascade_file",
    default=None,
    metavar="FILE|default",
    help="Evaluate through this cascade (README 'The cascade'): rules and local tiers decide "
    "what their thresholds allow, the judge the rest.",
)
@click.option(
    "--write-cascade",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Train the verifier on every label set, set thresholds on --thresholds-on labels; "
    "write the cascade file (an existing file needs --force).",
)
@click.option(
    "--thresholds-on",
    type=click.Choice(["natural", "all"]),
    default="natural",
    show_default=True,
    help="With --folds/--write-cascade: the labels the thresholds are set on. The verifier "
    "learns from every label; planted faults are a stress test, not calibration data.",
)
@click.option("--force", is_flag=True, help="With --write-cascade: replace an existing file.")
@output_options(("table", "json", "markdown"))
def groundtruth_command(
    dataset: Path,
    sources: Path | None,
    only: tuple[str, ...],
    no_llm: bool,
    judge_kind: str,
    prompt: str | None,
    model: str | None,
    concurrency: int | None,
    no_cache: bool,
    config_file: Path | None,
    baseline: Path | None,
    write_baseline: Path | None,
    folds: str | None,
    agreement: str,
    delta: float,
    write_cascade: Path | None,
    thresholds_on: str,
    force: bool,
    cascade_file: str | None,
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
      citecal bench groundtruth --judge labels
      citecal bench groundtruth -f markdown -o groundtruth.md
      citecal bench groundtruth --no-llm --folds package
      citecal bench groundtruth --no-llm --write-cascade cascade.json --force
    """
    from citecal.bench import dataset_inputs

    refuse_clobber(  # README "Security": an output never replaces an input (a label file)
        [("-o/--output", output), ("--write-baseline", write_baseline),
         ("--write-cascade", write_cascade)],
        [*(("--dataset", p) for p in dataset_inputs(dataset)), ("--baseline", baseline),
         ("--config", config_file),
         ("--cascade", None if cascade_file in (None, "default") else cascade_file)],
    )  # fmt: skip
    check_replace(write_cascade, force, "cascade", "--write-cascade")
    check_output(output)  # before any judge call
    check_output(write_baseline)
    if no_llm and judge_kind == "labels":
        raise click.UsageError("--judge labels and --no-llm exclude each other")
    if folds is not None or write_cascade is not None:
        check_output(write_cascade)
        _cascade_bench(
            dataset,
            sources,
            only,
            config_file,
            folds,
            agreement,
            delta,
            write_cascade,
            None if thresholds_on == "all" else frozenset({thresholds_on}),
            fmt,
            output,
        )
        return
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
    from citecal.commands._judge import build_judge_or_reason
    from citecal.pipeline import evaluate_report
    from citecal.source import open_store

    cascade = None
    if cascade_file is not None:
        from citecal.cascade import load_cascade

        cascade = load_cascade(cascade_file)
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
    server = None
    if judge_kind == "labels":
        from citecal.testing import FakeOpenAIServer
        from citecal.testing.labels_judge import LabelsJudge

        labels_judge = LabelsJudge.from_groundtruth(sets)
        server = FakeOpenAIServer(handler=labels_judge).start()
        overrides["judge"]["base_url"] = server.base_url
        no_cache = True  # the cache would hand the real judge's verdicts back
        model = model or "labels"
    try:
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
                    cascade=cascade,
                )

        try:
            report = run_groundtruth(sets, evaluate, judge.model if judge is not None else None)
        finally:
            if judge is not None:
                judge.close()
    finally:
        if server is not None:
            server.stop()
            click.echo(
                f"labels judge: {labels_judge.answered} claims answered, "
                f"{labels_judge.unmatched} without a matching label",
                err=True,
            )
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


def _cascade_bench(
    dataset: Path,
    sources: Path | None,
    only: tuple[str, ...],
    config_file: Path | None,
    folds: str | None,
    agreement: str,
    delta: float,
    write_cascade: Path | None,
    thresholds_on: frozenset[str] | None,
    fmt: str,
    output: Path | None,
) -> None:
    """``--folds package`` / ``--write-cascade``: rules → local verifier (README "The cascade")."""
    from citecal.bench import load_groundtruth
    from citecal.bench._folds import groundtruth_rows, leave_one_package_out
    from citecal.bench._render import render_folds_markdown, render_folds_table
    from citecal.cascade import parse_agreement, save_cascade
    from citecal.cascade._training import fit_cascade

    levels = parse_agreement(agreement)
    root = sources or dataset.resolve().parents[1] / ".citecal" / "groundtruth"
    sets = load_groundtruth(dataset, root, only)
    scored, rows = groundtruth_rows(sets, load_config(None, config_file, {}))
    if write_cascade is not None:
        spec = fit_cascade(
            list(rows.values()),
            levels,
            delta,
            {
                "source": f"{dataset} ({', '.join(g.id for g in sets)})",
                "sets": [g.id for g in sets],
            },
            thresholds_on=thresholds_on,
        )
        save_cascade(write_cascade, spec)
        on = "" if thresholds_on is None else f", thresholds on {spec.labels['n']} natural"
        click.echo(f"wrote cascade {write_cascade} ({len(rows)} labels{on})", err=True)
        if folds is None:
            return
    report = leave_one_package_out(scored, rows, levels, delta, thresholds_on=thresholds_on)
    if fmt == "json":
        text = report.model_dump_json(indent=2) + "\n"
    elif fmt == "markdown":
        text = render_folds_markdown(report)
    else:
        console = Console(record=True, width=130, file=io.StringIO())
        render_folds_table(report, console)
        text = console.export_text()
    emit_text(text, output)
