"""YAML dataset definitions → rg.Settings, validation errors and settings diffs (no HTTP)."""

from __future__ import annotations

from pathlib import Path

import argilla as rg
import pytest
import yaml

from citecal.annotate._settings import (
    DEFAULT_SPEC_PATH,
    SPEC_DIR,
    bundled_specs,
    load_spec,
    min_submitted_of,
    parse_spec,
    settings_diff,
    spec_path,
    to_settings,
)
from citecal.config import ArgillaConfig
from citecal.errors import ConfigError

CONFIG_DIR = DEFAULT_SPEC_PATH.parent


def raw_default() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(DEFAULT_SPEC_PATH.read_text())


def test_default_spec_builds_the_issue_settings() -> None:
    settings = to_settings(load_spec(), min_submitted=2)
    fields = {f.name: f for f in settings.fields}
    assert list(fields) == ["claim", "citation", "cited_code", "judge_reasoning", "context"]
    assert fields["claim"].use_markdown and fields["cited_code"].use_markdown
    assert not fields["citation"].use_markdown
    assert fields["claim"].required and not fields["judge_reasoning"].required
    questions = {q.name: q for q in settings.questions}
    assert isinstance(questions["supports_claim"], rg.RatingQuestion)
    assert questions["supports_claim"].values == [0, 1, 2, 3]
    assert questions["supports_claim"].required
    assert isinstance(questions["line_range"], rg.LabelQuestion)
    assert questions["line_range"].labels == ["correct", "too_narrow", "too_broad"]
    assert isinstance(questions["correction"], rg.TextQuestion)
    assert isinstance(questions["notes"], rg.TextQuestion)
    assert not questions["notes"].required and not questions["correction"].required
    metadata = {m.name: m for m in settings.metadata}
    for name in ("mode", "judge_model", "prompt_version", "report_id", "repo", "file", "language"):
        assert isinstance(metadata[name], rg.TermsMetadataProperty), name
    assert isinstance(metadata["judge_score"], rg.FloatMetadataProperty)
    assert (metadata["judge_score"].min, metadata["judge_score"].max) == (0.0, 1.0)
    assert len(metadata) == 8  # the rest is hidden extra metadata
    assert settings.allow_extra_metadata
    assert settings.distribution.min_submitted == 2
    assert "0 – no" in (settings.guidelines or "") and "3 – full" in (settings.guidelines or "")


def test_min_submitted_in_yaml_wins_over_config() -> None:
    data = raw_default()
    data["min_submitted"] = 3
    assert to_settings(parse_spec(data), min_submitted=1).distribution.min_submitted == 3


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_every_bundled_config_loads(path: Path) -> None:
    spec = load_spec(path)
    settings = to_settings(spec)
    assert settings_diff(settings, to_settings(spec)) == []


def test_binary_variant_maps_labels_to_scores() -> None:
    spec = load_spec(CONFIG_DIR / "citation_support_binary.yaml")
    assert spec.pull.score_map == {"yes": 3, "no": 0}
    assert spec.question("supported").suggest_from_verdict == {
        "supports": "yes",
        "not_supports": "no",
    }


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["fields"].append({"name": "x", "source": "nope"}), "unknown source 'nope'"),
        (lambda d: d["questions"][0].pop("values"), "needs 'values'"),
        (
            lambda d: d["questions"][0]["suggest_from_verdict"].update({"supports": 9}),
            "9 is not one of",
        ),
        (lambda d: d["fields"].append(dict(d["fields"][0])), "duplicate field name(s): claim"),
        (lambda d: d.update({"colour": "blue"}), "colour"),
        (lambda d: d["hidden"].append("nope"), "hidden nope: unknown source 'nope'"),
        (lambda d: d["pull"].update({"score_question": "notes"}), "cannot be a text question"),
        (
            lambda d: d["metadata"].append({"name": "m", "type": "float", "source": "mode"}),
            "numeric",
        ),
    ],
)
def test_bad_spec_is_a_config_error_naming_the_problem(mutate, message) -> None:  # type: ignore[no-untyped-def]
    data = raw_default()
    mutate(data)
    with pytest.raises(ConfigError) as err:
        parse_spec(data, "x.yaml")
    assert str(err.value).startswith("x.yaml: invalid")
    assert message in str(err.value)


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="annotation config not found"):
        load_spec(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("fields: [unclosed\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_spec(bad)


def test_settings_diff_lists_each_structural_change() -> None:
    want = to_settings(load_spec())
    data = raw_default()
    data["questions"][0]["values"] = [0, 1, 2, 3, 4, 5]
    data["fields"] = [f for f in data["fields"] if f["name"] != "context"]
    data["metadata"].append({"name": "extra", "type": "terms", "source": "section"})
    data["hidden"] = []
    have = to_settings(parse_spec(data))
    diff = settings_diff(want, have)
    assert "+ field context: missing on the server" in diff
    assert "- metadata extra: on the server, not in the config" in diff
    assert "~ question supports_claim: values [0, 1, 2, 3, 4, 5] → [0, 1, 2, 3]" in diff
    assert len(diff) == 3  # extra metadata is always allowed: it holds the raw record data


def test_every_dataset_allows_the_raw_record_data() -> None:
    data = raw_default()
    data["hidden"] = []
    assert to_settings(parse_spec(data)).allow_extra_metadata is True


def test_default_distribution_asks_two_annotators_per_record() -> None:
    """With min_submitted = 1 a record leaves every queue after one answer: no overlap."""
    assert to_settings(load_spec()).distribution.min_submitted == 2
    assert ArgillaConfig().min_submitted == 2
    assert to_settings(load_spec(), min_submitted=3).distribution.min_submitted == 3


def test_another_distribution_is_not_a_settings_mismatch() -> None:
    """A dataset made with min_submitted = 1 still takes records (push reports the value)."""
    data = raw_default()
    data["min_submitted"] = 1
    older = to_settings(parse_spec(data))
    assert min_submitted_of(older) == 1
    assert settings_diff(to_settings(load_spec()), older) == []


def test_bundled_specs_load_by_name_from_the_package() -> None:
    assert SPEC_DIR.parent.name == "citecal"  # shipped inside the package (wheel data)
    assert bundled_specs() == [
        "answer_citation",
        "citation_support",
        "citation_support_binary",
        "excerpt_support",
        "sentence_support",
    ]
    assert spec_path("citation_support_binary") == SPEC_DIR / "citation_support_binary.yaml"
    assert spec_path("excerpt_support.yaml") == SPEC_DIR / "excerpt_support.yaml"
    assert spec_path(None) == DEFAULT_SPEC_PATH
    with pytest.raises(ConfigError, match="bundled one: answer_citation, citation_support"):
        spec_path("no_such_spec")


def test_titles_and_guidelines_are_not_a_mismatch() -> None:
    data = raw_default()
    data["guidelines"] = "other"
    data["fields"][0]["title"] = "Another title"
    assert settings_diff(to_settings(load_spec()), to_settings(parse_spec(data))) == []
