"""Claim terms: code spans, identifiers, quotes, words, and expected definition kinds."""

from __future__ import annotations

import pytest

from citecal.verify import ClaimTerm, extract_terms
from citecal.verify._terms import parse_claim, strip_citations


def triples(claim: str) -> list[tuple[str, str, str | None]]:
    return [(t.text, t.kind, t.expected_kind) for t in extract_terms(claim)]


def test_seed_example_terms() -> None:
    # seed §3.2.4: Extract ["validate_token", "expiry"]
    assert triples("The `validate_token` function checks expiry") == [
        ("validate_token", "code_span", "function"),
        ("expiry", "word", None),
    ]


def test_citation_markers_are_not_terms() -> None:
    claim = "The `parse` function reads config [src/app.py:10-25] [lib/x.py:L3]."
    assert strip_citations(claim).strip().startswith("The `parse` function reads config")
    assert triples(claim) == [
        ("parse", "code_span", "function"),
        ("reads", "word", None),
        ("config", "word", None),
    ]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("Calls `validate_token()` first", [("validate_token", "code_span", None)]),
        ("Calls `client.fetch(url, 3)` first", [("client.fetch", "code_span", None)]),
        ("Uses `@app.route`", [("app.route", "code_span", None)]),
        ("Has `def refresh(self, token)`", [("refresh", "code_span", "function")]),
        ("Has `class TokenStore(Base):`", [("TokenStore", "code_span", "class")]),
        ("It does `return None`", [("return None", "code_span", None)]),
        ("See `src/auth.py`", []),
    ],
)
def test_code_spans(claim: str, expected: list[tuple[str, str, str | None]]) -> None:
    assert triples(claim) == expected


def test_identifiers_dotted_camel_snake_upper() -> None:
    claim = "Calling axios.create sets self.timeout and uses AuthManager, getUser() and MAX_RETRIES"
    assert triples(claim) == [
        ("axios.create", "identifier", None),
        ("self.timeout", "identifier", None),
        ("AuthManager", "identifier", None),
        ("getUser", "identifier", None),
        ("MAX_RETRIES", "identifier", None),
    ]


def test_rust_paths_are_identifiers() -> None:
    assert triples("It builds Config::new here") == [
        ("builds", "word", None),
        ("Config::new", "identifier", None),
    ]


def test_quoted_strings() -> None:
    claim = "The loader reads \"retry_count\" and the 'timeout' key, not the user's data."
    assert triples(claim) == [
        ("loader", "word", None),
        ("reads", "word", None),
        ("retry_count", "quoted", None),
        ("timeout", "quoted", None),
        ("user", "word", None),  # "key" and "data" are general English (wordfreq Zipf >= 5)
    ]


def test_stop_and_generic_words_dropped() -> None:
    claim = "This function returns the value and the class uses the method in the file."
    assert extract_terms(claim) == []


def test_abstract_verbs_are_not_terms() -> None:
    assert triples("The module handles and manages retries") == [("retries", "word", None)]


def test_file_paths_dropped_numbers_kept() -> None:
    assert triples("settings.yaml in ./lib/x-y/z.js sets 30 retries") == [
        ("30", "number", None),
        ("retries", "word", None),
    ]


def test_acronyms_and_sentence_initial_capitals_are_words() -> None:
    assert triples("Tokens are JSON encoded") == [
        ("tokens", "word", None),
        ("json", "word", None),
        ("encoded", "word", None),
    ]


def test_kind_before_and_after_names() -> None:
    assert triples("The User class has a save method") == [
        ("User", "identifier", "class"),
        ("save", "word", "method"),
    ]
    assert triples("It defines class TokenStore and method `refresh`") == [
        ("TokenStore", "identifier", "class"),
        ("refresh", "code_span", "method"),
    ]


def test_plural_kind_lists() -> None:
    assert triples("The User model has fields `name`, `email`, and `age`") == [
        ("User", "identifier", "class"),
        ("name", "code_span", "field"),
        ("email", "code_span", "field"),
        ("age", "code_span", "field"),
    ]
    assert triples("`a` and `b` functions") == [
        ("a", "code_span", "function"),
        ("b", "code_span", "function"),
    ]


