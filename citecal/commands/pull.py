"""``citecal pull``: annotators' answers from Argilla → the annotation table."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from citecal._io import check_output, refuse_clobber
from citecal.commands._options import argilla_options
from citecal.config import load_config
from citecal.errors import InputError


def parse_since(value: str | None) -> datetime | None:
    """An ISO 8601 date or time stamp (UTC when it has no offset)."""
    if value is None:
        return None
    from citecal.annotate import parse_timestamp

    try:
        return parse_timestamp(value)
    except ValueError:
        raise InputError(
            f"--since {value!r} is not an ISO 8601 time stamp (e.g. 2026-11-22 or "
            "2026-11-22T10:00:00+00:00)"
        ) from None


@click.command("pull")
@click.option("--dataset", "dataset", required=True, help="Argilla dataset name.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Annotation table: .parquet, .csv or .jsonl (written atomically).",
)
@click.option("--since", default=None, help="Only responses submitted at or after this time.")
@argilla_options()
def pull_command(
    dataset: str,
    output: Path,
    since: str | None,
    workspace: str | None,
    config_file: Path | None,
    spec: str | None,
) -> None:
    """Export every submitted answer of every annotator, joined with the judge's verdict.

    One row per (record, annotator) in the columns `citecal calibrate` reads;
    drafts and discarded responses are counted and left out.

    \b
    Examples:
      citecal pull --dataset review -o annotations.parquet
      citecal pull --dataset review -o new.csv --since 2026-11-22T00:00:00Z
      citecal pull --dataset review-yn --spec citation_support_binary -o yn.parquet
    """
    from citecal.annotate import load_spec, pull_annotations
    from citecal.annotations import TABLE_COLUMNS, write_table
    from citecal.commands._progress import counter, progress_bar

    if output.suffix.lower() not in (".parquet", ".csv", ".jsonl"):
        raise InputError(
            f"cannot tell the output format from {output.name!r}: use .parquet, .csv or .jsonl"
        )
    spec_file = Path(spec) if spec is not None and Path(spec).is_file() else None
    refuse_clobber([("-o/--output", output)], [("--config", config_file), ("--spec", spec_file)])
    check_output(output)  # before any download
    definition = load_spec(spec)
    config = load_config(None, config_file).argilla
    with progress_bar() as bar:
        result = pull_annotations(
            definition,
            config,
            dataset_name=dataset,
            workspace=workspace,
            since=parse_since(since),
            progress=counter(bar, f"pulling {dataset}"),
        )
    fmt = write_table(result.table, output)
    c = result.counts
    annotators = result.table["annotator"].nunique() if len(result.table) else 0
    click.echo(
        # "N of M records answered": the dataset's size alone read as if every record had
        # been answered (issue 24, what a newcomer hit).
        f"wrote {c.exported} annotations ({annotators} annotators, "
        f"{c.records - c.pending_records} of {c.records} records answered, "
        f"{len(TABLE_COLUMNS)} columns) to {output} as {fmt}; skipped {c.drafts} drafts, "
        f"{c.discarded} discarded"
        + (f", {c.before_since} before --since" if since else "")
        + f"; {c.pending_records} records without a submitted answer"
    )
    if c.legacy_records:
        click.echo(
            f"warning: {c.legacy_records} record(s) were pushed by an older citecal without "
            "their raw data: their cited_code is the Markdown annotators saw and start_line, "
            "end_line and the context are empty (rejudge cannot use them); push the evaluation "
            "again to attach it (answers are kept), then pull",
            err=True,
        )
