"""``citecal status``: progress of a dataset's annotation and the interval it gives so far."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citecal._io import check_output, refuse_clobber
from citecal.commands._emit import emit_text
from citecal.commands._options import argilla_options, output_options
from citecal.config import load_config

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from citecal.annotate._status import StatusReport
    from citecal.calibrate._estimate_models import Interval


def _interval_for(
    judged: tuple[Path, ...],
) -> Callable[[pd.DataFrame, int], tuple[Interval | None, str | None, str, str | None]]:
    """The callback ``dataset_status`` asks for the current interval."""
    from citecal.calibrate._estimate import estimate_frame, labels_only_interval
    from citecal.calibrate._table import prepare_labels
    from citecal.errors import InputError

    frame = None
    if judged:
        from citecal.calibrate._judged import read_judged

        frame = read_judged(list(judged))

    def interval(
        table: pd.DataFrame, records: int
    ) -> tuple[Interval | None, str | None, str, str | None]:
        kind = "corrected" if frame is not None else "labels only"
        try:
            labels = prepare_labels(table)
            if frame is not None:
                report = estimate_frame(frame, labels, judged_names=[str(p) for p in judged])
                return report.corrected, report.design, kind, None
            found, design = labels_only_interval(labels, records)
            return found, design, kind, None
        except InputError as exc:
            return None, None, kind, str(exc)

    return interval


def _file(spec: str | None) -> Path | None:
    """``--spec`` when it names a file (else a bundled definition's name)."""
    return Path(spec) if spec is not None and Path(spec).is_file() else None


def render_status(r: StatusReport, width: int = 110) -> str:
    """Rich tables for a terminal (plain text when not a TTY)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buf = StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    need = r.min_submitted or 1
    console.print(
        escape(
            f"{r.dataset} ({r.workspace}): {r.records} records pushed, {r.answered} answered, "
            f"{r.complete} with ≥ {need} answers (min_submitted)"
        )
    )
    t = Table(title="Annotators")
    for col in ("Annotator", "Submitted", "Drafts", "Discarded", "Shared", "Agreement"):
        t.add_column(col, justify="left" if col == "Annotator" else "right")
    for a in r.annotators:
        t.add_row(
            escape(a.annotator),
            str(a.submitted),
            str(a.drafts),
            str(a.discarded),
            str(a.shared),
            "—" if a.agreement is None else f"{a.agreement:.0%}",
        )
    console.print(t)
    if r.interval is not None and r.interval.ci is not None and r.interval.estimate is not None:
        lo, hi = r.interval.ci
        console.print(
            escape(
                f"Precision ({r.interval_kind}, {r.design} design): {r.interval.estimate:.3f} "
                f"[{lo:.3f}, {hi:.3f}], width {hi - lo:.3f}"
            )
        )
    else:
        console.print(escape(f"No interval yet: {r.note or 'not enough labels'}"))
    return buf.getvalue()


@click.command("status")
@click.argument("judged", nargs=-1, type=click.Path(path_type=Path))
@click.option("--dataset", "dataset", required=True, help="Argilla dataset name.")
@argilla_options()
@output_options(("table", "json"))
def status_command(
    judged: tuple[Path, ...],
    dataset: str,
    workspace: str | None,
    config_file: Path | None,
    spec: str | None,
    fmt: str,
    output: Path | None,
) -> None:
    """How far annotators have come on a dataset, and the interval their labels give.

    Records pushed, answered, and with at least min_submitted answers; per
    annotator, answers given and agreement with the others on shared records
    (both say 'supports', score ≥ 2, or both not); and the current interval:
    labels only, or corrected by the judge when JUDGED (as for `citecal
    estimate`) are given. A design with no valid interval yet (a partly
    labelled census not served in a random order, say) shows the reason.

    \b
    Examples:
      citecal status --dataset review
      citecal status eval.json --dataset review-active --format json
    """
    from citecal.annotate import load_spec
    from citecal.annotate._status import dataset_status

    refuse_clobber(
        [("-o/--output", output)],
        [*(("JUDGED", j) for j in judged), ("--config", config_file), ("--spec", _file(spec))],
    )
    check_output(output)
    definition = load_spec(spec)
    config = load_config(None, config_file).argilla
    report = dataset_status(
        definition,
        config,
        dataset_name=dataset,
        workspace=workspace,
        interval=_interval_for(judged),
    )
    text = report.model_dump_json(indent=2) + "\n" if fmt == "json" else render_status(report)
    emit_text(text, output)
