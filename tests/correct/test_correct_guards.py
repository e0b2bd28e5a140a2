"""What the loop refuses to do without a judge: guess between equal places, move a citation
away from its subject's definition, cite a built bundle, remove what it cannot search for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citecal.config import Config
from citecal.correct import CorrectionRun, correct_report
from citecal.source import open_store


def _run(repo: Path, text: str) -> CorrectionRun:
    with open_store(repo) as store:
        return correct_report(text, store, Config(), no_judge_reason="--no-llm")


def test_two_equal_places_are_listed_not_chosen(
    make_repo: Callable[[dict[str, str | bytes]], Path],
) -> None:
    body = "def helper():\n    return shared_value()\n"
    repo = make_repo({"pkg/a.py": body, "pkg/b.py": body, "pkg/c.py": "X = 1\n"})
    text = "`helper` keeps asking `shared_value` until it answers [pkg/c.py:5].\n"  # past the end
    run = _run(repo, text)
    assert run.output.corrections == [] and run.corrected == text
    (left,) = run.output.remaining
    assert left.reason.startswith("ambiguous: several places fit about equally: ")
    assert "[pkg/a.py:" in left.reason and "[pkg/b.py:" in left.reason


def test_a_citation_of_the_subjects_definition_stays_in_its_file(
    make_repo: Callable[[dict[str, str | bytes]], Path],
) -> None:
    repo = make_repo(
        {
            "pkg/a.py": "def alpha(x):\n    y = x + 1\n    return y\n",
            "pkg/wire.py": "def wire():\n    alpha(1)\n    beta(2)\n    gamma(3)\n",
            "pkg/parts.py": "def beta(x):\n    return x\n\n\ndef gamma(x):\n    return x\n",
        }
    )
    text = "`alpha` hands its result to `beta` and then to `gamma` [pkg/a.py:1-3].\n"
    run = _run(repo, text)
    assert [c.new for c in run.output.corrections if c.new is not None] == []
    assert run.corrected == text  # not moved to wire.py, which only calls `alpha`


def test_a_built_bundle_is_never_a_new_place(
    make_repo: Callable[[dict[str, str | bytes]], Path],
) -> None:
    repo = make_repo(
        {
            "src/lib.js": "export function foo() {\n  return 1;\n}\n",
            "dist/lib.js": "function foo(){return bar()}\nfunction bar(){return 2}\n",
        }
    )
    run = _run(repo, "`foo` returns whatever `bar` gives back [src/gone.js:1-3].\n")
    assert all(
        c.new is None or not c.new.file_path.startswith("dist/") for c in run.output.corrections
    )
    assert all(c.strategy != "remove" for c in run.output.corrections)
    (left,) = run.output.remaining
    assert left.reason.startswith("needs a judge")


def test_a_claim_naming_no_code_is_not_removed_without_a_judge(
    make_repo: Callable[[dict[str, str | bytes]], Path],
) -> None:
    repo = make_repo({"pkg/a.py": "def alpha():\n    return 1\n"})
    text = "The module retries three times before giving up [pkg/missing.py:1-3].\n"
    run = _run(repo, text)
    assert run.output.corrections == [] and run.corrected == text
    (left,) = run.output.remaining
    assert left.reason.startswith("needs a judge")


def test_a_binary_file_citation_is_left_for_a_judge(
    make_repo: Callable[[dict[str, str | bytes]], Path],
) -> None:
    repo = make_repo(
        {"pkg/a.py": "def alpha():\n    return 1\n", "logo.png": b"\x89PNG\r\n\x00\x01"}
    )
    # A binary file supports nothing, but the claim may be supported elsewhere: searched
    # first, and without a judge nothing proves it is not (issue 21).
    text = "The page shows the company logo [logo.png:1-3].\n"
    run = _run(repo, text)
    assert run.output.corrections == [] and run.corrected == text
    (left,) = run.output.remaining
    assert left.reason.startswith("needs a judge")
