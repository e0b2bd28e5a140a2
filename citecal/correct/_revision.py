"""The revision a report was written against: one comment line in the report.

A report records it as an HTML comment on a line of its own, invisible when
the Markdown is rendered::

    <!-- citecal-rev: 3f2c9e1d8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d -->

(or a ``citecal-rev:`` key in YAML front matter). ``citecal rebase`` writes
it with the commit it rebased to; ``citecal eval --rev`` compares it with the
revision being evaluated and warns about citations whose file changed since
(README "`citecal rebase`"). Citation extraction never reads comments or front
matter, so the line changes no claim.
"""

from __future__ import annotations

import re
from pathlib import Path

from citecal.models import EvalResult

_COMMENT = re.compile(r"^<!--[ \t]*citecal-rev:[ \t]*(\S+)[ \t]*-->[ \t]*$", re.MULTILINE)
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FRONT_KEY = re.compile(r"^citecal-rev:[ \t]*(\S+)[ \t]*$", re.MULTILINE)


def report_revision(text: str) -> str | None:
    """The revision the report says it was written against, or None."""
    front = _FRONT.match(text)
    if front is not None:
        m = _FRONT_KEY.search(front.group(1))
        if m is not None:
            return m.group(1).strip("\"'")
    m = _COMMENT.search(text)
    return m.group(1) if m is not None else None


def set_report_revision(text: str, rev: str) -> str:
    """``text`` recording ``rev``: the existing line updated, else a comment line added on top
    (below front matter)."""
    front = _FRONT.match(text)
    if front is not None:
        m = _FRONT_KEY.search(front.group(1))
        if m is not None:
            a, b = front.start(1) + m.start(1), front.start(1) + m.end(1)
            return text[:a] + rev + text[b:]
    m = _COMMENT.search(text)
    if m is not None:
        return text[: m.start(1)] + rev + text[m.end(1) :]
    newline = "\r\n" if "\r\n" in text[:2000] else "\n"
    line = f"<!-- citecal-rev: {rev} -->{newline}"
    at = front.end() if front is not None else 0
    return text[:at] + line + text[at:]


def stale_citation_warning(result: EvalResult, text: str, repo: Path, rev: str) -> str | None:
    """One warning line when citations cite files that changed since the report's revision.

    None when the report records no revision, or nothing cited changed.
    """
    recorded = report_revision(text)
    if recorded is None:
        return None
    from citecal.source._gitcmd import is_safe_revision, run_git

    if not is_safe_revision(recorded):
        # README "Security": a report's revision line never reaches git as an option
        return (
            f"the report's revision line names {recorded!r}, which is not a revision: "
            "line numbers may be stale"
        )
    res = run_git(repo, "diff", "--relative", "--name-status", "-z", "-M", revs=(recorded, rev))
    if res.returncode != 0:
        return (
            f"the report was written against revision {recorded}, which is not in {repo}: "
            "line numbers may be stale"
        )
    # --name-status: a status, then one path (two for a rename or copy: the old name too)
    fields = res.stdout.decode("utf-8", "surrogateescape").split("\0")
    changed: set[str] = set()
    i = 0
    while i < len(fields) and fields[i]:
        width = 2 if fields[i][0] in "RC" else 1
        changed.update(fields[i + 1 : i + 1 + width])
        i += 1 + width
    hits: dict[str, int] = {}
    for row in result.citations:
        if row.file_path in changed:
            hits[row.file_path] = hits.get(row.file_path, 0) + 1
    if not hits:
        return None
    files = ", ".join(f"{p} ({n})" for p, n in sorted(hits.items()))
    return (
        f"{sum(hits.values())} citation(s) cite files changed since the report's revision "
        f"{recorded[:12]} (run `citecal rebase --from {recorded[:12]} --to {rev}`): {files}"
    )


__all__ = ["report_revision", "set_report_revision", "stale_citation_warning"]
