"""``citecal calibrate``: how well does the judge agree with the annotators?"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click
import pydantic_core

from citecal._io import (
    atomic_write,
    atomic_write_text,
    check_output,
    check_replace,
    refuse_clobber,
)
from citecal.commands._emit import emit_text
from citecal.commands._options import FiniteFloatRange, output_options
from citecal.config import load_config
from citecal.errors import InputError

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
    type=FiniteFloatRange(-1, 1),
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
    "--baseline",
    type=click.Path(path_type=Path),
    default=None,
    help="A saved `calibrate -f json` output: exit 1 when a figure drops significantly.",
)
@click.option(
    "--drift-margin",
    type=FiniteFloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="With --baseline: a drop must exceed this (and be significant) to alarm.",
)
@click.option(
    "--fail-under",
    "fail_under",
    default=None,
    metavar="NAME=X,...",
    help="Exit 1 when an overall figure is below X, e.g. weighted_kappa=0.6,spearman_rho=0.6.",
)
@click.option(
    "--save-map",
    "save_map",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Fit a recalibration map of the judge score on these labels and write it (JSON).",
)
@click.option(
    "--map-method",
    type=click.Choice(["isotonic", "platt"]),
    default="isotonic",
    show_default=True,
    help="With --save-map: isotonic regression or Platt scaling.",
)
@click.option(
    "--judged",
    "judged",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Judged citations (eval JSON, directory, batch output, table): add the corrected "
    "precision estimate (README 'Estimates'); repeatable.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file ([calibration] section).",
)
@click.option(
    "--write-cascade",
    "cascade_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Fit the cascade (rules, local verifier, each judge model cheapest first) on these "
    "labels and write it to FILE (README 'The cascade'); an existing FILE needs --force.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --write-cascade: replace an existing file.",
)
@click.option(
    "--cascade",
    "old_cascade",
    default=None,
    hidden=True,
    help="Removed: calibrate writes a cascade with --write-cascade; --cascade only reads one.",
)
@click.option(
    "--judges",
    "judges",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="TABLE",
    help="With --write-cascade: the same records judged by another model (citecal rejudge "
    "--model M -o TABLE); each judge model is a tier, cheapest first (repeatable).",
)
@click.option(
    "--agreement",
    default="supports=0.98,not_supports=0.90",
    show_default=True,
    help="With --write-cascade: agreement to guarantee, one level or one per verdict.",
)
@click.option(
    "--delta",
    type=FiniteFloatRange(0.001, 0.5),
    default=0.1,
    show_default=True,
    help="With --write-cascade: probability that the guarantee fails.",
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
    baseline: Path | None,
    drift_margin: float,
    fail_under: str | None,
    save_map: Path | None,
    map_method: str,
    judged: tuple[Path, ...],
    config_file: Path | None,
    cascade_out: Path | None,
    judges: tuple[Path, ...],
    force: bool,
    old_cascade: str | None,
    agreement: str,
    delta: float,
) -> None:
    """Calibrate the judge against the human scores in ANNOTATIONS.

    ANNOTATIONS is the table written by `citecal pull` (Parquet), or CSV / JSONL
    with the same columns. Figures are over (record, annotator) pairs with 95%
    cluster-bootstrap CIs by report; see README "Calibration".

    \b
    Exit codes: 0 done; 1 when B is significantly worse (--fail-if-worse), a figure
    dropped against --baseline, or a --fail-under gate failed; 2 bad input.

    \b
    Examples:
      citecal calibrate annotations.parquet
      citecal calibrate annotations.parquet --by language -f html -o calibration.html
      citecal calibrate v1.parquet --compare v2.parquet --fail-if-worse
      citecal calibrate ann.parquet -f json -o calibration.json --save-map judge-map.json
      citecal calibrate new.parquet --baseline calibration.json --fail-under weighted_kappa=0.6
      citecal calibrate ann.parquet --judged evals/ -f html -o calibration.html
      citecal calibrate ann.parquet --write-cascade cascade.json --agreement 0.95 --delta 0.1
      citecal calibrate cheap.parquet --judges strong.parquet --write-cascade cascade.json
    """

    if old_cascade is not None:
        raise InputError(_old_cascade_message(old_cascade))
    inputs = [
        ("ANNOTATIONS", annotations),
        ("--compare", compare),
        ("--baseline", baseline),
        ("--config", config_file),
        *(("--judged", j) for j in judged),
        *(("--judges", j) for j in judges),
    ]
    outputs = [("-o/--output", output), ("--save-map", save_map), ("--write-cascade", cascade_out)]
    refuse_clobber(outputs, inputs)  # README "Security": an output never replaces an input
    if cascade_out is not None:
        check_replace(cascade_out, force, "cascade", "--write-cascade")
        _fit_cascade(annotations, cascade_out, agreement, delta, config_file, fmt, output, judges)
        return
    if judges:
        raise InputError("--judges needs --write-cascade FILE")
    from citecal.calibrate._drift import read_snapshot
    from citecal.calibrate._report import GATE_FIGURES, Checks, apply_gate, calibrate
    from citecal.commands._options import parse_thresholds

    if fail_if_worse and compare is None:
        raise InputError("--fail-if-worse needs --compare B")
    thresholds = parse_thresholds(fail_under, GATE_FIGURES)
    check_output(output)
    if save_map is not None:
        check_output(save_map)
    checks = Checks(
        baseline=read_snapshot(baseline) if baseline is not None else None,
        baseline_name=str(baseline),
        drift_margin=drift_margin,
        map_method=map_method if save_map is not None else None,  # type: ignore[arg-type]
        snapshot=fmt == "json",  # only JSON can serve as a later --baseline
    )
    overrides: dict[str, dict[str, Any]] = {"calibration": {}}
    calibration = overrides["calibration"]
    if threshold is not None:
        calibration["spearman_threshold"] = threshold
    if resamples is not None:
        calibration["bootstrap_resamples"] = resamples
    config = load_config(None, config_file, overrides).calibration
    if seed is not None:
        config.seed = seed
    report = calibrate(annotations, by=by or None, config=config, compare=compare, checks=checks)
    if judged:
        from citecal.calibrate._estimate import estimate

        report = report.model_copy(update={"estimate": estimate(list(judged), annotations)})
    if thresholds:
        report = apply_gate(report, thresholds)
    if save_map is not None and report.recalibration is not None:
        atomic_write_text(save_map, report.recalibration.model_dump_json(indent=2) + "\n")
        click.echo(f"wrote {save_map}", err=True)
    _emit(report, fmt, output)
    failed = False
    if fail_if_worse and report.compare is not None and report.compare.significantly_worse:
        click.echo(
            f"B ({compare}) is significantly worse than A ({annotations}); failing as asked",
            err=True,
        )
        failed = True
    if report.drift is not None:
        for alarm in report.drift.alarms:
            click.echo(f"drift alarm against {baseline}: {alarm}", err=True)
        failed = failed or bool(report.drift.alarms)
    if report.gate is not None:
        for failure in report.gate.failures:
            click.echo(f"gate failed: {failure}", err=True)
        failed = failed or not report.gate.passed
    if failed:
        sys.exit(1)


DISAGREEMENTS_PER_CHUNK = 5_000
"""Disagreements serialised at a time in the JSON output (README "Calibration", scale)."""


def _json_chunks(report: Any) -> Iterator[bytes]:
    """The report's JSON (``indent=2``, as ``model_dump_json`` would give it) in pieces.

    A year of disagreements is 100+ MB of JSON; serialised at once, pydantic's
    growing buffer and the bytes object made from it held twice that on top of
    the report (the 1M-row JSON path peaked at 1 074 MB). The report is
    serialised without them, and they are spliced in 5 000 at a time, each
    piece re-indented to its place in the document; the bytes are identical.
    """
    items = report.disagreements
    head = pydantic_core.to_json(report.model_copy(update={"disagreements": []}), indent=2)
    key = b'\n  "disagreements": []'
    at = head.find(key)
    assert at >= 0 and head.find(key, at + 1) < 0  # one top-level key, indent 2
    if not items:
        yield head + b"\n"
        return
    yield head[: at + len(key) - 1] + b"\n"
    for start in range(0, len(items), DISAGREEMENTS_PER_CHUNK):
        part = pydantic_core.to_json(items[start : start + DISAGREEMENTS_PER_CHUNK], indent=2)
        # "[\n  {...},\n  {...}\n]": the objects, two levels deeper; JSON strings hold no
        # raw newline, so every newline is indentation.
        body = part[2:-2].replace(b"\n", b"\n  ")
        yield (b",\n  " if start else b"  ") + body
    yield b"\n  ]" + head[at + len(key) :] + b"\n"


def _emit(report: Any, fmt: str, output: Path | None) -> None:
    from citecal.calibrate._render_markdown import render_markdown
    from citecal.calibrate._render_table import render_table

    if fmt == "json":

        def write(fh: IO[bytes]) -> None:
            for chunk in _json_chunks(report):
                fh.write(chunk)

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
    emit_text(text, output)


def _old_cascade_message(value: str) -> str:
    """What ``calibrate T --cascade X`` (the meaning before 0.2) gets: the new option's name."""
    exists = value != "default" and Path(value).exists()
    kept = f"; {value} was left as it is" if exists else ""
    return (
        f"--cascade {value}: calibrate no longer writes a cascade with --cascade (--cascade "
        f"reads one, in eval and bench): fit one on these labels with --write-cascade FILE"
        f"{kept} (nothing was written)"
    )


