"""Settings: built-in defaults (README "Configuration"), overridden by files, env and flags.

Precedence, lowest first: built-in defaults (README "Configuration") → the user's config
file (``<user config dir>/citecal/config.toml``) → ``[tool.citecal]`` in the
evaluated repository's ``pyproject.toml`` → ``citecal.toml`` in that
repository → an explicit ``--config FILE`` → ``CITECAL_*`` environment
variables → command-line flags. Every section is a pydantic model so a typo
in a config file is an error with the key's name, not a silently ignored
setting.

The evaluated repository is untrusted (README "Security", README
"Security"): its two layers may only set the keys of
:data:`REPO_ALLOWED_KEYS`. Everything else there is left out, and
:func:`repo_config_layers` says which keys were applied and which ignored so
the CLI can print it.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from citecal.errors import ConfigError
from citecal.models import ConfidenceSource

# Indicator lists from README "Routing", kept as data so users can extend them. They are
# matched case-insensitively; _SYMBOL (a code span, snake_case/dotted name, `name()`,
# or a capitalised/camelCase word via the case-sensitive (?-i:...) group) keeps
# "this module handles ..." or "returns the result" from counting as a named symbol.
_SYMBOL = r"(?:`[^`]+`|\w*[_.]\w*[A-Za-z0-9]|\w+\(\)|(?-i:[A-Z]\w*|[a-z]+[A-Z]\w*))"
EXTRACTIVE_INDICATORS: tuple[str, ...] = (
    r"`[^`]+`",
    r"\b(?:function|class|method|variable|field|constant|module|decorator|enum|interface|struct)\s+"
    + _SYMBOL,
    r"\b(?:defined|located|found|declared)\s+(?:in|at)\b",
    r"\bnamed?\s+`?\w+`?",
    r"\b(?:returns?|raises?|throws?|imports?|exports?|calls?)\s+" + _SYMBOL,
)
ABSTRACTIVE_INDICATORS: tuple[str, ...] = (
    r"\b(?:handles?|manages?|responsible)\b",
    r"\b(?:implements?|provides?|supports?)\b",
    r"\b(?:architecture|design|pattern)\b",
    r"\b(?:ensures?|guarantees?|prevents?)\b",
)
NON_CLAIM_PATTERNS: tuple[str, ...] = (
    r"^#+\s",
    r"^```",
    r"^\s*[-*]\s*$",
    r"^(?:this|in this)\s+(?:section|document|report)",
    r"^see\s+(?:also|more)",
    r"^note:",
    r"\?\s*$",
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ExtractConfig(_Section):
    """Claim detection for coverage (README "`citecal eval`")."""

    min_claim_words: int = Field(4, ge=1, description="Sentences shorter than this are not claims.")
    non_claim_patterns: list[str] = Field(default_factory=lambda: list(NON_CLAIM_PATTERNS))


class ValidationConfig(_Section):
    """Structural validation limits."""

    max_file_bytes: int = Field(
        50_000_000, ge=1, description="Larger files are streamed in chunks, never read whole."
    )
    binary_sniff_bytes: int = Field(8192, ge=512)
    workers: int = Field(
        0,
        ge=0,
        description="Processes for stages 2-4a, the injection screen and the local verifier's "
        "features of large reports; 0 = one per CPU.",
    )
    parallel_min_citations: int = Field(
        2000, ge=1, description="Reports with fewer citations run in one process."
    )


class ClassifyConfig(_Section):
    """Claim classification (README "Routing")."""

    extractive_indicators: list[str] = Field(default_factory=lambda: list(EXTRACTIVE_INDICATORS))
    abstractive_indicators: list[str] = Field(default_factory=lambda: list(ABSTRACTIVE_INDICATORS))
    default_unknown_handling: Literal["extractive", "abstractive", "judge"] = Field(
        "judge",
        description="Unknown claims rules do not decide: judge them (default), treat them as "
        "abstractive (judge, reported abstractive), or decide them by term coverage.",
    )
    use_llm_classification: bool = Field(
        False, description="The judge also classifies the unknown claims it judges (one call)."
    )

    @field_validator("default_unknown_handling", mode="before")
    @classmethod
    def _old_name(cls, value: object) -> object:
        return "judge" if value == "llm" else value  # "llm" was this value's name in 0.1


class ExtractiveConfig(_Section):
    """Term matching thresholds (README "Routing")."""

    supports_threshold: float = Field(0.8, ge=0, le=1, description="score >= this: supports.")
    partial_threshold: float = Field(
        0.5, ge=0, le=1, description="score >= this: partial (README 'Routing')."
    )
    fuzzy_max_distance: int = Field(2, ge=0, description="Levenshtein distance for near-matches.")
    fuzzy_min_length: int = Field(5, ge=1, description="Shorter identifiers match exactly.")
    context_lines: int = Field(
        10, ge=0, description="Lines around the range searched before suggesting expand_range."
    )


class PriceConfig(_Section):
    """USD per one million tokens."""

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)


def _default_pricing() -> dict[str, PriceConfig]:
    # README "The LLM judge" (OpenAI list prices, November 2024)
    return {
        "gpt-4o-mini": PriceConfig(input=0.15, output=0.60),
        "gpt-4o": PriceConfig(input=5.00, output=15.00),
    }


class JudgeConfig(_Section):
    """LLM judge (README "The LLM judge")."""

    judge_model: str = "gpt-4o-mini"
    escalation_model: str | None = "gpt-4o"
    confidence_threshold: float = Field(
        0.7, ge=0, le=1, description="Verdicts with a support-certainty below this escalate."
    )
    max_batch_size: int = Field(5, ge=1, le=50)
    concurrency: int = Field(8, ge=1, le=256)
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint.")
    api_key_env: str = Field("OPENAI_API_KEY", description="Env var holding the API key.")
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(30.0, ge=0)
    context_lines: int = Field(3, ge=0, description="Lines shown around the cited range.")
    max_code_lines: int = Field(200, ge=1, description="Cited code longer than this is cut.")
    prompt: str = Field(
        "v3",
        description="Prompt version name or path to a prompt file (v3 marks claim and code as"
        " data, README 'Security').",
    )
    structured_outputs: bool = True
    temperature: float = 0.0
    cache: bool = True
    cache_path: str | None = Field(None, description="SQLite verdict cache file.")
    pricing: dict[str, PriceConfig] = Field(default_factory=_default_pricing)
    max_cost_usd: float | None = Field(
        None,
        ge=0,
        allow_inf_nan=False,
        description="Spending cap of one run in USD (--max-cost); claims left abstain.",
    )
    confirm_above_usd: float = Field(
        5.0,
        ge=0,
        allow_inf_nan=False,
        description="With no cap: a run estimated above this asks first (--yes skips).",
    )
    # Judge confidence (README "Judge confidence").
    confidence: ConfidenceSource = Field(
        "verbal",
        description="How the judge's confidence_value is measured (--confidence): its words, "
        "its verdict token's probability, K samples' agreement, or K simulated annotators'.",
    )
    samples: int = Field(
        5,
        ge=2,
        le=20,
        description="K (--samples): samples (consistency) or few-shot variants (simulated).",
    )
    sample_temperature: float = Field(
        0.7,
        gt=0,
        le=2,
        allow_inf_nan=False,
        description="Temperature of the consistency samples (above 0, or they cannot differ).",
    )
    use_n: bool = Field(
        True,
        description="Ask for the K consistency samples in one request (n=K); false sends K "
        "requests. A server that returns fewer choices is asked again per sample anyway.",
    )
    top_logprobs: int = Field(
        5, ge=1, le=20, description="Alternatives per token asked for with --confidence logprob."
    )
    simulated_from: str | None = Field(
        None,
        description="Annotation table the simulated annotators' labelled examples are mined "
        "from (--simulated-from).",
    )
    simulated_examples: int = Field(
        4, ge=1, le=20, description="Labelled examples shown to each simulated annotator."
    )
    max_tokens: int = Field(
        800,
        ge=16,
        le=100_000,
        description="Answer tokens a judge request about one claim may use (max_tokens).",
    )
    max_tokens_per_claim: int = Field(
        400,
        ge=16,
        le=100_000,
        description="Answer tokens per claim of a batch request (max_tokens: this times the "
        "claims, plus 100).",
    )
    critic_max_tokens: int = Field(
        2000, ge=64, le=100_000, description="Answer tokens of one align critic request."
    )
    rewrite_max_tokens: int = Field(
        600, ge=16, le=100_000, description="Answer tokens of one correct rewrite request."
    )


LOCAL_ARGILLA_PORT = 6900
"""Port of the local Argilla stack (``make argilla-up``); ``CITECAL_ARGILLA_PORT`` moves it."""


def local_argilla_port() -> int:
    """The local stack's port: ``CITECAL_ARGILLA_PORT``, else 6900.

    The one place that reads the variable for Python: the CLI's default
    ``ARGILLA_API_URL`` and the test fixture both come from here, and the stack
    scripts (``services/argilla/env.sh``) read the same variable, so moving the
    stack moves everything that talks to it (README "Start a local Argilla").

    Raises:
        ConfigError: the variable is not a port number.
    """
    raw = os.environ.get("CITECAL_ARGILLA_PORT", "").strip()
    if not raw:
        return LOCAL_ARGILLA_PORT
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise ConfigError(f"CITECAL_ARGILLA_PORT={raw!r} is not a port number (1-65535)")
    return int(raw)


def local_argilla_url() -> str:
    """``http://127.0.0.1:<port>``: the local stack's address (:func:`local_argilla_port`)."""
    return f"http://127.0.0.1:{local_argilla_port()}"