def test_singular_kind_takes_one_name() -> None:
    assert triples("The `parse` function and `dump` run") == [
        ("parse", "code_span", "function"),
        ("dump", "code_span", None),
    ]


def test_lowercase_word_after_kind_word_is_not_a_name() -> None:
    # "function validates" describes; only a name-shaped token after a kind word is a name.
    assert triples("The function validates tokens") == [
        ("validates", "word", None),
        ("tokens", "word", None),
    ]


def test_modifiers_before_kind_words_are_not_names() -> None:
    assert triples("An async function awaits the response") == [
        ("async", "word", None),
        ("awaits", "word", None),
    ]


def test_duplicates_merge_to_strongest_kind() -> None:
    assert extract_terms("The parser calls `parser` twice") == [
        ClaimTerm("parser", "code_span", None),
        ClaimTerm("twice", "word", None),
    ]


def test_hyphenated_words_split() -> None:
    assert triples("Adds rate-limiting") == [
        ("adds", "word", None),
        ("limiting", "word", None),  # "rate" is general English
    ]


def test_empty_claim() -> None:
    assert extract_terms("") == []
    assert extract_terms("   [a.py:1-2] ") == []


def test_abbreviations_are_not_dotted_identifiers() -> None:
    assert triples("Tokens expire, e.g. at 1 p.m. each day, i.e. hourly") == [
        ("tokens", "word", None),
        ("expire", "word", None),
        ("1", "number", None),
        ("hourly", "word", None),
    ]


def test_slash_code_span_that_is_not_a_file_is_kept() -> None:
    assert triples("It handles `cart/itemAdded` and `./lib/`") == [
        ("cart/itemAdded", "code_span", None)
    ]


def test_property_kind() -> None:
    assert triples("The `subtotal` property") == [("subtotal", "code_span", "property")]


def test_glued_units_are_neither_numbers_nor_words() -> None:
    assert triples("Waits 500ms, retries on 5xx and HTTP 429 with 2.5x backoff") == [
        ("waits", "word", None),
        ("retries", "word", None),
        ("http", "word", None),
        ("429", "number", None),
        ("backoff", "word", None),
    ]


def test_units_after_numbers_are_part_of_the_number() -> None:
    assert triples("`CHUNK` is 10 KiB and `TTL` is 30 seconds") == [
        ("CHUNK", "code_span", None),
        ("10", "number", None),
        ("TTL", "code_span", None),
        ("30", "number", None),
    ]


def test_general_english_is_dropped_by_word_frequency() -> None:
    # "every", "only", "instead" are frequent English (wordfreq), not content.
    assert triples("`send` ships every request only once instead") == [
        ("send", "code_span", None),
        ("ships", "word", None),
        ("request", "word", None),
    ]


def test_negated_names() -> None:
    parse = parse_claim("`A` derives from `B`, not from `C` or `D`, unlike `E`; it calls `F`")
    assert parse.negated == {"c", "d", "e"}


def test_a_negation_ends_at_its_clause() -> None:
    # The comma closes "do not end in `/`"; `Mount` opens the main clause. A name after a
    # comma continues a negated list only when the list goes on or ends there.
    assert parse_claim("If they do not end in `/`, `Mount` adds a stub").negated == frozenset()
    assert parse_claim("It is not `a`, `b` and `c` that count").negated == {"a", "b", "c"}
    assert parse_claim("It uses neither `a`, `b` nor `c`.").negated == {"a", "b", "c"}
    assert parse_claim("It does not call `x`, `y` handles that").negated == {"x"}


def test_domains_and_urls_are_not_names() -> None:
    terms = triples("Counted on `crates.io` and https://example.com/x, see docs.rs")
    assert terms == [("counted", "word", None)]


def test_general_words_leave_no_frequency_tables_in_memory() -> None:
    """The word set is all citecal keeps: wordfreq's tables (~38 MB) are let go."""
    import wordfreq

    from citecal.verify import _terms

    _terms._GENERAL_CACHE.clear()
    words = _terms.general_words()
    assert {"every", "only", "instead"} <= words
    assert wordfreq.get_frequency_dict.cache_info().currsize == 0
    assert wordfreq.get_frequency_list.cache_info().currsize == 0
