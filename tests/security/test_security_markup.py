"""No report, repository or judge text reaches a reader as HTML, a link or an image.

Annotators open Argilla fields rendered as Markdown (or set as HTML), and
users paste ``eval``/``calibrate``/``correct``/``bench -f markdown`` into pull
requests and wikis (README "Security"). Every hostile string of
:data:`markup_check.HOSTILE` must come out as the characters it is.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from markup_check import HOSTILE, html_elements, rendered_text, unsafe_markup

from citecal._markup import Markdown, html_text, md_code, md_fence, md_line, md_text
from citecal.annotate import build_records, load_spec
from citecal.annotate._settings import RECORD_SOURCES, AnnotationSpec, bundled_specs
from citecal.cli import cli
from citecal.models import CitationResult, EvalResult, ExcerptMatch, Summary

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"
NO_KEY_ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
NBSP = "\u00a0"
OUR_HTML = {"<details><summary>All citations</summary>", "</details>"}
"""The only HTML ``eval -f markdown`` writes itself (a collapsed table)."""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=NO_KEY_ENV)
    return result.exit_code, result.stdout, result.stderr


def words(text: str) -> list[str]:
    """The words of ``text``, whatever the spacing (a renderer may drop leading spaces)."""
    return text.replace(NBSP, " ").split()


# --------------------------------------------------------------------------- the escapes


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_renders_hostile_text_as_its_characters(text: str) -> None:
    md = md_text(text)
    assert unsafe_markup(md) == []
    assert words(rendered_text(md)) == words(text)
    assert rendered_text(md).count("\n") >= text.count("\n") - text.count("\n\n")


@pytest.mark.parametrize("text", HOSTILE)
def test_md_line_and_md_code_stay_on_one_line_and_inert(text: str) -> None:
    one = " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    for md in (md_line(text), md_code(text)):
        assert "\n" not in md and unsafe_markup(md) == []
        assert words(rendered_text(md)) == words(one)
        table = f"| a | b |\n|---|---|\n| {md} | x |"  # a pipe cannot split the cell
        assert unsafe_markup(table) == [] and rendered_text(table).endswith("x")


def test_md_code_keeps_a_plain_citation_a_code_span() -> None:
    assert md_code("[src/app.py:1-3]") == "`[src/app.py:1-3]`"
    assert md_code("a`b") == md_line("a`b")  # a backtick could close the span: escaped text


@pytest.mark.parametrize(
    "body",
    [
        "```\n<img src=x onerror=alert(1)>\n```",
        "x = 1\n````\n</code></pre><object data=http://127.0.0.2:9/>\n``````",
        "~~~\n<embed src=http://127.0.0.2:9/>\n~~~",
        "   ```\n<b>indented fence</b>",
    ],
)
def test_md_fence_cannot_be_closed_from_inside(body: str) -> None:
    from markup_check import _MD

    tokens = _MD.parse(md_fence(body, "python") + "\n\n<div>after</div>")
    assert tokens[0].type == "fence" and tokens[0].content == body + "\n"
    assert tokens[0].info == "python"
    assert [t.type for t in tokens[1:]] == ["html_block"]  # only what follows the fence


def test_md_fence_drops_a_language_that_is_not_a_name() -> None:
    assert md_fence("x", "py`<img src=x>").startswith("```\n")
    assert md_fence("x", None).startswith("```\n")


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_makes_no_element(text: str) -> None:
    escaped = html_text(text)
    assert html_elements(escaped) == [] and html.unescape(escaped) == text


# --------------------------------------------------------------------------- Argilla fields

ATTACK = "\n".join(HOSTILE)


def hostile_citation() -> CitationResult:
    """A valid citation whose every report-, repository- and judge-derived text is hostile."""
    return CitationResult.model_validate(
        {
            "id": "h1",
            "citation": "[src/<img src=x onerror=alert(1)>.py:1-3]",
            "file_path": "src/<img src=x onerror=alert(1)>.py",
            "start_line": 1,
            "end_line": 3,
            "claim": ATTACK,
            "section": "<form action=http://127.0.0.2:9/><input type=password></form>",
            "paragraph_index": 0,
            "position": 0,
            "valid": True,
            "error": None,
            "failure_type": None,
            "suggested_action": None,
            "mode": "abstractive",
            "verdict": "supports",
            "method": "llm",
            "confidence": "high",
            "score": 0.9,
            "reasoning": ATTACK,
            "matched_terms": ["<b>x</b>", "a`b"],
            "missing_terms": ["![i](http://127.0.0.2:9/t.png)"],
            "model": "<i>m</i>",
            "prompt_version": "v1",
            "language": "python`<img src=x>",
            "context": ATTACK,
            "cited_code": "```\n<object data=http://127.0.0.2:9/>\n````\n" + ATTACK,
            "excerpt": ATTACK,
            "excerpt_quoted": True,
            "excerpt_status": "unverified",
            "located": "<embed src=http://127.0.0.2:9/>",
            "excerpt_match": ExcerptMatch(start_line=1, end_line=2, score=0.5, text=ATTACK),
        }
    )


def hostile_eval(citation: CitationResult) -> EvalResult:
    summary = Summary(
        total_citations=1, valid_citations=1, validity_rate=1.0, extractive_checked=0,
        extractive_supports=0, extractive_precision=None, abstractive_checked=1,
        abstractive_supports=1, abstractive_precision=1.0, overall_precision=1.0,
        unverified=0, total_claims=1, cited_claims=1, coverage=1.0,
    )  # fmt: skip
    return EvalResult(
        report="<script>alert(1)</script>.md",
        repo="repo",
        summary=summary,
        citations=[citation],
        failed_citations=[],
    )


def every_source_spec(markdown: bool) -> AnnotationSpec:
    """A user's spec showing every record value, all as Markdown or all as text fields."""
    spec = load_spec()
    fields = [
        {"name": s.replace("_", "-"), "source": s, "use_markdown": markdown, "required": False}
        for s in RECORD_SOURCES
    ]
    return AnnotationSpec.model_validate({**spec.model_dump(), "fields": fields})


