"""Annotators are told how to accept a pre-filled suggestion (issue 24, what a newcomer hit).

In Argilla's annotation page the suggested value is already selected; clicking it deselects
it, so someone who clicks it to "agree" submits nothing. Every bundled dataset that pre-fills
answers says so in its guidelines.
"""

from __future__ import annotations

import pytest

from citecal.annotate._settings import bundled_specs, load_spec


@pytest.mark.parametrize("name", bundled_specs())
def test_guidelines_say_submit_accepts_a_suggestion(name: str) -> None:
    spec = load_spec(name)
    if not any(getattr(q, "suggest_from_verdict", None) for q in spec.questions):
        pytest.skip(f"{name} pre-fills no answer")
    assert "press **Submit**" in spec.guidelines
    assert "deselects it" in spec.guidelines
