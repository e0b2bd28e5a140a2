"""The labels judge (README "Ground truth", ``--judge labels``): answers from people's labels,
served by the local OpenAI-protocol server and asked by citecal's real judge client.

The hand-checked case is semver-011 of ``datasets/groundtruth/semver/labels.json``:
"`Prerelease` and `BuildMetadata` both implement `Deref<Target = str>`", cited at
``src/lib.rs:546-580`` (people scored it 1: those lines are the inherent impls), whose
support people placed at ``src/impls.rs:23-37``. Read in semver 1.0.23: impls.rs line 23
is ``impl Deref for Prerelease {`` and line 31 ``impl Deref for BuildMetadata {``, both with
``type Target = str;`` (the same lines are ``tests/source/data/definitions/impls.rs``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citecal.bench._labels import _load_one
from citecal.config import JudgeConfig
from citecal.testing import FakeOpenAIServer
from citecal.testing.labels_judge import LabelsJudge, normalise_claim

ROOT = Path(__file__).resolve().parents[2]
CLAIM = (
    "`Prerelease` and `BuildMetadata` both implement `Deref<Target = str>`, so they can be "
    "used directly as string slices."
)
IMPLS = (ROOT / "tests/source/data/definitions/impls.rs").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def labels() -> LabelsJudge:
    # Only the label file is read here: the package sources need not be fetched.
    return LabelsJudge.from_groundtruth(
        [_load_one(ROOT / "datasets/groundtruth/semver/labels.json", ROOT)]
    )


@pytest.fixture
def server(labels: LabelsJudge) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(handler=labels) as srv:
        yield srv


def _ask(server: FakeOpenAIServer, tmp_path: Path, claim: str, path: str, lo: int, hi: int):  # type: ignore[no-untyped-def]
    from citecal.verify.judge import JudgeRequest, build_judge

    judge = build_judge(
        JudgeConfig(base_url=server.base_url, cache=False, escalation_model=None, timeout_s=5.0)
    )
    code = "\n".join(IMPLS.splitlines()[lo - 1 : hi]) if path == "src/impls.rs" else "x"
    try:
        run = judge.judge(
            [
                JudgeRequest(
                    key="k",
                    claim=claim,
                    citation=f"[{path}:{lo}-{hi}]",
                    file_path=path,
                    language="rust",
                    start_line=lo,
                    end_line=hi,
                    code=code,
                )
            ]
        )
    finally:
        judge.close()
    return run.verdicts["k"]


def test_hand_checked_case_supported_where_people_placed_it(
    labels: LabelsJudge, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # The two Deref impls, and a range overlapping only the second one.
    assert _ask(server, tmp_path, CLAIM, "src/impls.rs", 23, 37).verdict == "supports"
    assert _ask(server, tmp_path, CLAIM, "src/impls.rs", 31, 40).verdict == "supports"
    # The original citation: people scored it 1, and the lines right below the support.
    assert _ask(server, tmp_path, CLAIM, "src/lib.rs", 546, 580).verdict == "not_supports"
    assert _ask(server, tmp_path, CLAIM, "src/impls.rs", 39, 50).verdict == "not_supports"
    assert server.calls == 4


def test_a_labelled_citation_is_answered_by_its_label(labels: LabelsJudge) -> None:
    # semver-008 cites the docs of Version::parse (score 0); its support is 506-516.
    claim = (
        "The documented failure cases of `VersionReq::parse` include a missing comma between "
        "comparators (`>=1.0 <2.0`) and unsupported wildcard syntax (`*.*`)"
    )  # as citecal extracts it: no final full stop
    assert labels.verdict(claim, "[src/lib.rs:408-431]")["supports"] is False
    assert labels.verdict(claim, "[src/lib.rs:500-510]")["supports"] is True
    assert labels.verdict(claim, "[src/lib.rs:517-530]")["supports"] is False


def test_unknown_claims_are_counted_not_supported(labels: LabelsJudge) -> None:
    before = labels.unmatched
    answer = labels.verdict("Entirely unrelated words about kittens", "[src/lib.rs:1-5]")
    assert answer["supports"] is False and labels.unmatched == before + 1
    assert normalise_claim("`A::b` does *C*.") == "a b does c"
