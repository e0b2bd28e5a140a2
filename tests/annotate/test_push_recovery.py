"""Pushes that are interrupted, raced or misdirected, against the real local Argilla stack.

README "Security": an interrupted first push leaves a *draft* dataset (created,
not all of its fields and questions, not published); the next push finishes it.
Two first pushes at once both succeed. An annotator's key and a server that is
not Argilla each give one clear line. Resources are named ``test_…`` and removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import argilla as rg
import pytest
from annotate_factories import ROOT, Stack
from click.testing import CliRunner, Result

from citecal.annotate import load_spec
from citecal.annotate._client import NotArgilla, argilla_errors
from citecal.annotate._settings import DEFAULT_SPEC_PATH, to_settings
from citecal.cli import cli
from citecal.testing import FakeOpenAIServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

EXAMPLE = ROOT / "datasets" / "examples"
VALID_CITATIONS = 40  # of the bundled example's 44 (README "Push an evaluation")


@dataclass
class Env:
    stack: Stack
    owner: rg.Argilla
    workspace: rg.Workspace
    tag: str
    eval_json: Path
    tmp: Path
    users: list[rg.User]

    def env(self, key: str | None = None) -> dict[str, str]:
        return {"ARGILLA_API_URL": self.stack.url, "ARGILLA_API_KEY": key or self.stack.api_key}

    def push(self, dataset: str, key: str | None = None) -> Result:
        args = [
            "push",
            str(self.eval_json),
            "--dataset",
            dataset,
            "--workspace",
            self.workspace.name,
        ]
        return CliRunner().invoke(cli, args, env=self.env(key))

    def push_process(self, dataset: str) -> subprocess.Popen[str]:
        exe = Path(sys.executable).parent / "citecal"
        args = [str(exe), "push", str(self.eval_json), "--dataset", dataset]
        return subprocess.Popen(
            [*args, "--workspace", self.workspace.name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **self.env()},
        )

    def dataset_model(self, name: str) -> Any | None:
        for model in self.owner.api.datasets.list(workspace_id=self.workspace.id):
            if model.name == name:
                return model
        return None

    def records(self, dataset_id: Any) -> list[str]:
        items = self.owner.api.http_client.get(
            f"/api/v1/datasets/{dataset_id}/records", params={"limit": 1000}
        ).json()["items"]
        return [str(r["external_id"]) for r in items]

    def assert_complete(self, name: str) -> None:
        model = self.dataset_model(name)
        assert model is not None and str(model.status) == "ready"
        ids = self.records(model.id)
        assert len(ids) == len(set(ids)) == VALID_CITATIONS
        fields = {f.name for f in self.owner.api.fields.list(model.id)}
        assert fields == {f.name for f in load_spec(None).fields}


@pytest.fixture(scope="module")
def env(argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tag = uuid.uuid4().hex[:8]
    tmp = tmp_path_factory.mktemp("recovery")
    eval_json = tmp / "eval.json"
    res = CliRunner().invoke(
        cli,
        ["eval", str(EXAMPLE / "report.md"), "--repo", str(EXAMPLE / "shopcart"), "--no-llm",
         "-f", "json", "-o", str(eval_json)],
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_recovery_{tag}", client=owner).create()
    users: list[rg.User] = []
    try:
        yield Env(argilla_stack, owner, ws, tag, eval_json, tmp, users)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for model in owner.api.datasets.list(workspace_id=ws.id):
                owner.api.datasets.delete(model.id)
            for user in users:
                user.delete()
            ws.delete()


def half_made(e: Env, name: str, spec_path: Path = DEFAULT_SPEC_PATH, fields: int = 2) -> Any:
    """The state an interrupted first push leaves: the dataset and a few of its fields."""
    settings = to_settings(load_spec(spec_path), 1, e.owner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = rg.Dataset(name=name, workspace=e.workspace, settings=settings, client=e.owner)
        model = e.owner.api.datasets.create(draft.api_model())
        dataset = rg.Dataset.from_model(model, e.owner)
        for field in list(settings.fields)[:fields]:
            field.dataset = dataset
            field.create()
    assert str(e.owner.api.datasets.get(model.id).status) == "draft"
    return model


@pytest.mark.parametrize("fields", [0, 2, 5])
def test_half_made_dataset_is_finished_by_the_next_push(env: Env, fields: int) -> None:
    name = f"test_half_{fields}_{env.tag}"
    half_made(env, name, fields=fields)
    res = env.push(name)
    assert res.exit_code == 0, res.output
    assert f"created dataset {name!r}" in res.output
    assert f"{VALID_CITATIONS} created, 0 updated" in res.output
    env.assert_complete(name)


def test_half_made_dataset_with_other_settings_is_recreated(env: Env) -> None:
    name = f"test_half_other_{env.tag}"
    binary = DEFAULT_SPEC_PATH.parent / "citation_support_binary.yaml"
    first = half_made(env, name, spec_path=binary, fields=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = to_settings(load_spec(binary), 1, env.owner)
        question = next(iter(settings.questions))
        question.dataset = rg.Dataset.from_model(first, env.owner)
        question.create()
    res = env.push(name)
    assert res.exit_code == 0, res.output
    env.assert_complete(name)
    assert env.dataset_model(name).id != first.id


def wait_for(condition: Any, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return False


def test_killed_first_push_then_a_push_succeeds(env: Env) -> None:
    """SIGKILL a real ``citecal push`` at three points of its first push, then push again."""
    caught_draft = 0

    def appeared(name: str) -> bool:
        return env.dataset_model(name) is not None

    def has_fields(name: str, n: int) -> bool:
        model = env.dataset_model(name)
        return model is not None and len(env.owner.api.fields.list(model.id)) >= n

    def published(name: str) -> bool:
        model = env.dataset_model(name)
        return model is not None and str(model.status) == "ready"

    points = {"created": appeared, "fields": lambda n: has_fields(n, 3), "published": published}
    for point, reached in points.items():
        name = f"test_kill_{point}_{env.tag}"
        proc = env.push_process(name)
        try:
            assert wait_for(lambda: reached(name) or proc.poll() is not None)  # noqa: B023
            assert proc.poll() is None, f"push finished before the kill point {point!r}"
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        model = env.dataset_model(name)
        caught_draft += model is not None and str(model.status) == "draft"
        res = env.push(name)
        assert res.exit_code == 0, f"{point}: {res.output}"
        env.assert_complete(name)
    assert caught_draft >= 1, "no kill left a half-made dataset: the recovery path was not run"


def test_concurrent_first_pushes_converge(env: Env) -> None:
    for round_ in range(2):
        name = f"test_race_{round_}_{env.tag}"
        procs = [env.push_process(name) for _ in range(2)]
        outs = [p.communicate(timeout=600) for p in procs]
        for p, (_, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
        env.assert_complete(name)


def test_annotator_key_cannot_push_and_is_told_so(env: Env) -> None:
    name = f"test_annot_{env.tag}"
    assert env.push(name).exit_code == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        user = rg.User(
            username=f"test_annotator_{env.tag}",
            password="test-password-1",
            role="annotator",
            client=env.owner,
        ).create()
    env.users.append(user)
    user.add_to_workspace(env.workspace)
    key = env.owner.api.http_client.get(f"/api/v1/users/{user.id}").json()["api_key"]
    res = env.push(name, key=key)
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert "this key cannot create or change datasets" in res.output
    assert "different settings" not in res.output


@pytest.mark.parametrize("command", ["push", "pull"])
def test_server_that_is_not_argilla_is_one_line(env: Env, command: str) -> None:
    """An OpenAI-compatible server at ARGILLA_API_URL (an easy mix-up), not a traceback."""
    with FakeOpenAIServer() as other:
        url = other.base_url.removesuffix("/v1")
        args = (
            ["push", str(env.eval_json), "--dataset", "x"]
            if command == "push"
            else ["pull", "--dataset", "x", "-o", str(env.tmp / "x.parquet")]
        )
        res = CliRunner().invoke(cli, args, env={"ARGILLA_API_URL": url, "ARGILLA_API_KEY": "k"})
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert f"Argilla at {url} (ARGILLA_API_URL) does not answer like an Argilla server" in (
        res.output
    )


def test_other_json_where_argilla_json_was_expected_is_not_argilla() -> None:
    """A server answering 200 with other JSON: the SDK's pydantic error becomes one line."""
    from argilla._models import UserModel

    with (
        pytest.raises(NotArgilla, match="does not answer like an Argilla server"),
        argilla_errors("http://127.0.0.1:1"),
    ):
        UserModel.model_validate({"hello": "world"})
