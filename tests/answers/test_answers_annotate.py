"""Answer citations as annotation records: verdicts, fields, and the spec each kind uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from citecal.annotate import build_records, load_spec
from citecal.annotate._settings import DEFAULT_SPEC_PATH
from citecal.answers import answer_verdict, answers_to_eval, validate_answers
from citecal.answers._annotate import ANSWER_MODEL
from citecal.commands.push import _answers_spec
from citecal.config import AnswersConfig
from citecal.evaluation import read_eval_json

EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "answers.jsonl"
SPECS = DEFAULT_SPEC_PATH.parent


def test_answer_citations_become_rows_with_verdicts_from_the_validation() -> None:
    result = validate_answers(EXAMPLE)
    ev = answers_to_eval(result)
    by_item = {r.citation.split(" #")[0].lstrip("["): r for r in ev.citations}
    assert len(ev.citations) == 6 and all(r.valid for r in ev.citations)
    perfect = by_item["perfect"]
    assert (perfect.verdict, perfect.confidence, perfect.score) == ("supports", "high", 0.85)
    assert perfect.claim.startswith("Filippo Brunelleschi introduced")
    assert perfect.cited_code is not None and perfect.cited_code.startswith("Around 1415")
    assert perfect.citation == "[perfect #0: Renaissance Art History · evidence[0]]"
    assert (perfect.section, perfect.excerpt_status) == (
        "Who introduced linear perspective?",
        "verified",
    )
    hallucinated = by_item["hallucinated"]
    assert (hallucinated.verdict, hallucinated.score) == ("not_supports", 0.0)
    # a span that is not in the answer: the claim falls back to the whole answer
    assert hallucinated.claim == "The dome of Florence Cathedral was completed in 1436."
    assert by_item["missing-fields"].verdict == "supports"  # quote found, no alignment score
    assert by_item["missing-fields"].confidence == "medium"
    assert (by_item["low-quality"].verdict, by_item["low-quality"].score) == ("partial", 0.12)
    assert by_item["wrong-quote"].verdict == "not_supports"
    assert by_item["wrong-quote"].excerpt_status == "unverified"
    assert all(r.model == ANSWER_MODEL for r in ev.citations)
    assert ev.gate == result.gate


@pytest.mark.parametrize(
    ("alignment", "expected"),
    [(0.9, ("supports", "high")), (0.5, ("supports", "medium")), (0.35, ("partial", "low"))],
)
def test_alignment_thresholds(alignment: float, expected: tuple[str, str]) -> None:
    from citecal.answers import check_citation

    raw = {"source": "s", "relevance": 1, "quote": "q", "alignment_score": alignment}
    check = check_citation(raw, 0, "answer", None, AnswersConfig())
    assert answer_verdict(check, AnswersConfig())[:2] == expected


def test_push_reads_a_validate_result_and_picks_its_spec(tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    from citecal.answers import write_validation

    write_validation(EXAMPLE, AnswersConfig(), out)
    ev = read_eval_json(out)
    assert len(ev.citations) == 6
    assert _answers_spec(ev) == "answer_citation"
    spec = load_spec(_answers_spec(ev))
    built = build_records(ev, spec)
    assert len(built.records) == 6 and not built.skipped
    fields = built.records[0].fields
    assert fields["claim"].startswith("Filippo Brunelleschi")
    assert fields["question"] == "Who introduced linear perspective?"
    assert (
        fields["excerpt"] == "Filippo Brunelleschi introduced the principles of linear perspective"
    )
    assert "Around 1415" in fields["evidence"]
    assert built.records[0].suggestions[0].value == 3
    assert built.records[0].metadata["judge_score"] == 0.85


@pytest.mark.parametrize("name", ["excerpt_support", "sentence_support", "answer_citation"])
def test_each_kind_has_a_valid_annotation_config(name: str) -> None:
    spec = load_spec(SPECS / f"{name}.yaml")
    assert spec.pull.score_question == "supports_claim"
    assert {f.value_source for f in spec.fields} >= {"claim", "citation", "cited_code"}
