"""The prompt critic: an LLM asked to propose instruction edits from the judge's mistakes.

It sees only the training folds' disagreements (categories, the worst
examples, the annotators' own notes: MLflow's MemAlign distils such notes
into guidelines), speaks through the judge's own OpenAI-compatible client and
retry policy (:class:`~citecal.verify.judge._client.ChatClient`), and has its
own versioned prompt in the package (``citecal/align/prompts/critic/v1.md``,
version ``v1@<hash>`` like the judge's prompts). Answers are cached on disk
by endpoint, model, critic version and message, so a second identical
``citecal align`` run asks nothing (README "Aligning the judge").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from citecal._io import atomic_write_text
from citecal.calibrate import category_counts
from citecal.config import JudgeConfig
from citecal.errors import InputError
from citecal.verify.judge import (
    BUDGET_REASON,
    INJECTION_REASON,
    Budget,
    ChatClient,
    Completion,
    ResponseFormatRejected,
    RetryPolicy,
    TemperatureRejected,
    TimedOut,
    Unreachable,
    cost_usd,
    defang,
    fence_for,
    normalise_endpoint,
    openai_client,
    prompt_injection,
    request_ceiling,
)

CRITIC_SECTIONS = ("system", "user")
_SECTION_RE = re.compile(r"^##[ \t]+([A-Za-z_]+)[ \t]*$", re.MULTILINE)
_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_FIELD_RE = re.compile(r"\{(prompt|categories|examples|notes|n_edits)\}")


@dataclass(frozen=True, slots=True)
class CriticPrompt:
    """The critic's prompt: its two sections and its version id (name + content hash)."""

    name: str
    version: str
    system: str
    user: str


@dataclass(frozen=True, slots=True)
class Edit:
    """One instruction edit the critic proposed."""

    title: str
    instruction: str


@dataclass(frozen=True, slots=True)
class CriticAnswer:
    """The critic's edits for one fold and what asking cost."""

    edits: tuple[Edit, ...]
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hit: bool = False
    problem: str | None = None
    dropped: tuple[str, ...] = ()
    """Edits left out, each with why: too long, or text that steers the judge."""
    over_budget: bool = False
    """The request did not fit in ``--max-calls`` / ``--max-cost``: not sent."""


MAX_EDIT_CHARS = 1000
"""Longest edit instruction kept (an edit is a sentence or two; README "Security")."""


def screen_edits(edits: Sequence[Edit]) -> tuple[tuple[Edit, ...], tuple[str, ...]]:
    """The edits that may go into a judge prompt, and why each other one was dropped.

    The critic read claims, code and notes written by parties citecal does not trust,
    so its edits are untrusted too (README "Security"): an edit longer than
    :data:`MAX_EDIT_CHARS`, or one that overrides the judge's instructions, forges
    prompt structure or dictates a verdict (:func:`prompt_injection`) is dropped.
    """
    kept: list[Edit] = []
    dropped: list[str] = []
    for e in edits:
        if len(e.instruction) > MAX_EDIT_CHARS:
            dropped.append(
                f"edit {e.title[:60]!r} dropped: {len(e.instruction):,} characters, more than"
                f" {MAX_EDIT_CHARS:,}"
            )
            continue
        found = prompt_injection(f"{e.title}\n{e.instruction}", "edit")
        if found is not None:
            dropped.append(f"edit {e.title[:60]!r} dropped: {INJECTION_REASON} ({found.text!r})")
            continue
        kept.append(e)
    return tuple(kept), tuple(dropped)


def load_critic_prompt(name: str = "v2") -> CriticPrompt:
    """The shipped critic prompt ``name``.

    Raises:
        InputError: no such version, or a section is missing.
    """
    folder = resources.files("citecal.align").joinpath("prompts", "critic")
    path = folder.joinpath(f"{name}.md")
    if not path.is_file():
        raise InputError(f"unknown critic prompt version {name!r}")
    text = path.read_text(encoding="utf-8")
    body = _COMMENT_RE.sub("", text)
    parts: dict[str, str] = {}
    matches = list(_SECTION_RE.finditer(body))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        parts[m.group(1).lower()] = body[m.end() : end].strip()
    missing = [s for s in CRITIC_SECTIONS if not parts.get(s)]
    if missing:
        raise InputError(f"critic prompt {name}: missing section(s) {', '.join(missing)}")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return CriticPrompt(name, f"{name}@{digest}", parts["system"], parts["user"])