class ArgillaConfig(_Section):
    """Annotation with Argilla (README "Human annotation with Argilla")."""

    api_url: str = Field(
        f"http://127.0.0.1:{LOCAL_ARGILLA_PORT}",
        description="env ARGILLA_API_URL; default the local stack (CITECAL_ARGILLA_PORT).",
    )
    api_key: str | None = Field(
        None,
        description="env ARGILLA_API_KEY; unset, the local stack's key is sent to the local "
        "stack only.",
    )
    workspace: str = "citecal"
    min_submitted: int = Field(
        2,
        ge=1,
        description="Submitted answers a record needs before it leaves every annotator's queue "
        "(2: every record is rated twice, so annotators can be compared).",
    )
    batch_size: int = Field(256, ge=1)
    timeout_s: float = Field(
        60.0,
        gt=0,
        allow_inf_nan=False,
        description="Deadline of one request to Argilla, connecting and the whole answer.",
    )


class CalibrationConfig(_Section):
    """Judge-human agreement (README "Calibration")."""

    spearman_threshold: float = Field(0.6, ge=-1, le=1)
    ceiling_margin: float = Field(0.05, ge=0, le=1)
    bootstrap_resamples: int = Field(1000, ge=0)
    seed: int | None = 0


class ExcerptConfig(_Section):
    """Quoted excerpts with location specifiers (README "Excerpt citations")."""

    page_lines: int = Field(50, ge=1, description="Lines per page for p<N> locations.")
    match_threshold: float = Field(
        0.8, ge=0, le=1, description="Share of significant excerpt words found to pass."
    )
    min_word_chars: int = Field(4, ge=1, description="Significant words have at least this many.")
    prefix_chars: int = Field(
        5, ge=1, description="Words this long or longer also match by prefix (improve~improved)."
    )
    align_max_chars: int = Field(
        200_000, ge=0, description="Search the whole item for the best span up to this size."
    )


