"""Where a command's rendered output goes: standard output, or ``-o FILE`` written whole."""

from __future__ import annotations

from pathlib import Path

import click

from citecal._io import atomic_write_text


def emit_text(text: str, output: Path | None) -> None:
    """Print ``text``, or write it to ``output`` atomically and say so on stderr.

    The file is written through a temporary file (README "Security"), so an
    interrupted run never leaves half an output behind.
    """
    if output is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)