def _fmt_score(value: object) -> str:
    return "—" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value}"


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def render_examples(mismatch: pd.DataFrame, n: int = 8, max_code_lines: int = 30) -> str:
    """The ``n`` worst disagreements, one per record: largest gap of judge score and human / 3.

    The claim, citation, code and note come from reports, repositories and annotators
    citecal does not trust (README "Security"): each example's are fenced like the judge's
    input, between ``<untrusted_input>`` tags the text cannot close (``defang``) and in a
    code fence longer than any backtick run in the code.
    """
    if mismatch.empty:
        return "(none)"
    gap = (mismatch["judge_score"].astype(float) - mismatch["human_score"].astype(float) / 3).abs()
    worst = mismatch.assign(_gap=gap).sort_values(["_gap", "record_id"], ascending=[False, True])
    worst = worst.drop_duplicates("record_id").head(n)
    blocks = []
    for i, row in enumerate(worst.to_dict("records"), start=1):
        code = defang("\n".join(str(row.get("cited_code") or "").split("\n")[:max_code_lines]))
        notes = row.get("notes") or row.get("correction")
        fence = fence_for(code)
        blocks.append(
            f"{i}. [{row['type']}, {row['category']}] judge: {row['llm_verdict']} (score "
            f"{_fmt_score(row['judge_score'])}); annotator score {int(row['human_score'])} of 3\n"
            "<untrusted_input>\n"
            f'claim: "{defang(_one_line(row["claim"]))}" {defang(_one_line(row["citation"]))}\n'
            + (f"annotator's note: {defang(_one_line(notes))}\n" if notes else "")
            + f"{fence}\n{code}\n{fence}\n</untrusted_input>"
        )
    return "\n\n".join(blocks)


def frequent_notes(mismatch: pd.DataFrame, n: int = 15) -> str:
    """The annotators' most frequent distinct notes on disagreements, one bullet each, in one
    ``<untrusted_input>`` block (an annotator's note is data, never an instruction)."""
    if mismatch.empty or "notes" not in mismatch:
        return "- (no notes)"
    notes = mismatch["notes"].dropna().astype(str).map(_one_line)
    counts = notes[notes != ""].value_counts().head(n)
    if counts.empty:
        return "- (no notes)"
    bullets = "\n".join(f"- ({count}×) {defang(str(note))}" for note, count in counts.items())
    return f"<untrusted_input>\n{bullets}\n</untrusted_input>"


def critic_messages(
    critic: CriticPrompt,
    judge_system: str,
    mismatch: pd.DataFrame,
    n_edits: int,
    n_examples: int = 8,
) -> list[dict[str, str]]:
    """The chat messages asking the critic for ``n_edits`` edits."""
    counts = category_counts(mismatch)
    categories = "\n".join(f"- {name}: {count}" for name, count in counts.items() if count)
    values = {
        "prompt": judge_system,
        "categories": categories or "- (no disagreements)",
        "examples": render_examples(mismatch, n_examples),
        "notes": frequent_notes(mismatch),
        "n_edits": str(n_edits),
    }
    user = _FIELD_RE.sub(lambda m: values[m.group(1)], critic.user)
    return [{"role": "system", "content": critic.system}, {"role": "user", "content": user}]


def parse_edits(text: str | None, limit: int) -> tuple[tuple[Edit, ...], str | None]:
    """Edits from the critic's answer (JSON object with ``edits``, or a bare list).

    Tolerant like the judge's parser: code fences and prose around the JSON
    are skipped. Returns the edits and, when none could be read, why.
    """
    if not text:
        return (), "empty answer"
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return (), "no JSON in the answer"
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        return (), f"invalid JSON ({exc.msg})"
    items = value.get("edits") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return (), "no 'edits' list"
    edits: list[Edit] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("instruction"), str):
            instruction = " ".join(item["instruction"].split())
            if instruction and "##" not in instruction:
                title = " ".join(str(item.get("title") or instruction[:40]).split())[:120]
                edits.append(Edit(title, instruction))
        elif isinstance(item, str) and item.strip() and "##" not in item:
            edits.append(Edit(item.strip()[:40], " ".join(item.split())))
    if not edits:
        return (), "no usable edit"
    return tuple(edits[:limit]), None


