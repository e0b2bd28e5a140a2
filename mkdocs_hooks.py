"""MkDocs hook: reference pages generated from the code, so they cannot drift from it.

A page asks for a generated block with an HTML comment on a line of its own:

    <!-- generated: json-schema citecal.models:EvalResult -->
    <!-- generated: json-fields citecal.calibrate._models:CalibrationReport -->
    <!-- generated: config-keys -->
    <!-- generated: annotation-columns -->

The command reference comes from the click definitions through mkdocs-click
(docs/reference/cli.md); this hook covers what mkdocs-click does not: the JSON
schemas of the pydantic output models, every configuration key with its default,
and the columns of the annotation table.
"""

from __future__ import annotations

import importlib
import json
import re
import typing
from typing import Any

from pydantic import BaseModel

_MARK = re.compile(r"^<!-- generated: (?P<kind>[\w-]+)(?: (?P<arg>\S+))? -->$", re.M)


def _model(path: str) -> type[BaseModel]:
    module, name = path.split(":")
    model = getattr(importlib.import_module(module), name)
    assert isinstance(model, type) and issubclass(model, BaseModel), path
    return model


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def json_schema(path: str) -> str:
    schema = _model(path).model_json_schema(mode="serialization")
    return "```json\n" + json.dumps(schema, indent=2) + "\n```"


def _default(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            return "(section)"
        if len(repr(value)) >= 80:
            return "(list, see code)"
        return f"`{json.dumps(value, default=str)}`"
    return f"`{json.dumps(field.default, default=str)}`"


def config_keys() -> str:
    from citecal.config import Config

    rows = ["| section | key | default | meaning |", "|---|---|---|---|"]
    for section, sfield in Config.model_fields.items():
        model = sfield.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        for key, field in model.model_fields.items():
            rows.append(
                f"| `[{section}]` | `{key}` | {_cell(_default(field))} "
                f"| {_cell(field.description or '')} |"
            )
    return "\n".join(rows)


def annotation_columns() -> str:
    from citecal.annotations._row import AnnotationRow

    rows = ["| column | type | required | meaning |", "|---|---|---|---|"]
    for name, field in AnnotationRow.model_fields.items():
        ann = field.annotation
        kind = _cell(ann.__name__ if isinstance(ann, type) else ann).replace("typing.", "")
        rows.append(
            f"| `{name}` | `{kind}` | {'yes' if field.is_required() else 'no'} "
            f"| {_cell(field.description or '')} |"
        )
    return "\n".join(rows)


def _models_under(root: type[BaseModel]) -> list[type[BaseModel]]:
    """``root`` and every model its fields hold, in first-seen order."""
    found: list[type[BaseModel]] = []

    def visit(model: type[BaseModel]) -> None:
        if model in found:
            return
        found.append(model)
        for field in model.model_fields.values():
            stack: list[Any] = [field.annotation]
            while stack:
                kind = stack.pop()
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    visit(kind)
                stack.extend(typing.get_args(kind))

    visit(root)
    return found


def _type_name(kind: Any) -> str:
    name = kind.__name__ if isinstance(kind, type) else str(kind)
    return re.sub(r"\b(?:typing|citecal)\.(?:\w+\.)*(\w+)", r"\1", name)


def json_fields(path: str) -> str:
    """One table per model: every field, its type and its description."""
    out = []
    for model in _models_under(_model(path)):
        out += [f"**`{model.__name__}`**", "", "| field | type | meaning |", "|---|---|---|"]
        for name, field in model.model_fields.items():
            out.append(
                f"| `{name}` | `{_cell(_type_name(field.annotation))}` "
                f"| {_cell(field.description or '')} |"
            )
        out.append("")
    return "\n".join(out)


def render(kind: str, arg: str | None) -> str:
    if kind == "json-schema" and arg:
        return json_schema(arg)
    if kind == "json-fields" and arg:
        return json_fields(arg)
    if kind == "config-keys":
        return config_keys()
    if kind == "annotation-columns":
        return annotation_columns()
    raise ValueError(f"unknown generated block: {kind} {arg}")


def help_markdown(help_string: str) -> list[str]:
    """A click help text as Markdown: its ``\\b`` paragraphs (click's "do not rewrap") become
    code blocks, so the examples and tables of ``--help`` keep their lines on the page."""
    import inspect

    out: list[str] = []
    for para in inspect.cleandoc(help_string).split("\n\n"):
        lines = para.splitlines()
        if lines and lines[0].strip() == "\b":
            body = lines[1:]
            if body and body[0].rstrip().endswith(":") and not body[0].startswith(" "):
                out += [body[0], ""]  # "Examples:" stays a sentence above its block
                body = body[1:]
            if all(not ln.startswith(" ") and "  " not in ln.strip() for ln in body):
                out += [*body, ""]  # prose kept unwrapped in a terminal, e.g. exit codes
            else:
                out += ["```text", *body, "```", ""]
        else:
            out += [*lines, ""]
    return out


def on_config(config: Any, **_: Any) -> Any:
    # mkdocs-click prints a help text as one paragraph; keep click's \b blocks as blocks.
    import click
    from mkdocs_click import _docs

    def make_description(ctx: click.Context, remove_ascii_art: bool = False) -> Any:
        help_string = ctx.command.help or ctx.command.short_help
        if help_string:
            yield from help_markdown(help_string)

    _docs._make_description = make_description
    return config


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _MARK.sub(lambda m: render(m["kind"], m["arg"]), markdown)


def on_page_content(html: str, **_: Any) -> str:
    # click 8.3 marks "no default" with a sentinel that mkdocs-click prints as is.
    return html.replace("<code>Sentinel.UNSET</code>", "None")
