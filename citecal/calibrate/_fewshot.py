"""Labelled examples mined from an annotation table for the judge's prompt.

Two queries over the table, one way of showing an example:

- :func:`mine_few_shot` (``citecal rejudge --few-shot-from``): the records where the
  judge and the annotators disagree, from reports the evaluated table does not
  contain, so no example can leak the answer to a record being scored. The prompt
  itself is written by :func:`citecal.verify.judge.prompt_with_examples`.
- :func:`simulated_annotators` (``--confidence simulated``, README "Judge
  confidence"): K sets of examples, each labelled by one annotator, after Jung,
  Brahman and Choi's *Simulated Annotators* ("Trust or Escalate", ICLR 2025, §3.3):
  the judge prompted with each set plays that annotator, and their agreement is the
  judge's confidence. :func:`simulated_prompts` makes the K prompts.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from citecal.calibrate._disagreements import categorise
from citecal.calibrate._table import prepare
from citecal.errors import InputError
from citecal.support import human_supports
from citecal.verify.judge import PromptTemplate, defang, find_injection, load_prompt, with_examples

if TYPE_CHECKING:
    from citecal.config import JudgeConfig


def _addresses_judge(row: pd.Series) -> bool:
    return any(
        find_injection(str(row.get(column) or "")) is not None
        for column in ("claim", "citation", "cited_code", "notes", "correction")
    )


@dataclass(frozen=True, slots=True)
class FewShot:
    """Examples appended to the prompt and what was left out to prevent leakage."""

    text: str
    n_examples: int
    excluded_reports: tuple[str, ...]
    candidates: int


def mine_few_shot(
    source: pd.DataFrame, evaluated: pd.DataFrame, *, k: int = 6, split_by: str = "report"
) -> FewShot:
    """Disagreement examples from ``source`` whose reports are not in ``evaluated``.

    The human consensus (median score) is the label shown; examples alternate
    false positives and false negatives so the prompt is not pushed one way.
    The code shown is the table's raw ``cited_code``.

    Raises:
        InputError: unknown ``split_by``.
    """
    if split_by != "report":
        raise InputError(f"--split-by {split_by!r}: only 'report' is supported")
    prepared = prepare(source)
    held_out = set(evaluated["report_id"].astype(str))
    excluded = tuple(sorted(held_out & set(prepared["report_id"])))
    usable = prepared[~prepared["report_id"].isin(held_out)]
    mismatch = categorise(usable)
    if mismatch.empty:
        return FewShot("", 0, excluded, 0)
    median = usable.groupby("record_id")["human_score"].median()
    per_record = mismatch.drop_duplicates("record_id").sort_values(["type", "record_id"])
    # Examples go into the system message: one whose claim, code or note speaks to the
    # judge is never shown (README "Security").
    per_record = per_record[~per_record.apply(_addresses_judge, axis=1).astype(bool)]
    fps = per_record[per_record["type"] == "false_positive"]
    fns = per_record[per_record["type"] == "false_negative"]
    chosen: list[pd.Series] = []
    for i in range(max(len(fps), len(fns))):
        for part in (fps, fns):
            if i < len(part) and len(chosen) < k:
                chosen.append(part.iloc[i])
    blocks = [
        example_block(
            n,
            ex,
            human_supports(float(median[ex["record_id"]])),
            "annotators",
            "; a previous judge got this wrong",
        )
        for n, ex in enumerate(chosen, start=1)
    ]
    text = (
        "Worked examples from human review (other reports than the ones being judged):\n\n"
        + "\n".join(blocks)
    )
    return FewShot(text, len(chosen), excluded, int(per_record.shape[0]))


def example_block(n: int, ex: pd.Series, supported: bool, who: str, why: str = "") -> str:
    """One labelled example for a prompt: the claim, its raw code, the label, the note.

    Claim, code and note are untrusted data: inside ``<untrusted_input>`` and defanged
    (README "Security").
    """
    code = str(ex.get("cited_code") or "")
    reason = ex.get("notes") or ex.get("correction") or ""
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`{3,}", code)), default=2) + 1)
    example = f'Claim: "{ex["claim"]}"\nCode from {ex["citation"]}:\n{fence}\n{code}\n{fence}\n' + (
        f"Annotator note: {reason}\n" if reason else ""
    )
    return (
        f"Example {n} ({who}: {'SUPPORTED' if supported else 'NOT SUPPORTED'}{why})\n"
        f"<untrusted_input>\n{defang(example)}</untrusted_input>\n"
    )


@dataclass(frozen=True, slots=True)
class SimulatedAnnotators:
    """K sets of labelled examples, one per simulated annotator, and where they came from."""

    texts: tuple[str, ...]
    """Each variant's examples, as appended to the prompt's system section."""
    annotators: tuple[int, ...]
    """Which annotator (by rank of labels given, 0 = the most) labelled each variant's."""
    examples: tuple[int, ...]
    """Examples in each variant."""
    excluded_reports: tuple[str, ...]
    candidates: int
    """Labelled records available after the exclusions."""


