"""The ground-truth benchmark: scoring arithmetic, matching, the CLI, and the regression gate."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.bench import Baseline, read_baseline, regressions
from citecal.bench._labels import CitationLabel
from citecal.bench._score import Scored, metrics
from citecal.cli import cli
from citecal.models import CitationResult

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "datasets" / "groundtruth"
SOURCES = ROOT / ".citecal" / "groundtruth"


def label(i: int, score: int, category: str = "literal") -> CitationLabel:
    return CitationLabel(
        id=f"x-{i:03d}",
        citation=f"[a.py:{i}]",
        claim="c",
        structural="valid",
        human_score=score,
        category=category,  # type: ignore[arg-type]
        difficulty="easy",
        rationale="r",
    )


def row(i: int, verdict: str | None, valid: bool = True) -> CitationResult:
    return CitationResult(
        id=str(i),
        citation=f"[a.py:{i}]",
        file_path="a.py",
        start_line=i,
        end_line=i,
        claim="c",
        section="",
        paragraph_index=0,
        position=i,
        valid=valid,
        error=None if valid else "no such file",
        failure_type=None,
        mode="extractive",
        verdict=verdict if valid else None,
        method="extractive",
        confidence="high",
        score=None,  # type: ignore[arg-type]
        reasoning=None,
        matched_terms=[],
        missing_terms=[],
        suggested_action=None,
        model=None,
        prompt_version=None,
    )


def test_metrics_worked_example() -> None:
    # people:  S S S S u u u u   (S = score >= 2)
    # citecal: s n ? p s n ! ?   (s supports, n not_supports, p partial, ! invalid, ? unverified)
    people = [3, 2, 3, 2, 1, 0, 0, 1]
    said: list[tuple[str | None, bool]] = [
        ("supports", True),
        ("not_supports", True),
        ("unverified", True),
        ("partial", True),
        ("supports", True),
        ("not_supports", True),
        (None, False),
        ("unverified", True),
    ]
    items = [
        Scored("x", "python", label(i, h), row(i, v, ok))
        for i, (h, (v, ok)) in enumerate(zip(people, said, strict=True), start=1)
    ]
    m = metrics(items)
    # decided: 1 2 4 5 6 7 (6 of 8); agree: 1 (s/S), 6 (n/u), 7 (!/u) -> 3 of 6 = 0.5
    assert (m.n, m.decided, m.undecided, m.agreement) == (8, 6, 2, 0.5)
    # false supports: 5 (1 of 4 unsupported); false rejects: 2 and 4 (partial is not support)
    assert (m.false_supports, m.false_support_rate) == (1, 0.25)
    assert (m.false_rejects, m.false_reject_rate) == (2, 0.5)
    # coverage 6/8 over all; valid 7, decided valid 5 -> 5/7
    assert (m.decision_coverage, m.decision_coverage_valid) == (0.75, round(5 / 7, 4))
    # precision: 1 true of 2 predicted; recall: 1 of 4 supported; F1 = 2·0.5·0.25/0.75
    assert (m.precision, m.recall, m.f1) == (0.5, 0.25, round(1 / 3, 4))
    assert m.structural_agreement == 0.875  # item 7 is labelled valid, citecal found it invalid


def test_a_label_without_a_citation_is_undecided_and_listed() -> None:
    m = metrics([Scored("x", "go", label(1, 3), None)])
    assert (m.decided, m.undecided, m.recall) == (0, 1, 0.0)


def test_regressions_compare_each_figure_in_its_direction() -> None:
    base = read_baseline(DATASET / "baseline.json")
    good = metrics([Scored("x", "go", label(1, 3), row(1, "supports"))])
    assert regressions(good, base) == []
    bad = metrics([Scored("x", "go", label(1, 3), row(1, "not_supports"))])
    found = regressions(bad, base)
    assert any(line.startswith("agreement fell to 0.0") for line in found)
    assert any(line.startswith("false_reject_rate rose to 1.0") for line in found)


def _write_set(root: Path, citations: list[dict[str, object]], report: str) -> Path:
    d = root / "ds" / "tiny"
    d.mkdir(parents=True)
    (d / "report.md").write_text(report)
    (d / "labels.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "package": "tiny",
                "version": "1",
                "language": "python",
                "citations": citations,
            }
        )
    )
    src = root / "src" / "tiny-1"
    src.mkdir(parents=True)
    (src / "a.py").write_text("def load(path):\n    return open(path).read()\n")
    return root


def _label_dict(cid: str, citation: str, occurrence: int, score: int) -> dict[str, object]:
    return {
        "id": cid,
        "citation": citation,
        "occurrence": occurrence,
        "claim": "c",
        "structural": "valid",
        "human_score": score,
        "category": "literal",
        "difficulty": "easy",
        "rationale": "r",
    }


def test_cli_matches_repeated_citations_by_occurrence(tmp_path: Path) -> None:
    report = (
        "The `load` function takes `path` [a.py:1-2].\n\n"
        "The `save` function writes `settings` [a.py:1-2].\n"
    )
    labels = [_label_dict("t-1", "[a.py:1-2]", 0, 3), _label_dict("t-2", "[a.py:1-2]", 1, 0)]
    root = _write_set(tmp_path, labels, report)
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(root / "src"),
            "--no-llm",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["overall"]["agreement"] == 1.0 and out["overall"]["decided"] == 2
    assert out["not_extracted"] == [] and out["disagreements"] == []
    # Swap the labels' occurrences: both citations are now judged against the wrong label.
    swapped = [_label_dict("t-1", "[a.py:1-2]", 1, 3), _label_dict("t-2", "[a.py:1-2]", 0, 0)]
    (root / "ds" / "tiny" / "labels.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "package": "tiny",
                "version": "1",
                "language": "python",
                "citations": swapped,
            }
        )
    )
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(root / "src"),
            "--no-llm",
            "-f",
            "json",
        ],
    )
    assert json.loads(res.stdout)["overall"]["agreement"] == 0.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(human_score=7), "human_score"),
        (lambda d: d.update(citation="[a.py]"), "not a [path:N-M] citation"),
        (lambda d: d.update(category="nonsense"), "category"),
    ],
)
def test_cli_bad_label_file_is_one_line_exit_2(
    mutate: Callable[[dict[str, object]], None], message: str, tmp_path: Path
) -> None:
    bad = _label_dict("t-1", "[a.py:1-2]", 0, 3)
    mutate(bad)
    root = _write_set(tmp_path, [bad], "The `load` function takes `path` [a.py:1-2].\n")
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(root / "src"),
            "--no-llm",
        ],
    )
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_cli_sources_not_fetched_says_how(tmp_path: Path) -> None:
    root = _write_set(tmp_path, [_label_dict("t-1", "[a.py:1-2]", 0, 3)], "x [a.py:1-2].\n")
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(tmp_path / "no"),
            "--no-llm",
        ],
    )
    assert res.exit_code == 2 and "make groundtruth" in res.output


@pytest.fixture(scope="module")
def fetched() -> Path:
    """The pinned package sources (``make groundtruth`` fetches them; idempotent)."""
    proc = subprocess.run(
        [sys.executable, str(DATASET / "fetch.py"), "--dest", str(SOURCES)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"fetching the ground-truth sources failed:\n{proc.stderr[-2000:]}")
    return SOURCES


def test_deterministic_figures_do_not_fall_below_the_baseline(fetched: Path) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(DATASET),
            "--sources",
            str(fetched),
            "--no-llm",
            "--baseline",
            str(DATASET / "baseline.json"),
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert {"axios", "axios/natural", "bzip2/natural", "scopt/natural"} <= set(report["sets"])
    assert len({s.split("/")[0] for s in report["sets"]}) >= 10
    assert report["by_origin"]["natural"]["overall"]["n"] >= 250
    assert report["overall"]["n"] >= 800
    assert report["not_extracted"] == []
    assert len(report["groups"]["language"]) >= 6


def _v1_set() -> dict[str, object]:
    return {
        "schema_version": 1,
        "package": "tiny",
        "version": "1",
        "language": "python",
        "citations": [
            _label_dict("t-1", "[a.py:1-2]", 0, 3),
            {**_label_dict("t-2", "[a.py:3]", 0, 0), "category": "off_range"},
        ],
    }


def test_v1_label_files_are_upgraded_planted_with_kind_and_fault_split() -> None:
    from citecal.bench._labels import LabelSet, upgrade_v1

    labels = LabelSet.model_validate(upgrade_v1(_v1_set()))
    assert labels.schema_version == 2 and labels.origin == "planted"
    first, second = labels.citations
    assert (first.origin, first.claim_kind, first.fault) == ("planted", "literal", None)
    assert (second.claim_kind, second.fault, second.category) == (None, "off_range", "off_range")


def _natural_set(tmp_path: Path, sentences: list[dict[str, object]]) -> Path:
    """A package with a v1 planted set and a v2 natural set with a two-citation sentence."""
    root = _write_set(tmp_path, _v1_set()["citations"], "x [a.py:1-2] y [a.py:3].\n")  # type: ignore[arg-type]
    pkg = root / "ds" / "tiny"
    (pkg / "report-natural.md").write_text(
        "The `load` function takes `path` [a.py:1-2] [a.py:3].\n"
    )
    cits = [
        {
            **_label_dict("t-n1", "[a.py:1-2]", 0, 3),
            "origin": "natural",
            "claim_kind": "literal",
            "sentence": "t-s1",
        },
        {
            **_label_dict("t-n2", "[a.py:3]", 0, 1),
            "origin": "natural",
            "claim_kind": "literal",
            "fault": "off_range",
            "category": "off_range",
            "sentence": "t-s1",
        },
    ]
    (pkg / "labels-natural.json").write_text(
        json.dumps(
            {
                "schema_version": 2,
                "package": "tiny",
                "version": "1",
                "language": "python",
                "report": "report-natural.md",
                "origin": "natural",
                "citations": cits,
                "sentences": sentences,
            }
        )
    )
    return root


def test_a_package_holds_planted_and_natural_sets_scored_apart(tmp_path: Path) -> None:
    sentence = {
        "id": "t-s1",
        "claim": "c",
        "citations": ["t-n1", "t-n2"],
        "human_score": 3,
        "rationale": "r",
    }
    root = _natural_set(tmp_path, [sentence])
    from citecal.bench import load_groundtruth

    sets = load_groundtruth(root / "ds", root / "src")
    assert [(g.id, g.package, g.origin) for g in sets] == [
        ("tiny", "tiny", "planted"),
        ("tiny/natural", "tiny", "natural"),
    ]
    assert load_groundtruth(root / "ds", root / "src", ("tiny/natural",))[0].id == "tiny/natural"
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(root / "src"),
            "--no-llm",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["overall"]["n"] == 4
    assert out["by_origin"]["natural"]["overall"]["n"] == 2
    assert out["by_origin"]["planted"]["overall"]["n"] == 2
    assert set(out["by_origin"]["natural"]["groups"]) == {
        "language",
        "size",
        "category",
        "claim_kind",
        "fault_class",
    }
    assert out["groups"]["size"]["small"]["n"] == 4  # a few lines of code
    assert set(out["groups"]["fault_class"]) <= {"supported", "placement", "content"}
    assert out["groups"]["package"].keys() == {"tiny"}


@pytest.mark.parametrize(
    ("sentence", "message"),
    [
        (
            {
                "id": "t-s1",
                "claim": "c",
                "citations": ["t-n1", "t-n9"],
                "human_score": 3,
                "rationale": "r",
            },
            "no citation label t-n9",
        ),
        (
            {
                "id": "t-s2",
                "claim": "c",
                "citations": ["t-n1", "t-n2"],
                "human_score": 3,
                "rationale": "r",
            },
            "sentence should be t-s2",
        ),
    ],
)
def test_sentence_labels_must_name_their_citations(
    sentence: dict[str, object], message: str, tmp_path: Path
) -> None:
    root = _natural_set(tmp_path, [sentence])
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(root / "src"),
            "--no-llm",
        ],
    )
    assert res.exit_code == 2 and message in res.output


def test_a_label_set_cannot_point_outside_the_dataset(tmp_path: Path) -> None:
    bad = {**_v1_set(), "report": "../../../etc/passwd"}
    root = _write_set(tmp_path, bad["citations"], "x [a.py:1-2].\n")  # type: ignore[arg-type]
    (root / "ds" / "tiny" / "labels.json").write_text(json.dumps(bad))
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "ds"),
            "--sources",
            str(root / "src"),
            "--no-llm",
        ],
    )
    assert res.exit_code == 2 and "leads out of" in res.output


def _bench(root: Path, *extra: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(
        cli,
        ["bench", "groundtruth", "--dataset", str(root / "ds"), "--sources", str(root / "src"),
         "--no-llm", *extra],
    )  # fmt: skip
    return res.exit_code, res.stdout, res.stderr


def test_cli_non_utf8_report_is_one_line_exit_2(tmp_path: Path) -> None:
    root = _write_set(tmp_path, [_label_dict("t-1", "[a.py:1-2]", 0, 3)], "x [a.py:1-2].\n")
    report = root / "ds" / "tiny" / "report.md"
    report.write_bytes(b"The `load` function \xff\xfe reads [a.py:1-2].\n")
    code, out, err = _bench(root)
    assert (code, out) == (2, "")
    assert err == (f"Error: report is not valid UTF-8 ({report}, byte 20): re-encode it as UTF-8\n")


def _baseline(root: Path, **changes: object) -> Path:
    data: dict[str, object] = {
        "schema_version": 1,
        "judge": None,
        "sets": ["tiny"],
        "figures": {"agreement": 0.5, "precision": 0.5},
    }
    data.update(changes)
    path = root / "baseline.json"
    path.write_text(json.dumps(data))  # NaN is written as the JSON token NaN
    return path


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_cli_baseline_with_a_non_finite_figure_is_refused(tmp_path: Path, value: float) -> None:
    root = _write_set(tmp_path, [_label_dict("t-1", "[a.py:1-2]", 0, 3)], "x [a.py:1-2].\n")
    base = _baseline(root, figures={"agreement": value, "precision": 1.0})
    code, out, err = _bench(root, "--baseline", str(base))
    assert (code, out) == (2, "")
    token = "NaN" if value != value else "Infinity"
    assert err == (
        f"Error: {base}: not a ground-truth baseline: figures.agreement: "
        f"{token} is not a finite number\n"
    )


def test_cli_baseline_of_other_label_sets_is_refused_before_the_run(tmp_path: Path) -> None:
    root = _write_set(tmp_path, [_label_dict("t-1", "[a.py:1-2]", 0, 3)], "x [a.py:1-2].\n")
    base = _baseline(root, sets=["tiny", "axios"])
    code, out, err = _bench(root, "--baseline", str(base))
    assert (code, out) == (2, "")
    assert err == (
        f"Error: {base} was measured on other label sets (not in this run: axios): its figures "
        "cannot be compared with this run's (use the same --only, or write a baseline for "
        "these sets with --write-baseline)\n"
    )


def test_regressions_never_pass_on_nan() -> None:
    base = Baseline(judge=None, sets=["x"], figures={"agreement": 0.5})
    now = metrics([Scored("x", "go", label(1, 3), row(1, "supports"))])
    assert regressions(now.model_copy(update={"agreement": float("nan")}), base) == [
        "agreement is not a number in this run (nan; baseline 0.5)"
    ]


def test_cli_write_baseline_path_is_checked_before_the_run(tmp_path: Path) -> None:
    root = _write_set(tmp_path, [_label_dict("t-1", "[a.py:1-2]", 0, 3)], "x [a.py:1-2].\n")
    # a report the run would refuse: only an early check of the path reports the path
    (root / "ds" / "tiny" / "report.md").write_bytes(b"\xff")
    target = tmp_path / "no-such-dir" / "baseline.json"
    code, out, err = _bench(root, "--write-baseline", str(target))
    assert (code, out) == (2, "")
    assert err.startswith("Error: ") and "no-such-dir" in err and "UTF-8" not in err
    assert len(err.splitlines()) == 1


def test_sentence_labels_are_scored_against_the_joint_verdict(tmp_path: Path) -> None:
    sentence = {
        "id": "t-s1",
        "claim": "c",
        "citations": ["t-n1", "t-n2"],
        "human_score": 1,
        "rationale": "r",
    }
    root = _natural_set(tmp_path, [sentence])
    code, out, _ = _bench(root, "-f", "json")
    assert code == 0
    joint = json.loads(out)["sentences"]
    # [a.py:3] is past the end of the 2-line file: the sentence is not supported jointly,
    # and people said so (joint score 1).
    assert joint == {
        "n": 1,
        "supported": 0,
        "decided": 1,
        "agreement": 1.0,
        "false_supports": 0,
        "false_rejects": 0,
    }


def test_cli_judge_labels_answers_from_the_labels(tmp_path: Path) -> None:
    """``--judge labels``: claims the rules leave open are decided as people labelled them."""
    report = (
        "Reading everything at once keeps the loader simple [a.py:1-2].\n\n"
        "It retries three times on network errors [a.py:1-2].\n"
    )
    labels = [
        {**_label_dict("t-1", "[a.py:1-2]", 0, 3), "claim": report.split(" [")[0]},
        {
            **_label_dict("t-2", "[a.py:1-2]", 0, 0),
            "claim": "It retries three times on network errors",
        },
    ]
    labels[1]["citation"] = "[a.py:1-2]"
    labels[1]["occurrence"] = 1
    root = _write_set(tmp_path, labels, report)
    args = ["bench", "groundtruth", "--dataset", str(root / "ds"), "--sources", str(root / "src")]
    res = CliRunner().invoke(cli, [*args, "--no-llm", "-f", "json"])
    assert json.loads(res.stdout)["overall"]["decided"] == 0  # the rules decide neither
    res = CliRunner().invoke(cli, [*args, "--judge", "labels", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["judge"] == "labels"
    assert (out["overall"]["decided"], out["overall"]["agreement"]) == (2, 1.0)
    assert "labels judge: 2 claims answered, 0 without a matching label" in res.stderr
    res = CliRunner().invoke(cli, [*args, "--judge", "labels", "--no-llm"])
    assert res.exit_code == 2 and "exclude each other" in res.output
