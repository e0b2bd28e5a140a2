"""Claim detection and coverage (seed §6)."""

from __future__ import annotations

import math

import pytest

from citecal.config import ExtractConfig
from citecal.errors import ConfigError
from citecal.extract import count_words, coverage, find_claims
from citecal.models import Claim

REPORT = """\
# Authentication overview

This section covers the login flow.

The `login` function checks the password hash [src/auth.py:10-25]. Sessions are stored in Redis.
Short one [a.py:1]. Why does the token expire so early?

Note: the cache is optional and disabled by default.

See also the deployment guide for more.

- The `User` model keeps hashed passwords only [src/models.py:3-9].
- Tiny item.
-

```python
The code block sentence here is not a claim at all.
```

| Setting | Meaning of the setting column |
|---|---|
| `ttl` | Lifetime of a session in seconds [src/config.py:4] |
| `name` | The cookie name used by the browser |

<div>An HTML block is not a claim either.</div>
"""


def test_claims_of_report() -> None:
    found = find_claims(REPORT, ExtractConfig())
    assert [(c.text, c.cited) for c in found] == [
        ("The `login` function checks the password hash", True),
        ("Sessions are stored in Redis", False),
        ("The `User` model keeps hashed passwords only", True),
        ("`ttl` | Lifetime of a session in seconds", True),
        ("`name` | The cookie name used by the browser", False),
    ]
    assert {c.section for c in found} == {"Authentication overview"}
    first = found[0]
    assert REPORT[first.position : first.position + 12] == "The `login` "
    # heading 0, "This section" 1, login 2, Note 3, See also 4, User 5, Tiny 6, table 7
    assert [c.paragraph_index for c in found] == [2, 2, 5, 7, 7]


def test_coverage_of_report() -> None:
    # 5 claims, 3 cited (see test_claims_of_report): 3 / 5
    total, cited, rate = coverage(find_claims(REPORT, ExtractConfig()))
    assert (total, cited) == (5, 3)
    assert rate is not None and math.isclose(rate, 0.6, abs_tol=1e-12)


def test_coverage_of_nothing_is_none() -> None:
    assert coverage([]) == (0, 0, None)
    assert coverage(find_claims("", ExtractConfig())) == (0, 0, None)
    assert coverage(
        find_claims("# Only a heading\n\n```\ncode here is long enough\n```", ExtractConfig())
    ) == (
        0,
        0,
        None,
    )


def test_coverage_counts() -> None:
    claims = [
        Claim("a b c d", "", 0, 0, True),
        Claim("a b c d", "", 0, 0, False),
        Claim("a b c d", "", 0, 0, False),
        Claim("a b c d", "", 0, 0, False),
    ]
    assert coverage(claims) == (4, 1, 0.25)


def test_min_claim_words_is_configurable_and_citations_do_not_count() -> None:
    text = "Three words here [a.py:1-5, b.py:2]. Four words are here."
    assert [c.text for c in find_claims(text, ExtractConfig())] == ["Four words are here"]
    loose = ExtractConfig(min_claim_words=3)
    assert [c.text for c in find_claims(text, loose)] == ["Three words here", "Four words are here"]


def test_words_need_a_letter_or_digit() -> None:
    assert count_words("a | — b `c` 3") == 4
    assert count_words("") == 0
    assert find_claims("One two three — | * .", ExtractConfig()) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "This section covers the design in detail.",
        "In this document we describe the cache layer.",
        "this report summarises the whole codebase.",
        "See also the appendix for the full list.",
        "see more details in the source files.",
        "NOTE: the cache is disabled by default here.",
        "Does the parser handle every edge case?",
        "Does the parser handle every edge case [a.py:1]?",
    ],
)
def test_default_non_claim_patterns(sentence: str) -> None:
    assert find_claims(sentence, ExtractConfig()) == []


def test_non_claim_patterns_see_text_without_citations() -> None:
    # The pattern is anchored at the start: the citation must not hide the match.
    text = "[a.py:1] Note: this is explained elsewhere in detail."
    assert find_claims(text, ExtractConfig()) == []


def test_custom_non_claim_patterns_replace_defaults() -> None:
    text = "Overall the design is sound and simple. This section covers nothing at all."
    config = ExtractConfig(non_claim_patterns=[r"^overall\b"])
    assert [c.text for c in find_claims(text, config)] == ["This section covers nothing at all"]


def test_invalid_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="non_claim_patterns"):
        find_claims(
            "A sentence with enough words.", ExtractConfig(non_claim_patterns=["(unclosed"])
        )


def test_table_header_and_delimiter_rows_are_not_claims() -> None:
    text = "| The first header cell | The second header cell |\n|---|---|\n| a b c | d e f g |\n"
    assert [c.text for c in find_claims(text, ExtractConfig())] == ["a b c | d e f g"]


def test_claims_in_quotes_and_nested_lists() -> None:
    text = (
        "> Quoted claims count like any other claim.\n\n"
        "- Outer item\n  - The inner item is a claim too [a.py:1].\n"
    )
    assert [(c.text, c.cited) for c in find_claims(text, ExtractConfig())] == [
        ("Quoted claims count like any other claim", False),
        ("The inner item is a claim too", True),
    ]


def test_crlf_report() -> None:
    text = (
        "# Title\r\n\r\nThe service reads its config [a.py:1].\r\nThe worker polls the queue.\r\n"
    )
    found = find_claims(text, ExtractConfig())
    assert [(c.text, c.cited, c.section) for c in found] == [
        ("The service reads its config", True, "Title"),
        ("The worker polls the queue", False, "Title"),
    ]
    assert coverage(found) == (2, 1, 0.5)