class GateConfig(_Section):
    """``citecal eval --gate``: the quality gate for code reports (README "Quality gates")."""

    max_invalid_rate: float = Field(
        0.3, ge=0, le=1, description="FAIL when more citations than this share are invalid."
    )
    fail_on_missing_files: bool = Field(True, description="FAIL when a cited file does not exist.")
    min_precision: float = Field(0.7, ge=0, le=1, description="WARN below this precision.")
    min_coverage: float = Field(0.5, ge=0, le=1, description="WARN below this claim coverage.")
    max_high_risk: int | None = Field(
        None,
        ge=0,
        description="FAIL when more valid citations than this are in the high-risk band of "
        "p_supports (the review list's riskiest; needs the cascade); unset: no such rule.",
    )


class AnswerFields(_Section):
    """Field names of question-answer items (``citecal validate``), for other producers' JSON."""

    id: str = "id"
    question: str = "question"
    answer: str = "answer"
    evidence: str = "evidence"
    evidence_text: str = Field("text", description="Text key when evidence items are objects.")
    citations: str = "citations"
    source: str = "source"
    relevance: str = "relevance"
    quote: str = "quote"
    evidence_idx: str = "evidence_idx"
    alignment_score: str = "alignment_score"
    span_in_answer: str = "span_in_answer"
    items: str = Field("items", description="List key when a JSON file is an object of items.")


