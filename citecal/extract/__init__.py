"""Stage 1: find citations and claims in a markdown report (README "`citecal eval`").

``extract_citations`` gives every ``[path:lines]`` citation with the claim it
backs; ``find_claims`` and ``coverage`` measure how much of the report is
cited. ``split_sentences``, ``parse_citation_group`` and ``mask_code`` are the
building blocks, public because other stages (and notebooks) reuse them.
"""

from citecal.extract._citations import line_number, parse_citation_group
from citecal.extract._claims import (
    count_words,
    extract_citations,
    find_claims,
    sentence_spans,
)
from citecal.extract._coverage import coverage
from citecal.extract._markdown import mask_code
from citecal.extract._sentences import ABBREVIATIONS, sentence_blocks, split_sentences

__all__ = [
    "ABBREVIATIONS",
    "count_words",
    "coverage",
    "extract_citations",
    "find_claims",
    "line_number",
    "mask_code",
    "parse_citation_group",
    "sentence_blocks",
    "sentence_spans",
    "split_sentences",
]
