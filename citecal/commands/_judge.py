"""The judge set-up every judging command shares: one home, so commands never import each other.

``eval``, ``correct`` (and ``eval --correct``) and ``bench groundtruth`` build their judge the
same way and degrade the same way when there is none (docs: "The LLM judge", faults).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citecal.config import Config
    from citecal.verify.judge import Budget, Judge


def build_judge_or_reason(
    config: Config,
    prompt: str | None,
    model: str | None,
    no_cache: bool,
    budget: Budget | None = None,
) -> tuple[Judge | None, str | None]:
    """The judge, or why there is none (missing key, unreachable endpoint: degrade)."""
    from citecal.verify.judge import JudgeUnavailable, build_judge

    try:
        judge = build_judge(
            config.judge, prompt=prompt, model=model, use_cache=not no_cache, budget=budget
        )
        warn_on_prompt(judge)
        return judge, None
    except JudgeUnavailable as exc:
        return None, str(exc)


def warn_on_prompt(judge: Judge) -> None:
    """Say on stderr when the judge's prompt file holds text that steers the judge.

    A prompt file may come from ``citecal align``, whose critic is an LLM that read
    untrusted claims and code (README "Security"); the run goes on, the user is told.
    """
    import click

    from citecal.verify.judge import prompt_warning

    warning = prompt_warning(judge.prompt)
    if warning is not None:
        click.echo(f"warning: {warning}", err=True)
