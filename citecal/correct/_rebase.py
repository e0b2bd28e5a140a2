"""Move a report's citations from one git revision to another (README "`citecal rebase`").

Line numbers go stale as code moves. For each citation of a report written
against revision FROM, the cited lines are followed to revision TO:

1. the file is followed through renames (``git diff -M``);
2. lines no diff hunk touches move by the hunks' offsets (``git diff -U0
   --histogram`` of the file's two blobs): ``unchanged`` when they stay where
   they were, ``moved`` when they shift;
3. when a hunk rewrote part of the range, the citation is anchored on its
   content: the cited lines, verbatim, elsewhere in the new file (code moved
   within the file, or to another file that uses the cited definition's
   name) are ``moved``; else the cited definition (the innermost one holding
   the range) by name and kind in the new file, whose new lines are
   ``changed``; else the range's surviving ends through the diff, ``changed``;
4. nothing found: ``deleted`` (the citation is left as written).

A ``changed`` citation's claim is verified again at its new place with the
rules (and the judge, when one is configured), so the outcome says whether
the claim still holds. The rebased report records TO in its revision line
(:mod:`citecal.correct._revision`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citecal.config import Config
from citecal.correct._edit import Edit, apply_edits, editable
from citecal.correct._models import Location
from citecal.correct._revision import set_report_revision
from citecal.errors import StoreError
from citecal.extract import extract_citations
from citecal.models import Citation, Verdict
from citecal.source import (
    BinaryFile,
    GitStore,
    SourceFileError,
    UnsafePath,
    build_symbol_index,
    file_names,
    project_names,
)
from citecal.source._gitcmd import run_git
from citecal.verify import verify_extractive

Outcome = Literal["unchanged", "moved", "changed", "deleted"]
OUTCOMES: tuple[Outcome, ...] = ("unchanged", "moved", "changed", "deleted")

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RebasedCitation(_Model):
    """Where one citation went."""

    position: int = Field(description="Character offset of the citation in the original report.")
    citation: str = Field(description="The citation as written at FROM.")
    claim: str
    outcome: Outcome
    new: Location | None = Field(description="The citation at TO; null when deleted.")
    how: str = Field(description="diff, rename, content, definition, ends, or why it is gone.")
    verdict: str | None = Field(
        None, description="For changed citations: the claim's verdict at the new place."
    )
    reasoning: str | None = None


class RebaseResult(_Model):
    """``citecal rebase --format json`` (schema_version 1)."""

    schema_version: Literal[1] = 1
    report: str
    repo: str
    from_rev: str
    to_rev: str
    from_commit: str
    to_commit: str
    counts: dict[str, int]
    citations: list[RebasedCitation]


@dataclass(frozen=True)
class RebaseRun:
    """The result record and the rebased report text."""

    result: RebaseResult
    original: str
    rebased: str


@dataclass(frozen=True, slots=True)
class _Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int


def _git(
    repo: Path,
    subcommand: str,
    *options: str,
    revs: tuple[str, ...],
    paths: tuple[str, ...] | None = None,
) -> bytes:
    res = run_git(repo, subcommand, *options, revs=revs, paths=paths)
    if res.returncode != 0:
        message = res.stderr.decode("utf-8", "replace").strip().splitlines()
        raise StoreError(f"git {subcommand} failed in {repo}: {message[0] if message else ''}")
    return res.stdout


def renamed_and_deleted(repo: Path, old: str, new: str) -> tuple[dict[str, str], set[str]]:
    """Paths renamed (old → new) and deleted between two commits, relative to ``repo``."""
    raw = _git(repo, "diff", "--relative", "--name-status", "-z", "-M", revs=(old, new))
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    renames: dict[str, str] = {}
    deleted: set[str] = set()
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                renames[fields[i + 1]] = fields[i + 2]
            i += 3
            continue
        if status == "D":
            deleted.add(fields[i + 1])
        i += 2
    return renames, deleted


def file_hunks(repo: Path, old_spec: str, new_spec: str) -> list[_Hunk]:
    """The hunks of a two-blob diff (``git diff -U0 --histogram``), in order."""
    raw = _git(repo, "diff", "-U0", "--histogram", revs=(old_spec, new_spec))
    out = []
    for m in _HUNK.finditer(raw):
        a, b, c, d = m.groups()
        out.append(_Hunk(int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return out


def map_line(hunks: Sequence[_Hunk], line: int) -> int | None:
    """Where an old line is in the new file; None when a hunk removed or rewrote it."""
    delta = 0
    for h in hunks:
        old_end = h.old_start + h.old_len - 1 if h.old_len else h.old_start
        if h.old_len and h.old_start <= line <= old_end:
            return None
        if (h.old_len and old_end < line) or (not h.old_len and h.old_start < line):
            delta += h.new_len - h.old_len
    return line + delta


def _find_block(lines: Sequence[str], block: Sequence[str], near: int) -> int | None:
    """First line of ``block`` (ignoring indentation) in ``lines``, the nearest to ``near``."""
    want = [b.strip() for b in block]
    if not want or not any(want):
        return None
    stripped = [x.strip() for x in lines]
    hits = [
        i + 1
        for i in range(len(stripped) - len(want) + 1)
        if stripped[i] == want[0] and stripped[i : i + len(want)] == want
    ]
    if not hits:
        return None
    return min(hits, key=lambda n: abs(n - near))


class Rebaser:
    """Follows citations of one repository from revision FROM to revision TO."""

    def __init__(self, repo: Path, from_rev: str, to_rev: str, config: Config) -> None:
        self.repo = Path(repo)
        self.config = config
        self.old = GitStore(self.repo, from_rev, config.validation)
        self.new = GitStore(self.repo, to_rev, config.validation)
        self.renames, self.deleted = renamed_and_deleted(
            self.repo, self.old.commit, self.new.commit
        )
        self._hunks: dict[tuple[str, str], list[_Hunk]] = {}
        self._project: frozenset[str] | None = None

    def close(self) -> None:
        self.old.close()
        self.new.close()

    def _new_path(self, path: str) -> tuple[str | None, str]:
        """The path at TO, or None and why the file cannot be cited there."""
        if path in self.renames:
            return self.renames[path], ""
        try:
            self.new.read(path)
        except BinaryFile:
            return None, "the file became binary"
        except UnsafePath:
            return None, "the file is now a symlink out of the repository"
        except SourceFileError as exc:
            if path in self.deleted or str(exc).startswith("File not found"):
                return None, "the file was deleted"
            return None, f"the file cannot be read at TO: {exc}"
        return path, ""

    def _diff(self, old_path: str, new_path: str) -> list[_Hunk]:
        key = (old_path, new_path)
        if key not in self._hunks:
            prefix = self.old._treeish.split(":", 1)[1] if ":" in self.old._treeish else ""
            self._hunks[key] = file_hunks(
                self.repo,
                f"{self.old.commit}:{prefix}{old_path}",
                f"{self.new.commit}:{prefix}{new_path}",
            )
        return self._hunks[key]

    def follow(self, c: Citation) -> tuple[Outcome, Citation | None, str]:
        """Outcome, new citation and how it was found for one citation written at FROM."""
        try:
            old_file = self.old.read(c.file_path)
            if not 1 <= c.start_line <= c.end_line <= old_file.line_count:
                return "deleted", None, "the citation was not valid at FROM"
        except SourceFileError:
            return "deleted", None, "the file did not exist at FROM"
        old_lines = old_file.lines(c.start_line, c.end_line).split("\n")
        new_path, gone = self._new_path(c.file_path)
        if new_path is None:
            found = self._elsewhere(c, old_lines)
            if found is not None:
                return "moved", found, "content"
            return "deleted", None, gone
        new_file = self.new.read(new_path)
        hunks = self._diff(c.file_path, new_path)
        start, end = map_line(hunks, c.start_line), map_line(hunks, c.end_line)
        touched = any(
            h.old_len and h.old_start <= c.end_line and c.start_line <= h.old_start + h.old_len - 1
            for h in hunks
        )
        if (
            start is not None
            and end is not None
            and not touched
            and end - start == c.end_line - c.start_line
        ):
            new = Citation(new_path, start, end)
            same = new_path == c.file_path and start == c.start_line
            return (
                ("unchanged" if same else "moved"),
                new,
                "rename" if new_path != c.file_path else "diff",
            )
        new_text = new_file.text.split("\n")
        expected = start or c.start_line
        at = _find_block(new_text, old_lines, expected)
        if at is not None:
            return "moved", Citation(new_path, at, at + len(old_lines) - 1), "content"
        by_def = self._definition(old_file.text, new_file.text, c, new_path, old_file.language)
        if by_def is not None:
            return "changed", by_def, "definition"
        elsewhere = self._elsewhere(c, old_lines, skip=new_path)
        if elsewhere is not None:
            return "moved", elsewhere, "content"
        ends = self._ends(hunks, c, new_path, old_lines)
        if ends is not None:
            return "changed", ends, "ends"
        return "deleted", None, "the cited lines were removed"

    def _definition(
        self, old_text: str, new_text: str, c: Citation, new_path: str, language: str | None
    ) -> Citation | None:
        """The innermost definition holding the range, found again by name and kind."""
        old_index = build_symbol_index(old_text, language)
        holding = [
            d for d in old_index.enclosing_definitions(c.start_line) if d.end_line >= c.end_line
        ] or [d for d in old_index.definitions_in(c.start_line, c.end_line)]
        if not holding:
            return None
        target = holding[-1]
        span = target.end_line - target.start_line + 1
        covered = min(c.end_line, target.end_line) - max(c.start_line, target.start_line) + 1
        if covered * 5 < span * 4:
            return None  # a part of a definition: its own lines decide (``_ends``)
        new_index = build_symbol_index(new_text, language)
        same = [d for d in new_index.find_definition(target.name) if d.kind == target.kind]
        if not same:
            return None
        d = min(same, key=lambda x: abs(x.start_line - target.start_line))
        if c.start_line <= target.start_line and c.end_line >= target.end_line:
            return Citation(new_path, d.start_line, d.end_line)
        # A part of the definition: the same offsets inside it, clamped to its new end.
        lo = d.start_line + (c.start_line - target.start_line)
        hi = min(d.end_line, d.start_line + (c.end_line - target.start_line))
        if lo > hi:
            return Citation(new_path, d.start_line, d.end_line)
        return Citation(new_path, lo, hi)

    def _elsewhere(
        self, c: Citation, old_lines: Sequence[str], skip: str | None = None
    ) -> Citation | None:
        """The cited lines, verbatim, in another file at TO (found with ``git grep``)."""
        first = next((x.strip() for x in old_lines if len(x.strip()) >= 8), None)
        if first is None:
            return None
        try:
            raw = _git(
                self.repo,
                "grep",
                "-l",
                "-F",
                "-z",
                "-e",
                first,
                revs=(self.new.commit,),
                paths=(".",),
            )
        except StoreError:
            return None
        for entry in raw.decode("utf-8", "surrogateescape").split("\0"):
            path = entry.split(":", 1)[1] if ":" in entry else entry
            if not path or path == skip:
                continue
            try:
                text = self.new.read(path).text.split("\n")
            except SourceFileError:
                continue
            at = _find_block(text, old_lines, c.start_line)
            if at is not None:
                return Citation(path, at, at + len(old_lines) - 1)
        return None

    @staticmethod
    def _ends(
        hunks: Sequence[_Hunk], c: Citation, new_path: str, old_lines: Sequence[str]
    ) -> Citation | None:
        """The first and last cited lines that survive, mapped through the diff.

        None (deleted) unless at least half of the cited non-blank lines survive:
        a citation whose lines are mostly gone cites code that is gone.
        """
        mapped = [
            map_line(hunks, n)
            for n, text in zip(range(c.start_line, c.end_line + 1), old_lines, strict=False)
            if text.strip()
        ]
        kept = [m for m in mapped if m is not None]
        if not kept or len(kept) * 2 < len(mapped):
            return None
        return Citation(new_path, min(kept), max(kept))

    def verify(self, claim: str, location: Citation) -> Verdict:
        """The rules' verdict for ``claim`` at ``location`` at TO."""
        file = self.new.read(location.file_path)
        if self._project is None:
            self._project = project_names(self.new)
        return verify_extractive(
            claim,
            file.lines(location.start_line, location.end_line),
            location.start_line,
            location.end_line,
            build_symbol_index(file.text, file.language),
            self.config.extractive,
            file.lines,
            ignore_names=self._project | file_names(location.file_path),
        )


