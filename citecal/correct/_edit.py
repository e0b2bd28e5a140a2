"""Applying corrections to a report's text: only the changed citations and claims change.

The corrected report must be byte-identical to the original outside the
citations and claims the loop changed (README "`citecal correct`"). Edits are
therefore made on the original string at the offsets extraction found
(:attr:`ExtractedCitation.position`, the bracket's offset; ``raw``, its text):
a replaced citation rewrites only its own part of the bracket (keeping the
writer's ``L`` prefixes, dash and spacing), a removed one drops its part and
one separator, and a bracket left empty is dropped with the blanks before it.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from citecal.models import Citation, ExtractedCitation

EditKind = Literal["replace", "remove", "rewrite"]

_SEPARATOR = re.compile(r"([,;])")
_DASH = re.compile(r"[0-9]\s*([-‐‑‒–—−])\s*[Ll]?[0-9]")


@dataclass(frozen=True, slots=True)
class Edit:
    """What to do to one citation: point it elsewhere, drop it, or rewrite its claim."""

    kind: EditKind
    citation: Citation | None = None
    claim: str | None = None
    claim_span: tuple[int, int] | None = None
    """For ``rewrite``: the offsets of the claim text in the report."""


def editable(ex: ExtractedCitation) -> bool:
    """Plain ``[path:lines]`` citations are corrected; item and location citations are not."""
    c = ex.citation
    return c.item is None and c.location is None and ex.raw.startswith("[") and "[[" not in ex.raw


def format_part(old: str, new: Citation) -> str:
    """``new`` written in the style of the bracket part ``old`` (spacing, ``L``, dash)."""
    core = old.strip()
    lead = old[: len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()) :]
    ell = "L" if re.search(r":[Ll][0-9]", core) else ""
    dash_m = _DASH.search(core)
    dash = dash_m.group(1) if dash_m else "-"
    if new.start_line == new.end_line:
        body = f"{new.file_path}:{ell}{new.start_line}"
    else:
        body = f"{new.file_path}:{ell}{new.start_line}{dash}{ell}{new.end_line}"
    return f"{lead}{body}{trail}"


def _rebuild_group(raw: str, edits: Sequence[Edit | None]) -> str | None:
    """The bracket text after ``edits`` (one per citation in it), or None when it empties."""
    inner = raw[1:-1]
    pieces = _SEPARATOR.split(inner)  # part, sep, part, sep, ...
    parts = pieces[0::2]
    seps = pieces[1::2]
    slots = [i for i, p in enumerate(parts) if p.strip()]
    if len(slots) != len(edits):
        raise ValueError(f"cannot match the citations of {raw!r} to its parts")
    keep: list[bool] = [True] * len(parts)
    for slot, edit in zip(slots, edits, strict=True):
        if edit is None or edit.kind == "rewrite":
            continue
        if edit.kind == "remove":
            keep[slot] = False
        elif edit.citation is not None:
            parts[slot] = format_part(parts[slot], edit.citation)
    kept = [i for i in slots if keep[i]]
    if not kept:
        return None
    first, last = parts[slots[0]], parts[slots[-1]]
    out = [first[: len(first) - len(first.lstrip())]]
    for k, i in enumerate(kept):
        part = parts[i]
        if k:
            out.append(seps[i - 1] + part[: len(part) - len(part.lstrip())])
        out.append(part.strip())
    out.append(last[len(last.rstrip()) :])
    return "[" + "".join(out) + "]"


def apply_edits(
    text: str, extracted: Sequence[ExtractedCitation], edits: Mapping[int, Edit]
) -> str:
    """``text`` with ``edits`` applied (keys: indexes into ``extracted``), everything else kept."""
    groups: dict[int, list[int]] = {}
    for i, ex in enumerate(extracted):
        groups.setdefault(ex.position, []).append(i)
    spans: list[tuple[int, int, str]] = []
    for position, members in groups.items():
        if not any(i in edits and edits[i].kind != "rewrite" for i in members):
            continue
        raw = extracted[members[0]].raw
        if text[position : position + len(raw)] != raw:
            raise ValueError(f"citation at offset {position} is not {raw!r}")
        rebuilt = _rebuild_group(raw, [edits.get(i) for i in members])
        if rebuilt is not None:
            spans.append((position, position + len(raw), rebuilt))
            continue
        start, end = position, position + len(raw)
        while start > 0 and text[start - 1] in " \t":
            start -= 1
        if start == 0 or text[start - 1] == "\n":  # the bracket opened a line: keep the indent
            start = position
            while end < len(text) and text[end] in " \t":
                end += 1
        spans.append((start, end, ""))
    for edit in edits.values():
        if edit.kind == "rewrite" and edit.claim is not None and edit.claim_span is not None:
            a, b = edit.claim_span
            spans.append((a, b, edit.claim))
    spans.sort()
    for (_, b1, _), (a2, _, _) in itertools.pairwise(spans):
        if a2 < b1:
            raise ValueError("overlapping edits")
    out: list[str] = []
    pos = 0
    for a, b, new in spans:
        out.append(text[pos:a])
        out.append(new)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def unified_diff(before: str, after: str, name: str) -> str:
    """The change as a unified diff (``a/NAME`` → ``b/NAME``), empty when nothing changed."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=name if name.startswith("/") else f"a/{name}",
        tofile=name if name.startswith("/") else f"b/{name}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


__all__ = ["Edit", "EditKind", "apply_edits", "editable", "format_part", "unified_diff"]
