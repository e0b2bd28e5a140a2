"""``citecal push``: queue an evaluation's claim–code pairs for annotators in Argilla."""

from __future__ import annotations

from pathlib import Path

import click

from citecal.commands._options import argilla_options
from citecal.config import load_config
from citecal.errors import InputError, ServiceError
from citecal.evaluation import read_eval_json
from citecal.models import EvalResult


def _answers_spec(result: EvalResult) -> str | None:
    """``answer_citation`` for a ``citecal validate`` result pushed without ``--spec``."""
    from citecal.answers._annotate import ANSWER_MODEL

    if result.citations and all(c.model == ANSWER_MODEL for c in result.citations):
        return "answer_citation"
    return None


@click.command("push")
@click.argument("eval_json", metavar="EVALUATION", type=click.Path(path_type=Path))
@click.option(
    "--dataset", "dataset", required=True, help="Argilla dataset name (created if missing)."
)
@argilla_options()
@click.option("--blind", is_flag=True, help="No judge suggestions or reasoning (no anchoring).")
@click.option(
    "--sample", type=click.IntRange(min=1), default=None, help="Push at most N citations."
)
@click.option(
    "--strategy",
    type=click.Choice(["all", "uncertain", "stratified", "active", "abstained"]),
    default=None,
    help="How --sample picks: random, least certain first, spread over groups "
    "(mode × verdict; repository × verdict for citations.parquet), or active: at random "
    "with probabilities favouring uncertain verdicts, about N records a round, weighted "
    "so estimate stays valid (eval JSON only); or abstained: what `eval --cascade` sent to "
    "a person first, a tenth drawn from the rest, weighted (eval JSON only). "
    "Default: all for eval JSON, stratified for citations.parquet.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed.")