def field_problems(record_fields: dict[str, str], spec: AnnotationSpec) -> list[str]:
    problems = []
    for f in spec.fields:
        text = record_fields.get(f.name)
        if text is None:
            continue
        if f.use_markdown:
            problems += [f"{f.name}: {p}" for p in unsafe_markup(text)]
        else:
            problems += [f"{f.name}: <{t}>" for t in html_elements(text)]
    return problems


@pytest.mark.parametrize(
    "spec",
    [*bundled_specs(), "every value as Markdown", "every value as text"],
)
@pytest.mark.parametrize("blind", [False, True])
def test_no_field_carries_markup(spec: str, blind: bool) -> None:
    loaded = (
        every_source_spec(spec.endswith("Markdown"))
        if spec.startswith("every")
        else load_spec(spec)
    )
    (record,) = build_records(hostile_eval(hostile_citation()), loaded, blind=blind).records
    assert record.fields
    assert field_problems(dict(record.fields), loaded) == []


def test_annotators_read_the_claim_and_the_code_as_written() -> None:
    spec = load_spec()
    c = hostile_citation()
    (record,) = build_records(hostile_eval(c), spec).records
    assert words(rendered_text(record.fields["claim"])) == words(c.claim)
    assert words(rendered_text(record.fields["judge_reasoning"])) == words(ATTACK)
    from markup_check import _MD

    fences = [t for t in _MD.parse(record.fields["cited_code"]) if t.type == "fence"]
    assert len(fences) == 1 and "<object data=http://127.0.0.2:9/>" in fences[0].content
    assert fences[0].info == ""  # the hostile language name is dropped
    assert record.data is not None and record.data.claim == c.claim  # pull reads the raw text
    assert record.metadata["_citecal"]["claim"] == c.claim


def test_a_text_field_holds_escaped_html_of_the_plain_value() -> None:
    spec = every_source_spec(False)
    (record,) = build_records(hostile_eval(hostile_citation()), spec).records
    assert html.unescape(record.fields["claim"]) == ATTACK
    assert not isinstance(record.fields["cited-code"], Markdown)


# --------------------------------------------------------------------------- Markdown outputs


