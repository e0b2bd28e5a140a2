"""Option sets shared by several commands (sqlite-utils' ``output_options`` habit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.progress import Progress

    from citecal.config import JudgeConfig
    from citecal.verify.judge import Budget

F = TypeVar("F", bound=Callable[..., Any])


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` that also refuses NaN (``nan`` passes click's own comparisons).

    ``--delta nan`` reached the threshold search and ended in a traceback, and
    ``--target-width nan`` printed "Width nan" (README "Security").
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        rv = super().convert(value, param, ctx)
        if isinstance(rv, float) and math.isnan(rv):
            self.fail(f"{value!r} is not a number", param, ctx)
        return rv


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


def parse_thresholds(text: str | None, allowed: tuple[str, ...]) -> dict[str, float]:
    """``--fail-under NAME=VALUE[,NAME=VALUE…]`` as a dict; one readable error otherwise.

    Raises:
        InputError: a part without ``=``, an unknown name or a value that is not a
            finite number (NaN, inf).
    """
    import math

    from citecal.errors import InputError

    if text is None:
        return {}
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep:
            raise InputError(f"--fail-under {part!r}: write NAME=VALUE, e.g. {allowed[0]}=0.6")
        if name not in allowed:
            raise InputError(f"--fail-under {name!r}: use one of {', '.join(allowed)}")
        try:
            out[name] = float(value)
        except ValueError:
            raise InputError(f"--fail-under {name}: {value.strip()!r} is not a number") from None
        if not math.isfinite(out[name]):  # nothing is below NaN: the gate would always pass
            raise InputError(
                f"--fail-under {name}: {value.strip()!r} is not a finite number "
                "(a gate on NaN or infinity never decides)"
            )
    if not out:
        raise InputError(f"--fail-under is empty: write NAME=VALUE, e.g. {allowed[0]}=0.6")
    return out


def argilla_options(*, spec: bool = True) -> Callable[[F], F]:
    """``--workspace``, ``--config`` (TOML settings) and ``--spec`` (dataset YAML) for the
    commands that talk to Argilla.

    ``--config`` means the same TOML settings file in every command (``eval``
    too); the dataset definition is ``--spec`` (README "Human annotation with
    Argilla"), a YAML file or the name of a bundled one.
    """

    def decorator(fn: F) -> F:
        if spec:
            fn = click.option(
                "--spec",
                "spec",
                default=None,
                metavar="YAML|NAME",
                help="Dataset definition: a YAML file or a bundled name (citation_support, "
                "citation_support_binary, excerpt_support, sentence_support, answer_citation). "
                "Default: citation_support.",
            )(fn)
        fn = click.option(
            "--config",
            "config_file",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            callback=_toml_only,
            help="TOML settings file ([argilla] section); see README 'Configuration'.",
        )(fn)
        fn = click.option(
            "--workspace",
            default=None,
            help="Argilla workspace (default: [argilla] workspace, 'citecal').",
        )(fn)
        return fn

    return decorator


def _toml_only(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """``--config x.yaml`` was the dataset YAML before ``--spec``: say so, not a TOML error."""
    from citecal.errors import InputError

    if value is not None and value.suffix.lower() in (".yaml", ".yml"):
        raise InputError(
            f"--config {value}: a dataset definition is passed as --spec {value} "
            "(--config takes the TOML settings file)"
        )
    return value


def finite_dollars(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Click callback: an amount of dollars is finite and 0 or more (NaN is no cap)."""
    import math

    if value is not None and not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"{value!r} is not an amount of dollars (0 or more)")
    return value


def spending_options(fn: F) -> F:
    """``--max-cost USD`` and ``--yes``: every command that calls the judge (README "Security")."""
    fn = click.option(
        "-y",
        "--yes",
        "yes",
        is_flag=True,
        help="Spend without asking when no --max-cost is set and the estimate is above "
        "judge.confirm_above_usd (USD 5).",
    )(fn)
    fn = click.option(
        "--max-cost",
        "max_cost",
        type=float,
        default=None,
        metavar="USD",
        callback=finite_dollars,
        help="Stop judging at this cost; claims left are unverified ('budget reached'). "
        "Default: judge.max_cost_usd.",
    )(fn)
    return fn


