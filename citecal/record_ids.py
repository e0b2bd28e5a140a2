"""Stable ids of annotation records, shared by ``push`` and ``estimate``.

``citecal push`` names each Argilla record by a hash of its report, claim,
citation, revision and citation id (README "Push an evaluation"), and
``citecal estimate`` must compute the very same id from an eval JSON or an
eval-batch output to join judged citations with their human labels. Both
import these functions, so the two can never drift apart. The module is
dependency-free on purpose: ``estimate`` must not pay for importing the
Argilla SDK.
"""

from __future__ import annotations

import hashlib


def content_hash(*parts: str) -> str:
    """32 hex digits of the SHA-256 of ``parts`` joined by the unit separator."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def report_key(report: str, repo: str) -> str:
    """Stable id of an evaluated report: its path or name with the repository."""
    return content_hash(report, repo)[:16]


def record_key(report_id: str, claim: str, citation: str, rev: str | None, citation_id: str) -> str:
    """Stable record id: report id, claim, citation, revision and the citation's own id.

    Pushing the same evaluation twice gives the same ids, so Argilla updates
    records instead of adding duplicates; a new revision gives new records.
    """
    return content_hash(report_id, claim, citation, rev or "", citation_id)


__all__ = ["content_hash", "record_key", "report_key"]
