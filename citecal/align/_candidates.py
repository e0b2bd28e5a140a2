"""Candidate judge prompts: the start prompt plus instruction edits and/or few-shot examples.

A candidate is a *recipe* (``edit-2``, ``fewshot-6``, ``edit-2+fewshot-6``)
made into a prompt per fold from that fold's training reports only; the same
recipe applied to every label makes the prompt ``citecal align`` writes. Texts
are deterministic, so their version ids (name + content hash) and the judge
cache keys repeat from one run to the next (README "Aligning the judge").
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citecal.verify.judge import PromptTemplate

if TYPE_CHECKING:
    from citecal.align._critic import Edit
    from citecal.align._score import PairedScore

RULES_HEADING = "Additional rules from human review:"


@dataclass(frozen=True, slots=True)
class Recipe:
    """How a candidate is made: which critic edits (1-based ranks) and how many examples."""

    edits: tuple[int, ...] = ()
    examples: int = 0

    @property
    def name(self) -> str:
        parts = [f"edit-{i}" for i in self.edits]
        if self.examples:
            parts.append(f"fewshot-{self.examples}")
        return "+".join(parts) or "start"

    @property
    def kind(self) -> str:
        if (self.edits and self.examples) or len(self.edits) > 1:
            return "combination"
        return "edit" if self.edits else "fewshot"


def system_with(template: PromptTemplate, instructions: list[str], examples_text: str) -> str:
    """The start prompt's system section with the edits and examples appended."""
    system = template.system.rstrip()
    if instructions:
        system += "\n\n" + RULES_HEADING + "\n" + "\n".join(f"- {i}" for i in instructions)
    if examples_text.strip():
        system += "\n\n" + examples_text.strip()
    return system


def write_candidate(directory: Path, template: PromptTemplate, recipe: Recipe, text: str) -> Path:
    """Write ``text`` as ``<start>+<recipe>-<hash>.md`` in ``directory``; same text, same file."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    path = directory / f"{template.name}+{recipe.name}-{digest}.md"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path


def most_common_edit(edits: list[tuple[Edit, ...]], rank: int) -> str | None:
    """The text most folds' critics proposed at ``rank`` (1-based); ties: the first fold's."""
    texts = [e[rank - 1].instruction for e in edits if len(e) >= rank]
    return Counter(texts).most_common(1)[0][0] if texts else None


def common_instructions(recipe: Recipe, edits: list[tuple[Edit, ...]]) -> list[str]:
    """The instructions a recipe adds, as written in the final prompt."""
    return [t for i in recipe.edits if (t := most_common_edit(edits, i)) is not None]


def combinations(scored: list[tuple[Recipe, PairedScore]], examples: int) -> list[Recipe]:
    """Combinations of the singles that beat the start: best two edits, best edit + examples."""
    good = [
        (ps.b, r) for r, ps in scored if ps.diff is not None and ps.diff > 0 and ps.b is not None
    ]
    good.sort(key=lambda x: -x[0])
    good_edits = [r.edits[0] for _, r in good if r.edits]
    has_shots = any(r.examples for _, r in good)
    out: list[Recipe] = []
    if len(good_edits) >= 2:
        out.append(Recipe(edits=tuple(good_edits[:2])))
    if good_edits and has_shots:
        out.append(Recipe(edits=(good_edits[0],), examples=examples))
    if len(good_edits) >= 2 and has_shots:
        out.append(Recipe(edits=tuple(good_edits[:2]), examples=examples))
    return out
