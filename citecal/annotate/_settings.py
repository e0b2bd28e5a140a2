"""Dataset definitions: ``annotation_configs/*.yaml`` → :class:`AnnotationSpec` → ``rg.Settings``.

A YAML file describes one Argilla dataset (fields, questions, metadata,
guidelines, task distribution) and how ``push`` fills it and ``pull`` reads it
back, so a new kind of annotation task is a new file, not new code. The file is
validated by pydantic when loaded: a typo is a :class:`ConfigError` naming the
file and the key, before anything talks to a server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import argilla as rg
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from citecal._io import read_text_file
from citecal.errors import ConfigError

SPEC_DIR = Path(__file__).resolve().parents[1] / "annotation_configs"
"""The bundled dataset definitions, shipped inside the package (also ``annotation_configs/``
at the top of a source checkout, a link to this directory)."""

DEFAULT_SPEC_PATH = SPEC_DIR / "citation_support.yaml"
"""The default dataset definition: does the cited code support the claim (0–3)."""

RECORD_SOURCES: tuple[str, ...] = (
    "best_match",
    "citation",
    "citation_id",
    "cited_code",
    "claim",
    "confidence",
    "context",
    "excerpt",
    "excerpt_status",
    "file_path",
    "judge_model",
    "judge_reasoning",
    "judge_score",
    "language",
    "location",
    "matched_terms",
    "method",
    "missing_terms",
    "mode",
    "p_supports",
    "prompt_version",
    "report_id",
    "repo",
    "rev",
    "risk_rank",
    "section",
    "verdict",
)
"""Values the record builder offers to fields and metadata (``source:`` in YAML)."""

NUMERIC_SOURCES: frozenset[str] = frozenset({"judge_score", "p_supports", "risk_rank"})

SuggestValue = int | str


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(_Spec):
    """A text field shown to annotators."""

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    source: str | None = Field(None, description="Record value shown (default: name).")
    title: str | None = None
    description: str | None = None
    use_markdown: bool = False
    required: bool = True
    hide_when_blind: bool = Field(
        False, description="Leave empty in blind mode (e.g. the judge's reasoning)."
    )

    @property
    def value_source(self) -> str:
        """The record value this field shows."""
        return self.source or self.name


class QuestionSpec(_Spec):
    """A question annotators answer; only the kinds the annotation table uses."""

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    type: Literal["rating", "label", "text"]
    title: str | None = None
    description: str | None = None
    required: bool = False
    values: list[int] | None = Field(None, description="rating: the allowed scores.")
    labels: dict[str, str] | None = Field(None, description="label: value → display text.")
    use_markdown: bool = False
    suggest_from_verdict: dict[str, SuggestValue] | None = Field(
        None, description="Judge verdict → suggested answer (pre-filled unless --blind)."
    )

    @model_validator(mode="after")
    def _check_kind(self) -> QuestionSpec:
        if self.type == "rating" and not self.values:
            raise ValueError(f"rating question {self.name!r} needs 'values'")
        if self.type == "label" and not self.labels:
            raise ValueError(f"label question {self.name!r} needs 'labels'")
        if self.suggest_from_verdict:
            allowed: list[Any] = list(self.values or []) + list(self.labels or {})
            for verdict, value in self.suggest_from_verdict.items():
                if verdict not in ("supports", "partial", "not_supports", "unverified"):
                    raise ValueError(
                        f"{self.name}.suggest_from_verdict: unknown verdict {verdict!r}"
                    )
                if value not in allowed:
                    raise ValueError(
                        f"{self.name}.suggest_from_verdict.{verdict}: "
                        f"{value!r} is not one of {allowed}"
                    )
        return self


class MetadataSpec(_Spec):
    """A metadata property (filterable in the UI, carried back by ``pull``)."""

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    type: Literal["terms", "float"]
    source: str | None = None
    title: str | None = None
    min: float | None = None
    max: float | None = None
    visible_for_annotators: bool = True

    @property
    def value_source(self) -> str:
        """The record value this property holds."""
        return self.source or self.name


class PullSpec(_Spec):
    """Which questions fill which columns of the annotation table."""

    score_question: str
    score_map: dict[str, int] | None = Field(
        None, description="Label answer → human score 0–3 (for label score questions)."
    )
    line_range_question: str | None = None
    notes_question: str | None = None
    correction_question: str | None = None


class AnnotationSpec(_Spec):
    """One dataset definition (a YAML file of ``annotation_configs/``)."""

    schema_version: Literal[1] = 1
    description: str = ""
    guidelines: str
    fields: list[FieldSpec] = Field(min_length=1)
    questions: list[QuestionSpec] = Field(min_length=1)
    metadata: list[MetadataSpec] = Field(default_factory=list)
    hidden: list[str] = Field(
        default_factory=list,
        description=(
            "Record values stored as extra metadata '_<source>': never shown to annotators, not "
            "validated per property by the server (fast), read back by pull."
        ),
    )
    min_submitted: int | None = Field(None, ge=1)
    judge_methods: list[Literal["llm", "extractive"]] = Field(
        default_factory=lambda: ["llm"],  # type: ignore[arg-type]
        min_length=1,
        description=(
            "Which verdicts are the judge this dataset calibrates: they become the suggestion "
            "and the llm_* columns. Default: the LLM judge only (a rule verdict is not)."
        ),
    )
    pull: PullSpec

    @model_validator(mode="after")
    def _check_references(self) -> AnnotationSpec:
        for kind, names in (
            ("field", [f.name for f in self.fields]),
            ("question", [q.name for q in self.questions]),
            ("metadata property", [m.name for m in self.metadata]),
        ):
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"duplicate {kind} name(s): {', '.join(dupes)}")
        sources = [(f.name, f.value_source) for f in self.fields]
        sources += [(m.name, m.value_source) for m in self.metadata]
        sources += [(f"hidden {h}", h) for h in self.hidden]
        for name, source in sources:
            if source not in RECORD_SOURCES:
                raise ValueError(
                    f"{name}: unknown source {source!r} (one of: {', '.join(RECORD_SOURCES)})"
                )
        for m in self.metadata:
            if m.type == "float" and m.value_source not in NUMERIC_SOURCES:
                raise ValueError(f"float metadata {m.name!r} needs a numeric source")
        questions = {q.name: q for q in self.questions}
        p = self.pull
        score = questions.get(p.score_question)
        if score is None:
            raise ValueError(f"pull.score_question {p.score_question!r} is not a question")
        if score.type == "label" and not p.score_map:
            raise ValueError("pull.score_map is needed when the score question is a label")
        if score.type == "text":
            raise ValueError("pull.score_question cannot be a text question")
        for key in ("line_range_question", "notes_question", "correction_question"):
            name = getattr(p, key)
            if name is not None and name not in questions:
                raise ValueError(f"pull.{key} {name!r} is not a question")
        return self

    def question(self, name: str) -> QuestionSpec:
        """The question called ``name`` (KeyError when absent)."""
        for q in self.questions:
            if q.name == name:
                return q
        raise KeyError(name)


def parse_spec(data: object, origin: str = "annotation config") -> AnnotationSpec:
    """Validate already-parsed YAML; raise :class:`ConfigError` naming ``origin`` and the key."""
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: expected a mapping at the top level")
    try:
        return AnnotationSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ConfigError(f"{origin}: invalid '{where}': {err['msg']}") from None


def bundled_specs() -> list[str]:
    """Names of the bundled dataset definitions (``citation_support``, ...)."""
    return sorted(p.stem for p in SPEC_DIR.glob("*.yaml"))


def spec_path(spec: Path | str | None) -> Path:
    """The file ``--spec`` names: a path, or a bundled definition's name.

    ``--spec citation_support_binary`` (or ``citation_support_binary.yaml``)
    works from an installed wheel, where there is no ``annotation_configs/``
    directory beside the working directory; a path that exists always wins.

    Raises:
        ConfigError: neither a file nor a bundled name.
    """
    if spec is None:
        return DEFAULT_SPEC_PATH
    path = Path(spec)
    if path.exists() or len(path.parts) > 1:
        return path
    bundled = SPEC_DIR / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
    if bundled.is_file():
        return bundled
    raise ConfigError(
        f"annotation spec not found: {spec} (a YAML file, or a bundled one: "
        f"{', '.join(bundled_specs())})"
    )


def load_spec(spec: Path | str | None = None) -> AnnotationSpec:
    """Read a dataset definition: a file or a bundled name (default ``citation_support``)."""
    path = spec_path(spec)
    text = read_text_file(path, "annotation config")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None
    return parse_spec(data, str(path))


DEFAULT_MIN_SUBMITTED = 2
"""Answers a record needs before it leaves the queues: two, so annotators overlap."""


def to_settings(
    spec: AnnotationSpec,
    min_submitted: int = DEFAULT_MIN_SUBMITTED,
    client: rg.Argilla | None = None,
) -> rg.Settings:
    """The ``rg.Settings`` for ``spec``; ``min_submitted`` applies when the YAML leaves it null.

    ``min_submitted`` is Argilla's task distribution: a record leaves every
    annotator's queue once that many have submitted an answer. With 1, each
    record is answered by one person and there is nothing to compare
    annotators with (no Krippendorff α, no human ceiling); 2 is the default
    (README "What overlap buys").

    ``client`` is the connection the settings objects belong to (the SDK ties
    them to one); without it they get an offline client, so this stays pure.
    """
    from citecal.annotate._client import offline_client

    client = client or offline_client()
    fields = [
        rg.TextField(
            name=f.name,
            client=client,
            title=f.title,
            description=f.description,
            use_markdown=f.use_markdown,
            required=f.required,
        )
        for f in spec.fields
    ]
    questions: list[Any] = []
    for q in spec.questions:
        if q.type == "rating":
            questions.append(
                rg.RatingQuestion(
                    name=q.name,
                    client=client,
                    values=list(q.values or []),
                    title=q.title,
                    description=q.description,
                    required=q.required,
                )
            )
        elif q.type == "label":
            questions.append(
                rg.LabelQuestion(
                    name=q.name,
                    client=client,
                    labels=dict(q.labels or {}),
                    title=q.title,
                    description=q.description,
                    required=q.required,
                )
            )
        else:
            questions.append(
                rg.TextQuestion(
                    name=q.name,
                    client=client,
                    title=q.title,
                    description=q.description,
                    required=q.required,
                    use_markdown=q.use_markdown,
                )
            )
    metadata: list[Any] = []
    for m in spec.metadata:
        if m.type == "terms":
            metadata.append(
                rg.TermsMetadataProperty(
                    name=m.name,
                    title=m.title,
                    visible_for_annotators=m.visible_for_annotators,
                    client=client,
                )
            )
        else:
            metadata.append(
                rg.FloatMetadataProperty(
                    name=m.name,
                    client=client,
                    min=m.min,
                    max=m.max,
                    title=m.title,
                    visible_for_annotators=m.visible_for_annotators,
                )
            )
    return rg.Settings(
        fields=fields,
        questions=questions,
        metadata=metadata,
        guidelines=spec.guidelines,
        allow_extra_metadata=True,  # hidden values and the raw record data (_citecal)
        distribution=rg.TaskDistribution(min_submitted=spec.min_submitted or min_submitted),
    )


def describe_settings(settings: rg.Settings) -> dict[str, dict[str, Any]]:
    """The structural part of ``settings`` that records and answers depend on.

    Titles, descriptions and guidelines are left out: they can change without
    breaking records or answers already stored.
    """
    out: dict[str, dict[str, Any]] = {}
    for f in settings.fields:
        out[f"field {f.name}"] = {
            "type": type(f).__name__,
            "use_markdown": bool(getattr(f, "use_markdown", False)),
            "required": bool(f.required),
        }
    for q in settings.questions:
        desc: dict[str, Any] = {"type": type(q).__name__, "required": bool(q.required)}
        if getattr(q, "values", None) is not None:
            desc["values"] = sorted(q.values)
        if getattr(q, "labels", None) is not None:
            desc["labels"] = sorted(q.labels)
        out[f"question {q.name}"] = desc
    for m in settings.metadata:
        desc = {"type": type(m).__name__}
        if getattr(m, "min", None) is not None or getattr(m, "max", None) is not None:
            desc["min"] = None if m.min is None else float(m.min)
            desc["max"] = None if m.max is None else float(m.max)
        out[f"metadata {m.name}"] = desc
    out["extra metadata"] = {"allowed": bool(settings.allow_extra_metadata)}
    return out


def min_submitted_of(settings: rg.Settings) -> int | None:
    """The task distribution's ``min_submitted`` (None when the settings have none)."""
    value = getattr(settings.distribution, "min_submitted", None)
    return None if value is None else int(value)


def settings_diff(expected: rg.Settings, actual: rg.Settings) -> list[str]:
    """Readable differences, one line each, between the wanted and the server's settings.

    The task distribution is not compared: it changes who is asked, not what
    records or answers look like, so a dataset made with another
    ``min_submitted`` still takes records (``push`` says which value it keeps).
    """
    want, have = describe_settings(expected), describe_settings(actual)
    lines: list[str] = []
    for key in sorted(want.keys() | have.keys()):
        if key not in have:
            lines.append(f"+ {key}: missing on the server")
        elif key not in want:
            lines.append(f"- {key}: on the server, not in the config")
        elif want[key] != have[key]:
            changes = ", ".join(
                f"{attr} {have[key].get(attr)!r} → {want[key].get(attr)!r}"
                for attr in sorted(want[key].keys() | have[key].keys())
                if want[key].get(attr) != have[key].get(attr)
            )
            lines.append(f"~ {key}: {changes}")
    return lines
