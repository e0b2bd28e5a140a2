"""The README documents every command and every JSON field (sqlite-utils' test_docs habit)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from citecal.cli import cli
from citecal.models import CitationResult, Summary

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


@pytest.mark.parametrize("name", cli.list_commands(click.Context(cli)))
def test_every_command_is_documented(name: str) -> None:
    shown = re.search(rf"citecal {re.escape(name)}\b", README)
    assert shown, f"README does not show `citecal {name}`"


EVAL_FIELDS = sorted(Summary.model_fields) + sorted(CitationResult.model_fields)


@pytest.mark.parametrize("field", EVAL_FIELDS)
def test_every_eval_json_field_is_documented(field: str) -> None:
    assert f"`{field}`" in README, f"README does not document JSON field `{field}`"


def test_readme_shows_the_two_commands() -> None:
    assert "make demo" in README and "make test" in README
