"""The ground-truth label sets (datasets/groundtruth/README.md): reading and validation.

A label set is one report about one pinned package, with a person's label for
every citation in it. Files are validated on load so a typo in a hand-written
label is an error naming the file and the field, not a silently skipped row.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citecal._io import read_text_file
from citecal.errors import InputError
from citecal.extract import line_number
from citecal.source._paths import is_within, real_root

Structural = Literal["valid", "invalid_file", "invalid_range"]
Category = Literal[
    "literal",
    "behaviour",
    "design",
    "overstated",
    "contradicted",
    "off_range",
    "wrong_file",
    "wrong_symbol",
    "hallucinated_path",
    "past_end",
]
Difficulty = Literal["easy", "medium", "hard"]

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]*")
_CITATION_RE = re.compile(r"^\[(?P<path>[^\[\]:]+):(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?\]$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Location(_Strict):
    """Where a claim's support really is."""

    file_path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


class CitationLabel(_Strict):
    """A person's label for one citation of a report."""

    id: str
    citation: str = Field(description="As written in the report: [path:start-end] or [path:N].")
    occurrence: int = Field(0, ge=0, description="Earlier identical citations in the report.")
    claim: str
    structural: Structural
    human_score: int = Field(ge=0, le=3)
    category: Category
    difficulty: Difficulty
    rationale: str
    correct: Location | None = None
    note: str | None = None

    @property
    def key(self) -> tuple[str, int, int, int]:
        """(path, start, end, occurrence): how a label finds its citation in eval output."""
        m = _CITATION_RE.match(self.citation.strip())
        if m is None:  # checked by LabelSet's validator, never reached for loaded sets
            raise ValueError(f"not a line citation: {self.citation}")
        start = line_number(m.group("start"))  # 20 digits: the overflow marker, as in eval
        end = line_number(m.group("end") or m.group("start"))
        return m.group("path").strip(), start, end, self.occurrence


class LabelSet(_Strict):
    """One report and the labels of its citations (schema_version 1)."""

    schema_version: Literal[1] = 1
    package: str
    version: str
    language: str
    report: str = "report.md"
    created: str | None = None
    citations: list[CitationLabel]


class GroundTruth(BaseModel):
    """A loaded label set with where its report and package sources are."""

    model_config = ConfigDict(frozen=True)

    id: str
    labels: LabelSet
    report_path: Path
    sources: Path


def _load_one(directory: Path, sources_root: Path) -> GroundTruth:
    path = directory / "labels.json"
    text = read_text_file(path, "label file")
    try:
        labels = LabelSet.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{path}: {where}: {err['msg']}") from None
    seen: set[tuple[str, int, int, int]] = set()
    ids: set[str] = set()
    for label in labels.citations:
        if _CITATION_RE.match(label.citation.strip()) is None:
            raise InputError(f"{path}: {label.id}: not a [path:N-M] citation: {label.citation}")
        if label.key in seen or label.id in ids:
            raise InputError(f"{path}: {label.id}: duplicate citation or id")
        seen.add(label.key)
        ids.add(label.id)
    report = _inside(directory, labels.report, path, "report")
    if not report.is_file():
        raise InputError(f"{path}: report not found: {report}")
    if not _PLAIN_NAME.fullmatch(labels.version):
        raise InputError(
            f"{path}: version must be a plain version string (letters, digits, . _ + -), "
            f"not {labels.version!r}"
        )
    sources = _inside(sources_root, f"{directory.name}-{labels.version}", path, "version")
    return GroundTruth(id=directory.name, labels=labels, report_path=report, sources=sources)


def _inside(base: Path, name: str, path: Path, field: str) -> Path:
    """``base / name``, refused unless it stays inside ``base`` (symlinks resolved).

    README "Security": a label file is input; its ``report`` and ``version`` name
    files under the dataset and sources directories and nothing else.
    """
    target = base / name
    if PurePath(name).is_absolute() or not is_within(real_root(base), os.path.realpath(target)):
        raise InputError(f"{path}: {field} {name!r} leads out of {base}")
    return target


def load_groundtruth(
    dataset: Path, sources_root: Path, only: tuple[str, ...] = ()
) -> list[GroundTruth]:
    """Every label set under ``dataset`` (one directory each), sorted by id.

    Raises:
        InputError: no label sets, a malformed label file, a missing report,
            or package sources that were not fetched (the message says how).
    """
    if not dataset.is_dir():
        raise InputError(f"ground-truth directory not found: {dataset}")
    dirs = sorted(p for p in dataset.iterdir() if (p / "labels.json").is_file())
    if only:
        unknown = sorted(set(only) - {p.name for p in dirs})
        if unknown:
            raise InputError(f"no label set named {', '.join(unknown)} in {dataset}")
        dirs = [p for p in dirs if p.name in only]
    if not dirs:
        raise InputError(f"no label sets (*/labels.json) in {dataset}")
    sets = [_load_one(d, sources_root) for d in dirs]
    missing = [g for g in sets if not g.sources.is_dir()]
    if missing:
        raise InputError(
            f"package sources not fetched: {', '.join(str(g.sources) for g in missing)}; "
            "run `make groundtruth` (python datasets/groundtruth/fetch.py)"
        )
    return sets


__all__ = ["CitationLabel", "GroundTruth", "LabelSet", "Location", "load_groundtruth"]
