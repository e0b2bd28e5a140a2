"""Option sets shared by several commands (sqlite-utils' ``output_options`` habit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def output_options(formats: tuple[str, ...], default: str = "table") -> Callable[[F], F]:
    """The shared ``--format`` / ``--output`` pair every reporting command takes."""

    def decorator(fn: F) -> F:
        fn = click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Write to FILE (atomically) instead of standard output.",
        )(fn)
        fn = click.option(
            "-f",
            "--format",
            "fmt",
            type=click.Choice(formats),
            default=default,
            show_default=True,
            help="Output format.",
        )(fn)
        return fn

    return decorator