@click.option(
    "--repo",
    type=click.Path(path_type=Path),
    default=None,
    help="Repository to read context lines from (default: the one recorded in EVALUATION).",
)
@click.option(
    "--batch-size", type=click.IntRange(1, 500), default=None, help="Records per request."
)
@click.option(
    "--corrections",
    "corrections_path",
    type=click.Path(path_type=Path),
    default=None,
    help="A `citecal correct --corrections` file, or the corrections.parquet table of "
    "`eval-batch --correct` (the pushed report's rows): offer each proposal as the suggestion.",
)
@click.option(
    "--min-submitted",
    type=click.IntRange(min=1),
    default=None,
    help="Answers a record needs before it leaves every queue, for a new dataset "
    "(default: the spec's, else [argilla] min_submitted = 2).",
)
def push_command(
    eval_json: Path,
    dataset: str,
    workspace: str | None,
    config_file: Path | None,
    spec: str | None,
    blind: bool,
    sample: int | None,
    strategy: str | None,
    seed: int,
    repo: Path | None,
    batch_size: int | None,
    corrections_path: Path | None,
    min_submitted: int | None,
) -> None:
    """Push the valid citations of EVALUATION to an Argilla dataset for annotation.

    EVALUATION is a `citecal eval --format json` file, a `citecal validate -f
    json` result (each answer citation becomes a record,
    annotation_configs/answer_citation.yaml), or the citations.parquet of a
    `citecal eval-batch` output (sampled across its reports, stratified by
    repository and verdict). Records get stable ids (report, claim, citation,
    revision), so pushing the same evaluation again updates them without
    duplicates and keeps every answer already given. The server is
    ARGILLA_API_URL (default http://127.0.0.1:6900, or the port in
    CITECAL_ARGILLA_PORT; started by `make argilla-up`) with ARGILLA_API_KEY (unset:
    the local stack's key, for the local stack only).
    Each record waits for --min-submitted answers (default 2) before it
    leaves the annotators' queues. Records are pushed in a seeded random order (recorded
    with each record), so the first ones labelled are a uniform random subset.

    \b
    Examples:
      citecal eval report.md --repo . --format json -o eval.json
      citecal push eval.json --dataset review
      citecal push validation.json --dataset qa-citations
      citecal push eval.json --dataset review-blind --blind --sample 50 --strategy uncertain
      citecal push eval.json --dataset review-active --sample 100 --strategy active
      citecal push eval.json --dataset people --sample 100 --strategy abstained
      citecal push eval.json --dataset review-yn --spec citation_support_binary
      citecal push out/citations.parquet --dataset review --sample 200 --seed 7
      citecal push eval.json --dataset review --corrections fixes.json
    """
    from citecal.annotate import is_batch_output, load_spec, push_batch, push_evaluation
    from citecal.commands._progress import counter, progress_bar

    batch = is_batch_output(eval_json)
    if batch and strategy == "abstained":
        raise InputError(
            "--strategy abstained is for eval JSON: push one evaluation (README 'The cascade')"
        )
    if batch and strategy == "active":
        raise InputError(
            "--strategy active is for eval JSON: push one evaluation (README 'How many labels')"
        )
    if batch and repo is not None:
        raise InputError("--repo is for eval JSON: a batch output records each report's repository")
    if batch and corrections_path is not None:
        raise InputError(
            "--corrections is for eval JSON of the corrected report, not a batch output"
        )
    result = None if batch else read_eval_json(eval_json)
    corrections = None
    if corrections_path is not None:
        from citecal.correct._annotate import read_corrections

        assert result is not None
        corrections = read_corrections(corrections_path, result.report)
    if spec is None and result is not None:
        spec = _answers_spec(result)
    definition = load_spec(spec)
    config = load_config(None, config_file).argilla
    with progress_bar() as bar:
        start = counter(bar, f"pushing to {dataset}")
        if result is None:
            summary = push_batch(
                eval_json,
                definition,
                config,
                dataset_name=dataset,
                workspace=workspace,
                blind=blind,
                sample=sample,
                strategy=strategy or "stratified",  # type: ignore[arg-type]
                seed=seed,
                batch_size=batch_size,
                min_submitted=min_submitted,
                progress=start,
            )
        else:
            summary = push_evaluation(
                result,
                definition,
                config,
                dataset_name=dataset,
                workspace=workspace,
                blind=blind,
                sample=sample,
                strategy=strategy or "all",  # type: ignore[arg-type]
                seed=seed,
                repo=repo,
                batch_size=batch_size,
                min_submitted=min_submitted,
                progress=start,
                corrections=corrections,
            )
    made = "created" if summary.dataset_created else "updated"
    click.echo(
        f"{made} dataset {summary.dataset!r} in workspace {summary.workspace!r} at "
        f"{summary.api_url}: {summary.created} created, {summary.updated} updated, "
        + (f"{summary.unchanged} unchanged (not sent), " if summary.unchanged else "")
        + f"{summary.skipped} skipped, {summary.failed} failed ({summary.seconds:.1f}s)"
    )
    if summary.round is not None:
        click.echo(
            f"active round {summary.round}: drew {summary.drawn} record(s) (about --sample, "
            "each with its recorded probability); push again for another round"
        )
    if corrections is not None:
        click.echo(
            f"offered {summary.corrections_offered} of {len(corrections.corrections)} proposed "
            "correction(s) as suggestions (corrections of citations not pushed are left out)"
        )
    if summary.min_submitted is not None and summary.min_submitted != summary.min_submitted_wanted:
        click.echo(
            f"note: the dataset keeps min_submitted={summary.min_submitted} (set when it was "
            f"created; {summary.min_submitted_wanted} was asked for): change it in the dataset's "
            "settings in the Argilla UI",
            err=True,
        )
    for citation, reason in summary.skipped_reasons:
        click.echo(f"  skipped {citation}: {reason}", err=True)
    if summary.failures:
        for message in summary.failures:
            click.echo(f"  failed: {message}", err=True)
        raise ServiceError(
            f"{summary.failed} records were not pushed to {summary.api_url} (ARGILLA_API_URL); "
            "run the same push again to retry them"
        )
