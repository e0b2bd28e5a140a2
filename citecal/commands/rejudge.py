"""``citecal rejudge``: the same annotations, judged again with another prompt or model."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citecal._io import check_output, refuse_clobber
from citecal.commands._options import (
    FiniteFloatRange,
    ask_with_bar_paused,
    budget_line,
    confidence_options,
    confidence_overrides,
    make_budget,
    spending_options,
)
from citecal.config import load_config
from citecal.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from citecal.verify.judge import JudgeRun, PromptTemplate


@click.command("rejudge")
@click.argument("annotations", type=click.Path(path_type=Path))
@click.option(
    "--prompt",
    "prompt",
    required=True,
    help="Judge prompt version (v1, …) or prompt file.",
)
@click.option("--model", default=None, help="Judge model (default: judge.judge_model).")
@click.option(
    "-o",
    "--output",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="New annotation table (.parquet, .csv or .jsonl), written atomically "
    "(required unless --anchor).",
)
@click.option(
    "--anchor",
    is_flag=True,
    help="Re-judge only the anchor set (records whose 2+ annotators all agree) and report "
    "how the judge does on it.",
)
@click.option(
    "--min-agreement",
    type=FiniteFloatRange(0, 1),
    default=None,
    help="With --anchor: exit 1 when the judge agrees with fewer anchors than this share.",
)
@click.option(
    "--few-shot-from",
    "few_shot_from",
    type=click.Path(path_type=Path),
    default=None,
    help="Annotation table to mine disagreement examples from, appended to the prompt.",
)
@click.option(
    "--split-by",
    type=click.Choice(["report"]),
    default="report",
    show_default=True,
    help="Few-shot examples never come from a report of ANNOTATIONS (no leakage).",
)
@click.option(
    "--examples",
    "n_examples",
    type=click.IntRange(1, 50),
    default=6,
    show_default=True,
    help="Few-shot examples at most.",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 50),
    default=1,
    show_default=True,
    metavar="K",
    help="Ask the judge K times and report its stability: per claim the share of repeats "
    "agreeing, overall the flip rate (README 'Judge confidence'). Each repeat is cached apart.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the verdict cache.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the judge calls, tokens and cost it would take; call nothing, write nothing.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML settings file ([judge] section).",
)
@spending_options
@confidence_options
def rejudge_command(
    annotations: Path,
    prompt: str,
    model: str | None,
    output: Path | None,
    anchor: bool,
    min_agreement: float | None,
    few_shot_from: Path | None,
    split_by: str,
    n_examples: int,
    repeats: int,
    no_cache: bool,
    dry_run: bool,
    config_file: Path | None,
    max_cost: float | None,
    yes: bool,
    confidence: str | None,
    samples: int | None,
    simulated_from: Path | None,
) -> None:
    """Re-run the judge on the claim–code pairs of ANNOTATIONS; keep the human scores.

    Writes a table with the same rows and human columns and new llm_verdict,
    llm_confidence, llm_score, judge_model, prompt_version and judge_reasoning,
    ready for `citecal calibrate ANNOTATIONS --compare OUTPUT`. Verdicts are cached.

    With --anchor only the records people agree on (2+ annotators, all on one
    side of "supports") are judged, and the judge's agreement with them is
    printed next to the previous judge's: a check before a new prompt or model
    is used (README "Drift alarms").

    \b
    Exit codes: 0 done, 1 with --min-agreement when the judge falls short on the
    anchors, 2 bad input or judge unavailable.

    \b
    Examples:
      citecal rejudge ann.parquet --prompt prompts/v2.md -o ann-v2.parquet
      citecal rejudge ann.parquet --prompt v1 --few-shot-from older.parquet -o ann-fs.parquet
      citecal rejudge ann.parquet --anchor --prompt v2 --min-agreement 0.85
      citecal rejudge ann.parquet --prompt v2 --model gpt-4o --dry-run
      citecal rejudge ann.parquet --prompt v3 --max-cost 2 -o ann-v3.parquet
      citecal rejudge ann.parquet --prompt v3 --confidence logprob -o ann-lp.parquet
      citecal rejudge ann.parquet --prompt v3 --repeats 5
    """
    from citecal.annotations import read_table, write_table
    from citecal.calibrate import load_annotations
    from citecal.calibrate._fewshot import mine_few_shot, simulated_prompts
    from citecal.commands._progress import progress_bar
    from citecal.verify.judge import prompt_with_examples, rejudge_repeats, rejudge_requests

    refuse_clobber(  # README "Security": an output never replaces an input
        [("-o/--output", output)],
        [("ANNOTATIONS", annotations), ("--few-shot-from", few_shot_from),
         ("--simulated-from", simulated_from),
         ("--prompt", Path(prompt) if Path(prompt).is_file() else None),
         ("--config", config_file)],
    )  # fmt: skip
    if dry_run:
        output = None
    elif output is None and not anchor and repeats == 1:
        raise InputError("-o/--output is required (unless --anchor)")
    if min_agreement is not None and not anchor:
        raise InputError("--min-agreement needs --anchor")
    if output is not None:
        if output.suffix.lower() not in (".parquet", ".csv", ".jsonl"):
            raise InputError(
                f"cannot tell the output format from {output.name!r}: use .parquet, .csv or .jsonl"
            )
        check_output(output)  # before any judge call
    table = read_table(annotations)
    load_annotations(annotations)  # validates the human columns before any API call
    all_records = int(table["record_id"].nunique())
    if anchor:
        from citecal.calibrate._anchor import anchor_records

        table = anchor_records(table)
    requests = rejudge_requests(table)
    overrides = {"judge": confidence_overrides(confidence, samples, simulated_from)}
    config = load_config(None, config_file, overrides).judge
    from citecal.verify.judge import load_prompt, prompt_warning

    steering = prompt_warning(load_prompt(prompt))  # README "Security"
    if steering is not None:
        click.echo(f"warning: {steering}", err=True)
    with tempfile.TemporaryDirectory(prefix="citecal-rejudge-") as tmp:
        prompt_spec = prompt
        if few_shot_from is not None:  # mined for --dry-run too: same errors, same prompt
            few = mine_few_shot(read_table(few_shot_from), table, k=n_examples, split_by=split_by)
            excluded = ", ".join(few.excluded_reports) or "none"
            click.echo(
                f"few-shot: {few.n_examples} example(s) from {few_shot_from} "
                f"({few.candidates} disagreeing record(s) available); reports of "
                f"{annotations} left out to avoid leakage: {excluded}",
                err=True,
            )
            if few.n_examples:
                prompt_spec = str(prompt_with_examples(prompt, few, Path(tmp)))
        variants: tuple[PromptTemplate, ...] = ()
        if config.confidence == "simulated":  # never from the reports being re-judged
            reports = sorted(set(table["report_id"].astype(str))) if "report_id" in table else []
            variants = simulated_prompts(config, prompt_spec, exclude_reports=reports)
        if dry_run:  # counts the few-shot examples' tokens: they go with every call
            from citecal.pipeline import dry_run_line, estimate_requests

            est = estimate_requests(
                requests,
                config,
                prompt=prompt_spec,
                model=model,
                use_cache=not no_cache,
                variants=variants,
            )
            click.echo(dry_run_line(est, unit="records"))
            if repeats > 1:
                click.echo(f"--repeats {repeats}: {repeats} times this (each repeat is asked)")
            return
        budget = make_budget(config, max_cost, yes)
        with progress_bar() as bar:
            ask_with_bar_paused(budget, bar)
            task = bar.add_task("judging records", total=len(requests) * repeats)
            new, runs = rejudge_repeats(
                table,
                config,
                prompt=prompt_spec,
                model=model,
                repeats=repeats,
                use_cache=not no_cache,
                requests=requests,
                progress=lambda done: bar.update(task, completed=done),
                budget=budget,
                variants=variants,
            )

    if repeats > 1:
        new = _with_stability(new, runs)
    fmt = write_table(new, output) if output is not None else None
    versions = sorted(set(new["prompt_version"].dropna().astype(str)))
    changed = int(
        (
            table.drop_duplicates("record_id").set_index("record_id")["llm_verdict"]
            != new.drop_duplicates("record_id").set_index("record_id")["llm_verdict"]
        ).sum()
    )
    calls = sum(r.calls for r in runs)
    hits = sum(r.cache_hits for r in runs)
    cost = sum(r.cost_usd for r in runs)
    times = f" × {repeats} repeats" if repeats > 1 else ""
    click.echo(
        f"rejudged {len(requests)} record(s){times} ({len(table)} annotation rows) with prompt "
        f"{', '.join(versions) or prompt}: {calls} API call(s), {hits} cache "
        f"hit(s), ${cost:.4f}; {changed} verdict(s) changed"
        + (f"; wrote {output} ({fmt})" if output is not None else "")
    )
    for warning in dict.fromkeys(w for r in runs for w in r.warnings):
        click.echo(f"warning: {warning}", err=True)
    if repeats > 1:
        _print_stability(runs, table)
    spending = budget_line(budget)
    if spending is not None:
        click.echo(spending, err=True)
    if anchor:
        from citecal.calibrate._anchor import anchor_check

        check = anchor_check(table, new, all_records)
        click.echo(check.line(", ".join(versions) or prompt))
        if min_agreement is not None and check.new_rate < min_agreement:
            click.echo(
                f"anchor check failed: agreement {check.new_rate:.3f} < {min_agreement:g}",
                err=True,
            )
            sys.exit(1)


def _repeat_verdicts(runs: list[JudgeRun]) -> dict[str, list[str]]:
    """Record id → its verdict in each repeat."""
    out: dict[str, list[str]] = {}
    for run in runs:
        for rid, v in run.verdicts.items():
            out.setdefault(str(rid), []).append(v.verdict)
    return out


def _with_stability(new: pd.DataFrame, runs: list[JudgeRun]) -> pd.DataFrame:
    """The table with ``judge_stability`` and ``judge_repeats`` per record (README "Judge
    confidence"): unstable claims can be routed to people."""
    from citecal.calibrate import stability

    found = {r.record_id: r for r in stability(_repeat_verdicts(runs)).records}
    ids = new["record_id"].astype(str)
    out = new.copy()
    out["judge_stability"] = [found[i].stability if i in found else None for i in ids]
    out["judge_repeats"] = len(runs)
    return out


def _print_stability(runs: list[JudgeRun], table: pd.DataFrame) -> None:
    """Stability per claim (the unstable ones) and overall, and what people said about them."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from citecal.calibrate import stability

    people = table[["record_id", "human_score"]] if "human_score" in table else None
    st = stability(_repeat_verdicts(runs), people)
    claims = table.drop_duplicates("record_id").set_index(
        table.drop_duplicates("record_id")["record_id"].astype(str)
    )
    unstable = sorted(
        (r for r in st.records if r.flipped), key=lambda r: (r.stability or 0, r.record_id)
    )
    console = Console(width=max(Console().width, 120))
    answered = sum(r.answered > 0 for r in st.records)
    grid = Table(
        title=escape(f"Unstable claims: verdicts that changed over {st.repeats} repeats"),
        title_justify="left",
    )
    for head in ("record", "stability", "verdicts", "claim [citation]"):
        grid.add_column(head, justify="right" if head == "stability" else "left")
    for r in unstable:
        row = claims.loc[r.record_id] if r.record_id in claims.index else None
        text = "" if row is None else f"{row.get('claim', '')} {row.get('citation', '')}"
        short = {"supports": "S", "not_supports": "N", "partial": "P", "unverified": "?"}
        grid.add_row(
            escape(r.record_id[:12]),
            f"{r.stability:.0%}" if r.stability is not None else "–",
            escape(" ".join(short.get(v, v) for v in r.verdicts)),
            escape(text[:90]),
        )
    if unstable:
        console.print(grid)
    stable = answered - len(unstable)
    flip = f"{st.flip_rate:.1%}" if st.flip_rate is not None else "–"
    mean = f"{st.mean_stability:.3f}" if st.mean_stability is not None else "–"
    console.print(
        escape(
            f"stability over {st.repeats} repeats: {answered} claims, {stable} stable (every "
            f"repeat agrees), {len(unstable)} unstable; flip rate {flip}; mean stability {mean}"
        )
    )
    if st.counts["unstable"] or st.counts["stable"]:

        def pct(x: float | None) -> str:
            return f"{x:.1%}" if x is not None else "–"

        console.print(
            escape(
                "people on them: annotators split on "
                f"{pct(st.people_split['unstable'])} of unstable claims vs "
                f"{pct(st.people_split['stable'])} of stable ones; the judge's majority agrees "
                f"with their consensus on {pct(st.people_agree['unstable'])} vs "
                f"{pct(st.people_agree['stable'])}"
            )
        )
