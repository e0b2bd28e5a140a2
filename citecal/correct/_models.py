"""What ``citecal correct`` writes: the corrections file (schema_version 1) and its result.

The corrections file has exactly the shape README "`citecal correct`" gives
(issue 10): ``{"schema_version", "report", "iterations", "corrections"}``.
``citecal push --corrections`` reads it back, so its fields are public API.
:class:`CorrectionOutput` (``--format json``) adds what is left to fix and the
before/after figures.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citecal.models import Citation, Summary

Strategy = Literal["repair", "relocate", "expand", "shrink", "rewrite", "remove"]
"""How a failed citation was repaired (README "`citecal correct`")."""

STRATEGIES: tuple[Strategy, ...] = ("repair", "relocate", "expand", "shrink", "rewrite", "remove")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Location(_Model):
    """A cited place: file and inclusive 1-indexed lines."""

    file_path: str
    start_line: int
    end_line: int

    @classmethod
    def of(cls, citation: Citation) -> Location:
        return cls(
            file_path=citation.file_path,
            start_line=citation.start_line,
            end_line=citation.end_line,
        )

    def citation(self) -> Citation:
        return Citation(self.file_path, self.start_line, self.end_line)

    def __str__(self) -> str:
        return str(self.citation())


class Correction(_Model):
    """One change the loop made to one citation."""

    position: int = Field(description="Character offset of the citation in the original report.")
    original: Location = Field(description="The citation as it was before this change.")
    strategy: Strategy
    new: Location | None = Field(description="The new citation; null when it was removed.")
    new_claim: str | None = Field(description="The rewritten claim (strategy rewrite), else null.")
    evidence: dict[str, Any] = Field(
        description="Why: the verifier's reasoning at the new place, ranked candidates, ..."
    )
    verdict_before: str = Field(description="Verdict (or failure type) before the change.")
    verdict_after: str | None = Field(
        description="Verdict at the new place; null for a removed citation."
    )
    iteration: int = Field(description="Correction round that made the change (1-based).")


def correction_claim(c: Correction) -> str:
    """The claim a correction's citation backed (kept in its evidence)."""
    return str(c.evidence.get("claim", ""))


class CorrectionsFile(_Model):
    """The corrections file written by ``citecal correct --corrections FILE`` (schema_version 1)."""

    schema_version: Literal[1] = 1
    report: str
    report_sha256: str | None = Field(
        None, description="SHA-256 of the original report's text, as in its eval JSON."
    )
    iterations: int
    corrections: list[Correction]


class Remaining(_Model):
    """A citation still failing after the loop, and why nothing was changed."""

    position: int
    citation: str
    claim: str
    failure_type: str | None
    suggested_action: str | None
    reason: str
    candidates: list[str] = Field(
        default_factory=list, description="Places that fit about equally (ambiguous), best first."
    )


class CorrectionOutput(_Model):
    """``citecal correct --format json``: the corrections file plus what is left and the figures."""

    schema_version: Literal[1] = 1
    report: str
    report_sha256: str | None = Field(
        None, description="SHA-256 of the original report's text, as in its eval JSON."
    )
    iterations: int
    corrections: list[Correction]
    remaining: list[Remaining] = Field(default_factory=list)
    uncited_claims: list[str] = Field(
        default_factory=list, description="Claims whose citation was removed."
    )
    before: Summary | None = None
    after: Summary | None = None
    changed: bool = Field(False, description="The corrected report differs from the original.")
    warnings: list[str] = Field(default_factory=list)

    def corrections_file(self) -> CorrectionsFile:
        return CorrectionsFile(
            report=self.report,
            report_sha256=self.report_sha256,
            iterations=self.iterations,
            corrections=self.corrections,
        )


__all__ = [
    "STRATEGIES",
    "Correction",
    "CorrectionOutput",
    "CorrectionsFile",
    "Location",
    "Remaining",
    "Strategy",
    "correction_claim",
]