class AnswersConfig(_Section):
    """Structured answer citations and their gate (README "`citecal validate`")."""

    fields: AnswerFields = Field(default_factory=AnswerFields)
    min_alignment_score: float = Field(0.3, ge=0, le=1, description="Lower: a quality warning.")
    span_prefix_chars: int = Field(
        50, ge=1, description="A span not found whole may match by this many first characters."
    )
    quote_match_threshold: float = Field(
        0.85, ge=0, le=1, description="Fuzzy share for a quote to count as found in its evidence."
    )
    missing_field_penalty: float = Field(0.05, ge=0, le=1)
    hallucinated_span_penalty: float = Field(0.3, ge=0, le=1)
    error_penalty: float = Field(0.2, ge=0, le=1, description="Each other error.")
    low_alignment_penalty: float = Field(0.1, ge=0, le=1)
    fail_invalid_rate: float = Field(0.3, ge=0, le=1, description="P0 above this share.")
    warn_avg_alignment: float = Field(0.4, ge=0, le=1, description="P1 below this average.")
    warn_coverage: float = Field(0.5, ge=0, le=1, description="P1 below this coverage.")
    warn_evidence_idx: float = Field(
        0.8, ge=0, le=1, description="P1 when fewer citations than this share have evidence_idx."
    )


