"""The correction loop (seed §15): repair failed citations, and move citations across revisions.

``correct_report`` runs the loop (README "`citecal correct`"): relocate,
expand / shrink, rewrite and remove, each proposal checked by the same
verifier as ``citecal eval``. ``RepoIndex`` is the repository index it
searches; ``rebase_report`` moves a report's citations from one git revision
to another (README "`citecal rebase`").
"""

from citecal.correct._edit import Edit, apply_edits, editable, unified_diff
from citecal.correct._index import Chunk, RepoIndex
from citecal.correct._locate import ClaimQuery, Found, Locator, claim_query, path_role
from citecal.correct._loop import (
    DEFAULT_MAX_ITERATIONS,
    LADDERS,
    CorrectionRun,
    classify_move,
    correct_report,
)
from citecal.correct._models import (
    STRATEGIES,
    Correction,
    CorrectionOutput,
    CorrectionsFile,
    Location,
    Remaining,
    Strategy,
)
from citecal.correct._rebase import (
    OUTCOMES,
    RebasedCitation,
    RebaseResult,
    RebaseRun,
    rebase_report,
)
from citecal.correct._revision import report_revision, set_report_revision, stale_citation_warning

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "LADDERS",
    "OUTCOMES",
    "STRATEGIES",
    "Chunk",
    "ClaimQuery",
    "Correction",
    "CorrectionOutput",
    "CorrectionRun",
    "CorrectionsFile",
    "Edit",
    "Found",
    "Location",
    "Locator",
    "RebaseResult",
    "RebaseRun",
    "RebasedCitation",
    "Remaining",
    "RepoIndex",
    "Strategy",
    "apply_edits",
    "claim_query",
    "classify_move",
    "correct_report",
    "editable",
    "path_role",
    "rebase_report",
    "report_revision",
    "set_report_revision",
    "stale_citation_warning",
    "unified_diff",
]
