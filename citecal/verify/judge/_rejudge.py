"""Re-run the judge on annotated claim–code pairs with another prompt or model.

``citecal rejudge`` keeps every human column of the annotation table and
replaces only the judge's (:data:`~citecal.models.JUDGE_COLUMNS`), so
``citecal calibrate A --compare B`` compares two judges on exactly the same
human scores. Each record is judged once (one verdict per claim–code pair,
whatever the number of annotators), through :func:`build_judge` and its cache.

Prompts are built from the table's raw columns (``cited_code``,
``start_line``, ``end_line``, ``context_before``, ``context_after``: README
"Annotation table"), never from the Markdown annotators saw.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citecal.errors import InputError
from citecal.extract import parse_citation_group
from citecal.models import JUDGE_COLUMNS, JudgeVerdict, Verdict
from citecal.source import language_for_path
from citecal.verify.judge._budget import Budget
from citecal.verify.judge._judge import build_judge
from citecal.verify.judge._prompts import PromptTemplate, load_prompt, prompt_text
from citecal.verify.judge._types import JudgeRequest, JudgeRun

if TYPE_CHECKING:
    import pandas as pd

    from citecal.calibrate import FewShot
    from citecal.config import JudgeConfig


def _value(row: Mapping[str, Any], column: str) -> Any:
    """The cell, with NaN / NA / "" as None."""
    value = row.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str) and not value.strip():
        return None
    try:
        import pandas as pd

        if value is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    return value


def request_for(row: Mapping[str, Any]) -> JudgeRequest:
    """The judge request of one table row: its claim, raw cited code, lines and context.

    Line numbers come from ``start_line`` / ``end_line``; a table without them
    (another tool's) gives them in its ``citation``, and a table with neither
    is judged with the code numbered from 1.
    """
    citation = str(_value(row, "citation") or "")
    code = str(_value(row, "cited_code") or "")
    parsed = parse_citation_group(citation.strip().strip("[]")) if citation else None
    start = _value(row, "start_line")
    end = _value(row, "end_line")
    if start is None:
        start = parsed[0].start_line if parsed else 1
        end = parsed[0].end_line if parsed else start + code.count("\n")
    start, end = int(start), int(end if end is not None else start)
    file_path = str(_value(row, "file_path") or (parsed[0].file_path if parsed else ""))
    language = _value(row, "language")
    return JudgeRequest(
        key=str(row["record_id"]),
        claim=str(_value(row, "claim") or ""),
        citation=citation,
        file_path=file_path,
        language=str(language) if language is not None else language_for_path(file_path),
        start_line=start,
        end_line=end,
        code=code,
        before=str(_value(row, "context_before") or ""),
        after=str(_value(row, "context_after") or ""),
    )


def rejudge_requests(table: pd.DataFrame) -> list[JudgeRequest]:
    """One :class:`JudgeRequest` per record of an annotation table (first row of each).

    Raises:
        InputError: the table lacks ``record_id``, ``claim`` or ``cited_code``, a
            record has no code to judge, or records were pulled from an older
            citecal's push (their ``cited_code`` is the annotators' Markdown).
    """
    missing = [c for c in ("record_id", "claim", "cited_code") if c not in table]
    if missing:
        raise InputError(f"annotation table lacks column(s) {', '.join(missing)} to re-judge")
    records = table.drop_duplicates("record_id")
    rows = [{str(k): v for k, v in r.items()} for r in records.to_dict("records")]
    legacy = [
        str(r["record_id"])
        for r in rows
        if _value(r, "start_line") is None and _value(r, "response_inserted_at") is not None
    ]
    if legacy:
        raise InputError(
            f"{len(legacy)} record(s) (first: {legacy[0]}) were pulled from records an older "
            "citecal pushed without their raw code: cited_code is the Markdown annotators saw. "
            "Push the evaluation again (answers are kept) and pull, then re-judge"
        )
    requests = [request_for(r) for r in rows]
    empty = [r.key for r in requests if not r.code.strip() or not r.claim.strip()]
    if empty:
        raise InputError(
            f"{len(empty)} record(s) have no claim or cited code to judge (first: {empty[0]})"
        )
    return requests


def prompt_with_examples(prompt: str, few_shot: FewShot, directory: Path) -> Path:
    """Write the prompt with the examples appended to its system section; returns the file.

    The file name carries ``+fewshot`` so the version id recorded on every
    verdict (name + content hash) tells these runs apart from the plain prompt.
    """
    template = load_prompt(prompt)
    system = template.system.rstrip() + "\n\n" + few_shot.text.strip()
    comment = (
        f"{template.name} ({template.version}) with {few_shot.n_examples} few-shot "
        f"examples; reports excluded: {', '.join(few_shot.excluded_reports) or 'none'}"
    )
    text = prompt_text(template, system, comment)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    path = directory / f"{template.name}+fewshot-{digest}.md"
    path.write_text(text, encoding="utf-8")
    return path


def apply_verdicts(table: pd.DataFrame, verdicts: Mapping[str, Verdict]) -> pd.DataFrame:
    """``table`` with its judge columns replaced by ``verdicts`` (keyed by record_id)."""
    import pandas as pd

    empty = dict.fromkeys(JUDGE_COLUMNS)
    by_record = {k: JudgeVerdict.from_verdict(v).columns() for k, v in verdicts.items()}
    out = table.copy()
    new = pd.DataFrame(
        [by_record.get(str(rid), empty) for rid in out["record_id"].astype(str)],
        index=out.index,
        columns=list(JUDGE_COLUMNS),
    )
    for col in JUDGE_COLUMNS:
        out[col] = new[col]
    if "reasoning" in out:  # a stale copy of the old judge's reasoning must not survive
        out["reasoning"] = new["judge_reasoning"]
    out["llm_score"] = pd.to_numeric(out["llm_score"], errors="coerce")
    return out


def rejudge_frame(
    table: pd.DataFrame,
    config: JudgeConfig,
    *,
    prompt: str,
    model: str | None = None,
    use_cache: bool = True,
    requests: Sequence[JudgeRequest] | None = None,
    progress: Callable[[int], None] | None = None,
    budget: Budget | None = None,
    variants: Sequence[PromptTemplate] = (),
) -> tuple[pd.DataFrame, JudgeRun]:
    """Judge every record of ``table`` again and return the new table and the run.

    ``progress`` gets the number of records judged so far as they finish;
    ``budget`` is what the run may spend (README "Security"); ``variants`` the
    simulated annotators' prompts (README "Judge confidence").

    Raises:
        InputError: bad prompt or a table without claims / code.
        JudgeUnavailable: no API key for a non-local endpoint.
        JudgeError: the API failed past the retry policy.
    """
    table, runs = rejudge_repeats(
        table,
        config,
        prompt=prompt,
        model=model,
        use_cache=use_cache,
        requests=requests,
        progress=progress,
        budget=budget,
        variants=variants,
    )
    return table, runs[0]


def rejudge_repeats(
    table: pd.DataFrame,
    config: JudgeConfig,
    *,
    prompt: str,
    model: str | None = None,
    repeats: int = 1,
    use_cache: bool = True,
    requests: Sequence[JudgeRequest] | None = None,
    progress: Callable[[int], None] | None = None,
    budget: Budget | None = None,
    variants: Sequence[PromptTemplate] = (),
) -> tuple[pd.DataFrame, list[JudgeRun]]:
    """Ask the judge about every record ``repeats`` times: the new table and each run.

    Repeat 0 is the ordinary answer and fills the table's judge columns; every
    repeat is cached apart (``citecal rejudge --repeats``, README "Judge
    confidence"), so a second run replays them all. ``progress`` counts records
    over all repeats.
    """
    if repeats < 1:
        raise InputError("--repeats must be at least 1")
    reqs = list(requests) if requests is not None else rejudge_requests(table)
    judge = build_judge(
        config,
        prompt=prompt,
        model=model,
        use_cache=use_cache,
        budget=budget,
        variants=variants,
    )
    runs: list[JudgeRun] = []
    try:
        for r in range(repeats):
            offset = r * len(reqs)

            def step(done: int, offset: int = offset) -> None:
                if progress is not None:
                    progress(offset + done)

            runs.append(judge.for_repeat(r).judge(reqs, step))
    finally:
        judge.close()
    return apply_verdicts(table, runs[0].verdicts), runs
