"""Versioned judge prompts: loading, version ids and rendering.

Prompts are Markdown files shipped in the package (``prompts/judge/v1.md``,
...) or given by path (``--prompt FILE``), so prompt experiments are files
under version control rather than code edits. The version id stored on each
verdict is the prompt's name plus a short hash of the file's content
(``v1@3fa2b1c9``): editing a prompt in place can never be mistaken for the
old one, in the cache or in calibration breakdowns.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from citecal._io import decode_text, read_regular_bytes
from citecal.errors import InputError
from citecal.verify.judge._types import JudgeRequest

SECTIONS: tuple[str, ...] = ("system", "single", "batch", "batch_item")
INJECTION_REASON = "possible prompt injection"
"""Sections every prompt file must have, each opened by a ``## name`` line."""

_SECTION_RE = re.compile(r"^##[ \t]+([A-Za-z_]+)[ \t]*$", re.MULTILINE)
_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_PLACEHOLDER_RE = re.compile(
    r"\{(claim|citation|file_path|language|code|evidence|classify|n|items|count)\}"
)


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded judge prompt: its sections and its version id."""

    name: str
    version: str
    system: str
    single: str
    batch: str
    batch_item: str
    source: str


def _builtin_dir() -> resources.abc.Traversable:
    return resources.files("citecal.verify.judge").joinpath("prompts", "judge")


def available_prompts() -> list[str]:
    """Names of the prompt versions shipped with citecal (``["v1", ...]``)."""
    return sorted(
        p.name[:-3] for p in _builtin_dir().iterdir() if p.is_file() and p.name.endswith(".md")
    )


def parse_prompt(text: str, name: str, source: str = "<string>") -> PromptTemplate:
    """Split a prompt file into its sections; raise InputError naming what is missing."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    body = _COMMENT_RE.sub("", text)
    parts: dict[str, str] = {}
    matches = list(_SECTION_RE.finditer(body))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        parts[m.group(1).lower()] = body[m.end() : end].strip("\n").strip()
    missing = [s for s in SECTIONS if not parts.get(s)]
    if missing:
        raise InputError(
            f"prompt {source}: missing section(s) {', '.join('## ' + s for s in missing)}"
            f" (a judge prompt needs {', '.join('## ' + s for s in SECTIONS)})"
        )
    return PromptTemplate(
        name=name,
        version=f"{name}@{digest}",
        system=parts["system"],
        single=parts["single"],
        batch=parts["batch"],
        batch_item=parts["batch_item"],
        source=source,
    )


MAX_PROMPT_BYTES = 512 * 1024
"""Largest prompt file read (README "Security"): a prompt is sent with every request."""


def prompt_warning(template: PromptTemplate) -> str | None:
    """A warning when a prompt file holds text that steers the judge (README "Security")."""
    from citecal.verify.judge._injection import prompt_injection

    for section in SECTIONS:
        found = prompt_injection(getattr(template, section), f"## {section}", data_tags=True)
        if found is not None:
            return (
                f"prompt {template.source}: the {found.where} section holds text that steers"
                f" the judge ({found.text!r}: {INJECTION_REASON}); it is sent with every"
                " request: check the file"
            )
    return None


def load_prompt(spec: str) -> PromptTemplate:
    """Load a shipped prompt by version name (``"v1"``) or a prompt file by path.

    Raises:
        InputError: unknown version (the message lists the available ones),
            unreadable file, or a file without the required sections.
    """
    looks_like_path = "/" in spec or "\\" in spec or spec.endswith(".md") or Path(spec).is_file()
    if looks_like_path:
        path = Path(spec)
        text = decode_text(
            read_regular_bytes(path, "prompt file", MAX_PROMPT_BYTES), path, "prompt file"
        )
        return parse_prompt(text, path.stem, str(path))
    available = available_prompts()
    if spec not in available:
        raise InputError(
            f"unknown prompt version '{spec}': available: {', '.join(available)}"
            " (or give a path to a prompt file)"
        )
    text = _builtin_dir().joinpath(f"{spec}.md").read_text(encoding="utf-8")
    return parse_prompt(text, spec, f"citecal/verify/judge/prompts/judge/{spec}.md")


def prompt_text(template: PromptTemplate, system: str, comment: str) -> str:
    """A complete prompt file (the four sections of README "Prompts") with a leading comment.

    ``template``'s user sections with ``system`` as its system section: how few-shot
    examples, critic edits and simulated annotators (README "Judge confidence") make a
    prompt of their own, whose version id tells it apart.
    """
    return (
        f"<!-- {comment} -->\n\n## system\n\n{system}\n\n## single\n\n{template.single}\n\n"
        f"## batch\n\n{template.batch}\n\n## batch_item\n\n{template.batch_item}\n"
    )


def with_examples(
    template: PromptTemplate, examples: str, name: str, comment: str
) -> PromptTemplate:
    """``template`` with ``examples`` appended to its system section, as a prompt named ``name``.

    In memory (no file): its version is ``name@<hash of the text>``, so the cache
    and calibration tell each variant apart.
    """
    system = template.system.rstrip() + "\n\n" + examples.strip()
    return parse_prompt(prompt_text(template, system, comment), name, f"<{name}>")


