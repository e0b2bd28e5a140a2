"""A test judge that behaves like a real one: always says ``high``, errs where claims are hard.

README "Judge confidence". The heuristic judge of :mod:`citecal.testing.openai_server`
prints whatever its word-overlap score says, so its confidence is trivially
informative and nothing can be learnt from it about real models. Real models
say ``high`` almost always, are wrong on some claims anyway, and are wrong mostly
where a claim is hard. This judge plays that:

- Every claim has a hidden **difficulty** ``d`` in [0, 1] (a seeded hash of the claim
  and its code, or given) and a **true verdict** (the heuristic's, or given: people's
  labels). The model's log-odds of the right verdict are
  ``z = A·(1 − d) − B + σ·ε`` with ``ε`` a seeded standard normal per claim (mixed from
  a part shared by all models and a part of its own), ``B = 1``, ``σ = 0.5``, and ``A``
  set so that the model errs on ``error_rate`` of claims at temperature 0: hard
  claims are where the errors are, and where the model is unsure.
- An answer at temperature ``T`` says the right verdict with probability
  ``sigmoid(z / T)`` (``T`` at least :data:`FLOOR_TEMPERATURE`, so near-ties flip
  between identical runs at temperature 0, as real APIs do). It always says
  ``"confidence": "high"`` and a score of 1 or 0: its words carry no information.
- Its ``logprobs`` are OpenAI's exact shape (``choices[i].logprobs.content[j]`` with
  ``token``, ``logprob``, ``bytes``, ``top_logprobs``); the verdict token's
  probability is ``sigmoid(z)`` for the right verdict, the other verdict its
  alternative. ``logprobs=False`` plays a server that returns none.
- It honours ``n`` (``honour_n=False`` plays one that returns one choice).
- Labelled examples in its system prompt (a few-shot variant, a *simulated annotator*:
  ``Example 1 (...)``) shift its log-odds by :data:`VARIANT_SPREAD` × a seeded normal
  per (prompt, claim): variants agree where the model is sure and split where it is
  not, as in Trust or Escalate's §3.3.

Two such judges of different accuracy and price play the cheap and the strong model:
:data:`DEFAULT_ERROR_RATES` (``gpt-4o-mini`` errs on 20% of claims, ``gpt-4o`` on 10%;
priced as README "The LLM judge" says). ``python -m citecal.testing --mode realistic``.

Usage is characters / 4, the prompt counted once per request and every choice's
answer counted (as OpenAI bills ``n``).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citecal.testing.openai_server import ChatRequest, PromptClaim, Reply, heuristic_verdict

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_ERROR_RATES: dict[str, float] = {"gpt-4o-mini": 0.20, "gpt-4o": 0.10}
"""Share of claims each model gets wrong at temperature 0 (cheap and strong): both above
the 10% a team asking for 90% agreement tolerates, as Trust or Escalate found of real
judges (GPT-4 alone never reached 80% human agreement on their Chatbot Arena subset)."""

DEFAULT_ERROR_RATE = 0.20
"""Error rate of a model not in the table."""

FLOOR_TEMPERATURE = 0.1
"""Lowest temperature sampled at: a near-tie can come out either way at temperature 0."""

BIAS = 1.0
SPREAD = 0.5
SHARED = 0.7
"""``B``, ``σ`` and the weight of the noise all models share (module doc)."""

VARIANT_SPREAD = 1.0
"""How far a few-shot variant's examples move the model's log-odds (module doc)."""

_EXAMPLES = re.compile(r"^Example 1 \(", re.MULTILINE)

Oracle = Callable[[str, str], "tuple[bool, float | None] | None"]
"""(claim, cited code) → (true verdict: supports?, difficulty or None), or None: heuristic."""


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def scale_for(error_rate: float, bias: float = BIAS, spread: float = SPREAD) -> float:
    """``A`` such that ``P(A·(1 − d) − B + σ·ε < 0) = error_rate`` for d ~ U(0, 1).

    Raises:
        ValueError: ``error_rate`` outside (0, 0.5).
    """
    if not 0.0 < error_rate < 0.5:
        raise ValueError(f"error rate {error_rate!r} must be in (0, 0.5)")
    grid = [(i + 0.5) / 400 for i in range(400)]

    def err(a: float) -> float:
        return sum(_phi((bias - a * u) / spread) for u in grid) / len(grid)

    lo, hi = 0.0, 1000.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if err(mid) > error_rate:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _uniform(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def _normal(*parts: object) -> float:
    u1, u2 = _uniform(*parts, "u1"), _uniform(*parts, "u2")
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


_TOKEN_RE = re.compile(r"\s*[A-Za-z_]+|\s*\d+(?:\.\d+)?|\s*[^\sA-Za-z_\d]|\s+")
_JUNK = (" the", " a", "\n", " is", " of", " to", " and", " that", " it", " in")


def tokenize(text: str) -> list[str]:
    """Pieces that spell ``text`` exactly (words with their leading space, digits, marks)."""
    pieces = _TOKEN_RE.findall(text)
    assert "".join(pieces) == text
    return pieces


def _logprob_entry(token: str, logprob: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    def one(t: str, lp: float) -> dict[str, Any]:
        return {"token": t, "logprob": lp, "bytes": list(t.encode("utf-8"))}

    return {**one(token, logprob), "top_logprobs": [one(t, lp) for t, lp in top]}


@dataclass(frozen=True, slots=True)
class Belief:
    """What the model holds about one claim: the true verdict and its log-odds of being right."""

    truth: bool
    difficulty: float
    z: float

    @property
    def right(self) -> float:
        """Probability the model puts on the right verdict (temperature 1)."""
        return _sigmoid(self.z)


class RealisticJudge:
    """A ``handler`` for :class:`~citecal.testing.FakeOpenAIServer` (module doc).

    Args:
        seed: seeds difficulties, noise and samples.
        error_rates: model → share of claims it gets wrong at temperature 0.
        logprobs: return token logprobs when asked (False: a server that never does).
        honour_n: return ``n`` choices when asked (False: always one).
        oracle: the true verdict and difficulty of a claim (default: the heuristic's
            verdict, a seeded difficulty).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        error_rates: Mapping[str, float] | None = None,
        default_error_rate: float = DEFAULT_ERROR_RATE,
        logprobs: bool = True,
        honour_n: bool = True,
        oracle: Oracle | None = None,
    ) -> None:
        self.seed = seed
        self.error_rates = dict(DEFAULT_ERROR_RATES if error_rates is None else error_rates)
        self.default_error_rate = default_error_rate
        self.logprobs = logprobs
        self.honour_n = honour_n
        self.oracle = oracle
        self._scales: dict[str, float] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def scale(self, model: str) -> float:
        with self._lock:
            if model not in self._scales:
                rate = self.error_rates.get(model, self.default_error_rate)
                self._scales[model] = scale_for(rate)
            return self._scales[model]

    def belief(self, model: str, claim: str, code: str) -> Belief:
        """The model's hidden state about a claim (module doc)."""
        known = self.oracle(claim, code) if self.oracle is not None else None
        truth = bool(heuristic_verdict(claim, code)["supports"]) if known is None else known[0]
        given = None if known is None else known[1]
        d = given if given is not None else _uniform(self.seed, "difficulty", claim, code)
        eps = SHARED * _normal(self.seed, "eps", claim, code) + math.sqrt(1 - SHARED**2) * _normal(
            self.seed, "eps", model, claim, code
        )
        z = self.scale(model) * (1.0 - d) - BIAS + SPREAD * eps
        return Belief(truth, d, z)

    def _draw(self, key: str) -> int:
        with self._lock:
            n = self._counts.get(key, 0)
            self._counts[key] = n + 1
            return n

    def _answer(
        self, belief: Belief, rng: random.Random, temperature: float
    ) -> tuple[dict[str, Any], float]:
        """(answer object, probability of the verdict it gives) for one claim of one choice."""
        t = max(temperature, FLOOR_TEMPERATURE)
        right = rng.random() < _sigmoid(belief.z / t)
        says = belief.truth if right else not belief.truth
        p = belief.right if right else 1.0 - belief.right
        answer = {
            "reasoning": "The cited lines "
            + ("show" if says else "do not show")
            + " what the claim states.",
            "supports": says,
            "confidence": "high",
            "score": 1.0 if says else 0.0,
        }
        return answer, p

    def _logprobs(self, content: str, verdicts: list[float], top: int) -> list[dict[str, Any]]:
        """OpenAI's ``logprobs.content`` for ``content``; ``verdicts`` the verdict tokens' p."""
        out: list[dict[str, Any]] = []
        pending = list(verdicts)
        tokens = tokenize(content)
        after_key = False
        for token in tokens:
            word = token.strip()
            if after_key and word in ("true", "false") and pending:
                p = min(max(pending.pop(0), 1e-12), 1.0 - 1e-12)
                other = token.replace(word, "false" if word == "true" else "true")
                alts = [(token, math.log(p)), (other, math.log(1.0 - p))]
                alts.sort(key=lambda a: -a[1])
                alts += [(j, -12.0 - i) for i, j in enumerate(_JUNK)]
                out.append(_logprob_entry(token, math.log(p), alts[:top]))
                after_key = False
                continue
            if word == "supports":
                after_key = True
            lp = -0.0001 * (1 + len(token) % 7)
            alts = [(token, lp)] + [(j, -9.0 - i) for i, j in enumerate(_JUNK) if j != token]
            out.append(_logprob_entry(token, lp, alts[:top]))
        return out

    def choice(
        self, request: ChatRequest, rng: random.Random, claims: list[PromptClaim]
    ) -> tuple[str, list[float]]:
        """One choice's content and its verdict tokens' probabilities, in order."""
        temperature = float(request.body.get("temperature") or 0.0)
        rf = request.response_format or {}
        schema = str(rf.get("json_schema", {}).get("name", "")) if rf else ""
        batch = request.is_batch or "batch" in schema
        variant = (
            hashlib.sha256(request.system.encode()).hexdigest()
            if _EXAMPLES.search(request.system)
            else None
        )
        answers = []
        probs = []
        for c in claims or [PromptClaim(1, "", "")]:
            belief = self.belief(request.model, c.claim, c.code)
            if variant is not None:  # a simulated annotator: its examples move the boundary
                shift = VARIANT_SPREAD * _normal(self.seed, "variant", variant, c.claim, c.code)
                belief = Belief(belief.truth, belief.difficulty, belief.z + shift)
            a, p = self._answer(belief, rng, temperature)
            answers.append({"claim_id": c.n, **a} if batch else a)
            probs.append(p)
        if not batch:
            return json.dumps(answers[0]), probs[:1]
        return json.dumps({"results": answers} if rf else answers), probs

    def __call__(self, request: ChatRequest) -> Reply:
        claims = request.claims
        n = int(request.body.get("n") or 1) if self.honour_n else 1
        key = hashlib.sha256(
            json.dumps([request.model, request.system, request.user]).encode()
        ).hexdigest()
        draw = self._draw(key)
        want = bool(request.body.get("logprobs")) and self.logprobs
        top = int(request.body.get("top_logprobs") or 0)
        choices: list[tuple[str, list[dict[str, Any]] | None]] = []
        for j in range(max(1, n)):
            rng = random.Random(f"{self.seed}\x1f{key}\x1f{draw}\x1f{j}")
            content, probs = self.choice(request, rng, claims)
            choices.append((content, self._logprobs(content, probs, top) if want else None))
        return Reply(content=choices[0][0], choices=choices)

    @classmethod
    def from_table(cls, table: pd.DataFrame, **kwargs: Any) -> RealisticJudge:
        """A judge whose truth is people's consensus in an annotation table.

        Claims are matched by their text and their raw ``cited_code`` (words only). A
        claim people split on (some annotators ≥ 2, some below) is harder: its
        difficulty is ``0.5 + 0.5·u`` instead of ``u`` (``u`` the seeded hash), so
        the judge is unsure, and unstable, where people disagree. Claims not in the
        table get the heuristic's verdict.
        """
        import numpy as np

        seed = int(kwargs.get("seed", 0))
        known: dict[tuple[str, str], tuple[bool, float | None]] = {}
        code = table["cited_code"].fillna("") if "cited_code" in table else ""
        keyed = table.assign(_code=code)
        for (claim, cited), group in keyed.groupby(["claim", "_code"]):
            scores = group["human_score"].astype(float).to_numpy()
            supports = bool(np.median(scores) >= 2)
            split = bool((scores >= 2).any() and (scores < 2).any())
            u = _uniform(seed, "difficulty", claim, cited)
            known[(_norm(str(claim)), _norm(str(cited)))] = (
                supports,
                0.5 + 0.5 * u if split else u,
            )

        def oracle(claim: str, code: str) -> tuple[bool, float | None] | None:
            return known.get((_norm(claim), _norm(code)))

        return cls(oracle=oracle, **kwargs)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9_]+", text.lower()))