class Config(_Section):
    """All settings, one section per stage."""

    extract: ExtractConfig = Field(default_factory=ExtractConfig)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    classify: ClassifyConfig = Field(default_factory=ClassifyConfig)
    extractive: ExtractiveConfig = Field(default_factory=ExtractiveConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    argilla: ArgillaConfig = Field(default_factory=ArgillaConfig)
    calibration: CalibrationConfig = Field(default_factory=CalibrationConfig)
    excerpt: ExcerptConfig = Field(default_factory=ExcerptConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    answers: AnswersConfig = Field(default_factory=AnswersConfig)


# env var -> (section, key); values are parsed by pydantic.
ENV_VARS: dict[str, tuple[str, str]] = {
    "CITECAL_JUDGE_MODEL": ("judge", "judge_model"),
    "CITECAL_ESCALATION_MODEL": ("judge", "escalation_model"),
    "CITECAL_CONCURRENCY": ("judge", "concurrency"),
    "CITECAL_PROMPT": ("judge", "prompt"),
    "CITECAL_CACHE_PATH": ("judge", "cache_path"),
    "OPENAI_BASE_URL": ("judge", "base_url"),
    "ARGILLA_API_URL": ("argilla", "api_url"),
    "ARGILLA_API_KEY": ("argilla", "api_key"),
    "CITECAL_ARGILLA_WORKSPACE": ("argilla", "workspace"),
}


# What the evaluated repository's own config ([tool.citecal] in its pyproject.toml, or its
# citecal.toml) may set, and in which direction (docs/explanation/security.md): only keys that
# make verification stricter than the layers below it (the built-in defaults and the user's
# config file), or that change no verdict. A repository verifies its own citations' evidence,
# so it may raise a threshold, never lower it:
#   "raise": the value may only go up (a higher supports_threshold decides fewer supports);
#   "lower": the value may only go down (a smaller fuzzy_max_distance matches less);
#   "judged": default_unknown_handling may not move claims from the judge to term coverage;
#   "free": changes no verdict (context_lines: where expand_range is suggested).
# A loosening value is refused (left out, and eval says so); the lower layers' value stays.
# Not here, so only from the user's --config, user config file, environment or flags: URLs,
# credentials and environment variable names (judge.base_url, judge.api_key_env, argilla.*),
# file paths (judge.cache_path, judge.prompt), regular expressions (classify.*_indicators,
# extract.non_claim_patterns: they run on the user's CPU), models, prices and resource limits
# (judge.*, validation.*), switches that spend the user's judge calls on every claim
# (classify.use_llm_classification), and settings with no stricter direction that change
# verdicts (excerpt.page_lines moves pages, excerpt.min_word_chars changes which words count).
# To let a repository set a new key, add it below with its direction and to the docs' list.
RepoRule = Literal["raise", "lower", "judged", "free"]
REPO_RULES: dict[str, dict[str, RepoRule]] = {
    "extract": {"min_claim_words": "lower"},
    "classify": {"default_unknown_handling": "judged"},
    "extractive": {
        "supports_threshold": "raise",
        "partial_threshold": "raise",
        "fuzzy_max_distance": "lower",
        "fuzzy_min_length": "raise",
        "context_lines": "free",
    },
    "calibration": {"spearman_threshold": "raise", "ceiling_margin": "lower"},
    "excerpt": {"match_threshold": "raise", "prefix_chars": "raise"},
}
REPO_ALLOWED_KEYS: dict[str, frozenset[str]] = {s: frozenset(k) for s, k in REPO_RULES.items()}
"""The keys a repository may set at all (:data:`REPO_RULES` says in which direction)."""

_JUDGED_RANK = {"extractive": 0, "llm": 1, "judge": 1, "abstractive": 1}
"""default_unknown_handling: term coverage decides (0) or the judge does (1)."""


def user_config_path() -> Path:
    """``<user config dir>/citecal/config.toml`` (``~/.config/citecal/config.toml`` on Linux)."""
    return Path(platformdirs.user_config_dir("citecal")) / "config.toml"


@dataclass(frozen=True, slots=True)
class RepoLayer:
    """One config source inside the evaluated repository, split by the trust rule.

    Attributes:
        source: where it was read, e.g. ``repo/pyproject.toml [tool.citecal]``.
        settings: the allowed part, as nested sections, applied to the run.
        applied: dotted names of the keys applied (``extractive.supports_threshold``).
        ignored: dotted names of the keys left out because only the user may set them.
        refused: ``key = value (why)`` of allowed keys left out because the value would
            loosen a check (:data:`REPO_RULES`).
    """

    source: str
    settings: dict[str, Any]
    applied: tuple[str, ...]
    ignored: tuple[str, ...]
    refused: tuple[str, ...] = ()


def _known_keys(section: str) -> set[str] | None:
    field = Config.model_fields.get(section)
    if field is None or not isinstance(field.annotation, type):
        return None
    if not issubclass(field.annotation, BaseModel):
        return None
    return set(field.annotation.model_fields)


def split_repo_settings(source: str, data: dict[str, Any]) -> RepoLayer:
    """Keep the keys of :data:`REPO_ALLOWED_KEYS`, list the rest as ignored.

    An unknown section or key is still an error naming it (a typo must not
    pass as "ignored"); a key only the user may set is ignored whatever its
    value, so a repository cannot even make the run fail through it.

    Raises:
        ConfigError: an unknown section or key.
    """
    settings: dict[str, Any] = {}
    applied: list[str] = []
    ignored: list[str] = []
    for section, body in data.items():
        known = _known_keys(section)
        if known is None:
            raise ConfigError(
                f"{source}: invalid setting '{section}': Extra inputs are not permitted"
            )
        allowed = REPO_ALLOWED_KEYS.get(section, frozenset())
        if not isinstance(body, dict):
            if allowed:
                settings[section] = body  # pydantic names the section in its error
            else:
                ignored.append(section)
            continue
        for key, value in body.items():
            if key not in known:
                raise ConfigError(
                    f"{source}: invalid setting '{section}.{key}': Extra inputs are not permitted"
                )
            if key in allowed:
                settings.setdefault(section, {})[key] = value
                applied.append(f"{section}.{key}")
            else:
                ignored.append(f"{section}.{key}")
    return RepoLayer(source, settings, tuple(applied), tuple(ignored))


def _loosens(rule: RepoRule, value: Any, base: Any) -> bool | None:
    """Whether ``value`` would loosen the check ``base`` sets (None: not comparable)."""
    if rule == "free":
        return False
    if rule == "judged":
        mine, theirs = _JUDGED_RANK.get(str(value)), _JUDGED_RANK.get(str(base))
        return None if mine is None or theirs is None else mine < theirs
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # pydantic names the bad value when the layer is applied
    return bool(value < base) if rule == "raise" else bool(value > base)


def tighten_only(layer: RepoLayer, base: Config) -> RepoLayer:
    """``layer`` without the values that would loosen a check below it (:data:`REPO_RULES`).

    ``base`` is what the layers under the repository's give (defaults and the
    user's config file): a repository may raise ``supports_threshold`` above it,
    never lower it. Refused keys are listed, not applied.
    """
    settings: dict[str, Any] = {}
    applied: list[str] = []
    refused: list[str] = []
    for section, body in layer.settings.items():
        if not isinstance(body, dict):
            settings[section] = body
            continue
        for key, value in body.items():
            rule = REPO_RULES[section][key]
            current = getattr(getattr(base, section), key)
            if _loosens(rule, value, current):
                how = {"raise": "lower than", "lower": "higher than"}.get(rule, "looser than")
                refused.append(f"{section}.{key} = {value!r} ({how} {current!r})")
            else:
                settings.setdefault(section, {})[key] = value
                applied.append(f"{section}.{key}")
    return RepoLayer(layer.source, settings, tuple(applied), layer.ignored, tuple(refused))


def repo_config_layers(repo: Path | None, base: Config | None = None) -> list[RepoLayer]:
    """The evaluated repository's config sources, split (:func:`split_repo_settings`) and
    tightened against ``base`` (:func:`tighten_only`; default: the built-in defaults).

    Raises:
        ConfigError: unreadable TOML, or an unknown section or key.
    """
    layers: list[RepoLayer] = []
    if repo is None or not repo.is_dir():
        return layers
    below = base if base is not None else Config()
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {}).get("citecal")
        if tool:
            source = f"{pyproject} [tool.citecal]"
            if not isinstance(tool, dict):
                raise ConfigError(f"{source}: not a table")
            layers.append(tighten_only(split_repo_settings(source, tool), below))
    local = repo / "citecal.toml"
    if local.is_file():
        layers.append(tighten_only(split_repo_settings(str(local), _read_toml(local)), below))
    return layers


def user_base() -> Config:
    """The settings below the repository's layers: defaults and the user's config file.

    Raises:
        ConfigError: the user's config file holds a bad key or value.
    """
    return config_from_layers(config_layers(None, None, include_env=False))


def describe_repo_layer(layer: RepoLayer) -> list[str]:
    """Lines for the terminal: which repository settings were applied, which ignored."""
    lines: list[str] = []
    if layer.applied:
        lines.append(f"repo config {layer.source}: applied {', '.join(layer.applied)}")
    if layer.ignored:
        lines.append(
            f"repo config {layer.source}: ignored {', '.join(layer.ignored)} (a repository may "
            "only tune thresholds and word lists; set these in --config, your user config "
            f"{user_config_path()} or the environment)"
        )
    if layer.refused:
        lines.append(
            f"repo config {layer.source}: refused {'; '.join(layer.refused)} (a repository may "
            "only make its own verification stricter; the value below it stays)"
        )
    return lines


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from exc


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def config_layers(
    repo: Path | None,
    config_file: Path | None,
    *,
    include_user: bool = True,
    include_env: bool = True,
) -> list[tuple[str, dict[str, Any]]]:
    """The settings of each source in precedence order (lowest first).

    The repository's layers hold only their allowed keys (:data:`REPO_ALLOWED_KEYS`).
    ``include_user`` / ``include_env`` leave out this process's user config file
    and ``CITECAL_*`` / ``OPENAI_*`` variables: eval-batch resolves them on the
    driver and a Dask worker adds only each repository's layers in between,
    never its own host's (README "Many reports").
    """
    layers: list[tuple[str, dict[str, Any]]] = []
    user = user_config_path()
    if include_user and user.is_file():
        layers.append((str(user), _read_toml(user)))
    if repo is not None and repo.is_dir():
        base = config_from_layers(layers)  # what the repository may tighten, never loosen
        for layer in repo_config_layers(repo, base):
            if layer.settings:
                layers.append((layer.source, layer.settings))
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file not found: {config_file}")
        data = _read_toml(config_file)
        if config_file.name == "pyproject.toml":
            data = data.get("tool", {}).get("citecal", {})
        layers.append((str(config_file), data))
    env: dict[str, Any] = {}
    for var, (section, key) in ENV_VARS.items() if include_env else ():
        value = os.environ.get(var)
        if value:
            env.setdefault(section, {})[key] = value
    if (
        include_env
        and os.environ.get("CITECAL_ARGILLA_PORT")
        and "api_url" not in env.get("argilla", {})
    ):
        # The stack was moved (README "Start a local Argilla"): talk to it there, not to
        # whatever answers on 6900. An explicit ARGILLA_API_URL still wins.
        env.setdefault("argilla", {})["api_url"] = local_argilla_url()
    if env:
        layers.append(("environment", env))
    return layers


def load_config(
    repo: Path | None = None,
    config_file: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> Config:
    """Build the effective configuration; raise :class:`ConfigError` naming the bad key."""
    return config_from_layers(config_layers(repo, config_file), overrides)


def config_from_layers(
    layers: list[tuple[str, dict[str, Any]]],
    overrides: dict[str, dict[str, Any]] | None = None,
) -> Config:
    """Merge layers (lowest first, as :func:`config_layers` gives them) and flags.

    Raises:
        ConfigError: a layer or flag holds a bad key or value; names both.
    """
    merged: dict[str, Any] = {}
    source = "defaults"
    try:
        for source, data in layers:  # noqa: B007 (named in errors)
            merged = _merge(merged, data)
            Config.model_validate(merged)
        source = "command-line options"
        merged = _merge(merged, {k: v for k, v in (overrides or {}).items() if v})
        return Config.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{source}: invalid setting '{where}': {err['msg']}") from exc
