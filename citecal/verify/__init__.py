"""Verification stages: structural validation, classification, rules, routing and the judge."""

from citecal.verify._classify import classify_claim
from citecal.verify._extractive import content_terms, coverage_verdict, verify_extractive
from citecal.verify._literal import LiteralCheck, check_literal
from citecal.verify._routing import Route, Routing, route_claim
from citecal.verify._structural import validate_citation
from citecal.verify._terms import (
    ClaimParse,
    ClaimTerm,
    extract_terms,
    general_words,
    parse_claim,
)

__all__ = [
    "ClaimParse",
    "ClaimTerm",
    "LiteralCheck",
    "Route",
    "Routing",
    "check_literal",
    "classify_claim",
    "content_terms",
    "coverage_verdict",
    "extract_terms",
    "general_words",
    "parse_claim",
    "route_claim",
    "validate_citation",
    "verify_extractive",
]
