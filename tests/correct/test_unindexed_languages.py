"""Code citecal has no symbol index for is searched as text, never taken as absent (issue 31).

Tried on a Swift package before Swift was indexed, ``correct`` with an always-right
judge removed true claims as "names nothing the repository defines", and on a
Clojure package it refused to run. Cython still has no bundled grammar: it stands
for every language the index does not know (docs/explanation/routing.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from correct_factories import judge_config as judge_settings

from citecal.config import Config
from citecal.correct import CorrectionRun, RepoIndex, correct_report
from citecal.source import open_store
from citecal.testing import FakeOpenAIServer
from citecal.testing.openai_server import ChatRequest, Reply

PACKER = """# cython: language_level=3
cdef class Packer:
    cdef object _buffer

    def __cinit__(self):
        self._buffer = bytearray()

    cpdef bytes pack(self, object obj):
        self._buffer.extend(obj)
        return bytes(self._buffer)
"""

HELPER = '''"""Helpers."""


def version():
    return "1.0"
'''


def _never_supports(request: ChatRequest) -> Reply | None:
    """A judge that finds no candidate supporting any claim (the removal path needs one)."""
    answers = [
        {"claim_id": c.n, "supports": False, "score": 0.05, "confidence": "high", "reasoning": "no"}
        for c in request.claims
    ]
    if not answers:
        return None
    if request.is_batch:
        return Reply.json({"results": answers} if request.response_format else answers)
    return Reply(content=json.dumps({k: v for k, v in answers[0].items() if k != "claim_id"}))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "msgpk"
    (root / "msgpk").mkdir(parents=True)
    (root / "msgpk" / "_packer.pyx").write_text(PACKER)
    (root / "msgpk" / "helpers.py").write_text(HELPER)
    return root


@pytest.fixture
def judge_config(tmp_path: Path) -> Iterator[tuple[Config, object]]:
    from citecal.verify.judge import build_judge

    with FakeOpenAIServer(handler=_never_supports) as srv:
        config = judge_settings(srv.base_url, tmp_path)
        judge = build_judge(config.judge)
        try:
            yield config, judge
        finally:
            judge.close()


def _correct(root: Path, text: str, config: Config, judge: object) -> CorrectionRun:
    with open_store(root) as store:
        return correct_report(text, store, config, judge=judge)  # type: ignore[arg-type]


def test_text_only_files_are_indexed_as_windows_without_definitions(repo: Path) -> None:
    with open_store(repo) as store:
        index = RepoIndex.build(store)
    assert index.text_only == {"msgpk/_packer.pyx"}
    assert index.definitions_named("Packer") == []  # unknown, not absent
    assert index.text_only_uses("Packer") == ["msgpk/_packer.pyx"]
    assert index.text_only_uses("version") == []  # helpers.py is indexed


def test_a_claim_naming_code_in_an_unindexed_language_is_never_removed(
    repo: Path, judge_config: tuple[Config, object]
) -> None:
    text = "`Packer` keeps its output in a `bytearray` [msgpk/packer.py:1-4].\n"
    run = _correct(repo, text, *judge_config)
    assert [c.strategy for c in run.output.corrections if c.strategy == "remove"] == []
    (left,) = run.output.remaining
    assert left.reason == (
        "the claim names `Packer`, which appears in msgpk/_packer.pyx (code whose definitions "
        "citecal cannot all know: searched as text): left for review"
    )


def test_a_claim_naming_nothing_anywhere_is_still_removed(
    repo: Path, judge_config: tuple[Config, object]
) -> None:
    text = "`Unpacker` streams objects from a socket [msgpk/unpacker.py:1-4].\n"
    run = _correct(repo, text, *judge_config)
    assert [c.strategy for c in run.output.corrections] == ["remove"]


def test_a_file_parsed_with_syntax_errors_is_not_proof_of_absence(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    # a macro the C grammar does not know around a definition
    (root / "a.c").write_text("EXPORT_API(int) broken(int x {\n  return helper(x);\n}\n")
    (root / "b.c").write_text("int fine(int x) {\n  return x;\n}\n")
    with open_store(root) as store:
        index = RepoIndex.build(store)
    assert index.text_only == {"a.c"}
    assert index.text_only_uses("helper") == ["a.c"]


def test_a_repository_of_only_unindexed_code_can_be_corrected(tmp_path: Path) -> None:
    root = tmp_path / "lua"
    root.mkdir()
    (root / "init.lua").write_text("local M = {}\nfunction M.greet(name)\n  return name\nend\n")
    with open_store(root) as store:
        index = RepoIndex.build(store)
    assert index.text_only == {"init.lua"} and index.chunks


def test_a_repository_of_documents_only_is_refused_with_a_reason(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "README.md").write_text("# Hello\n")
    from citecal.errors import InputError

    with open_store(root) as store, pytest.raises(InputError, match="no source files"):
        RepoIndex.build(store)
