"""``citecal rebase``: move a report's citations from one git revision to another."""

from __future__ import annotations

import io
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from citecal._io import atomic_write_text, check_output, refuse_clobber
from citecal.commands._options import output_options
from citecal.config import load_config


@click.command("rebase")
@click.argument("report", type=click.Path(path_type=Path))
@click.option(
    "--repo",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="The git repository the report cites.",
)
@click.option(
    "--from",
    "from_rev",
    default=None,
    help="Revision the report was written against (default: the report's citecal-rev line).",
)
@click.option("--to", "to_rev", required=True, help="Revision to move the citations to.")
@output_options(("table", "json"))
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file.",
)
def rebase_command(
    report: Path,
    repo: Path,
    from_rev: str | None,
    to_rev: str,
    fmt: str,
    output: Path | None,
    config_file: Path | None,
) -> None:
    """Move the citations of REPORT from revision --from to revision --to.

    Each citation is unchanged, moved (followed through the diff, or found again by
    its content), changed (its code was rewritten: re-verified at the new place) or
    deleted. The outcomes go to standard output; --output writes the rebased report,
    which records --to in its `<!-- citecal-rev: ... -->` line.

    \b
    Examples:
      citecal rebase report.md --repo . --from v1.4.0 --to v1.5.0 -o report-v1.5.md
      citecal rebase report.md --repo . --to HEAD -f json
    """
    from citecal.correct import read_report, rebase_report, report_revision, unified_diff
    from citecal.errors import InputError

    refuse_clobber([("-o/--output", output)], [("REPORT", report), ("--config", config_file)])
    check_output(output)
    text, bom = read_report(report)
    from_rev = from_rev or report_revision(text)
    if from_rev is None:
        raise InputError(
            f"{report} records no revision (<!-- citecal-rev: ... -->): pass --from REV"
        )
    config = load_config(repo if repo.is_dir() else None, config_file, {})
    run = rebase_report(text, repo, from_rev, to_rev, config, report_name=str(report))
    result = run.result
    if fmt == "json":
        click.echo(result.model_dump_json(indent=2))
    else:
        console = Console(record=True, width=140, file=io.StringIO())
        counts = ", ".join(f"{n} {o}" for o, n in result.counts.items())
        console.print(  # the report's name and its citecal-rev line are data (README "Security")
            escape(
                f"citecal rebase · {report}: {result.from_rev} ({result.from_commit[:12]}) → "
                f"{result.to_rev} ({result.to_commit[:12]}): {counts}"
            )
        )
        table = Table()
        for col in ("citation", "outcome", "new", "how", "verdict", "claim"):
            table.add_column(col, overflow="fold")
        for c in result.citations:
            table.add_row(
                Text(c.citation),
                Text(c.outcome),
                Text(str(c.new) if c.new is not None else "—"),
                Text(c.how),
                Text(c.verdict or ""),
                Text(c.claim),
            )
        console.print(table)
        click.echo(console.export_text(), nl=False)
        diff = unified_diff(bom + run.original, bom + run.rebased, str(report))
        if diff:
            click.echo(diff, nl=False)
    if output is not None:
        atomic_write_text(output, bom + run.rebased)
        click.echo(f"wrote {output}", err=True)
