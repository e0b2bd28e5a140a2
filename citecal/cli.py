"""The ``citecal`` command line: thin commands over the library.

Each command parses options, calls one library function and prints. Library
errors are typed (:mod:`citecal.errors`); :class:`CitecalGroup` turns them
into one readable line and the error's exit code (2 for usage and input
errors), never a traceback.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import Any

import click

from citecal._version import __version__
from citecal.commands._options import output_options
from citecal.errors import CitecalError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class CitecalGroup(click.Group):
    """A click group that reports citecal's expected errors in one line.

    Subcommands named in :data:`COMMANDS` are imported when first asked for
    (click's lazy-group pattern), so a command's start-up pays only for its own
    module: ``citecal eval --help`` stays within 2.5× a bare ``import click,
    rich.console`` (README "Development").
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in COMMANDS:
            return found
        module, _, attribute = COMMANDS[cmd_name].partition(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        self.add_command(command, cmd_name)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CitecalError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:
            # Standard output on a full disk or device (`> /dev/full`): files citecal writes
            # itself report this through citecal._io; what is left is stdout (README "Security").
            if exc.errno not in _FULL:
                raise
            _drop_stdout()
            click.echo(f"Error: cannot write to standard output: {exc.strerror}", err=True)
            sys.exit(2)


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""Errors of a write that cannot succeed (disk full, quota, file size limit, I/O error)."""


def _drop_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the exit's flush of what is buffered cannot
    fail again (Python would print "Exception ignored" with a traceback)."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):  # no file descriptor (a test runner's stdout): nothing to do
        pass


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
    citecal annotators add alice                    an annotator's login and key
    citecal pull --dataset review -o ann.parquet    fetch their scores
    citecal calibrate ann.parquet                   judge-human agreement
    citecal align ann.parquet --prompt v1 -o p.md   a better judge prompt, out of sample
    citecal estimate eval.json -a ann.parquet       corrected precision, 95% interval
    citecal validate answers.jsonl                  gate structured answer citations
    citecal chunks docs/                            sentence and definition ids
    """


# Commands register here, one line each (keep sorted by command name): "module:attribute".
# They load on first use, so ``citecal eval --help`` never imports pandas or the Argilla SDK.
COMMANDS: dict[str, str] = {
    "align": "citecal.commands.align:align_command",
    "annotators": "citecal.commands.annotators:annotators_group",
    "bench": "citecal.commands.bench:bench_command",
    "calibrate": "citecal.commands.calibrate:calibrate_command",
    "chunks": "citecal.commands.chunks:chunks_command",
    "correct": "citecal.commands.correct:correct_command",
    "estimate": "citecal.commands.estimate:estimate_command",
    "eval": "citecal.commands.eval:eval_command",
    "eval-batch": "citecal.commands.eval_batch:eval_batch_command",
    "pull": "citecal.commands.pull:pull_command",
    "push": "citecal.commands.push:push_command",
    "rebase": "citecal.commands.rebase:rebase_command",
    "rejudge": "citecal.commands.rejudge:rejudge_command",
    "status": "citecal.commands.status:status_command",
    "validate": "citecal.commands.validate:validate_command",
}


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="citecal")


__all__ = ["CitecalGroup", "cli", "main", "output_options"]
