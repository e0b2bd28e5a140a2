"""``citecal push OUT/citations.parquet``: a seeded sample across the reports of a batch.

The batch output is written by the real task function (in-process, no
cluster needed) over the bundled example in two repositories (a directory
and a git revision); the push runs against the real Argilla stack.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
import warnings
from collections import Counter
from pathlib import Path

import argilla as rg
import pytest
from annotate_factories import ROOT, Stack
from click.testing import CliRunner

from citecal.annotate._batch import sample_batch
from citecal.annotate._sampling import Candidate, sample_across_reports
from citecal.batch import BatchOutput, JobSettings, ManifestEntry, make_tasks, run_task
from citecal.cli import cli

EXAMPLE = ROOT / "datasets" / "examples"


def test_stratified_sample_covers_every_repository_and_verdict_first() -> None:
    # 3 repositories × 2 verdicts, very unequal sizes: 40/2, 8/8, 1/1.
    sizes = {("a", "supports"): 40, ("a", "not_supports"): 2, ("b", "supports"): 8,
             ("b", "not_supports"): 8, ("c", "supports"): 1, ("c", "not_supports"): 1}  # fmt: skip
    pool = [
        Candidate(key=(repo, verdict, i), repo=repo, verdict=verdict, conflict=False, uncertainty=0)
        for (repo, verdict), n in sizes.items()
        for i in range(n)
    ]
    picked = sample_across_reports(pool, 6, "stratified", seed=1)
    assert Counter((r, v) for r, v, _ in picked) == dict.fromkeys(sizes, 1)
    ten = sample_across_reports(pool, 10, "stratified", seed=1)
    # Second round: c's two one-member groups are empty, the four others give a second pick.
    assert Counter(r for r, _, _ in ten) == {"a": 4, "b": 4, "c": 2}
    assert sample_across_reports(pool, 10, "stratified", seed=1) == ten  # seeded
    assert sample_across_reports(pool, 10, "stratified", seed=2) != ten
    order = {c.key: i for i, c in enumerate(pool)}
    assert ten == sorted(ten, key=order.__getitem__)  # input order, for stable re-pushes


def test_uncertain_and_all_strategies_across_reports() -> None:
    pool = [
        Candidate(key=i, repo="r", verdict="supports", conflict=i == 7, uncertainty=i / 10)
        for i in range(10)
    ]
    assert sample_across_reports(pool, 3, "uncertain") == [7, 8, 9]
    assert len(set(sample_across_reports(pool, 4, "all", seed=3))) == 4
    assert sample_across_reports(pool, None) == list(range(10))


@pytest.fixture(scope="module")
def batch_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled report evaluated against shopcart on disk and in git (HEAD), two copies each."""
    tmp = tmp_path_factory.mktemp("pushbatch")
    repo = tmp / "shopcart-git"
    shutil.copytree(EXAMPLE / "shopcart", repo)
    git = ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    report = str(EXAMPLE / "report.md")
    entries = [
        ManifestEntry("dir-1", report, str(EXAMPLE / "shopcart"), None, 1),
        ManifestEntry("dir-2", report, str(EXAMPLE / "shopcart"), None, 2),
        ManifestEntry("git-1", report, str(repo), "HEAD", 3),
    ]
    out = BatchOutput(tmp / "out")
    out.create()
    job = JobSettings(output=str(out.root), below=[], above=[], overrides={}, no_llm=True)
    for task in make_tasks(entries, task_size=1):
        run_task(task, job)
    return out.table_dir("citations")


def test_sample_batch_gives_evaluations_of_the_chosen_rows(batch_output: Path) -> None:
    drawn = sample_batch(batch_output, 8, "stratified", seed=5)
    assert drawn.candidates == 3 * 40 and drawn.chosen == 8
    assert sum(len(r.citations) for r in drawn.results) == 8
    assert {r.repo for r in drawn.results} == {
        str(EXAMPLE / "shopcart"),
        str(batch_output.parent.parent / "shopcart-git"),
    }
    git = next(r for r in drawn.results if r.rev == "HEAD")
    assert all(c.valid and c.cited_code for c in git.citations)
    assert sample_batch(batch_output.parent, 8, "stratified", seed=5) == drawn  # OUT works too


@pytest.mark.integration
def test_push_citations_parquet_to_argilla(argilla_stack: Stack, batch_output: Path) -> None:
    name = f"test_batch_{uuid.uuid4().hex[:8]}"
    env = {"ARGILLA_API_URL": argilla_stack.url, "ARGILLA_API_KEY": argilla_stack.api_key}
    args = ["push", str(batch_output), "--dataset", name, "--sample", "6", "--seed", "3"]
    try:
        first = CliRunner().invoke(cli, args, env=env)
        assert first.exit_code == 0, first.output
        assert f"created dataset '{name}' in workspace 'citecal'" in first.stdout
        assert ": 6 created, 0 updated, 114 skipped, 0 failed" in first.stdout
        again = CliRunner().invoke(cli, args, env=env)
        assert ": 0 created, 0 updated, 6 unchanged (not sent), 114 skipped, 0 failed" in (
            again.stdout
        )  # same sample: nothing sent again
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key)
            dataset = owner.datasets(name, workspace="citecal")
            records = list(dataset.records)
        repos = Counter(r.metadata["repo"] for r in records)
        assert len(records) == 6 and len(repos) == 2
        assert all("▶" in r.fields["cited_code"] for r in records)  # context read from the repo
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key).datasets(
                name, workspace="citecal"
            )
            if found is not None:
                found.delete()


def test_push_rejects_repo_with_a_batch_output(batch_output: Path) -> None:
    res = CliRunner().invoke(cli, ["push", str(batch_output), "--dataset", "x", "--repo", "."])
    assert res.exit_code == 2
    assert res.stderr == (
        "Error: --repo is for eval JSON: a batch output records each report's repository\n"
    )
