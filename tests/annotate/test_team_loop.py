"""The loop a team runs, from an installed wheel against the real stack:
eval → push → two annotators made by ``citecal annotators add`` → pull → calibrate.

The wheel is built from this checkout and installed into a fresh virtualenv
(``--no-deps``: the dependencies come from the project's own environment
through a ``.pth`` line, which keeps this test at seconds instead of the
minute and a half a full install takes; the ``citecal`` package and its data
files are the wheel's). Every command runs as a subprocess of that
virtualenv's ``citecal``, so a file missing from the wheel (the bundled
dataset definitions) fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from annotate_factories import ROOT, Stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

EXAMPLE = ROOT / "datasets" / "examples"


@dataclass(frozen=True)
class Wheel:
    venv: Path
    citecal: Path
    python: Path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Wheel:
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (whl,) = dist.glob("citecal-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # The project environment's packages (pandas, argilla, ...) after the venv's own.
    (site / "zz_citecal_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
         str(whl)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    where = subprocess.run(
        [str(python), "-c", "import citecal.annotate._settings as s; print(s.SPEC_DIR)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp,  # not this checkout's directory, which `python -c` would import from
    ).stdout.strip()
    assert where.startswith(str(site)), where  # the wheel's copy, not this checkout
    return Wheel(venv, venv / "bin" / "citecal", python)


def test_the_wheel_carries_the_bundled_dataset_definitions(wheel: Wheel) -> None:
    proc = subprocess.run(
        [str(wheel.python), "-c",
         "from citecal.annotate._settings import bundled_specs, load_spec;"
         "print(bundled_specs()); print(load_spec('citation_support_binary').pull.score_question)"],
        capture_output=True,
        text=True,
        check=False,
        cwd=wheel.venv,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "['answer_citation', 'citation_support', 'citation_support_binary', 'excerpt_support', "
        "'sentence_support']",
        "supported",
    ]


@dataclass
class Team:
    stack: Stack
    tag: str
    workspace: str
    dataset: str
    keys: dict[str, str]
    tmp: Path
    env: dict[str, str]


def run(wheel: Wheel, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(wheel.citecal), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=wheel.venv,
        check=False,
    )


def http(stack: Stack, key: str) -> httpx.Client:
    return httpx.Client(base_url=stack.url, headers={"X-Argilla-Api-Key": key}, timeout=60)


@pytest.fixture(scope="module")
def team(
    wheel: Wheel, argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Team]:
    tag = uuid.uuid4().hex[:8]
    tmp = tmp_path_factory.mktemp("team")
    env = {
        **os.environ,
        "ARGILLA_API_URL": argilla_stack.url,
        "ARGILLA_API_KEY": argilla_stack.api_key,
        "CITECAL_CACHE_PATH": str(tmp / "judge-cache.sqlite3"),
    }
    t = Team(argilla_stack, tag, f"test_ws_team_{tag}", f"test_team_{tag}", {}, tmp, env)
    try:
        yield t
    finally:
        with http(argilla_stack, argilla_stack.api_key) as owner, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spaces = owner.get("/api/v1/me/workspaces").json()["items"]
            for ws in (w for w in spaces if w["name"] == t.workspace):
                for ds in owner.get("/api/v1/me/datasets").json()["items"]:
                    if ds["workspace_id"] == ws["id"]:
                        owner.delete(f"/api/v1/datasets/{ds['id']}")
                for user in owner.get("/api/v1/users").json()["items"]:
                    if user["username"].endswith(tag):
                        owner.delete(f"/api/v1/users/{user['id']}")
                owner.delete(f"/api/v1/workspaces/{ws['id']}")


def queue(stack: Stack, key: str, dataset_id: str) -> set[str]:
    """External ids of the records waiting for this key's user: their queue in the UI."""
    pending = {"type": "terms", "values": ["pending"]}
    body = {
        "filters": {
            "and": [
                {**pending, "scope": {"entity": "response", "property": "status"}},
                {**pending, "scope": {"entity": "record", "property": "status"}},
            ]
        }
    }
    with http(stack, key) as client:
        resp = client.post(
            f"/api/v1/me/datasets/{dataset_id}/records/search", json=body, params={"limit": 1000}
        )
    assert resp.status_code == 200, resp.text
    return {item["record"]["external_id"] for item in resp.json()["items"]}


def answer_all(stack: Stack, key: str, dataset_id: str, score: Any) -> int:
    with http(stack, key) as client:
        resp = client.post(
            f"/api/v1/me/datasets/{dataset_id}/records/search",
            json={},
            params={"limit": 1000},
        )
        items = resp.json()["items"]
        for n, item in enumerate(items):
            body = {"values": {"supports_claim": {"value": score(n)}}, "status": "submitted"}
            done = client.post(f"/api/v1/records/{item['record']['id']}/responses", json=body)
            assert done.status_code == 201, done.text
    return len(items)


