"""Verification stages: structural validation, classification, extractive and LLM checks."""

from citecal.verify._classify import classify_claim
from citecal.verify._extractive import verify_extractive
from citecal.verify._structural import validate_citation
from citecal.verify._terms import ClaimTerm, extract_terms

__all__ = [
    "ClaimTerm",
    "classify_claim",
    "extract_terms",
    "validate_citation",
    "verify_extractive",
]
