"""``citecal estimate``: the citation precision people would measure, from judge + a few labels."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from citecal._io import check_output, refuse_clobber
from citecal.commands._emit import emit_text
from citecal.commands._options import FiniteFloatRange, output_options, parse_thresholds


def _strata(text: str) -> tuple[str, ...]:
    from citecal.calibrate._estimate import STRATA
    from citecal.errors import InputError

    names = tuple(p.strip() for p in text.split(",") if p.strip())
    for name in names:
        if name not in STRATA:
            raise InputError(f"--strata {name!r}: use any of {', '.join(STRATA)} (comma-separated)")
    return names


@click.command("estimate")
@click.argument("judged", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-a",
    "--annotations",
    required=True,
    type=click.Path(path_type=Path),
    help="Annotation table (citecal pull output, or record_id, annotator, human_score).",
)
@output_options(("table", "json", "markdown"))
@click.option(
    "--strata",
    default="mode,language,repo",
    show_default=True,
    help="Dimensions to stratify by and break down by (comma-separated; '' for none).",
)
@click.option(
    "--min-labelled",
    type=click.IntRange(2, 10_000),
    default=20,
    show_default=True,
    help="Strata with fewer labelled records are pooled.",
)
@click.option(
    "--predictor",
    type=click.Choice(["score", "verdict"]),
    default="score",
    show_default=True,
    help="What the judge contributes: its support score or its binary verdict.",
)
@click.option(
    "--level",
    type=FiniteFloatRange(0.5, 0.999),
    default=0.95,
    show_default=True,
    help="Confidence level of the intervals.",
)
@click.option(
    "--target-width",
    type=FiniteFloatRange(0.001, 1.0),
    default=None,
    metavar="W",
    help="Say how many labels would bring the corrected interval to width W (0.001 to 1), "
    "under the current design and under uniform sampling (README 'How many labels').",
)
@click.option(
    "--fail-under",
    "fail_under",
    default=None,
    metavar="precision=X",
    help="Exit 1 when the corrected interval's lower bound is below X (CI gate).",
)
def estimate_command(
    judged: tuple[Path, ...],
    annotations: Path,
    fmt: str,
    output: Path | None,
    strata: str,
    min_labelled: int,
    predictor: str,
    level: float,
    target_width: float | None,
    fail_under: str | None,
) -> None:
    """Estimate citation precision as people would score it, with an honest interval.

    JUDGED are the judged citations: `citecal eval --format json` files,
    directories of them, `citecal eval-batch` outputs (OUT or
    OUT/citations.parquet), or tables (.parquet, .csv, .jsonl) with record_id
    and llm_verdict and/or llm_score. Labelled records are joined on the record
    id `citecal push` gives each citation. The corrected estimate (stratified
    PPI++) is unbiased, and its interval valid, when the labelled records are a
    uniform random sample of the judged ones or carry push's sampling weights
    (an active sample's probabilities, over one or more rounds, too); see README
    "Estimates". A partly labelled census counts as a random sample only when
    push served it in a recorded random order; unknown designs are refused.

    \b
    Exit codes: 0 done, 1 with --fail-under when the gate fails, 2 bad input.

    \b
    Examples:
      citecal estimate eval.json -a annotations.parquet
      citecal estimate evals/ -a annotations.parquet -f json -o estimate.json
      citecal estimate out/citations.parquet -a ann.parquet --fail-under precision=0.8
      citecal estimate eval.json -a annotations.parquet --target-width 0.05
    """
    from citecal.calibrate._estimate import GATE_NAMES, apply_gate, estimate
    from citecal.calibrate._render_markdown import render_estimate_markdown
    from citecal.calibrate._render_table import render_estimate_table

    thresholds = parse_thresholds(fail_under, GATE_NAMES)
    refuse_clobber(  # README "Security": an output never replaces an input
        [("-o/--output", output)],
        [("--annotations", annotations), *(("JUDGED", j) for j in judged)],
    )
    check_output(output)
    report = estimate(
        list(judged),
        annotations,
        by=_strata(strata),
        min_labelled=min_labelled,
        predictor=predictor,  # type: ignore[arg-type]
        level=level,
        target_width=target_width,
    )
    if thresholds:
        report = apply_gate(report, thresholds)
    if fmt == "json":
        text = report.model_dump_json(indent=2) + "\n"
    elif fmt == "markdown":
        text = render_estimate_markdown(report)
    else:
        text = render_estimate_table(report)
    emit_text(text, output)
    if report.gate is not None and not report.gate.passed:
        for failure in report.gate.failures:
            click.echo(f"gate failed: {failure}", err=True)
        sys.exit(1)
