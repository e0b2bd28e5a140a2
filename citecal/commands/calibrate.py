"""``citecal calibrate``: how well does the judge agree with the annotators?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Any

import click
import pydantic_core

from citecal._io import atomic_write, atomic_write_text, check_output
from citecal.commands._options import output_options
from citecal.config import load_config

BY_CHOICES = ("mode", "model", "prompt_version", "language", "report", "repo")


@click.command("calibrate")
@click.argument("annotations", type=click.Path(path_type=Path))
@click.option(
    "--by",
    "by",
    multiple=True,
    type=click.Choice(BY_CHOICES),
    help="Breakdown dimension; repeat for several (default: mode, model, prompt_version, "
    "and repo when the table spans several repositories).",
)
@output_options(("table", "json", "markdown", "html"))
@click.option(
    "--compare",
    "compare",
    type=click.Path(path_type=Path),
    default=None,
    help="Second table of the same annotations judged by another prompt/model (B vs A).",
)
@click.option(
    "--fail-if-worse",
    is_flag=True,
    help="With --compare: exit 1 when B is significantly worse than A (CI gate).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(-1, 1),
    default=None,
    help="Spearman ρ above which the judge counts as calibrated (default 0.6).",
)
@click.option(
    "--resamples",
    type=click.IntRange(0, 100_000),
    default=None,
    help="Bootstrap resamples (default 1000; 0 disables CIs).",
)
@click.option("--seed", type=int, default=None, help="Bootstrap seed (default 0).")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file ([calibration] section).",
)
def calibrate_command(
    annotations: Path,
    by: tuple[str, ...],
    fmt: str,
    output: Path | None,
    compare: Path | None,
    fail_if_worse: bool,
    threshold: float | None,
    resamples: int | None,
    seed: int | None,
    config_file: Path | None,
) -> None:
    """Calibrate the judge against the human scores in ANNOTATIONS.

    ANNOTATIONS is the table written by `citecal pull` (Parquet), or CSV / JSONL
    with the same columns. Figures are over (record, annotator) pairs with 95%
    cluster-bootstrap CIs by report; see README "Calibration".

    \b
    Exit codes: 0 done, 1 with --fail-if-worse when B is significantly worse, 2 bad input.

    \b
    Examples:
      citecal calibrate annotations.parquet
      citecal calibrate annotations.parquet --by language -f html -o calibration.html
      citecal calibrate v1.parquet --compare v2.parquet --fail-if-worse
    """
    from citecal.calibrate import calibrate
    from citecal.errors import InputError

    if fail_if_worse and compare is None:
        raise InputError("--fail-if-worse needs --compare B")
    check_output(output)
    overrides: dict[str, dict[str, Any]] = {"calibration": {}}
    calibration = overrides["calibration"]
    if threshold is not None:
        calibration["spearman_threshold"] = threshold
    if resamples is not None:
        calibration["bootstrap_resamples"] = resamples
    config = load_config(None, config_file, overrides).calibration
    if seed is not None:
        config.seed = seed
    report = calibrate(annotations, by=by or None, config=config, compare=compare)
    _emit(report, fmt, output)
    if fail_if_worse and report.compare is not None and report.compare.significantly_worse:
        click.echo(
            f"B ({compare}) is significantly worse than A ({annotations}); failing as asked",
            err=True,
        )
        sys.exit(1)


def _emit(report: Any, fmt: str, output: Path | None) -> None:
    from citecal.calibrate._render import render_markdown, render_table

    if fmt == "json":
        # Bytes straight from pydantic (what model_dump_json encodes), written as they are:
        # a year of disagreements is 100+ MB of JSON, not to be copied as str, str + "\n"
        # and bytes again.
        data = pydantic_core.to_json(report, indent=2)

        def write(fh: IO[bytes]) -> None:
            fh.write(data)
            fh.write(b"\n")

        if output is None:
            sys.stdout.flush()
            write(sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            atomic_write(output, write)
            click.echo(f"wrote {output}", err=True)
        return
    if fmt == "markdown":
        text = render_markdown(report)
    elif fmt == "html":
        from citecal.calibrate._html import render_html  # matplotlib: only for html

        text = render_html(report)
    else:
        text = render_table(report)
    if output is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)
