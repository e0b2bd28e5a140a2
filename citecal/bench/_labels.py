"""The ground-truth label sets (datasets/groundtruth/README.md): reading and validation.

A label set is one report about one pinned package, with a person's label for
every citation in it. A package directory holds one or more of them
(``labels.json`` for the report with planted faults, ``labels-natural.json``
for the report written the natural way). Files are validated on load so a typo
in a hand-written label is an error naming the file and the field, not a
silently skipped row.

Schema version 2 adds where each label's error came from (``origin``: planted
on purpose, or natural), the claim's kind and the fault apart from each other,
and joint labels for sentences with several citations. Version 1 files still
load: they are upgraded in memory (every label planted), exactly as
``datasets/groundtruth/migrate_v2.py`` upgraded the bundled files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from citecal._io import MAX_JSON_BYTES, read_text_file
from citecal._json import loads
from citecal.errors import InputError
from citecal.extract import line_number
from citecal.source._paths import is_within, real_root

Structural = Literal["valid", "invalid_file", "invalid_range"]
Origin = Literal["planted", "natural"]
ClaimKind = Literal["literal", "behaviour", "design", "quantitative"]
Fault = Literal[
    "overstated",
    "contradicted",
    "off_range",
    "wrong_file",
    "wrong_symbol",
    "hallucinated_path",
    "past_end",
    "nonexistent",
]
Category = Literal[ClaimKind, Fault]
"""The fault when there is one, else the claim's kind."""
FaultClass = Literal["placement", "content"]
"""Placement: the claim is true, cited in the wrong place. Content: nothing in the package
supports it (a behaviour it does not have, a misremembered default, an overstated
guarantee). datasets/groundtruth/README.md, "Label file format"."""
CONTENT_FAULTS: frozenset[str] = frozenset({"overstated", "contradicted", "nonexistent"})
Difficulty = Literal["easy", "medium", "hard"]
CLAIM_KINDS: tuple[str, ...] = ("literal", "behaviour", "design", "quantitative")
SCHEMA_VERSION: Literal[2] = 2

_CITATION_RE = re.compile(r"^\[(?P<path>[^\[\]:]+):(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?\]$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


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
    category: Category = Field(description="The fault when there is one, else the claim's kind.")
    difficulty: Difficulty
    rationale: str
    correct: Location | None = None
    note: str | None = None
    origin: Origin = Field("planted", description="Planted on purpose, or a natural report.")
    claim_kind: ClaimKind | None = Field(None, description="Null where a v1 label did not say.")
    fault: Fault | None = Field(None, description="What is wrong with the citation, if anything.")
    sentence: str | None = Field(None, description="Id of the sentence label, with 2+ citations.")
    fault_class: FaultClass | None = Field(
        None,
        description="placement or content; derived from fault and correct where not written.",
    )

    @model_validator(mode="after")
    def _category_agrees(self) -> CitationLabel:
        expected = self.fault or self.claim_kind
        if expected is not None and self.category != expected:
            raise ValueError(f"category {self.category!r} should be {expected!r} (fault or kind)")
        if self.fault_class is not None and self.fault is None and self.human_score >= 2:
            raise ValueError("fault_class is for a citation with a fault (score <= 1)")
        if self.fault_class == "content" and self.correct is not None:
            raise ValueError("a content fault has no correct location (nothing supports it)")
        return self

    @property
    def error_class(self) -> FaultClass | None:
        """Placement or content for an unsupported citation (None when it supports its claim).

        Written labels say it in ``fault_class``; older ones are read from their fault: a
        content fault (overstated, contradicted, nonexistent) with nowhere better to cite
        is content, everything else (a shifted range, the neighbouring symbol, a path or
        range that does not exist, or a true claim that has a right place) is placement.
        """
        if self.fault_class is not None:
            return self.fault_class
        if self.fault is None and self.human_score >= 2 and self.structural == "valid":
            return None
        if self.fault in CONTENT_FAULTS and self.correct is None:
            return "content"
        return "placement"

    @property
    def key(self) -> tuple[str, int, int, int]:
        """(path, start, end, occurrence): how a label finds its citation in eval output."""
        m = _CITATION_RE.match(self.citation.strip())
        if m is None:  # checked by LabelSet's validator, never reached for loaded sets
            raise ValueError(f"not a line citation: {self.citation}")
        start = line_number(m.group("start"))  # 20 digits: the overflow marker, as in eval
        end = line_number(m.group("end") or m.group("start"))
        return m.group("path").strip(), start, end, self.occurrence


class SentenceLabel(_Strict):
    """A joint label for a sentence with several citations: do they together support it?"""

    id: str
    claim: str
    citations: list[str] = Field(min_length=2, description="Ids of the sentence's citations.")
    human_score: int = Field(ge=0, le=3)
    rationale: str
    note: str | None = None


class LabelSet(_Strict):
    """One report and the labels of its citations (schema_version 2)."""

    schema_version: Literal[2] = SCHEMA_VERSION
    package: str
    version: str
    language: str
    report: str = "report.md"
    origin: Origin = "planted"
    created: str | None = None
    citations: list[CitationLabel]
    sentences: list[SentenceLabel] = Field(default_factory=list)


def upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 label file as schema 2: every label planted, kind and fault split."""
    if data.get("schema_version") != 1:
        return data
    out = {**data, "schema_version": SCHEMA_VERSION, "origin": "planted", "sentences": []}
    citations = []
    for raw in data.get("citations", []):
        label = dict(raw) if isinstance(raw, dict) else raw
        if isinstance(label, dict):
            category = label.get("category")
            label.setdefault("origin", "planted")
            label.setdefault("claim_kind", category if category in CLAIM_KINDS else None)
            label.setdefault("fault", None if category in CLAIM_KINDS else category)
            label.setdefault("sentence", None)
        citations.append(label)
    out["citations"] = citations
    return out


class GroundTruth(BaseModel):
    """A loaded label set with where its report and package sources are."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(
        description="`<package>` for labels.json, `<package>/<name>` for labels-<name>.json."
    )
    package: str = Field(description="The package directory: the unit of leave-one-out folds.")
    labels: LabelSet
    report_path: Path
    sources: Path

    @property
    def origin(self) -> str:
        return self.labels.origin