SIMULATED_HEADER = (
    "Worked examples labelled by one human reviewer (other reports than the ones being "
    "judged); judge the claims below as this reviewer would:\n\n"
)


def simulated_annotators(
    source: pd.DataFrame,
    *,
    k: int,
    per_variant: int,
    seed: int = 0,
    exclude_reports: Iterable[str] = (),
) -> SimulatedAnnotators:
    """K few-shot example sets, each drawn from one annotator's labels (module doc).

    Variant i shows ``per_variant`` records annotator ``i mod A`` labelled (annotators
    by how many labels they gave, most first), half of them supported by that
    annotator's score and half not where there are enough of each, drawn with a seeded
    generator; the label shown is that annotator's. Records of ``exclude_reports`` (the
    reports being judged) and records whose text speaks to the judge are never shown.

    Raises:
        InputError: no labelled record is left after the exclusions.
    """
    prepared = prepare(source)
    held_out = set(map(str, exclude_reports))
    excluded = tuple(sorted(held_out & set(prepared["report_id"])))
    usable = prepared[~prepared["report_id"].isin(held_out)]
    if not usable.empty:
        usable = usable[~usable.apply(_addresses_judge, axis=1).astype(bool)]
    if usable.empty:
        raise InputError(
            "no labelled example is left for the simulated annotators"
            + (f" after leaving out the reports being judged ({len(excluded)})" if excluded else "")
            + ": give an annotation table of other reports (--simulated-from)"
        )
    counts = usable.groupby("annotator").size()
    order = sorted(counts.index, key=lambda a: (-int(counts[a]), str(a)))
    texts: list[str] = []
    who: list[int] = []
    sizes: list[int] = []
    for i in range(k):
        rank = i % len(order)
        rows = usable[usable["annotator"] == order[rank]].drop_duplicates("record_id")
        rows = rows.sort_values("record_id")
        rng = random.Random(f"{seed}\x1f{i}")
        yes = [r for _, r in rows.iterrows() if human_supports(float(r["human_score"]))]
        no = [r for _, r in rows.iterrows() if not human_supports(float(r["human_score"]))]
        rng.shuffle(yes)
        rng.shuffle(no)
        half = per_variant // 2
        take_yes = min(len(yes), max(half, per_variant - len(no)))
        picked = yes[:take_yes] + no[: per_variant - take_yes]
        rng.shuffle(picked)
        blocks = [
            example_block(n, ex, human_supports(float(ex["human_score"])), "the reviewer")
            for n, ex in enumerate(picked, start=1)
        ]
        texts.append(SIMULATED_HEADER + "\n".join(blocks))
        who.append(rank)
        sizes.append(len(picked))
    return SimulatedAnnotators(
        tuple(texts), tuple(who), tuple(sizes), excluded, int(usable["record_id"].nunique())
    )


def simulated_prompts(
    config: JudgeConfig,
    prompt: str | None = None,
    *,
    table: pd.DataFrame | None = None,
    exclude_reports: Sequence[str] = (),
    seed: int = 0,
) -> tuple[PromptTemplate, ...]:
    """The K prompts of ``--confidence simulated``: the judge prompt with each variant's examples.

    The examples come from ``table``, else from the table ``config.simulated_from``
    names. Each prompt's version is its name plus a hash of its text
    (``v3+sim1@…``), so verdicts, the cache and calibration keep them apart.

    Raises:
        InputError: no table given or named, or no example left after the exclusions.
    """
    from citecal.annotations import read_table

    if table is None:
        if not config.simulated_from:
            raise InputError(
                "--confidence simulated needs labelled examples: give --simulated-from "
                "ANNOTATIONS (or judge.simulated_from)"
            )
        table = read_table(Path(config.simulated_from))
    template = load_prompt(prompt or config.prompt)
    sim = simulated_annotators(
        table,
        k=config.samples,
        per_variant=config.simulated_examples,
        seed=seed,
        exclude_reports=exclude_reports,
    )
    return tuple(
        with_examples(
            template,
            text,
            f"{template.name}+sim{i + 1}",
            f"{template.name} ({template.version}) as simulated annotator {i + 1} of "
            f"{len(sim.texts)}: {n} examples labelled by reviewer #{who + 1}",
        )
        for i, (text, who, n) in enumerate(
            zip(sim.texts, sim.annotators, sim.examples, strict=True)
        )
    )