def test_eval_push_two_annotators_pull_calibrate(wheel: Wheel, team: Team) -> None:
    env, tmp = team.env, team.tmp
    # 1. eval with the judge on the local OpenAI-compatible server (no API key needed)
    eval_json = tmp / "eval.json"
    proc = subprocess.run(
        [str(wheel.python), "-m", "citecal.testing", "--", str(wheel.citecal), "eval",
         str(EXAMPLE / "report.md"), "--repo", str(EXAMPLE / "shopcart"), "-f", "json",
         "-o", str(eval_json)],
        capture_output=True, text=True, env=env, timeout=600, check=False, cwd=wheel.venv,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # 2. two annotators, made by the command a team uses
    for name in ("alice", "bob"):
        user = f"test_{name}_{team.tag}"
        made = run(wheel, env, "annotators", "add", user, "--workspace", team.workspace)
        assert made.returncode == 0, made.stderr
        key = re.search(r"^  API key:  (\S+)$", made.stdout, re.MULTILINE)
        login = re.search(r"^  login:    (\S+)$", made.stdout, re.MULTILINE)
        password = re.search(r"^  password: (\S+)$", made.stdout, re.MULTILINE)
        assert key and login and password, made.stdout
        assert login.group(1) == user and len(password.group(1)) >= 8
        team.keys[user] = key.group(1)
    again = run(wheel, env, "annotators", "add", user, "--workspace", team.workspace)
    assert again.stdout.strip() == (
        f"user {user!r} (annotator) exists: already in workspace {team.workspace!r}"
    )
    listed = run(wheel, env, "annotators", "list", "--workspace", team.workspace).stdout
    assert re.search(rf"^test_alice_{team.tag}\s+annotator\s+{team.workspace}$", listed, re.M)
    # 3. push (the default spec comes from the wheel's package data)
    pushed = run(wheel, env, "push", str(eval_json), "--dataset", team.dataset,
                 "--workspace", team.workspace)  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    n = int(re.search(r": (\d+) created", pushed.stdout).group(1))  # type: ignore[union-attr]
    assert n == 40
    with http(team.stack, team.stack.api_key) as owner:
        datasets = owner.get("/api/v1/me/datasets").json()["items"]
        (ds,) = [d for d in datasets if d["name"] == team.dataset]
        assert ds["distribution"] == {"strategy": "overlap", "min_submitted": 2}
        assert "## What you are rating" in ds["guidelines"]  # annotators see the guidelines
    # 4. each annotator's key sees their queue; with min_submitted 2 an answer by one
    # person leaves the record in the other's queue, and two answers complete it
    alice, bob = sorted(team.keys)
    assert len(queue(team.stack, team.keys[alice], ds["id"])) == n
    assert answer_all(team.stack, team.keys[alice], ds["id"], lambda i: i % 4) == n
    assert queue(team.stack, team.keys[alice], ds["id"]) == set()
    assert len(queue(team.stack, team.keys[bob], ds["id"])) == n
    assert answer_all(team.stack, team.keys[bob], ds["id"], lambda i: (i + i // 4) % 4) == n
    assert queue(team.stack, team.keys[bob], ds["id"]) == set()
    carol = f"test_carol_{team.tag}"
    made = run(wheel, env, "annotators", "add", carol, "--workspace", team.workspace)
    key = re.search(r"^  API key:  (\S+)$", made.stdout, re.MULTILINE)
    assert key, made.stdout
    assert queue(team.stack, key.group(1), ds["id"]) == set()  # every record is complete
    # 5. pull and calibrate
    table = tmp / "annotations.parquet"
    pulled = run(wheel, env, "pull", "--dataset", team.dataset, "--workspace", team.workspace,
                 "-o", str(table))  # fmt: skip
    assert pulled.returncode == 0, pulled.stderr
    assert pulled.stdout.startswith(
        f"wrote {2 * n} annotations (2 annotators, {n} of {n} records answered"
    )
    rows = pd.read_parquet(table)
    assert sorted(rows["annotator"].unique()) == [alice, bob]
    report = tmp / "calibration.json"
    calibrated = run(wheel, env, "calibrate", str(table), "-f", "json", "-o", str(report))
    assert calibrated.returncode == 0, calibrated.stderr
    overall = json.loads(report.read_text())["overall"]
    assert overall["n_annotators"] == 2 and overall["n_records"] == n
    assert overall["n_annotations"] == 2 * n
    assert overall["krippendorff_alpha"] is not None  # overlap makes it computable
    assert overall["human_ceiling"] is not None
