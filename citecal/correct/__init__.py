"""The correction loop: repair failed citations, and move citations across revisions.

README "`citecal correct`" and "`citecal rebase`" describe both.

``correct_report`` runs the loop (README "`citecal correct`"): relocate,
expand / shrink, rewrite and remove, each proposal checked by the same
verifier as ``citecal eval``. ``RepoIndex`` is the repository index it
searches; ``rebase_report`` moves a report's citations from one git revision
to another (README "`citecal rebase`").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citecal._lazy import lazy_getattr

if TYPE_CHECKING:
    from citecal.correct._edit import Edit, apply_edits, editable, unified_diff
    from citecal.correct._index import Chunk, RepoIndex
    from citecal.correct._locate import Found, Locator, path_role
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
    from citecal.correct._place import propose_places
    from citecal.correct._query import ClaimQuery, claim_query
    from citecal.correct._rebase import (
        OUTCOMES,
        RebasedCitation,
        RebaseResult,
        RebaseRun,
        rebase_report,
    )
    from citecal.correct._report_file import read_report
    from citecal.correct._revision import (
        report_revision,
        set_report_revision,
        stale_citation_warning,
    )

# Names load on first use (PEP 562): ``citecal calibrate`` needs only the
# acceptance model, not the index and its retrieval libraries (README "Speed").
_LAZY = {
    "Chunk": "citecal.correct._index",
    "ClaimQuery": "citecal.correct._query",
    "Correction": "citecal.correct._models",
    "CorrectionOutput": "citecal.correct._models",
    "CorrectionRun": "citecal.correct._loop",
    "CorrectionsFile": "citecal.correct._models",
    "DEFAULT_MAX_ITERATIONS": "citecal.correct._loop",
    "Edit": "citecal.correct._edit",
    "Found": "citecal.correct._locate",
    "LADDERS": "citecal.correct._loop",
    "Location": "citecal.correct._models",
    "Locator": "citecal.correct._locate",
    "OUTCOMES": "citecal.correct._rebase",
    "RebaseResult": "citecal.correct._rebase",
    "RebaseRun": "citecal.correct._rebase",
    "RebasedCitation": "citecal.correct._rebase",
    "Remaining": "citecal.correct._models",
    "RepoIndex": "citecal.correct._index",
    "STRATEGIES": "citecal.correct._models",
    "Strategy": "citecal.correct._models",
    "apply_edits": "citecal.correct._edit",
    "claim_query": "citecal.correct._query",
    "classify_move": "citecal.correct._loop",
    "correct_report": "citecal.correct._loop",
    "editable": "citecal.correct._edit",
    "path_role": "citecal.correct._locate",
    "read_report": "citecal.correct._report_file",
    "propose_places": "citecal.correct._place",
    "rebase_report": "citecal.correct._rebase",
    "report_revision": "citecal.correct._revision",
    "set_report_revision": "citecal.correct._revision",
    "stale_citation_warning": "citecal.correct._revision",
    "unified_diff": "citecal.correct._edit",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


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
    "propose_places",
    "read_report",
    "rebase_report",
    "report_revision",
    "set_report_revision",
    "stale_citation_warning",
    "unified_diff",
]
