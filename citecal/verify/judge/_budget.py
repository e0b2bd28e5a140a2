"""What a run may spend on the judge (README "Security", "Spending cap").

Two rules, one ledger:

- **A cap** (``--max-cost USD`` or ``judge.max_cost_usd``): before each request
  its cost is estimated (the rendered prompt's tokens plus the answer
  allowance, priced like a dry run) and reserved; a request whose estimate
  does not fit in what is left is not sent, its claims abstain (``unverified``,
  ``abstain_reason: "budget reached"``). The real cost is counted as each
  answer arrives and replaces the reservation.
- **A confirmation threshold** (``judge.confirm_above_usd``, USD 5 by default)
  when no cap is set: a judge run whose estimate would take the spending past
  it asks first (a terminal) or refuses (anything else,
  :class:`SpendingNotApproved`, one line, exit 2), unless ``--yes`` was given.

:class:`Budget` is the ledger of one process; eval-batch gives its workers
:class:`~citecal.batch._cluster.ClusterBudget`, one ledger for the whole
cluster. Both are thread-safe: requests run concurrently.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from citecal.config import JudgeConfig
from citecal.errors import CitecalError, InputError
from citecal.verify.judge._pricing import cost_usd

BUDGET_REASON = "budget reached"
"""The ``abstain_reason`` of a claim left unjudged by the cap."""

SINGLE_ANSWER_TOKENS = 200
BATCH_ITEM_ANSWER_TOKENS = 120
"""Answer-token allowances (README "The LLM judge": ~200 single, ~600 per 5)."""


class SpendingNotApproved(CitecalError):
    """The estimate passes the confirmation threshold and nobody said yes (exit 2).

    Not an :class:`~citecal.errors.InputError`: it stops the whole run (an
    eval-batch too), it is not one bad report.
    """

    exit_code = 2


def count_tokens(text: str, model: str) -> int:
    """Token count with tiktoken when installed, else the usual characters / 4."""
    try:
        import tiktoken
    except ImportError:
        return math.ceil(len(text) / 4)
    try:
        enc = tiktoken.encoding_for_model(model)
    except KeyError:
        enc = tiktoken.get_encoding("o200k_base")
    return len(enc.encode(text))


def prompt_tokens(messages: Sequence[dict[str, str]], model: str) -> int:
    """Estimated prompt tokens of one request (content plus the chat format's overhead)."""
    return sum(count_tokens(m["content"], model) + 4 for m in messages) + 3


def answer_allowance(claims: int) -> int:
    """Answer tokens allowed for a request about ``claims`` claims."""
    return SINGLE_ANSWER_TOKENS if claims == 1 else BATCH_ITEM_ANSWER_TOKENS * claims + 20


def request_estimate(
    messages: Sequence[dict[str, str]], claims: int, model: str, config: JudgeConfig, n: int = 1
) -> float:
    """Dollars one request is expected to cost (0 for a model without a price).

    A request for ``n`` choices pays for its prompt once and for ``n`` answers
    (README "Judge confidence": K samples in one request).
    """
    tokens = prompt_tokens(messages, model)
    return cost_usd(model, tokens, answer_allowance(claims) * n, config.pricing) or 0.0


def answer_ceiling(claims: int, config: JudgeConfig) -> int:
    """The ``max_tokens`` of a judge request about ``claims`` claims (README "Security")."""
    if claims == 1:
        return config.max_tokens
    return config.max_tokens_per_claim * claims + 100


def request_ceiling(
    messages: Sequence[dict[str, str]], answer_tokens: int, model: str, config: JudgeConfig
) -> float:
    """Dollars one request can cost at most: its prompt plus ``answer_tokens`` (its
    ``max_tokens``); what a request reserves of the cap before it is sent."""
    tokens = prompt_tokens(messages, model)
    return cost_usd(model, tokens, answer_tokens, config.pricing) or 0.0


class Ledger(Protocol):
    """What the judge needs of a budget (local or cluster-wide)."""

    def reserve(self, usd: float) -> bool:
        """Hold ``usd`` for a request about to start; False when it does not fit."""
        ...

    def settle(self, reserved: float, spent: float) -> None:
        """Replace a reservation by what the answer cost (0 when no answer came)."""
        ...

    def spent(self) -> float:
        """Dollars counted so far (answers arrived)."""
        ...


class Budget:
    """The spending rules of one run (see the module doc); thread-safe.

    Attributes:
        cap: dollars the run may spend, or None (no cap).
        confirm_above: with no cap, the estimate that needs a yes first.
        approve: asked with (estimate, spent) when the threshold would be passed;
            returns True to go on. None refuses (a non-interactive run).
        approved: a yes was given (``--yes`` or an answer): no more questions.
    """

    def __init__(
        self,
        cap: float | None = None,
        *,
        confirm_above: float | None = None,
        approve: Callable[[float, float], bool] | None = None,
        approved: bool = False,
        ledger: Ledger | None = None,
        max_calls: int | None = None,
    ) -> None:
        if cap is not None and not (math.isfinite(cap) and cap >= 0):
            raise InputError(f"--max-cost {cap!r}: give a number of dollars, 0 or more")
        if max_calls is not None and max_calls < 0:
            raise InputError(f"--max-calls {max_calls}: give a number of calls, 0 or more")
        self.cap = cap
        self.max_calls = max_calls
        self._calls = 0
        self.confirm_above = confirm_above
        self.approve = approve
        self.approved = approved
        self._ledger = ledger
        self._lock = threading.Lock()
        self._spent = 0.0
        self._reserved = 0.0
        self.refused = 0
        """Requests not sent because their estimate did not fit."""

    @classmethod
    def from_config(
        cls,
        config: JudgeConfig,
        max_cost: float | None,
        *,
        yes: bool = False,
        approve: Callable[[float, float], bool] | None = None,
        max_calls: int | None = None,
    ) -> Budget:
        """The budget of a command: ``--max-cost`` over ``judge.max_cost_usd``."""
        cap = max_cost if max_cost is not None else config.max_cost_usd
        return cls(
            cap,
            confirm_above=config.confirm_above_usd,
            approve=approve,
            approved=yes,
            max_calls=max_calls,
        )

    # ------------------------------------------------------------------ ledger

    @property
    def remote(self) -> bool:
        """True when the ledger lives elsewhere (calls block: run them off the event loop)."""
        return self._ledger is not None

    def reserve(self, usd: float) -> bool:
        """Hold ``usd`` and one call for a request; False (nothing held) when a limit has no room.

        A request counts against ``max_calls`` once it is admitted, answered or not.
        """
        if not (math.isfinite(usd) and usd >= 0):
            raise ValueError(f"a request's cost must be a finite amount of dollars, not {usd!r}")
        if self.max_calls is not None:
            with self._lock:
                if self._calls + 1 > self.max_calls:
                    self.refused += 1
                    return False
                self._calls += 1
        if self.cap is None:
            return True
        if self._ledger is not None:
            ok = self._ledger.reserve(usd)
        else:
            with self._lock:
                ok = self._spent + self._reserved + usd <= self.cap + 1e-12
                if ok:
                    self._reserved += usd
        if not ok:
            with self._lock:
                self.refused += 1
                if self.max_calls is not None:
                    self._calls -= 1
        return ok

    def calls(self) -> int:
        """Requests admitted so far under ``max_calls`` (0 without that limit)."""
        with self._lock:
            return self._calls

    def reserved(self) -> float:
        """Dollars held for requests in flight (a local ledger; 0 for a cluster one)."""
        with self._lock:
            return self._reserved

    def settle(self, reserved: float, spent: float) -> None:
        """Count an answer's cost (``reserved`` is what :meth:`reserve` held for it)."""
        if self._ledger is not None:
            # Without a cap nothing was reserved there: only the spending is counted.
            self._ledger.settle(reserved if self.cap is not None else 0.0, spent)
            return
        if not (math.isfinite(spent) and spent >= 0):
            spent = 0.0  # a usage figure no price can make negative or NaN; counted as nothing
        with self._lock:
            if self.cap is not None:
                self._reserved = max(0.0, self._reserved - reserved)
            self._spent += spent

    def spent(self) -> float:
        """Dollars counted so far by this ledger."""
        if self._ledger is not None:
            return self._ledger.spent()
        with self._lock:
            return self._spent

    def left(self) -> float | None:
        """Dollars left under the cap, or None without a cap."""
        if self.cap is None:
            return None
        return max(0.0, self.cap - self.spent())

    # ------------------------------------------------------------------ confirmation

    def needs_estimate(self) -> bool:
        """True when :meth:`check_estimate` may ask or refuse (no cap, no yes yet)."""
        return self.cap is None and not self.approved and self.confirm_above is not None

    def check_estimate(self, estimate: float) -> None:
        """Ask first when, with no cap, ``estimate`` would take spending past the threshold.

        Raises:
            SpendingNotApproved: nobody can be asked (or the answer was no).
        """
        if not self.needs_estimate() or self.confirm_above is None:
            return
        spent = self.spent()
        if spent + estimate <= self.confirm_above:
            return
        if self.approve is not None and self.approve(estimate, spent):
            self.approved = True
            return
        raise SpendingNotApproved(
            f"the judge would cost ~${estimate:.2f}"
            + (f" (${spent:.2f} spent so far)" if spent else "")
            + f", above judge.confirm_above_usd (${self.confirm_above:.2f}): pass --max-cost USD"
            " to cap it, or --yes to spend it"
        )
