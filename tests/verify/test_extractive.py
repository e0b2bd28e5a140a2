"""Rule verification: what rules decide (and what they leave to the judge), matching, hints."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.config import ExtractiveConfig
from citecal.models import Verdict
from citecal.source import SymbolIndex, build_symbol_index
from citecal.verify import coverage_verdict, verify_extractive
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


def test_seed_example_1_goes_to_the_judge_with_its_evidence() -> None:
    # seed §13.2 example 1: "checks the expiry timestamp" describes behaviour. Rules find the
    # names but cannot prove the claim: unverified, the evidence kept for the judge.
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
    assert (verdict.verdict, verdict.method, verdict.confidence) == (
        "unverified",
        "extractive",
        "low",
    )
    # "timestamp" names nothing the file's code names: not content, never "missing".
    assert verdict.matched_terms == ("validate_token", "expiry")
    assert verdict.missing_terms == ()
    assert verdict.score == 1.0
    assert verdict.reasoning == (
        "2 of 2 content terms found (score 1.00): `validate_token` (line 1), expiry (line 2). "
        "Rules cannot decide (describes more than contents ('checks')): the judge decides."
    )


def test_literal_definition_statement_is_supported() -> None:
    verdict = check("The User class has a save method", 8, 14)
    assert (verdict.verdict, verdict.confidence, verdict.score) == ("supports", "high", 1.0)
    assert verdict.reasoning == (
        "2 of 2 content terms found (score 1.00): `User` (class definition at line 8), "
        "save (method definition at line 13). supports: a literal statement (has) the "
        "cited lines show."
    )


def test_fields_of_a_class() -> None:
    verdict = check("The User model has fields `name` and `email`", 8, 11)
    assert verdict.verdict == "supports"
    assert "`name` (field definition at line 10), `email` (field definition at line 11)" in (
        verdict.reasoning
    )


def test_most_named_code_missing_is_not_supports_with_a_definition_hint() -> None:
    verdict = check("`make_user` builds users", 17, 21)
    assert (verdict.verdict, verdict.confidence) == ("not_supports", "high")
    assert verdict.missing_terms == ("make_user", "users")  # "users" names a string here
    assert verdict.reasoning.endswith("not_supports: `make_user` is not in the cited lines.")
    assert verdict.hint == (
        "`make_user` is defined at lines 24-25 (function), outside the cited range 17-21"
    )
    assert verdict.hint_lines == (24, 25)


def test_one_missing_name_among_several_present_goes_to_the_judge() -> None:
    # validate_token and TokenExpiredError are here, leeway_seconds is not: 1 of 3 absent.
    claim = "`validate_token` raises `TokenExpiredError` after `leeway_seconds`"
    verdict = check(claim, 17, 21)
    assert verdict.verdict == "unverified"
    assert verdict.missing_terms == ("leeway_seconds",)
    # Two of three absent: the range is not where the claim's code is.
    worse = check("`validate_token` calls `refresh_token` and `audit_log`", 17, 21)
    assert worse.verdict == "not_supports"
    assert worse.reasoning.endswith("`refresh_token`, `audit_log` are not in the cited lines.")


def test_hint_for_a_name_only_used_elsewhere_quotes_the_line() -> None:
    verdict = check("`db.insert` stores rows", 24, 25)
    assert verdict.verdict == "not_supports"
    assert verdict.hint == (
        "`db.insert` appears at line 14, outside the cited range 24-25 "
        '(line 14: `db.insert("users", self.name)`)'
    )
    assert verdict.hint_lines == (14, 14)


def test_a_call_is_not_a_definition_but_not_absent_either() -> None:
    # login (28-30) calls validate_token: it is not defined here (no literal support), but it is
    # in the range, so rules do not reject: the judge decides whether the claim holds.
    behaviour = check("The `validate_token` function logs in users", 28, 30)
    assert behaviour.verdict == "unverified"
    assert "validate_token" in behaviour.matched_terms  # present: no reject
    literal = check("The `validate_token` function is defined here", 28, 30)
    assert literal.verdict == "unverified"
    assert literal.missing_terms == ("validate_token",)
    assert "`validate_token` (used at line 29 but not defined as a function here)" in (
        literal.reasoning
    )
    assert literal.hint_lines == (17, 21)


def test_kind_mismatch_is_not_a_literal_support() -> None:
    verdict = check("The `User` function has a save method", 8, 14)
    assert verdict.verdict == "unverified"
    assert "`User` (defined at line 8 as a class, not a function)" in verdict.reasoning
    assert verdict.hint is None  # present here, only of another kind: nowhere to move to


def test_negated_names_are_not_required() -> None:
    # "not from `ValueError`": the claim says what the code does NOT name. Negation is not a
    # literal statement either, so the judge decides; the absent name never rejects.
    claim = "`TokenExpiredError` derives from `Exception`, not from `ValueError` or `KeyError`"
    verdict = check(claim, 4, 5)
    assert verdict.verdict == "unverified"
    assert verdict.missing_terms == ("ValueError", "KeyError")


def test_project_and_file_names_are_not_required() -> None:
    verdict = verify_extractive(
        "In `authlib`, `validate_token` raises `TokenExpiredError`",
        lines(17, 21),
        17,
        21,
        INDEX,
        ExtractiveConfig(),
        lines,
        ignore_names=frozenset({"authlib"}),
    )
    assert "authlib" not in verdict.matched_terms + verdict.missing_terms
    assert verdict.verdict == "supports"


def test_language_literals_and_one_letter_names_never_reject() -> None:
    verdict = check("`validate_token` returns `True`", 17, 21)
    assert verdict.verdict == "supports"
    missing = check("`make_user` never returns `None` or `x`", 17, 21)
    assert missing.verdict == "not_supports"  # make_user is the one required name
    assert missing.reasoning.endswith("`make_user` is not in the cited lines.")


def test_unverified_without_terms() -> None:
    verdict = check("This is it.", 1, 3)
    assert verdict == Verdict(
        verdict="unverified",
        method="extractive",
        confidence="low",
        score=None,
        reasoning="no checkable terms: the judge decides",
    )


def test_fuzzy_typo_within_two_for_long_names_is_never_proof() -> None:
    verdict = check("`validate_tokn` raises `TokenExpiredError`", 17, 21)
    assert verdict.verdict == "unverified"  # found, but only approximately: no support by rule
    assert "`validate_tokn` (as `validate_token`, line 17)" in verdict.reasoning


def test_fuzzy_beyond_distance_is_missing() -> None:
    verdict = check("`vldate_tkn` rejects tokens", 17, 21)  # distance 4
    assert verdict.missing_terms == ("vldate_tkn",)


def test_no_fuzzy_for_short_names() -> None:
    verdict = check("The `sav` method persists users", 8, 14)  # distance 1, but 3 characters
    assert verdict.missing_terms == ("sav",)
    lenient = check("The `sav` method persists users", 8, 14, ExtractiveConfig(fuzzy_min_length=3))
    assert lenient.missing_terms == ()


def test_fuzzy_can_be_disabled() -> None:
    verdict = check(
        "`validate_tokn` rejects tokens", 17, 21, ExtractiveConfig(fuzzy_max_distance=0)
    )
    assert verdict.missing_terms == ("validate_tokn",)


def test_a_name_used_as_part_of_another_name_is_present_but_not_proof() -> None:
    source = "fn assert_send_sync<T>() {}\nfn test() { assert_send_sync::<Version>(); }\n"
    index = build_symbol_index(source, "rust")
    code = "fn test() { assert_send_sync::<Version>(); }"
    verdict = verify_extractive(
        "`Version` is `Send` and `Sync`", code, 2, 2, index, ExtractiveConfig()
    )
    assert verdict.verdict == "unverified"  # present (no reject), approximate (no support)
    assert verdict.matched_terms == ("Version", "Send", "Sync")


def test_stems_and_word_parts() -> None:
    verdict = check("validation of expired tokens", 17, 21)
    assert verdict.reasoning.startswith(
        "3 of 3 content terms found (score 1.00): validation (as `validate_token`, line 17), "
        "expired (as `TokenExpiredError`, line 20), tokens (line 18)."
    )


def test_stemmer() -> None:
    assert stem("validates") == stem("validation") == stem("validate")
    assert stem("checks") == stem("check")


def test_general_and_non_symbol_words_are_not_content() -> None:
    # "instead", "every" are general English (wordfreq); "ships" names nothing in this file.
    verdict = check("`validate_token` ships every token instead", 17, 21)
    assert verdict.matched_terms == ("validate_token", "token")
    assert verdict.missing_terms == ()


def test_case_insensitive_and_underscore_insensitive_names() -> None:
    verdict = check("`ValidateToken` is defined here", 17, 21)
    assert verdict.matched_terms == ("ValidateToken",)


def test_quoted_string_in_a_literal() -> None:
    verdict = check('`save` has `db.insert` and "users"', 13, 14)
    assert verdict.verdict == "supports"
    assert '"users" (string, line 14)' in verdict.reasoning


def test_code_expression_must_be_verbatim_up_to_spacing() -> None:
    verdict = check("It does `raise  TokenExpiredError()` and `return False`", 17, 21)
    assert verdict.matched_terms == ("raise  TokenExpiredError()",)
    assert verdict.missing_terms == ("return False",)


def test_dotted_names() -> None:
    verdict = check("`token.expiry` is compared with `time.time`", 17, 21)
    assert verdict.matched_terms == ("token.expiry", "time.time")


def test_expand_range_hint_is_near() -> None:
    # login is cited one line short: the definition is right below the range.
    verdict = check("The `login` function validates tokens", 25, 27)
    assert verdict.verdict == "not_supports"
    assert verdict.hint_lines == (28, 30)


def test_fallback_language_does_not_enforce_kinds() -> None:
    source = 'function greet(name)\n  print("hello " .. name)\nend\n'
    index = build_symbol_index(source, "lua")
    verdict = verify_extractive(
        "The `greet` method says hello", source, 1, 3, index, ExtractiveConfig()
    )
    assert verdict.matched_terms == ("greet",)  # "hello" is only in a prose string
    assert verdict.verdict == "unverified"  # nothing parsed: no definition can be proven


def test_javascript_arrow_function_as_function() -> None:
    source = "const fetchUser = async (id) => {\n  return api.get(`/users/${id}`);\n};\n"
    index = build_symbol_index(source, "javascript")
    verdict = verify_extractive(
        "The `fetchUser` function is defined here", source, 1, 3, index, ExtractiveConfig()
    )
    assert verdict.verdict == "supports"
    assert "`fetchUser` (function definition at line 1)" in verdict.reasoning


def test_enclosing_definition_counts_for_a_cited_body() -> None:
    # Lines 19-20 are inside validate_token (17-21): the cited code is part of that function.
    verdict = check("The `validate_token` function raises `TokenExpiredError`", 19, 20)
    assert verdict.verdict == "supports"
    assert verdict.reasoning.startswith(
        "2 of 2 content terms found (score 1.00): `validate_token` (function definition at "
        "lines 17-21, enclosing the cited range), `TokenExpiredError` (line 20)."
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
    assert verdict.verdict == "unverified"  # "multiplies" is behaviour
    defined = verify_extractive(
        "The `subtotal` property is defined here", source, 2, 4, index, ExtractiveConfig()
    )
    assert defined.verdict == "supports"
    assert "`subtotal` (method definition at line 3)" in defined.reasoning


def test_labels_use_the_column_not_just_the_line() -> None:
    # Positions inside strings and comments are told apart once a decision reads the parse.
    verdict = check('`save` has `db.insert` and "users"', 13, 14)
    assert '`db.insert` (line 14), "users" (string, line 14)' in verdict.reasoning
    quick = check('`db.insert` writes "users"', 13, 14)  # behaviour: tokens only, no parse
    assert quick.reasoning.startswith(
        '2 of 2 content terms found (score 1.00): `db.insert` (line 14), "users" (line 14)'
    )


def test_quoted_text_must_not_be_glued_to_letters() -> None:
    # "ser" occurs inside "users" but not on its own.
    verdict = check('It writes "ser"', 13, 14)
    assert verdict.missing_terms == ("ser",)


def test_coverage_verdict_follows_the_seed_thresholds() -> None:
    rule = check("`validate_token` raises `TokenExpiredError` after `leeway_seconds`", 17, 21)
    assert rule.score == 0.6667  # 3 + 3 of 9
    assert coverage_verdict(rule, ExtractiveConfig()).verdict == "partial"
    assert coverage_verdict(rule, ExtractiveConfig(supports_threshold=0.6)).verdict == "supports"
    low = ExtractiveConfig(partial_threshold=0.7)
    assert coverage_verdict(rule, low).verdict == "not_supports"
    assert coverage_verdict(rule, low).confidence == "medium"


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
    verdict = verify_extractive("The `User` class", code, 3, 5, index, ExtractiveConfig())
    assert "`User` (class definition at lines 1-6, enclosing the cited range)" in verdict.reasoning
    assert verdict.verdict == "supports"
    struct = verify_extractive("The `User` struct", code, 3, 5, index, ExtractiveConfig())
    assert struct.verdict == "supports"  # a Java class is accepted as a struct (same family)
    field = verify_extractive("The `User` field", code, 3, 5, index, ExtractiveConfig())
    assert field.missing_terms == ("User",)
    assert "`User` (defined at line 3 as a method, not a field)" in field.reasoning


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
    assert verdict.verdict in ("supports", "not_supports", "unverified")  # never partial
    if verdict.verdict != "unverified":
        assert verdict.confidence == "high"
    if verdict.score is None:
        assert verdict.matched_terms == verdict.missing_terms == ()
    else:
        assert 0.0 <= verdict.score <= 1.0
        assert not set(verdict.matched_terms) & set(verdict.missing_terms)
    if verdict.verdict == "supports":
        assert verdict.missing_terms == () or verdict.score is not None
    if verdict.hint_lines is not None:
        lo, hi = verdict.hint_lines
        assert 1 <= lo <= hi <= INDEX.line_count


def test_no_rejection_by_rule_in_code_without_a_symbol_index() -> None:
    # The same lines as Cython (no bundled grammar): the definition around the range is
    # unknown, so a name missing from it may be that definition's: the judge decides.
    blind = build_symbol_index(AUTH_PY, "cython")
    verdict = check("`make_user` builds users", 17, 21, index=blind)
    assert verdict.verdict == "unverified"
    assert verdict.missing_terms == ("make_user", "users")


def test_documents_without_an_index_are_still_checked_by_rule() -> None:
    text_index = build_symbol_index(AUTH_PY, "markdown")
    verdict = check("`make_user` builds users", 17, 21, index=text_index)
    assert verdict.verdict == "not_supports"