def _inside(base: Path, name: str, path: Path, field: str) -> Path:
    """``base / name``, refused unless it stays inside ``base`` (symlinks resolved).

    README "Security": a label file is input; its ``report`` and ``version`` name
    files under the dataset and sources directories and nothing else.
    """
    target = base / name
    if PurePath(name).is_absolute() or not is_within(real_root(base), os.path.realpath(target)):
        raise InputError(f"{path}: {field} {name!r} leads out of {base}")
    return target


def _load_one(path: Path, sources_root: Path) -> GroundTruth:
    directory = path.parent
    text = read_text_file(path, "label file", MAX_JSON_BYTES)
    raw = loads(text, str(path), "a label file")  # README "Security": bounded numbers
    try:
        labels = LabelSet.model_validate(upgrade_v1(raw) if isinstance(raw, dict) else raw)
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
    _check_sentences(path, labels)
    report = _inside(directory, labels.report, path, "report")
    if not report.is_file():
        raise InputError(f"{path}: report not found: {report}")
    if not _VERSION_RE.fullmatch(labels.version):
        raise InputError(
            f"{path}: version must be a plain version string (letters, digits, . _ + -), "
            f"not {labels.version!r}"
        )
    suffix = path.stem.removeprefix("labels").removeprefix("-")
    return GroundTruth(
        id=f"{directory.name}/{suffix}" if suffix else directory.name,
        package=directory.name,
        labels=labels,
        report_path=report,
        sources=_inside(sources_root, f"{directory.name}-{labels.version}", path, "version"),
    )


def _check_sentences(path: Path, labels: LabelSet) -> None:
    by_id = {c.id: c for c in labels.citations}
    named: set[str] = set()
    for sentence in labels.sentences:
        for cid in sentence.citations:
            label = by_id.get(cid)
            if label is None:
                raise InputError(f"{path}: {sentence.id}: no citation label {cid}")
            if label.sentence != sentence.id:
                raise InputError(f"{path}: {cid}: sentence should be {sentence.id}")
            named.add(cid)
    for label in labels.citations:
        if label.sentence is not None and label.id not in named:
            raise InputError(f"{path}: {label.id}: no sentence label {label.sentence}")


def label_files(directory: Path) -> list[Path]:
    """``labels.json`` and ``labels-<name>.json`` of one package directory, sorted."""
    return sorted(
        p
        for p in directory.iterdir()
        if p.is_file()
        and (p.name == "labels.json" or re.fullmatch(r"labels-[a-z0-9_]+\.json", p.name))
    )


def dataset_inputs(dataset: Path) -> list[Path]:
    """Every file ``bench groundtruth`` may read from ``dataset``: label files and their reports.

    Outputs are compared with these before any work (README "Security": a
    ``--write-cascade`` onto a label file replaced people's labels).
    """
    if not dataset.is_dir():
        return []
    found: list[Path] = []
    for directory in sorted(d for d in dataset.iterdir() if d.is_dir()):
        labels = label_files(directory)
        found += labels
        found += [p for p in directory.iterdir() if p.is_file() and p.suffix.lower() == ".md"]
    return found


def load_groundtruth(
    dataset: Path, sources_root: Path, only: tuple[str, ...] = ()
) -> list[GroundTruth]:
    """Every label set under ``dataset`` (package directories), sorted by id.

    ``only`` names packages (every set of it) or set ids (``axios/natural``).

    Raises:
        InputError: no label sets, a malformed label file, a missing report,
            or package sources that were not fetched (the message says how).
    """
    if not dataset.is_dir():
        raise InputError(f"ground-truth directory not found: {dataset}")
    files = [f for d in sorted(dataset.iterdir()) if d.is_dir() for f in label_files(d)]
    sets = sorted((_load_one(f, sources_root) for f in files), key=lambda g: g.id)
    if only:
        known = {g.id for g in sets} | {g.package for g in sets}
        unknown = sorted(set(only) - known)
        if unknown:
            raise InputError(f"no label set named {', '.join(unknown)} in {dataset}")
        sets = [g for g in sets if g.id in only or g.package in only]
    if not sets:
        raise InputError(f"no label sets (*/labels*.json) in {dataset}")
    missing = sorted({str(g.sources) for g in sets if not g.sources.is_dir()})
    if missing:
        raise InputError(
            f"package sources not fetched: {', '.join(missing)}; "
            "run `make groundtruth` (python datasets/groundtruth/fetch.py)"
        )
    return sets


__all__ = [
    "CLAIM_KINDS",
    "CONTENT_FAULTS",
    "CitationLabel",
    "FaultClass",
    "GroundTruth",
    "LabelSet",
    "Location",
    "SentenceLabel",
    "dataset_inputs",
    "label_files",
    "load_groundtruth",
    "upgrade_v1",
]