def confidence_options(fn: F) -> F:
    """``--confidence``, ``--samples K`` and ``--simulated-from``: every command that judges.

    How sure the judge is (README "Judge confidence"); they override ``judge.confidence``,
    ``judge.samples`` and ``judge.simulated_from``.
    """
    fn = click.option(
        "--simulated-from",
        "simulated_from",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        metavar="ANNOTATIONS",
        help="With --confidence simulated: the annotation table the simulated annotators' "
        "labelled examples come from (judge.simulated_from).",
    )(fn)
    fn = click.option(
        "--samples",
        "samples",
        type=click.IntRange(2, 20),
        default=None,
        metavar="K",
        help="K: samples (consistency) or few-shot variants (simulated); default judge.samples "
        "(5). K answers cost about K times the tokens.",
    )(fn)
    fn = click.option(
        "--confidence",
        "confidence",
        type=click.Choice(["verbal", "logprob", "consistency", "simulated"]),
        default=None,
        help="How the judge's confidence is measured: its words (verbal, the default), its "
        "verdict token's probability (logprob), K samples' agreement (consistency) or K "
        "simulated annotators' (simulated).",
    )(fn)
    return fn


def confidence_overrides(
    confidence: str | None, samples: int | None, simulated_from: Path | None
) -> dict[str, Any]:
    """The ``[judge]`` settings :func:`confidence_options` give."""
    out: dict[str, Any] = {}
    if confidence is not None:
        out["confidence"] = confidence
    if samples is not None:
        out["samples"] = samples
    if simulated_from is not None:
        out["simulated_from"] = str(simulated_from)
    return out


def can_ask() -> bool:
    """True when a person at a terminal can answer a question (stdin and stderr are ttys)."""
    import sys

    return sys.stdin.isatty() and sys.stderr.isatty()


def make_budget(
    judge_config: JudgeConfig,
    max_cost: float | None,
    yes: bool,
    *,
    ask: bool | None = None,
    max_calls: int | None = None,
) -> Budget:
    """The run's spending rules: the cap, or a question above the threshold (or a refusal)."""
    from citecal.verify.judge import Budget

    def approve(estimate: float, spent: float) -> bool:
        so_far = f" (${spent:.2f} spent so far)" if spent else ""
        return click.confirm(
            f"The judge would cost ~${estimate:.2f}{so_far}, above judge.confirm_above_usd "
            f"(${judge_config.confirm_above_usd:.2f}). Spend it? (--max-cost USD caps it, "
            "--yes skips this question)",
            default=False,
            err=True,
        )

    asking = can_ask() if ask is None else ask
    return Budget.from_config(
        judge_config, max_cost, yes=yes, approve=approve if asking else None, max_calls=max_calls
    )


def budget_line(budget: Budget) -> str | None:
    """``judge budget: $0.0123 spent of $0.5000, $0.4877 left`` when a cap is set, else None."""
    if budget.cap is None:
        return None
    refused = f"; {budget.refused} request(s) not sent (budget reached)" if budget.refused else ""
    return (
        f"judge budget: ${budget.spent():.4f} spent of ${budget.cap:.4f},"
        f" ${budget.left() or 0.0:.4f} left{refused}"
    )


def ask_with_bar_paused(budget: Budget, bar: Progress) -> None:
    """The spending question (if any) is asked with the live progress bar stopped."""
    ask = budget.approve
    if ask is None:
        return

    def paused(estimate: float, spent: float) -> bool:
        bar.stop()
        try:
            return ask(estimate, spent)
        finally:
            bar.start()

    budget.approve = paused


def cascade_options(fn: F) -> F:
    """``--cascade FILE|default`` and ``--no-cascade``: the cascade is on by default
    (docs/explanation/cascade.md): the shipped one unless a file or ``--no-cascade`` says
    otherwise."""
    fn = click.option(
        "--no-cascade",
        is_flag=True,
        help="Decide as before the cascade: a rule's verdict stands, the judge decides the "
        "rest; no p_supports, no review list.",
    )(fn)
    fn = click.option(
        "--cascade",
        "cascade_file",
        default=None,
        metavar="FILE|default",
        help="Cascade file (docs: the cascade): each claim decided by the first tier "
        "confident enough, else sent to a person  [default: default, the shipped one].",
    )(fn)
    return fn


def cascade_choice(cascade_file: str | None, no_cascade: bool) -> str | None:
    """The cascade to load ("default", a path) or None for ``--no-cascade``.

    Raises:
        InputError: both ``--cascade FILE`` and ``--no-cascade``.
    """
    from citecal.errors import InputError

    if no_cascade:
        if cascade_file is not None:
            raise InputError("--cascade and --no-cascade exclude each other")
        return None
    return cascade_file or "default"
