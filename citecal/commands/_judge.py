"""The judge set-up every judging command shares: one home, so commands never import each other.

``eval``, ``correct`` (and ``eval --correct``) and ``bench groundtruth`` build their judge the
same way and degrade the same way when there is none (docs: "The LLM judge", faults).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citecal.config import Config
    from citecal.verify.judge import Budget, Judge, PromptTemplate


def build_judge_or_reason(
    config: Config,
    prompt: str | None,
    model: str | None,
    no_cache: bool,
    budget: Budget | None = None,
    exclude_reports: Sequence[str] = (),
) -> tuple[Judge | None, str | None]:
    """The judge, or why there is none (missing key, unreachable endpoint: degrade).

    With ``judge.confidence = "simulated"`` its few-shot variants are mined from
    ``judge.simulated_from`` first, leaving out ``exclude_reports`` (README "Judge
    confidence"); a missing or bad table is an input error, not a degradation.
    """
    from citecal.verify.judge import JudgeUnavailable, build_judge

    variants = simulated_variants(config, prompt, exclude_reports)
    try:
        judge = build_judge(
            config.judge,
            prompt=prompt,
            model=model,
            use_cache=not no_cache,
            budget=budget,
            variants=variants,
        )
        warn_on_prompt(judge)
        return judge, None
    except JudgeUnavailable as exc:
        return None, str(exc)


def simulated_variants(
    config: Config, prompt: str | None, exclude_reports: Sequence[str] = ()
) -> tuple[PromptTemplate, ...]:
    """The simulated annotators' prompts when the judge needs them, else none."""
    if config.judge.confidence != "simulated":
        return ()
    from citecal.calibrate import simulated_prompts

    return simulated_prompts(config.judge, prompt, exclude_reports=exclude_reports)


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