def _fill(template: str, values: Mapping[str, str]) -> str:
    # One pass, known names only: code or claims containing "{...}" are never re-expanded.
    return _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def fence_for(text: str) -> str:
    """A code fence longer than any backtick run in ``text``: no line of it closes the fence."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    return "`" * max(3, longest + 1)


def code_block(request: JudgeRequest, max_code_lines: int, context_lines: int | None = None) -> str:
    """The cited code as a fenced, line-numbered block, context lines unmarked.

    Cited lines carry ``>`` after their number, context lines a blank, so the
    judge can tell evidence from surroundings. Cited code longer than
    ``max_code_lines`` is cut with a note saying how much is hidden.
    """
    cited = request.code.split("\n")
    hidden = 0
    if len(cited) > max_code_lines:
        hidden = len(cited) - max_code_lines
        cited = cited[:max_code_lines]
    before = request.before.split("\n") if request.before else []
    after = request.after.split("\n") if request.after and not hidden else []
    if context_lines is not None:
        before = before[-context_lines:] if context_lines else []
        after = after[:context_lines]
    first = request.start_line - len(before)
    last = request.start_line + len(cited) + len(after) - 1
    width = len(str(max(last, 1)))
    rows: list[str] = []
    for i, line in enumerate(before):
        rows.append(f"{first + i:>{width}}   {line}".rstrip())
    for i, line in enumerate(cited):
        rows.append(f"{request.start_line + i:>{width}} > {line}".rstrip())
    if hidden:
        rows.append(f"... ({hidden} more cited lines not shown)")
    for i, line in enumerate(after):
        rows.append(f"{request.start_line + len(cited) + i:>{width}}   {line}".rstrip())
    body = "\n".join(rows)
    fence = fence_for(body)
    block = f"{fence}{request.language or ''}\n{body}\n{fence}"
    if not request.siblings:
        return block
    return block + "\n\n" + siblings_text(request, max_code_lines)


SIBLINGS_NOTE = (
    "The same sentence cites more code. Together the citations support the whole sentence; "
    "judge whether the cited lines above support the part of the claim they are there for, "
    "and do not count against them what another citation below shows."
)


def siblings_text(request: JudgeRequest, max_code_lines: int) -> str:
    """The sentence's other citations, each fenced like the cited code (README "The cascade")."""
    parts = [SIBLINGS_NOTE]
    for citation, code in request.siblings:
        lines = code.split("\n")
        shown = "\n".join(lines[:max_code_lines])
        more = (
            f"\n... ({len(lines) - max_code_lines} more lines)"
            if len(lines) > max_code_lines
            else ""
        )
        fence = fence_for(shown)
        parts.append(f"Other citation {citation}:\n{fence}\n{shown}{more}\n{fence}")
    return "\n\n".join(parts)


def evidence_text(request: JudgeRequest) -> str:
    """What the rule-based check found, for prompts with an ``{evidence}`` placeholder.

    Rules leave a claim to the judge when they cannot prove it either way
    (README "Routing"); their term evidence still helps the judge look in the
    right place, and a hint says where a missing name is elsewhere in the file.
    """
    rule = request.extractive
    if rule is None or (not rule.matched_terms and not rule.missing_terms and not rule.hint):
        return "Rule-based check: no code terms to look for."
    parts = []
    if rule.matched_terms:
        parts.append("found in the cited lines: " + ", ".join(rule.matched_terms))
    if rule.missing_terms:
        parts.append("not found there: " + ", ".join(rule.missing_terms))
    if rule.hint:
        parts.append(f"hint: {rule.hint}")
    return "Rule-based check (evidence, not a verdict): " + "; ".join(parts) + "."


_CLASSIFY = (
    'Also classify the claim: "mode": "extractive" when it states what the code contains '
    '(names, calls, values, signatures), "abstractive" when it describes behaviour, '
    "purpose or design."
)


_DATA_TAG_RE = re.compile(r"<(\s*/?\s*untrusted_input)", re.IGNORECASE)


def defang(text: str) -> str:
    """``text`` with the data delimiters of the prompts made inert (``<`` as ``&lt;``).

    Prompts from v3 on put the claim and the code between ``<untrusted_input>``
    and ``</untrusted_input>`` (README "Security"); a claim or a code line
    holding one of those tags could otherwise close its block early and speak
    outside it. Text without them is returned unchanged.
    """
    return _DATA_TAG_RE.sub(r"&lt;\1", text)


def _values(
    request: JudgeRequest, max_code_lines: int, context_lines: int | None
) -> dict[str, str]:
    return {
        "claim": defang(request.claim),
        "citation": defang(request.citation),
        "file_path": defang(request.file_path),
        "language": request.language or "",
        "code": defang(code_block(request, max_code_lines, context_lines)),
        "evidence": evidence_text(request),
        "classify": _CLASSIFY if request.classify else "",
    }


def render_single(
    prompt: PromptTemplate,
    request: JudgeRequest,
    max_code_lines: int,
    context_lines: int | None = None,
) -> str:
    """The user message asking about one claim."""
    return _fill(prompt.single, _values(request, max_code_lines, context_lines))


def render_batch(
    prompt: PromptTemplate,
    requests: Sequence[JudgeRequest],
    max_code_lines: int,
    context_lines: int | None = None,
) -> str:
    """The user message asking about several claims, numbered ``[Claim 1]`` ... from 1."""
    items = [
        _fill(prompt.batch_item, {**_values(r, max_code_lines, context_lines), "n": str(i)})
        for i, r in enumerate(requests, start=1)
    ]
    return _fill(prompt.batch, {"items": "\n\n".join(items), "count": str(len(requests))})


def render_messages(
    prompt: PromptTemplate,
    requests: Sequence[JudgeRequest],
    max_code_lines: int,
    context_lines: int | None = None,
) -> list[dict[str, str]]:
    """Chat messages for one API request: the single template for one claim, else batch."""
    if len(requests) == 1:
        user = render_single(prompt, requests[0], max_code_lines, context_lines)
    else:
        user = render_batch(prompt, requests, max_code_lines, context_lines)
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}]