@pytest.fixture
def hostile_report(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text(
        'def add(a, b):\n    """Sum. <img src=x onerror=alert(1)> ```` """\n    return a + b\n'
    )
    report = tmp_path / "r.md"
    report.write_text(
        '# Notes <object data="http://127.0.0.2:9/o.html"></object>\n\n'
        "The `add` function returns a sum <img src=x onerror=alert(1)> "
        "<script>alert(1)</script> [src/app.py:1-3].\n\n"
        'The `add` function <embed src="http://127.0.0.2:9/e"> is defined [src/nothere.py:1-3].\n'
        "````\n<img src=x onerror=alert(2)>\n````\n\n"  # in the diff's context: ends a ```` fence
        '<form action="http://127.0.0.2:9/x"><input type=password></form> The `add` function '
        "takes two arguments [src/app.py:1].\n"
    )
    return report, repo


def outside_our_html(markdown: str) -> list[str]:
    return [p for p in unsafe_markup(markdown) if p.split(": ", 1)[-1].strip() not in OUR_HTML]


def test_eval_markdown_escapes_the_reports_html(hostile_report: tuple[Path, Path]) -> None:
    report, repo = hostile_report
    code, out, _ = run("eval", str(report), "--repo", str(repo), "--no-llm", "-f", "markdown")
    assert code == 0
    assert outside_our_html(out) == []
    seen = rendered_text(out)
    assert "<embed src=" in seen and "<img src=x onerror=alert(1)>" in seen  # shown, as text
    assert "`[src/nothere.py:1-3]`" in out  # a plain citation stays a code span


def test_correct_markdown_escapes_the_report_and_fences_the_diff(
    hostile_report: tuple[Path, Path],
) -> None:
    report, repo = hostile_report
    code, out, _ = run("correct", str(report), "--repo", str(repo), "--no-llm", "-f", "markdown")
    assert code == 0, out
    assert "| relocate | `[src/nothere.py:1-3]` | `[src/app.py:1-3]` |" in out
    assert unsafe_markup(out) == []


def test_calibrate_markdown_escapes_claims_notes_and_citations(tmp_path: Path) -> None:
    table = pd.read_parquet(TABLE)
    evil = list(HOSTILE)
    table["claim"] = [evil[i % len(evil)] for i in range(len(table))]
    table["notes"] = [evil[(i + 3) % len(evil)] for i in range(len(table))]
    table["citation"] = "[src/<img src=x onerror=alert(1)>.py:1-3]"
    table["judge_model"] = "<object data=http://127.0.0.2:9/>"
    path = tmp_path / "t.parquet"
    table.to_parquet(path)
    md = tmp_path / "r.md"
    code, _, err = run("calibrate", str(path), "-f", "markdown", "--by", "model", "-o", str(md))
    assert code == 0, err
    text = md.read_text()
    assert "## Disagreements" in text and "| Agreement (pairs) |" in text
    assert unsafe_markup(text) == []
    assert "<img src=x onerror=alert(1)>" in rendered_text(text)


def test_bench_markdown_escapes_claims() -> None:
    from citecal.bench._render import render_bench_markdown
    from citecal.bench._score import BenchReport, Disagreement, metrics

    wrong = Disagreement(
        id="<b>id</b>", type="false_support", citation="[a.py:1]", claim=ATTACK, human_score=0,
        category="wrong_code", verdict="supports", method="llm", mode="abstractive",
        reasoning=ATTACK, rationale=ATTACK,
    )  # fmt: skip
    report = BenchReport(
        judge="<i>judge</i>",
        sets=["<script>alert(1)</script>"],
        overall=metrics([]),
        groups={"mode": {"<img src=x onerror=alert(1)>": metrics([])}},
        disagreements=[wrong],
        not_extracted=["<embed src=http://127.0.0.2:9/>"],
    )
    out = render_bench_markdown(report)
    assert unsafe_markup(out) == [] and "<script>" in rendered_text(out)


def test_calibration_tables_escape_data_cells_but_not_figures() -> None:
    from citecal.calibrate._render_markdown import md_table, ours

    out = md_table(("a", "b"), [ours(("0.850", "[0.8, 0.9]")), ("x|<b>y</b>", "z")])
    assert "| 0.850 | [0.8, 0.9] |" in out and unsafe_markup(out) == []
    assert "x|<b>y</b>" in rendered_text(out)


def test_estimate_markdown_escapes_stratum_values(tmp_path: Path) -> None:
    judged = pd.read_parquet(TABLE.parent / "judged.parquet")
    judged["repo"] = [HOSTILE[3] if i % 2 else HOSTILE[7] for i in range(len(judged))]
    path = tmp_path / "judged.parquet"
    judged.to_parquet(path)
    code, out, err = run("estimate", str(path), "-a", str(TABLE), "-f", "markdown")
    assert code == 0, err
    assert "### By repo" in out and unsafe_markup(out) == []
    assert "<img src=x onerror=alert(1)>" in rendered_text(out)
