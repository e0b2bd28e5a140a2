"""The docs site documents every command, option and JSON field (sqlite-utils' test_docs habit).

The command reference is generated from the click definitions by mkdocs-click, so these
tests build the site (``mkdocs build --strict``, the same as ``make docs``) and look in the
generated page: a command or option that the generator drops, or a page that stops building,
fails here. JSON fields are explained in words in docs/reference/json-output.md.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from pydantic import BaseModel

from citecal.answers._models import ValidateResult
from citecal.calibrate._models import CalibrationReport
from citecal.cli import cli
from citecal.models import CitationResult, EvalResult, Summary

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        yield (*path, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))


COMMANDS = list(_commands(cli))


def _command(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = cli
    for name in path:
        assert isinstance(cmd, click.Group)
        found = cmd.get_command(click.Context(cmd), name)
        assert found is not None
        cmd = found
    return cmd


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as `make docs` builds it."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def cli_reference(site: Path) -> dict[str, str]:
    """The built command reference, one HTML section per command heading id."""
    page = (site / "reference" / "cli" / "index.html").read_text()
    heads = list(re.finditer(r'<h[1-6] id="(citecal[\w-]*)"', page))
    return {
        m[1]: html.unescape(page[m.start() : heads[i + 1].start() if i + 1 < len(heads) else None])
        for i, m in enumerate(heads)
    }


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_and_option_is_in_the_reference(
    path: tuple[str, ...], cli_reference: dict[str, str]
) -> None:
    anchor = "-".join(("citecal", *path))
    assert anchor in cli_reference, f"docs reference has no section for `citecal {' '.join(path)}`"
    section = cli_reference[anchor]
    for param in _command(path).params:
        if isinstance(param, click.Option) and not param.hidden:
            for flag in param.opts:
                assert f"<code>{flag}</code>" in section, (
                    f"docs reference of `citecal {' '.join(path)}` lacks option {flag}"
                )


def test_the_reference_covers_every_command() -> None:
    assert len(COMMANDS) >= 15  # the walk itself found the commands


EVAL_FIELDS = sorted(
    set(EvalResult.model_fields) | set(Summary.model_fields) | set(CitationResult.model_fields)
)
JSON_DOC = (DOCS / "reference" / "json-output.md").read_text()


@pytest.mark.parametrize("field", EVAL_FIELDS)
def test_every_eval_json_field_is_documented(field: str) -> None:
    assert f"`{field}`" in JSON_DOC, f"docs/reference/json-output.md lacks JSON field `{field}`"


def test_readme_shows_the_two_commands_and_stays_short() -> None:
    assert "make demo" in README and "make test" in README
    assert len(README.splitlines()) <= 250, "README is the front page: keep it to 250 lines"


def _fields(root: type[BaseModel]) -> list[str]:
    seen: list[type[BaseModel]] = []
    names: list[str] = []

    def visit(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.append(model)
        for name, field in model.model_fields.items():
            names.append(f"{model.__name__}.{name}")
            stack: list[Any] = [field.annotation]
            while stack:
                kind = stack.pop()
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    visit(kind)
                stack.extend(typing.get_args(kind))

    visit(root)
    return names


OTHER_JSON_FIELDS = _fields(ValidateResult) + _fields(CalibrationReport)


@pytest.mark.parametrize("field", OTHER_JSON_FIELDS)
def test_every_validate_and_calibrate_json_field_is_in_the_reference(
    field: str, site: Path
) -> None:
    model, name = field.split(".")
    page = html.unescape((site / "reference" / "json-output" / "index.html").read_text())
    # the generated tables, one after each **`Model`** line (two models may share a name)
    tables = [
        part.split("</table>", 1)[0]
        for part in page.split(f"<strong><code>{model}</code></strong>")[1:]
    ]
    assert tables, f"JSON reference has no table for {model}"
    assert any(f"<code>{name}</code>" in t for t in tables), f"JSON reference lacks {field}"
