"""Judge stability over repeats (``rejudge --repeats``, README "Judge confidence")."""

from __future__ import annotations

import math

import pandas as pd

from citecal.calibrate import record_stability, stability


def test_flip_rate_and_stability_on_a_hand_computed_example() -> None:
    verdicts = {
        "a": ["supports"] * 5,  # stable: 5/5
        "b": ["supports", "not_supports", "supports", "supports", "supports"],  # 4/5, flips
        "c": ["not_supports", "partial", "not_supports", "not_supports", "partial"],  # one side
        "d": ["supports", "not_supports", "supports", "not_supports", "unverified"],  # 2/4 tie
        "e": ["unverified"] * 5,  # never answered: left out
    }
    st = stability(verdicts)
    by = {r.record_id: r for r in st.records}
    # a 1, b 4/5, c 1 (partial sides with not_supports), d 2/4 (tie: the first answer's side)
    assert [by[k].stability for k in "abcd"] == [1.0, 0.8, 1.0, 0.5]
    assert by["e"].stability is None and not by["e"].flipped
    assert (by["b"].majority, by["c"].majority, by["d"].majority) == (
        "supports",
        "not_supports",
        "supports",
    )
    # Flip rate: b and d of the four answered claims = 2/4; mean stability (1 + .8 + 1 + .5)/4.
    assert math.isclose(st.flip_rate or 0, 0.5, abs_tol=1e-12)
    assert math.isclose(st.mean_stability or 0, 3.3 / 4, abs_tol=1e-12)
    assert st.repeats == 5


def test_unstable_claims_against_what_people_said() -> None:
    verdicts = {
        "a": ["supports"] * 3,
        "b": ["supports", "not_supports", "supports"],
        "c": ["not_supports"] * 3,
    }
    people = pd.DataFrame(
        {
            "record_id": ["a", "a", "b", "b", "c", "c"],
            "human_score": [3, 3, 3, 0, 0, 1],  # b: people split; a and c: they agree
        }
    )
    st = stability(verdicts, people)
    assert st.counts == {"unstable": 1, "stable": 2}
    assert st.people_split == {"unstable": 1.0, "stable": 0.0}
    # b's majority supports, people's median 1.5 does not: 0 of 1; a and c agree: 2 of 2.
    assert st.people_agree == {"unstable": 0.0, "stable": 1.0}


def test_one_record_with_no_verdicts() -> None:
    r = record_stability("x", [])
    assert (r.stability, r.flipped, r.majority) == (None, False, None)
