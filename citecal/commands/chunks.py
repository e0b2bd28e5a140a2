"""``citecal chunks``: sentences and definitions with provenance ids (README "`citecal chunks`")."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citecal.commands._options import output_options
from citecal.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from citecal.chunks import Chunk


def _table(chunks: list[Chunk], console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    from citecal.render._format import shorten

    table = Table(title=f"{len(chunks)} chunks", title_justify="left")
    table.add_column("id", overflow="fold", max_width=40)
    table.add_column("kind", no_wrap=True)
    table.add_column("lines", justify="right", no_wrap=True)
    table.add_column("content", overflow="fold", ratio=1)
    for c in chunks:
        lines = str(c.start_line) if c.start_line == c.end_line else f"{c.start_line}-{c.end_line}"
        label = c.kind if c.name is None else f"{c.kind} {c.name}"
        table.add_row(escape(c.id), escape(label), lines, escape(shorten(c.content, 200)))
    console.print(table)


@click.command("chunks")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@output_options(("table", "json", "jsonl"))
@click.option(
    "--max-lines",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    help="Definitions longer than this are cut into their members.",
)
def chunks_command(paths: tuple[Path, ...], fmt: str, output: Path | None, max_lines: int) -> None:
    """Cut documents into sentences and code into definitions, with provenance ids.

    Markdown and plain text give one chunk per sentence (a heading, code block
    or table row is one chunk), id `doc.md:S:<index>`; code gives one chunk per
    function, class, ... and per stretch of code between them, id
    `src/a.py:<start>-<end>` (a citecal line citation). Each chunk has its
    position and its neighbours; joining a file's chunks gives the file back.
    Directories are walked for text and code files. Reports cite sentence
    chunks as `[doc.md:S:3]` and `citecal eval` verifies them.

    \b
    Examples:
      citecal chunks docs/design.md
      citecal chunks docs/ src/ -f jsonl -o chunks.jsonl
    """
    from citecal._io import check_output, refuse_clobber

    refuse_clobber([("-o/--output", output)], [("PATHS", p) for p in paths])
    check_output(output)  # before any file is read
    from citecal.chunks import ChunksResult, chunk_file, iter_source_files

    chunks: list[Chunk] = []
    sources: list[str] = []
    for path, source in iter_source_files(paths):
        explicit = path in paths
        try:
            found = chunk_file(path, source, max_lines=max_lines)
        except InputError as exc:
            if explicit:
                raise
            click.echo(f"warning: skipped {source}: {exc}", err=True)
            continue
        sources.append(source)
        chunks.extend(found)
    if fmt == "json":
        text = ChunksResult(sources=sources, chunks=chunks).model_dump_json(indent=2) + "\n"
    elif fmt == "jsonl":
        text = "".join(json.dumps(c.model_dump(), ensure_ascii=False) + "\n" for c in chunks)
    else:
        from rich.console import Console

        if output is None:
            console = Console()
            if not console.is_terminal:
                console = Console(width=max(console.width, 140))
            _table(chunks, console)
            return
        console = Console(record=True, width=140, file=io.StringIO())
        _table(chunks, console)
        text = console.export_text()
    if output is None:
        click.echo(text, nl=False)
    else:
        from citecal._io import atomic_write_text

        atomic_write_text(output, text)
        click.echo(f"wrote {len(chunks)} chunks of {len(sources)} files to {output}", err=True)
