"""Re-run the judge on annotated claim–code pairs with another prompt or model.

``citecal rejudge`` keeps every human column of the annotation table and
replaces only the judge's (``llm_*``, ``judge_model``, ``prompt_version``,
``judge_reasoning``), so ``citecal calibrate A --compare B`` compares two
judges on exactly the same human scores. Each record is judged once (the
judge gives one verdict per claim–code pair, whatever the number of
annotators), through :func:`citecal.verify.judge.build_judge` and its cache.

Few-shot mining takes disagreements from another annotation table and
appends them to the prompt as worked examples, leaving out every report the
evaluated table contains, so no example can leak the answer to a record
being scored.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from citecal.calibrate._disagreements import categorise
from citecal.calibrate._table import prepare
from citecal.config import JudgeConfig
from citecal.errors import InputError
from citecal.extract import parse_citation_group
from citecal.models import Verdict
from citecal.source import language_for_path
from citecal.support import human_supports
from citecal.verify.judge import JudgeRequest, JudgeRun, build_judge, load_prompt

JUDGE_OUTPUT_COLUMNS: tuple[str, ...] = (
    "llm_verdict",
    "llm_confidence",
    "llm_score",
    "judge_model",
    "prompt_version",
    "judge_reasoning",
)
"""Columns ``rejudge`` rewrites; every other column is kept as it was."""

_FENCE_RE = re.compile(r"^(`{3,})[^\n`]*\n(.*?)\n\1[ \t]*$", re.MULTILINE | re.DOTALL)
# A line of the Argilla rendering: marker (▶ cited, blank context), number, two spaces, text.
_ARGILLA_LINE_RE = re.compile(r"^([▶ ]) *(\d+)(?: {1,2}(.*))?$")
# A line of the judge prompt rendering: number, ">" for cited or spaces, text.
_JUDGE_LINE_RE = re.compile(r"^ *(\d+)(?: (>| ) ?(.*))?$")


@dataclass(frozen=True, slots=True)
class CitedCode:
    """The cited lines of a record and the context around them."""

    code: str
    before: str
    after: str
    start_line: int | None


def parse_cited_code(text: str | None) -> CitedCode:
    """Recover the cited lines from the ``cited_code`` column.

    The column is either raw code (from ``citecal eval``) or the Markdown
    ``citecal push`` shows annotators: a caption and a fenced block whose
    lines carry ``▶`` (cited) or a blank (context) and a line number. The
    judge prompt's own rendering (``12 > code``) is read too. Anything that
    does not parse as numbered lines is taken as raw code.
    """
    if not text:
        return CitedCode("", "", "", None)
    m = _FENCE_RE.search(text)
    body = m.group(2) if m else text
    for pattern, cited_mark in ((_ARGILLA_LINE_RE, "▶"), (_JUDGE_LINE_RE, ">")):
        parsed = []
        for line in body.split("\n"):
            lm = pattern.match(line)
            if lm is None:
                break
            if pattern is _ARGILLA_LINE_RE:
                mark, number, code = lm.group(1), int(lm.group(2)), lm.group(3) or ""
            else:
                number, mark, code = int(lm.group(1)), lm.group(2) or " ", lm.group(3) or ""
            parsed.append((mark == cited_mark, number, code))
        else:
            if parsed and any(cited for cited, _, _ in parsed):
                first = next(i for i, p in enumerate(parsed) if p[0])
                last = max(i for i, p in enumerate(parsed) if p[0])
                return CitedCode(
                    code="\n".join(p[2] for p in parsed[first : last + 1]),
                    before="\n".join(p[2] for p in parsed[:first]),
                    after="\n".join(p[2] for p in parsed[last + 1 :]),
                    start_line=parsed[first][1],
                )
    return CitedCode(body, "", "", None)


def _request(record: pd.Series) -> JudgeRequest:
    citation = str(record.get("citation") or "")
    parsed = parse_citation_group(citation.strip().strip("[]")) if citation else None
    cited = parse_cited_code(record.get("cited_code"))
    file_path = str(record.get("file_path") or "") or (parsed[0].file_path if parsed else "")
    start = parsed[0].start_line if parsed else (cited.start_line or 1)
    end = parsed[0].end_line if parsed else start + max(0, cited.code.count("\n"))
    language = record.get("language")
    return JudgeRequest(
        key=str(record["record_id"]),
        claim=str(record.get("claim") or ""),
        citation=citation,
        file_path=file_path,
        language=str(language) if isinstance(language, str) else language_for_path(file_path),
        start_line=cited.start_line or start,
        end_line=end,
        code=cited.code,
        before=cited.before,
        after=cited.after,
    )


def judge_requests(table: pd.DataFrame) -> list[JudgeRequest]:
    """One :class:`JudgeRequest` per record of an annotation table (first row of each).

    Raises:
        InputError: the table lacks ``record_id``, ``claim`` or ``cited_code``,
            or a record has no code to judge.
    """
    missing = [c for c in ("record_id", "claim", "cited_code") if c not in table]
    if missing:
        raise InputError(f"annotation table lacks column(s) {', '.join(missing)} to re-judge")
    records = table.drop_duplicates("record_id")
    requests = [_request(r) for _, r in records.iterrows()]
    empty = [r.key for r in requests if not r.code.strip() or not r.claim.strip()]
    if empty:
        raise InputError(
            f"{len(empty)} record(s) have no claim or cited code to judge (first: {empty[0]})"
        )
    return requests


# ------------------------------------------------------------------ few-shot mining


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
    fps = per_record[per_record["type"] == "false_positive"]
    fns = per_record[per_record["type"] == "false_negative"]
    chosen: list[pd.Series] = []
    for i in range(max(len(fps), len(fns))):
        for part in (fps, fns):
            if i < len(part) and len(chosen) < k:
                chosen.append(part.iloc[i])
    blocks = []
    for n, ex in enumerate(chosen, start=1):
        supported = human_supports(float(median[ex["record_id"]]))
        code = parse_cited_code(ex.get("cited_code")).code
        reason = ex.get("notes") or ex.get("correction") or ""
        blocks.append(
            f"Example {n} (annotators: {'SUPPORTED' if supported else 'NOT SUPPORTED'};"
            f" a previous judge got this wrong)\n"
            f'Claim: "{ex["claim"]}"\nCode from {ex["citation"]}:\n```\n{code}\n```\n'
            + (f"Annotator note: {reason}\n" if reason else "")
        )
    text = (
        "Worked examples from human review (other reports than the ones being judged):\n\n"
        + "\n".join(blocks)
    )
    return FewShot(text, len(chosen), excluded, int(per_record.shape[0]))


def prompt_with_examples(prompt: str, few_shot: FewShot, directory: Path) -> Path:
    """Write the prompt with the examples appended to its system section; returns the file.

    The file name carries ``+fewshot`` so the version id recorded on every
    verdict (name + content hash) tells these runs apart from the plain prompt.
    """
    template = load_prompt(prompt)
    system = template.system.rstrip() + "\n\n" + few_shot.text.strip()
    text = (
        f"<!-- {template.name} ({template.version}) with {few_shot.n_examples} few-shot "
        f"examples; reports excluded: {', '.join(few_shot.excluded_reports) or 'none'} -->\n\n"
        f"## system\n\n{system}\n\n## single\n\n{template.single}\n\n"
        f"## batch\n\n{template.batch}\n\n## batch_item\n\n{template.batch_item}\n"
    )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    path = directory / f"{template.name}+fewshot-{digest}.md"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ re-judging


def _judge_columns(verdict: Verdict | None) -> dict[str, object]:
    if verdict is None:
        return dict.fromkeys(JUDGE_OUTPUT_COLUMNS)
    return {
        "llm_verdict": verdict.verdict,
        "llm_confidence": verdict.confidence,
        "llm_score": verdict.score,
        "judge_model": verdict.model,
        "prompt_version": verdict.prompt_version,
        "judge_reasoning": verdict.reasoning or None,
    }


def apply_verdicts(table: pd.DataFrame, verdicts: dict[str, Verdict]) -> pd.DataFrame:
    """``table`` with its judge columns replaced by ``verdicts`` (keyed by record_id)."""
    out = table.copy()
    new = pd.DataFrame(
        [_judge_columns(verdicts.get(str(rid))) for rid in out["record_id"].astype(str)],
        index=out.index,
    )
    for col in JUDGE_OUTPUT_COLUMNS:
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
) -> tuple[pd.DataFrame, JudgeRun]:
    """Judge every record of ``table`` again and return the new table and the run.

    ``progress`` gets the number of records judged so far as they finish.

    Raises:
        InputError: bad prompt or a table without claims / code.
        JudgeUnavailable: no API key for a non-local endpoint.
        JudgeError: the API failed past the retry policy.
    """
    reqs = list(requests) if requests is not None else judge_requests(table)
    judge = build_judge(config, prompt=prompt, model=model, use_cache=use_cache)
    run = judge.judge(reqs, progress)
    return apply_verdicts(table, run.verdicts), run