def rebase_report(
    report_text: str,
    repo: Path,
    from_rev: str,
    to_rev: str,
    config: Config | None = None,
    *,
    report_name: str = "<report>",
) -> RebaseRun:
    """Follow every line citation of a report from ``from_rev`` to ``to_rev``.

    Raises:
        StoreError: ``repo`` is not a git repository or a revision is unknown.
    """
    config = config or Config()
    rebaser = Rebaser(repo, from_rev, to_rev, config)
    try:
        extracted = extract_citations(report_text)
        rows: list[RebasedCitation] = []
        edits: dict[int, Edit] = {}
        for i, ex in enumerate(extracted):
            if not editable(ex):
                continue
            outcome, new, how = rebaser.follow(ex.citation)
            verdict = reasoning = None
            if outcome == "changed" and new is not None:
                v = rebaser.verify(ex.claim_text, new)
                verdict, reasoning = v.verdict, v.reasoning
            if new is not None and new != ex.citation:
                edits[i] = Edit("replace", new)
            rows.append(
                RebasedCitation(
                    position=ex.position,
                    citation=str(ex.citation),
                    claim=ex.claim_text,
                    outcome=outcome,
                    new=Location.of(new) if new is not None else None,
                    how=how,
                    verdict=verdict,
                    reasoning=reasoning,
                )
            )
        rebased = apply_edits(report_text, extracted, edits)
        rebased = set_report_revision(rebased, rebaser.new.commit)
        counts = {o: sum(r.outcome == o for r in rows) for o in OUTCOMES}
        result = RebaseResult(
            report=report_name,
            repo=str(repo),
            from_rev=from_rev,
            to_rev=to_rev,
            from_commit=rebaser.old.commit,
            to_commit=rebaser.new.commit,
            counts=counts,
            citations=rows,
        )
        return RebaseRun(result, report_text, rebased)
    finally:
        rebaser.close()


__all__ = [
    "OUTCOMES",
    "Outcome",
    "RebaseResult",
    "RebaseRun",
    "RebasedCitation",
    "Rebaser",
    "file_hunks",
    "map_line",
    "rebase_report",
    "renamed_and_deleted",
]