def critic_cache_key(base_url: str, model: str, version: str, messages: Sequence[object]) -> str:
    """SHA-256 of endpoint, model, critic version and messages."""
    raw = json.dumps([normalise_endpoint(base_url), model, version, messages], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


async def _complete(
    config: JudgeConfig, base_url: str, api_key: str, model: str, messages: list[dict[str, str]]
) -> tuple[str | None, int, int]:
    """One critic request, its answer bounded by ``judge.critic_max_tokens``."""

    client = openai_client(base_url, api_key, config.timeout_s)
    policy = RetryPolicy(
        max_retries=config.max_retries,
        backoff_base_s=config.backoff_base_s,
        backoff_max_s=config.backoff_max_s,
        timeout_s=config.timeout_s,
    )
    chat = ChatClient(
        client, base_url, policy, asyncio.Semaphore(1), api_key_env=config.api_key_env
    )
    rf: dict[str, str] | None = {"type": "json_object"} if config.structured_outputs else None
    temperature: float | None = config.temperature
    comp: Completion | None = None
    try:
        while comp is None:
            try:
                comp = await chat.complete(
                    model, messages, rf, temperature, max_tokens=config.critic_max_tokens
                )
            except ResponseFormatRejected:
                rf = None  # like the judge: plain JSON instructions are in the prompt
            except TemperatureRejected:
                temperature = None
    except (TimedOut, Unreachable) as exc:
        return f"__error__ {exc}", 0, 0
    finally:
        await client.close()
    return comp.text, comp.prompt_tokens, comp.completion_tokens


def ask_critic(
    config: JudgeConfig,
    *,
    base_url: str,
    api_key: str,
    model: str,
    critic: CriticPrompt,
    messages: list[dict[str, str]],
    n_edits: int,
    cache_dir: Path | None,
    budget: Budget | None = None,
) -> CriticAnswer:
    """Ask the critic (or read its cached answer); a failed answer gives no edits and says why.

    The request reserves what it can cost at most (its prompt and
    ``judge.critic_max_tokens``) in ``budget`` before it is sent, and counts one call
    there; no room: nothing is sent (``over_budget``). Edits are screened
    (:func:`screen_edits`) whether fresh or cached.

    Raises:
        JudgeError: the API refused in a way that stops any run (key, model, quota).
    """
    key = critic_cache_key(base_url, model, critic.version, messages)
    path = cache_dir / f"{key}.json" if cache_dir is not None else None
    if path is not None and path.is_file():
        edits, problem = parse_edits(path.read_text(encoding="utf-8"), n_edits)
        if problem is None:
            kept, dropped = screen_edits(edits)
            return CriticAnswer(kept, cache_hit=True, dropped=dropped)

    ceiling = request_ceiling(messages, config.critic_max_tokens, model, config)
    if budget is not None and not budget.reserve(ceiling):
        return CriticAnswer((), problem=BUDGET_REASON, over_budget=True)
    coro = _complete(config, base_url, api_key, model, messages)
    cost = 0.0
    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            text, p_tok, c_tok = asyncio.run(coro)
        else:  # a Jupyter kernel: run the request in a worker thread's own loop
            with concurrent.futures.ThreadPoolExecutor(1) as ex:
                text, p_tok, c_tok = ex.submit(asyncio.run, coro).result()
        if text is not None and text.startswith("__error__"):
            return CriticAnswer((), calls=1, problem=text.removeprefix("__error__ "))
        cost = cost_usd(model, p_tok, c_tok, config.pricing) or 0.0
    finally:
        if budget is not None:
            budget.settle(ceiling, cost)
    edits, problem = parse_edits(text, n_edits)
    if problem is None and path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text or "")
    kept, dropped = screen_edits(edits)
    return CriticAnswer(kept, 1, p_tok, c_tok, cost, problem=problem, dropped=dropped)
