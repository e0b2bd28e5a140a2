"""The ``citecal`` command line: thin commands over the library.

Each command parses options, calls one library function and prints. Library
errors are typed (:mod:`citecal.errors`); :class:`CitecalGroup` turns them
into one readable line and the error's exit code (2 for usage and input
errors), never a traceback.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from citecal import __version__
from citecal.commands._options import output_options
from citecal.errors import CitecalError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class CitecalGroup(click.Group):
    """A click group that reports citecal's expected errors in one line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CitecalError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=CitecalGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="citecal")
def cli() -> None:
    """Check that a report's citations support its claims, and calibrate the judge.

    \b
    citecal eval report.md --repo path/to/repo      verify every citation
    citecal correct report.md --repo . -o fixed.md  repair failed citations
    citecal rebase report.md --repo . --from v1 --to v2   move citations to a new revision
    citecal eval-batch reports.csv -o out/          thousands of reports on Dask
    citecal push eval.json --dataset review         queue claims for annotators
    citecal pull --dataset review -o ann.parquet    fetch their scores
    citecal calibrate ann.parquet                   judge-human agreement
    citecal estimate eval.json -a ann.parquet       corrected precision, 95% interval
    citecal validate answers.jsonl                  gate structured answer citations
    citecal chunks docs/                            sentence and definition ids
    """


# Commands register here, one line each (keep sorted by command name).
# -- commands --
from citecal.commands.bench import bench_command  # noqa: E402
from citecal.commands.calibrate import calibrate_command  # noqa: E402
from citecal.commands.chunks import chunks_command  # noqa: E402
from citecal.commands.correct import correct_command  # noqa: E402
from citecal.commands.estimate import estimate_command  # noqa: E402
from citecal.commands.eval import eval_command  # noqa: E402
from citecal.commands.eval_batch import eval_batch_command  # noqa: E402
from citecal.commands.pull import pull_command  # noqa: E402
from citecal.commands.push import push_command  # noqa: E402
from citecal.commands.rebase import rebase_command  # noqa: E402
from citecal.commands.rejudge import rejudge_command  # noqa: E402
from citecal.commands.validate import validate_command  # noqa: E402

cli.add_command(bench_command)
cli.add_command(calibrate_command)
cli.add_command(chunks_command)
cli.add_command(correct_command)
cli.add_command(estimate_command)
cli.add_command(eval_command)
cli.add_command(eval_batch_command)
cli.add_command(pull_command)
cli.add_command(push_command)
cli.add_command(rebase_command)
cli.add_command(rejudge_command)
cli.add_command(validate_command)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="citecal")


__all__ = ["CitecalGroup", "cli", "main", "output_options"]
