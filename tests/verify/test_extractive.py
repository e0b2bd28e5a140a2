"""Extractive verification: verdicts, scores, matching rules, kinds, hints, thresholds."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.config import ExtractiveConfig
from citecal.models import Verdict
from citecal.source import SymbolIndex, build_symbol_index
from citecal.verify import verify_extractive
from citecal.verify._extractive import stem

AUTH_PY = textwrap.dedent(
    '''\
    import time


    class TokenExpiredError(Exception):
        """Raised when a token is past its expiry."""


    class User:
        def __init__(self, name, email):
            self.name = name
            self.email = email

        def save(self, db):
            db.insert("users", self.name)


    def validate_token(token):
        # reject tokens whose expiry has passed
        if token.expiry < time.time():
            raise TokenExpiredError()
        return True


    def make_user(name):
        return User(name, name + "@example.com")


    def login(token):
        validate_token(token)
        return make_user(token.user)
    '''
)
LINES = AUTH_PY.split("\n")
INDEX = build_symbol_index(AUTH_PY, "python")


def lines(start: int, end: int) -> str:
    return "\n".join(LINES[start - 1 : end])


def check(
    claim: str,
    start: int,
    end: int,
    config: ExtractiveConfig | None = None,
    index: SymbolIndex = INDEX,
) -> Verdict:
    return verify_extractive(
        claim, lines(start, end), start, end, index, config or ExtractiveConfig(), lines
    )


def test_seed_example_1_supports() -> None:
    # seed §13.2 example 1, verbatim; weights: code span 3 + expiry 1 found, timestamp 1 missing
    # -> 4 / 5 = 0.8 -> supports (high).
    code = textwrap.dedent(
        """\
        def validate_token(token):
            if token.expiry < datetime.now():
                raise TokenExpiredError()
            return True
        """
    )
    index = build_symbol_index(code, "python")
    claim = "The `validate_token` function checks the expiry timestamp"
    verdict = verify_extractive(claim, code, 1, 4, index, ExtractiveConfig())
    assert verdict == Verdict(
        verdict="supports",
        method="extractive",
        confidence="high",
        score=0.8,
        reasoning=(
            "2 of 3 terms found (score 0.80): `validate_token` (function definition at line 1), "
            "expiry (line 2); missing: timestamp (not in the cited range)."
        ),
        matched_terms=("validate_token", "expiry"),
        missing_terms=("timestamp",),
    )


def test_supports_with_class_and_method_names() -> None:
    verdict = check("The User class has a save method", 8, 14)
    assert (verdict.verdict, verdict.confidence, verdict.score) == ("supports", "high", 1.0)
    assert verdict.reasoning == (
        "2 of 2 terms found (score 1.00): `User` (class definition at line 8), "
        "save (method definition at line 13)."
    )


def test_fields_of_a_class() -> None:
    verdict = check("The User model has fields `name` and `email`", 8, 11)
    assert verdict.verdict == "supports"
    assert "`name` (field definition at line 10), `email` (field definition at line 11)" in (
        verdict.reasoning
    )


def test_partial() -> None:
    # validate_token 3 + expiry 1 found, logs 1 + failures 1 missing -> 4 / 6 = 0.6667
    verdict = check("The `validate_token` function checks expiry and logs failures", 17, 21)
    assert (verdict.verdict, verdict.confidence, verdict.score) == ("partial", "medium", 0.6667)
    assert verdict.matched_terms == ("validate_token", "expiry")
    assert verdict.missing_terms == ("logs", "failures")
    assert verdict.reasoning == (
        "2 of 4 terms found (score 0.67): `validate_token` (function definition at line 17), "
        "expiry (comment, line 18); missing: logs (not in the cited range), "
        "failures (not in the cited range)."
    )


@pytest.mark.parametrize(
    ("supports", "partial", "expected"),
    [(0.8, 0.5, "partial"), (0.6, 0.5, "supports"), (0.8, 0.7, "not_supports")],
)
def test_thresholds_from_config(supports: float, partial: float, expected: str) -> None:
    config = ExtractiveConfig(supports_threshold=supports, partial_threshold=partial)
    claim = "The `validate_token` function checks expiry and logs failures"
    verdict = check(claim, 17, 21, config)
    assert verdict.score == 0.6667
    assert verdict.verdict == expected


def test_not_supports_with_definition_hint() -> None:
    verdict = check("`make_user` builds users", 17, 21)
    assert (verdict.verdict, verdict.confidence, verdict.score) == ("not_supports", "high", 0.0)
    assert verdict.missing_terms == ("make_user", "builds", "users")
    assert verdict.hint == (
        "`make_user` is defined at lines 24-25 (function), outside the cited range 17-21"
    )
    assert verdict.hint_lines == (24, 25)


def test_hint_for_a_name_only_used_elsewhere_quotes_the_line() -> None:
    verdict = check("`db.insert` stores rows", 24, 25)
    assert verdict.verdict == "not_supports"
    assert verdict.hint == (
        "`db.insert` appears at line 14, outside the cited range 24-25 "
        '(line 14: `db.insert("users", self.name)`)'
    )
    assert verdict.hint_lines == (14, 14)


def test_call_is_not_a_definition() -> None:
    verdict = check("The `validate_token` function logs in users", 28, 30)
    assert verdict.verdict == "not_supports"
    assert verdict.missing_terms == ("validate_token", "logs")
    assert "`validate_token` (used at line 29 but not defined as a function here)" in (
        verdict.reasoning
    )
    assert verdict.hint_lines == (17, 21)


def test_kind_mismatch_counts_as_missing() -> None:
    # User is a class: "the `User` function" is missing; saves ~ save, users in a string.
    verdict = check("The `User` function saves users", 8, 14)
    assert (verdict.verdict, verdict.score) == ("not_supports", 0.4)
    assert verdict.matched_terms == ("saves", "users")
    assert verdict.missing_terms == ("User",)
    assert "`User` (defined at line 8 as a class, not a function)" in verdict.reasoning
    assert verdict.hint is None  # present here, only of another kind: nowhere to move to


def test_missing_name_caps_supports_at_partial() -> None:
    claim = (
        "`validate_token` raises `TokenExpiredError` when the token `expiry` passes "
        "with `leeway_seconds`"
    )
    verdict = check(claim, 17, 21)
    # found: 3 + 3 + 1 (token) + 3 + 1 (passes ~ passed) = 11; leeway_seconds 3 missing
    # -> 11 / 14 = 0.7857: partial by score; with supports_threshold 0.75 the cap decides.
    assert verdict.score == 0.7857
    assert verdict.verdict == "partial"
    config = ExtractiveConfig(supports_threshold=0.75)
    capped = check(claim, 17, 21, config)
    assert capped.verdict == "partial"
    assert capped.reasoning.endswith("; partial because a named code term is missing.")


def test_every_name_missing_is_not_supports_whatever_the_words() -> None:
    # rotate_keys 3 missing; validates, token, expiry, time found -> 4 / 7 = 0.5714
    verdict = check("`rotate_keys` validates the token expiry time", 17, 21)
    assert (verdict.verdict, verdict.confidence, verdict.score) == (
        "not_supports",
        "medium",
        0.5714,
    )
    assert verdict.reasoning.endswith("; not_supports because every named code term is missing.")


def test_unverified_without_terms() -> None:
    verdict = check("This is it.", 1, 3)
    assert verdict == Verdict(
        verdict="unverified",
        method="extractive",
        confidence="low",
        score=None,
        reasoning="no checkable terms",
    )


def test_fuzzy_typo_within_two_for_long_names() -> None:
    verdict = check("`validate_tokn` rejects tokens", 17, 21)
    assert (verdict.verdict, verdict.confidence) == ("supports", "medium")  # fuzzy -> medium
    assert "`validate_tokn` (as `validate_token`, line 17)" in verdict.reasoning


def test_fuzzy_beyond_distance_is_missing() -> None:
    verdict = check("`vldate_tkn` rejects tokens", 17, 21)  # distance 4
    assert verdict.missing_terms == ("vldate_tkn",)


def test_no_fuzzy_for_short_names() -> None:
    verdict = check("The `sav` method writes users", 8, 14)  # distance 1, but 3 characters
    assert verdict.missing_terms == ("sav", "writes")
    lenient = check("The `sav` method writes users", 8, 14, ExtractiveConfig(fuzzy_min_length=3))
    assert lenient.missing_terms == ("writes",)


def test_fuzzy_can_be_disabled() -> None:
    verdict = check(
        "`validate_tokn` rejects tokens", 17, 21, ExtractiveConfig(fuzzy_max_distance=0)
    )
    assert verdict.missing_terms == ("validate_tokn",)


def test_stems_and_word_parts() -> None:
    verdict = check("validation of expired tokens", 17, 21)
    assert verdict.verdict == "supports"
    assert verdict.confidence == "medium"  # prose words only
    assert verdict.reasoning == (
        "3 of 3 terms found (score 1.00): validation (as `validate_token`, line 17), "
        "expired (as `TokenExpiredError`, line 20), tokens (comment, line 18)."
    )


def test_stemmer() -> None:
    assert stem("validates") == stem("validation") == stem("validate")
    assert stem("checks") == stem("check")


def test_case_insensitive_prose() -> None:
    verdict = check("TOKEN EXPIRY", 17, 21)
    assert verdict.matched_terms == ("token", "expiry")
    assert verdict.verdict == "supports"


def test_case_insensitive_and_underscore_insensitive_names() -> None:
    verdict = check("`ValidateToken` is here", 17, 21)
    assert verdict.matched_terms == ("ValidateToken",)
    assert verdict.confidence == "medium"  # a single term


def test_quoted_string_in_a_literal() -> None:
    verdict = check('It writes "users" rows', 13, 14)
    assert verdict.reasoning.startswith(
        '1 of 3 terms found (score 0.50): "users" (string, line 14)'
    )


def test_code_expression_must_be_verbatim_up_to_spacing() -> None:
    verdict = check("It does `raise  TokenExpiredError()` and `return False`", 17, 21)
    assert verdict.matched_terms == ("raise  TokenExpiredError()",)
    assert verdict.missing_terms == ("return False",)


def test_dotted_names() -> None:
    verdict = check("`token.expiry` is compared with `time.time`", 17, 21)
    assert verdict.verdict == "supports"
    assert verdict.matched_terms == ("token.expiry", "time.time")


def test_expand_range_hint_is_near() -> None:
    # login is cited one line short: the definition is right below the range.
    verdict = check("The `login` function validates tokens", 25, 27)
    assert verdict.hint_lines == (28, 30)


def test_fallback_language_does_not_enforce_kinds() -> None:
    source = 'function greet(name)\n  print("hello " .. name)\nend\n'
    index = build_symbol_index(source, "lua")
    verdict = verify_extractive(
        "The `greet` method says hello", source, 1, 3, index, ExtractiveConfig()
    )
    assert verdict.verdict == "supports"
    assert verdict.reasoning.endswith(
        "; definition kinds not checked (file not parsed: no grammar or too large)."
    )


def test_javascript_arrow_function_as_function() -> None:
    source = "const fetchUser = async (id) => {\n  return api.get(`/users/${id}`);\n};\n"
    index = build_symbol_index(source, "javascript")
    verdict = verify_extractive(
        "The `fetchUser` function gets users from the api", source, 1, 3, index, ExtractiveConfig()
    )
    assert verdict.verdict == "supports"
    assert "`fetchUser` (function definition at line 1)" in verdict.reasoning


def test_enclosing_definition_counts_for_a_cited_body() -> None:
    # Lines 19-20 are inside validate_token (17-21): the cited code is part of that function.
    verdict = check("The `validate_token` function raises `TokenExpiredError`", 19, 20)
    assert verdict.verdict == "supports"
    assert verdict.reasoning == (
        "2 of 2 terms found (score 1.00): `validate_token` (function definition at lines 17-21, "
        "enclosing the cited range), `TokenExpiredError` (line 20)."
    )


def test_property_accepts_a_getter_method() -> None:
    source = textwrap.dedent(
        """\
        class LineItem:
            @property
            def subtotal(self):
                return self.unit_price * self.quantity
        """
    )
    index = build_symbol_index(source, "python")
    claim = "The `subtotal` property multiplies `unit_price` by `quantity`"
    verdict = verify_extractive(claim, source, 2, 4, index, ExtractiveConfig())
    assert verdict.matched_terms == ("subtotal", "unit_price", "quantity")
    assert "`subtotal` (method definition at line 3)" in verdict.reasoning


def test_labels_use_the_column_not_just_the_line() -> None:
    # Line 14 has "users" in a string but `db.insert` outside it; 3 + 2 of 6 -> 0.83.
    verdict = check('`db.insert` writes "users"', 13, 14)
    assert verdict.reasoning == (
        '2 of 3 terms found (score 0.83): `db.insert` (line 14), "users" (string, line 14); '
        "missing: writes (not in the cited range)."
    )


def test_quoted_text_must_not_be_glued_to_letters() -> None:
    # "ser" occurs inside "users" but not on its own.
    verdict = check('It writes "ser"', 13, 14)
    assert verdict.missing_terms == ("writes", "ser")


def test_names_found_but_words_missing_is_a_medium_not_supports() -> None:
    # save 3 found; persists, records, database, atomically 4 missing -> 3 / 7 = 0.4286
    verdict = check("`save` persists records in the database atomically", 13, 14)
    assert (verdict.verdict, verdict.confidence, verdict.score) == (
        "not_supports",
        "medium",
        0.4286,
    )


def test_enclosing_definition_of_the_claimed_kind_beats_a_same_named_one_inside() -> None:
    # Java: the constructor `User` (a method) is in the range, the class `User` around it.
    source = textwrap.dedent(
        """\
        public class User {
          private String name;
          public User(String name) {
            this.name = name;
          }
        }
        """
    )
    index = build_symbol_index(source, "java")
    code = "\n".join(source.split("\n")[2:5])
    verdict = verify_extractive(
        "The `User` class stores a name", code, 3, 5, index, ExtractiveConfig()
    )
    assert "`User` (class definition at lines 1-6, enclosing the cited range)" in verdict.reasoning
    wrong = verify_extractive("The `User` struct", code, 3, 5, index, ExtractiveConfig())
    assert wrong.verdict == "supports"  # a Java class is accepted as a struct (same family)
    missing = verify_extractive("The `User` field", code, 3, 5, index, ExtractiveConfig())
    assert missing.missing_terms == ("User",)
    assert "`User` (defined at line 3 as a method, not a field)" in missing.reasoning


@settings(max_examples=80, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("abcdefgxyz_`'\" .,()[]:-ABCTE\n0123")), max_size=80),
    st.integers(min_value=1, max_value=30),
    st.integers(min_value=0, max_value=10),
)
def test_any_claim_gives_a_consistent_verdict(claim: str, start: int, width: int) -> None:
    end = start + width
    verdict = check(claim, start, end)
    assert verdict.method == "extractive"
    if verdict.verdict == "unverified":
        assert verdict.score is None
        assert verdict.matched_terms == verdict.missing_terms == ()
    else:
        assert verdict.score is not None
        assert 0.0 <= verdict.score <= 1.0
        assert len(verdict.matched_terms) + len(verdict.missing_terms) >= 1
        assert not set(verdict.matched_terms) & set(verdict.missing_terms)
    if verdict.hint_lines is not None:
        lo, hi = verdict.hint_lines
        assert 1 <= lo <= hi <= INDEX.line_count
