"""``citecal validate``: check structured answer citations and gate on them (README)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import click

from citecal.commands._options import output_options
from citecal.config import AnswerFields, load_config
from citecal.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from citecal.answers import ItemResult, ValidateResult
    from citecal.answers._stream import InputFormat

SHOWN_ITEMS = 20
"""Items that did not pass listed in the table output (the JSON has all)."""


def parse_fields(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--field answer=response`` pairs → the ``[answers.fields]`` overrides."""
    known = set(AnswerFields.model_fields)
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, key = pair.partition("=")
        name, key = name.strip(), key.strip()
        if not sep or not key:
            raise InputError(f"--field {pair!r}: expected NAME=KEY, e.g. --field answer=response")
        if name not in known:
            raise InputError(
                f"--field {pair!r}: unknown field {name!r} (one of: {', '.join(sorted(known))})"
            )
        out[name] = key
    return out


def render_validation_table(
    result: ValidateResult, shown: list[ItemResult], console: Console, hidden: int
) -> None:
    """Aggregate, gate and the first items that did not pass."""
    from rich.markup import escape
    from rich.table import Table

    from citecal.render._format import pct, shorten

    a = result.aggregate
    console.print(f"citecal validate · {escape(result.input)}")
    table = Table(show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows: list[tuple[str, str]] = [
        ("Valid items", f"{result.valid_qa}/{result.total_qa}"),
        ("Citations valid", f"{a.valid_citations}/{a.total_citations}"),
        ("Hallucinated spans", str(a.hallucinated_spans)),
        ("Avg alignment", "—" if a.avg_alignment_score is None else f"{a.avg_alignment_score:.3f}"),
        ("Citation coverage", pct(a.citation_coverage)),
        ("With evidence_idx", pct(a.has_evidence_idx)),
        ("With alignment_score", pct(a.has_alignment_score)),
        ("With span", pct(a.has_span)),
        ("Avg quality score", "—" if a.avg_quality_score is None else f"{a.avg_quality_score:.3f}"),
        ("Items without citations", str(a.items_without_citations)),
        ("Malformed records", str(len(result.malformed))),
    ]
    for label, value in rows:
        table.add_row(label, value)
    console.print(table)
    if shown:
        items = Table(title="Items that did not pass", title_justify="left")
        items.add_column("id", overflow="fold", max_width=24)
        items.add_column("gate", no_wrap=True)
        items.add_column("why", overflow="fold", ratio=1)
        for item in shown:
            problems = list(item.errors) + list(item.gate.reasons)
            problems += [f"citation {c.index}: {e}" for c in item.citations for e in c.errors]
            items.add_row(
                escape(item.id), item.gate.status, escape(shorten("; ".join(problems), 300))
            )
        console.print(items)
        if hidden:
            console.print(f"[dim]… and {hidden} more (see --format json)[/dim]")
    for m in result.malformed[:SHOWN_ITEMS]:
        where = f"line {m.line}" if m.line is not None else f"item {m.item}"
        console.print(f"[yellow]malformed[/] {where}: {escape(m.error)}")
    style = {"PASS": "green", "WARN": "yellow", "FAIL": "bold red"}[result.gate.status]
    console.print(f"Gate: [{style}]{result.gate.status}[/]")
    for reason in result.gate.reasons:
        console.print(f"  - {escape(reason)}")


@click.command("validate")
@click.argument("answers", type=click.Path(path_type=Path, allow_dash=True))
@output_options(("table", "json"))
@click.option(
    "--input-format",
    type=click.Choice(["auto", "json", "jsonl"]),
    default="auto",
    show_default=True,
    help="auto: JSON Lines for .jsonl/.ndjson, a JSON array by its '[', else JSON.",
)
@click.option(
    "--field",
    "fields",
    multiple=True,
    metavar="NAME=KEY",
    help="Read field NAME from key KEY (repeatable), e.g. --field answer=response.",
)
@click.option("--strict", is_flag=True, help="A malformed record is an error (exit 2).")
@click.option(
    "--fail-on",
    type=click.Choice(["fail", "warn"]),
    default="fail",
    show_default=True,
    help="Exit 1 on a FAIL gate, or on WARN too.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file ([answers] thresholds and field names).",
)
def validate_command(
    answers: Path,
    fmt: str,
    output: Path | None,
    input_format: str,
    fields: tuple[str, ...],
    strict: bool,
    fail_on: str,
    config_file: Path | None,
) -> None:
    """Validate the structured citations of question-answer items in ANSWERS (JSON or JSONL).

    Each citation is checked for structure (source, relevance, quote), semantics
    (evidence_idx in bounds, span_in_answer really in the answer, quote in the
    cited evidence) and quality (alignment_score), then every item and the
    batch get a gate: P0 FAIL, P1 WARN or P2 PASS, with the reasons.
    ANSWERS may be - for standard input.

    \b
    Exit codes: 0 PASS or WARN, 1 FAIL (or WARN with --fail-on warn), 2 bad input.

    \b
    Examples:
      citecal validate answers.jsonl
      citecal validate answers.json -f json -o validation.json
      citecal validate out.jsonl --field answer=response --field citations=refs --fail-on warn
    """
    from citecal._io import check_output, refuse_clobber

    answers_file = None if str(answers) == "-" else answers
    refuse_clobber(
        [("-o/--output", output)], [("ANSWERS", answers_file), ("--config", config_file)]
    )
    check_output(output)  # before any answer is read
    from citecal.answers import write_validation

    overrides: dict[str, dict[str, Any]] = {}
    if fields:
        overrides["answers"] = {"fields": parse_fields(fields)}
    cfg = load_config(None, config_file, overrides).answers
    path = None if str(answers) == "-" else answers
    if path is not None and not path.exists():
        raise InputError(f"answers file not found: {path}")
    shown: list[ItemResult] = []
    not_passed = 0

    def collect(item: ItemResult) -> None:
        nonlocal not_passed
        if item.gate.status != "PASS" or not item.valid:
            not_passed += 1
            if len(shown) < SHOWN_ITEMS:
                shown.append(item)

    input_fmt = cast("InputFormat", input_format)
    if fmt == "json":
        target: Path | IO[str] = output if output is not None else sys.stdout
        result = write_validation(path, cfg, target, fmt=input_fmt, strict=strict, on_item=collect)
        if output is not None:
            click.echo(f"wrote {output}", err=True)
    else:
        from rich.console import Console

        from citecal.answers import read_records, run_validation

        totals = run_validation(
            read_records(path, input_fmt, cfg.fields.items),
            cfg,
            collect,
            strict=strict,
        )
        result = totals.result(str(answers) if path is not None else "<stdin>", cfg)
        if output is None:
            console = Console()
            if not console.is_terminal:
                console = Console(width=max(console.width, 140))
            render_validation_table(result, shown, console, not_passed - len(shown))
        else:
            from citecal._io import atomic_write_text

            console = Console(record=True, width=140, file=io.StringIO())
            render_validation_table(result, shown, console, not_passed - len(shown))
            atomic_write_text(output, console.export_text())
            click.echo(f"wrote {output}", err=True)
    if fmt == "json" or output is not None:
        click.echo(f"gate: {result.gate.status}", err=True)
        for reason in result.gate.reasons:
            click.echo(f"  - {reason}", err=True)
    if result.gate.status == "FAIL" or (fail_on == "warn" and result.gate.status == "WARN"):
        sys.exit(1)