def _fit_cascade(
    annotations: Path,
    out: Path,
    agreement: str,
    delta: float,
    config_file: Path | None,
    fmt: str,
    output: Path | None,
    judges: tuple[Path, ...] = (),
) -> None:
    """``calibrate --write-cascade``: thresholds per tier from these labels (docs: the cascade).

    ``judges``: the same records judged by other models, each a judge tier (README "Judge
    confidence").
    """
    from citecal.annotations import read_table
    from citecal.cascade import (
        LOCAL_TIERS,
        fit_cascade,
        judge_cost,
        judge_sources,
        judge_tiers,
        parse_agreement,
        render_cascade,
        rows_from_table,
        save_cascade,
    )
    from citecal.commands._emit import emit_text
    from citecal.verify.judge import claim_cost

    if str(out) == "default":
        raise InputError(
            "--write-cascade default: 'default' names the cascade shipped with citecal, which "
            "is not written; give a file name (e.g. default.json)"
        )
    levels = parse_agreement(agreement)
    check_output(out)
    check_output(output)
    table = read_table(annotations)
    if judges:
        import pandas as pd

        table = pd.concat([table, *(read_table(j) for j in judges)], ignore_index=True)
    rows, models = rows_from_table(table)
    judge = load_config(None, config_file, {}).judge
    sources = judge_sources(table)
    cost = {m: claim_cost(m, sources.get(m), judge) for m in models}
    tiers = [*LOCAL_TIERS, *judge_tiers(models, cost, sources)]
    spec = fit_cascade(
        rows, levels, delta, {"source": str(annotations), "records": len(rows)}, tiers=tiers
    )
    priced = [t for t in spec.tiers if t.kind == "judge" and t.cost_per_1000 is not None]
    if priced:  # README "Judge confidence": against the strongest judge on every claim
        strong = max(priced, key=lambda t: t.cost_per_1000 or 0.0).model or ""
        spec = spec.model_copy(
            update={"cost": judge_cost(spec, strong, claim_cost(strong, "verbal", judge))}
        )
    save_cascade(out, spec)
    click.echo(f"wrote cascade {out} ({len(rows)} records)", err=True)
    emit_text(render_cascade(spec, fmt), output)
