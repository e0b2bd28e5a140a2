"""Progress bars for commands that wait on a server or a judge.

A transient rich bar on stderr, drawn only when stderr is a terminal: a
person watching sees push, pull and the judge move, while logs, pipes and
CI output stay free of control codes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def progress_bar() -> Progress:
    """A bar (use as a context manager); disabled when stderr is not a terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
        disable=not sys.stderr.isatty(),
    )


def counter(bar: Progress, description: str) -> Callable[[int], Callable[[int], None]]:
    """The ``progress`` callback of push and pull: called with the total, returns ``advance(n)``."""

    def start(total: int) -> Callable[[int], None]:
        # A dataset name is the user's, but no name may crash the bar (README "Security").
        task = bar.add_task(escape(description), total=total)
        return lambda n: bar.advance(task, n)

    return start
