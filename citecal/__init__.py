"""citecal: check that a report's citations support its claims, and calibrate the judge.

The top-level names are the ones a notebook needs. Every one loads on first
use (PEP 562), even the settings and models (building pydantic models is most
of a bare import's time), so ``import citecal`` and ``citecal --help`` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citecal._lazy import lazy_getattr
from citecal._version import __version__ as __version__

if TYPE_CHECKING:
    from citecal.answers import validate_answers
    from citecal.chunks import chunk_text
    from citecal.config import Config, load_config
    from citecal.models import Citation, CitationResult, EvalResult, ExtractedCitation, Verdict
    from citecal.pipeline import evaluate_report
    from citecal.source import open_store

_LAZY = {
    "Citation": "citecal.models",
    "CitationResult": "citecal.models",
    "Config": "citecal.config",
    "EvalResult": "citecal.models",
    "ExtractedCitation": "citecal.models",
    "Verdict": "citecal.models",
    "chunk_text": "citecal.chunks",
    "evaluate_report": "citecal.pipeline",
    "load_config": "citecal.config",
    "open_store": "citecal.source",
    "validate_answers": "citecal.answers",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "Citation",
    "CitationResult",
    "Config",
    "EvalResult",
    "ExtractedCitation",
    "Verdict",
    "chunk_text",
    "evaluate_report",
    "load_config",
    "open_store",
    "validate_answers",
]