@dataclass(frozen=True, slots=True)
class SyntheticClaim:
    """A claim with a known true verdict and difficulty, for benchmarks and tests."""

    record_id: str
    report_id: str
    claim: str
    code: str
    truth: bool
    difficulty: float


def synthetic_claims(
    n: int, *, seed: int = 0, prevalence: float = 0.7, reports: int = 20, prefix: str = "s"
) -> list[SyntheticClaim]:
    """``n`` distinct claims about distinct functions, ``prevalence`` of them supported.

    Seeded; each has a difficulty uniform in [0, 1] the realistic judge is told of
    through :func:`synthetic_oracle`, and belongs to one of ``reports`` reports.
    """
    rng = random.Random(f"synthetic\x1f{seed}\x1f{prefix}")
    out = []
    for i in range(n):
        name = f"{prefix}_handler_{i}"
        out.append(
            SyntheticClaim(
                record_id=f"{prefix}{i:05d}",
                report_id=f"{prefix}-report-{i % reports:02d}",
                claim=f"The function `{name}` validates case {i} before saving it",
                code=f"def {name}(value):\n    check(value, {i})\n    return save(value)",
                truth=rng.random() < prevalence,
                difficulty=rng.random(),
            )
        )
    return out


def synthetic_oracle(claims: list[SyntheticClaim]) -> Oracle:
    """The true verdict and difficulty of each synthetic claim, for :class:`RealisticJudge`."""
    known = {(_norm(c.claim), _norm(c.code)): (c.truth, c.difficulty) for c in claims}

    def oracle(claim: str, code: str) -> tuple[bool, float | None] | None:
        return known.get((_norm(claim), _norm(code)))

    return oracle


def synthetic_table(claims: list[SyntheticClaim], annotator: str = "reviewer") -> pd.DataFrame:
    """An annotation table of the claims, people's label the truth (score 3 or 0), no judge yet."""
    import pandas as pd

    rows = [
        {
            "record_id": c.record_id,
            "report_id": c.report_id,
            "citation": f"[src/{c.record_id}.py:1-3]",
            "claim": c.claim,
            "cited_code": c.code,
            "file_path": f"src/{c.record_id}.py",
            "start_line": 1,
            "end_line": 3,
            "language": "python",
            "annotator": annotator,
            "human_score": 3 if c.truth else 0,
            "llm_verdict": None,
            "llm_score": None,
        }
        for c in claims
    ]
    return pd.DataFrame(rows)


__all__ = [
    "DEFAULT_ERROR_RATE",
    "DEFAULT_ERROR_RATES",
    "FLOOR_TEMPERATURE",
    "VARIANT_SPREAD",
    "Belief",
    "RealisticJudge",
    "SyntheticClaim",
    "scale_for",
    "synthetic_claims",
    "synthetic_oracle",
    "synthetic_table",
    "tokenize",
]
