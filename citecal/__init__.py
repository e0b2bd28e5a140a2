"""citecal: check that a report's citations support its claims, and calibrate the judge.

The top-level names are the ones a notebook needs. Heavy stages (tree-sitter,
pandas, the LLM and Argilla clients) load on first use, so ``import citecal``
and ``citecal --help`` stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from citecal.config import Config, load_config
from citecal.models import Citation, CitationResult, EvalResult, ExtractedCitation, Verdict

if TYPE_CHECKING:
    from citecal.answers import validate_answers
    from citecal.chunks import chunk_text
    from citecal.pipeline import evaluate_report
    from citecal.source import open_store

__version__ = "0.1.0"

_LAZY = {
    "chunk_text": "citecal.chunks",
    "evaluate_report": "citecal.pipeline",
    "open_store": "citecal.source",
    "validate_answers": "citecal.answers",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'citecal' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
