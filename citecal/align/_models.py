"""What ``citecal align`` found: scored candidates, the decision and the provenance.

pydantic records (STYLE "Data"): the result prints as JSON with
``--format json`` and its provenance becomes the written prompt's front matter.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from citecal.calibrate import Comparison

SCHEMA_VERSION = 1


class Interval(BaseModel):
    """A figure and its 95% interval (paired cluster bootstrap by report)."""

    value: float | None
    """The point estimate; null when undefined."""
    ci: list[float] | None
    """[low, high], or null when it cannot be computed."""


class CandidateResult(BaseModel):
    """One candidate recipe, scored out of sample (pooled over the folds)."""

    name: str
    """Recipe: ``edit-N`` (the critic's N-th edit), ``fewshot-K``, or a ``+`` combination."""
    kind: str
    """``edit``, ``fewshot`` or ``combination``."""
    instructions: list[str]
    """The instruction edits it adds (the text most folds' critics proposed)."""
    examples: int
    """Few-shot examples it adds (0 for none)."""
    score: Interval
    """The metric, out of sample."""
    gain: Interval
    """The metric minus the start's on the same pairs, with its paired interval."""
    n_pairs: int
    """(record, annotator) pairs both prompts decided."""


class AlignResult(BaseModel):
    """The search's outcome (README "Aligning the judge")."""

    schema_version: int = SCHEMA_VERSION
    input: str
    """The annotation table."""
    parent: str
    """The start prompt's version id (name@hash)."""
    labels_sha256: str
    """SHA-256 of the (record, annotator, human score) rows."""
    n_records: int
    n_annotations: int
    n_reports: int
    folds: int
    """Folds by report."""
    fold_reports: list[list[str]]
    """The reports scored in each fold."""
    metric: str
    model: str
    critic: str
    """The prompt critic's version id (name@hash)."""
    seed: int
    before: Interval
    """The start prompt's metric."""
    candidates: list[CandidateResult]
    winner: str | None = None
    """The best candidate by the metric (kept or not)."""
    after: Interval | None = None
    """The winner's metric, out of sample."""
    gain: Interval | None = None
    mcnemar_p: float | None = None
    """McNemar's exact test, winner vs start, on records."""
    comparison: Comparison | None = None
    """The paired comparison of ``calibrate --compare``, winner vs start (pooled folds)."""
    kept: bool
    """True when the winner is shown better and its prompt is written."""
    reason: str
    calls: int
    """API calls made (judge and critic; cache hits excluded)."""
    judge_calls: int
    critic_calls: int
    cache_hits: int
    tokens: int
    cost_usd: float
    stopped: str | None
    """Why the budget stopped the search, or null."""
    warnings: list[str] = Field(default_factory=list)
    prompt_text: str | None = None
    """The prompt to write (without front matter), when kept."""

    def front_matter(self) -> str:
        """The provenance block written above the prompt (YAML; values as JSON scalars)."""

        def j(value: object) -> str:
            return json.dumps(value, ensure_ascii=False)

        lines = [
            "---",
            "citecal_align: 1",
            f"parent: {j(self.parent)}",
            f"labels_sha256: {j(self.labels_sha256)}",
            f"labels: {{records: {self.n_records}, annotations: {self.n_annotations}, "
            f"reports: {self.n_reports}}}",
            f"folds: {{k: {self.folds}, by: report, seed: {self.seed}}}",
            f"metric: {j(self.metric)}",
            f"before: {j(self.before.model_dump())}",
            f"after: {j(self.after.model_dump() if self.after else None)}",
            f"gain: {j(self.gain.model_dump() if self.gain else None)}",
            f"mcnemar_p: {j(self.mcnemar_p)}",
            f"winner: {j(self.winner)}",
            f"model: {j(self.model)}",
            f"critic: {j(self.critic)}",
            f"candidates_tried: {len(self.candidates)}",
            "candidates:",
            *(
                f"  - {{name: {j(c.name)}, score: {j(c.score.value)}, gain: {j(c.gain.value)}}}"
                for c in self.candidates
            ),
            f"calls: {self.calls}",
            f"judge_calls: {self.judge_calls}",
            f"critic_calls: {self.critic_calls}",
            f"cache_hits: {self.cache_hits}",
            f"tokens: {self.tokens}",
            f"cost_usd: {round(self.cost_usd, 6)}",
            f"stopped: {j(self.stopped)}",
            "---",
        ]
        return "\n".join(lines) + "\n"

    def prompt_file(self) -> str:
        """Front matter plus prompt: the file ``citecal align -o`` writes."""
        if self.prompt_text is None:
            raise ValueError("no candidate was kept: there is no prompt to write")
        return self.front_matter() + "\n" + self.prompt_text
