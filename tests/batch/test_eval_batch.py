"""``citecal eval-batch`` on a real LocalCluster of 2 worker processes (README "Many reports").

The same reports through ``citecal eval`` one by one are the reference: the
batch must give exactly their rows. Faults are real too: a worker process is
killed by PID mid-run, a run is interrupted and resumed, bad manifest rows
are mixed in, and one test talks to a separately started ``dask scheduler``
and ``dask worker`` pair.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from batch_factories import Row
from click.testing import CliRunner

from citecal.batch import (
    LOCK_NAME,
    BatchOptions,
    BatchOutput,
    BatchSummary,
    DryRunSummary,
    evaluate_batch,
    read_manifest,
    to_citation,
)
from citecal.cli import cli
from citecal.models import EvalResult, Summary
from citecal.testing import FakeOpenAIServer

BIN = Path(sys.executable).parent
NO_JUDGE_ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
BAD_ROWS = {"missing-report", "bad-rev"}


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, list(args), env={**NO_JUDGE_ENV, **(env or {})})
    return res.exit_code, res.stdout, res.stderr


def eval_one(row: Row, *extra: str, env: dict[str, str] | None = None) -> EvalResult:
    """The reference: `citecal eval` on one report."""
    rev = ["--rev", row.rev] if row.rev else []
    code, out, err = invoke(
        "eval", str(row.report), "--repo", str(row.repo), *rev, "-f", "json", *extra, env=env
    )
    assert code == 0, err
    return EvalResult.model_validate_json(out)


def rows_of(output: BatchOutput, report_id: str) -> list[dict[str, object]]:
    table = output.read("citations", filter=pc.field("report_id") == report_id)
    return table.to_pylist()


def assert_each_report_once(output: BatchOutput, rows: list[Row]) -> None:
    """Every good row once in reports, every bad row once in errors, nothing else."""
    reports = output.read("reports", columns=["report_id"]).column(0).to_pylist()
    errors = output.read("errors", columns=["report_id"]).column(0).to_pylist()
    assert sorted(reports) == sorted(r.id for r in rows)
    assert sorted(errors) == sorted(BAD_ROWS)
    cites = output.read("citations", columns=["report_id", "id", "position"]).to_pylist()
    keys = Counter((c["report_id"], c["id"], c["position"]) for c in cites)
    assert max(keys.values()) == 1, "a citation row was written twice"
    per_report = Counter(c["report_id"] for c in cites)
    assert per_report == {r.id: 12 for r in rows}


# --------------------------------------------------------------------------- the reference run


@pytest.fixture(scope="module")
def no_llm_run(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[BatchOutput, BatchSummary, str]:
    manifest, _ = batch
    out = tmp_path_factory.mktemp("run") / "out"
    code, stdout, stderr = invoke(
        "eval-batch", str(manifest), "-o", str(out), "--scheduler", cluster, "--no-llm",
        "-f", "json", "--task-size", "2",
    )  # fmt: skip
    assert code == 0, stderr
    return BatchOutput(out), BatchSummary.model_validate_json(stdout), stderr


def test_batch_rows_equal_citecal_eval_report_by_report(
    no_llm_run: tuple[BatchOutput, BatchSummary, str], batch: tuple[Path, list[Row]]
) -> None:
    output, summary, _ = no_llm_run
    _, rows = batch
    assert summary.evaluated == len(rows) == 12 and summary.errors == 2
    revisions_differ = False
    for row in rows:
        expected = eval_one(row, "--no-llm")
        got = [to_citation(r) for r in rows_of(output, row.id)]
        assert [c.model_dump() for c in got] == [c.model_dump() for c in expected.citations]
        report = output.read("reports", filter=pc.field("report_id") == row.id).to_pylist()
        assert len(report) == 1
        got_summary = {k: report[0][k] for k in Summary.model_fields}
        if got_summary["cascade"] is not None:  # Parquet maps read back as (key, value) pairs
            got_summary["cascade"] = {
                k: dict(v) if isinstance(v, list) else v for k, v in got_summary["cascade"].items()
            }
        assert got_summary == expected.summary.model_dump()
        assert report[0]["rev"] == row.rev and report[0]["repo"] == str(row.repo)
        if row.rev == "v1":
            head = Row(row.id, row.report, row.repo, "HEAD")
            revisions_differ |= eval_one(head, "--no-llm").citations != expected.citations
    assert revisions_differ, "the git fixture should make v1 and HEAD evaluate differently"


def test_bad_rows_land_in_errors_and_do_not_stop_the_batch(
    no_llm_run: tuple[BatchOutput, BatchSummary, str],
) -> None:
    output, summary, stderr = no_llm_run
    errors = {r["report_id"]: r for r in output.read("errors").to_pylist()}
    assert set(errors) == BAD_ROWS
    assert errors["missing-report"]["error"].startswith("report not found: ")
    assert errors["missing-report"]["manifest_row"] == 13
    assert errors["bad-rev"]["error"].startswith("unknown revision 'v9'")
    assert "\n" not in errors["bad-rev"]["error"]
    assert summary.evaluated == 12
    assert "error (manifest row 13): report not found" not in stderr  # -f json prints JSON only


def test_tables_read_with_plain_pandas(no_llm_run: tuple[BatchOutput, BatchSummary, str]) -> None:
    import pandas as pd

    output, summary, _ = no_llm_run
    citations = pd.read_parquet(output.table_dir("citations"))
    reports = pd.read_parquet(output.table_dir("reports"))
    assert len(citations) == summary.citations == 144 and len(reports) == 12
    assert citations.columns[0] == "report_id" and "cited_code" in citations.columns
    assert summary.totals["total_citations"] == 144


def test_a_used_output_needs_resume(
    no_llm_run: tuple[BatchOutput, BatchSummary, str], batch: tuple[Path, list[Row]]
) -> None:
    output, _, _ = no_llm_run
    manifest, _ = batch
    code, stdout, stderr = invoke("eval-batch", str(manifest), "-o", str(output.root), "--no-llm")
    assert code == 2 and stdout == ""
    assert stderr == (
        f"Error: {output.root} already holds a batch: pass --resume to continue it, "
        "or choose another --output\n"
    )
    code, stdout, stderr = invoke(
        "eval-batch", str(manifest), "-o", str(output.root), "--no-llm", "--resume"
    )
    assert code == 0, stderr
    assert "14 reports in the manifest, 14 already done (--resume): 0 to evaluate" in stderr


# --------------------------------------------------------------------------- faults


def test_worker_killed_mid_run_loses_and_duplicates_nothing(
    batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    """SIGKILL one worker while it runs a task: the task is retried, every report is there once."""
    import logging

    from distributed import Client, LocalCluster

    manifest, rows = batch
    killed: dict[str, list[str]] = {}
    with (
        FakeOpenAIServer(latency_s=0.15) as srv,
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        ) as lc,
        Client(lc, set_as_default=False) as client,
    ):
        pids: dict[str, int] = client.run(os.getpid)

        def kill_a_busy_worker(progress: object) -> None:
            if killed or getattr(progress, "tasks_done", 0) < 1:
                return
            busy = {a: list(keys) for a, keys in client.processing().items() if keys}
            assert busy, "no worker was running a task"
            address = sorted(busy)[0]
            os.kill(pids[address], signal.SIGKILL)
            killed[address] = busy[address]

        summary = evaluate_batch(
            read_manifest(manifest),
            BatchOptions(
                output=str(tmp_path / "out"),
                scheduler=lc.scheduler_address,
                overrides={"judge": {"base_url": srv.base_url, "escalation_model": ""}},
                cache_dir=str(tmp_path / "cache"),
                task_size=2,
            ),
            on_progress=kill_a_busy_worker,
        )
        after = set(client.run(os.getpid).values())
    assert killed, "the test never killed a worker"
    assert set(pids.values()) - after, "the killed worker process is still there"
    assert isinstance(summary, BatchSummary) and summary.evaluated == 12
    assert summary.totals["llm_calls"] > 0
    assert_each_report_once(BatchOutput(tmp_path / "out"), rows)


def test_resume_after_an_interrupted_run(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    manifest, rows = batch
    entries = read_manifest(manifest)
    out = BatchOutput(tmp_path / "out")

    def interrupt(progress: object) -> None:
        if getattr(progress, "tasks_done", 0) >= 1:
            raise KeyboardInterrupt  # Ctrl-C in the driver: the local cluster goes down with it

    # One report per task: the tasks already on a worker finish after the interrupt, so
    # small tasks leave most reports to the resumed run however fast the workers are.
    options = BatchOptions(output=str(out.root), workers=2, no_llm=True, task_size=1)
    with pytest.raises(KeyboardInterrupt):
        evaluate_batch(entries, options, on_progress=interrupt)
    first = out.done_ids()
    assert 1 <= len(first) < len(rows), f"{len(first)} of {len(rows)} reports done before the stop"
    # A worker killed between its renames leaves a part without a commit marker.
    pending = next(r for r in rows if r.id not in first)
    orphan = out.part_path("citations", "crashed")
    # (a task of one bad row commits an errors part and no citations part)
    parts = [out.part_path("citations", c) for c in out.committed()]
    stale = pq.read_table(next(p for p in parts if p.exists()))
    ids = pa.array([pending.id] * stale.num_rows)
    pq.write_table(stale.set_column(0, "report_id", ids), orphan)
    assert out.read("citations", filter=pc.field("report_id") == pending.id).num_rows == 0

    code, stdout, stderr = invoke(
        "eval-batch", str(manifest), "-o", str(out.root), "--scheduler", cluster,
        "--no-llm", "--resume", "-f", "json", "--task-size", "2",
    )  # fmt: skip
    assert code == 0, stderr
    summary = BatchSummary.model_validate_json(stdout)
    assert summary.skipped == len(first)
    assert summary.evaluated + summary.errors == len(entries) - len(first)
    assert "1 unfinished parts removed" in stderr and not orphan.exists()
    assert_each_report_once(out, rows)


def test_a_second_run_into_the_same_output_is_refused_while_the_first_runs(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both used to write: ``--resume`` while a run is still going gave every row twice."""
    manifest, rows = batch
    out = BatchOutput(tmp_path / "out")
    results: list[object] = []
    with FakeOpenAIServer(latency_s=0.5) as srv:  # a slow judge keeps the first run going
        for key, value in {
            "OPENAI_BASE_URL": srv.base_url,
            "OPENAI_API_KEY": "k",
            "CITECAL_ESCALATION_MODEL": "",
        }.items():
            monkeypatch.setenv(key, value)
        options = BatchOptions(output=str(out.root), scheduler=cluster, use_cache=False)
        first = threading.Thread(
            target=lambda: results.append(evaluate_batch(read_manifest(manifest), options))
        )
        first.start()
        deadline = time.monotonic() + 60
        while srv.calls == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.calls > 0 and first.is_alive()
        code, _, stderr = invoke(
            "eval-batch", str(manifest), "-o", str(out.root), "--scheduler", cluster,
            "--no-llm", "--resume",
        )  # fmt: skip
        first.join(120)
    assert code == 2
    assert stderr == (
        f"Error: another citecal eval-batch is writing to {out.root} "
        f"(it holds {out.root / LOCK_NAME}): wait for it to end, or choose another --output\n"
    )
    assert len(results) == 1 and isinstance(results[0], BatchSummary)
    assert_each_report_once(out, rows)
    # the lock went with the run (the file stays; only the operating system's lock counts)
    code, _, stderr = invoke("eval-batch", str(manifest), "-o", str(out.root), "--resume")
    assert code == 0, stderr


# --------------------------------------------------------------------------- the judge


def test_one_judge_limit_for_the_whole_cluster_and_a_shared_cache(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    manifest, rows = batch
    cache = tmp_path / "shared-cache"
    with FakeOpenAIServer(latency_s=0.05) as srv:
        env = {"OPENAI_BASE_URL": srv.base_url, "CITECAL_ESCALATION_MODEL": ""}
        args = ["--scheduler", cluster, "--cache-dir", str(cache), "--task-size", "1"]
        code, stdout, stderr = invoke(
            "eval-batch", str(manifest), "-o", str(tmp_path / "a"), "--concurrency", "1",
            "-f", "json", *args, env=env,
        )  # fmt: skip
        assert code == 0, stderr
        first = BatchSummary.model_validate_json(stdout)
        calls = srv.calls
        assert calls >= 10 and first.totals["llm_calls"] == calls
        assert srv.max_in_flight == 1  # two workers, one slot: never two requests at once
        # The same claims again, into another output: every verdict comes from the cache.
        code, stdout, stderr = invoke(
            "eval-batch", str(manifest), "-o", str(tmp_path / "b"), "-f", "json", *args, env=env
        )
        assert code == 0, stderr
        again = BatchSummary.model_validate_json(stdout)
        assert srv.calls == calls and again.totals["llm_calls"] == 0
        # The judged rows are the rows `citecal eval` gives with the same judge.
        for row in rows[:3]:
            expected = eval_one(row, env={**env, "CITECAL_CACHE_PATH": str(tmp_path / "x.db")})
            got = [to_citation(r) for r in rows_of(BatchOutput(tmp_path / "b"), row.id)]
            assert [(c.verdict, c.method, c.score, c.model) for c in got] == [
                (c.verdict, c.method, c.score, c.model) for c in expected.citations
            ]


def test_dry_run_estimates_the_whole_batch(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    manifest, rows = batch
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # never contacted
    code, stdout, stderr = invoke(
        "eval-batch", str(manifest), "-o", str(tmp_path / "out"), "--scheduler", cluster,
        "--dry-run", "--no-cache", "-f", "json", env=env,
    )  # fmt: skip
    assert code == 0, stderr
    est = DryRunSummary.model_validate_json(stdout)
    claims = calls = tokens = 0
    for row in rows:
        rev = ["--rev", row.rev] if row.rev else []
        code, line, err = invoke(
            "eval", str(row.report), "--repo", str(row.repo), *rev, "--dry-run", "--no-cache",
            env=env,
        )  # fmt: skip
        assert code == 0, err
        words = line.split()
        claims += int(words[2])
        calls += int(words[words.index("calls,") - 1])
        tokens += int(words[words.index("tokens") - 1].lstrip("~"))
    assert (est.claims, est.calls) == (claims, calls) and claims > 0
    assert est.prompt_tokens + est.completion_tokens == tokens
    assert (est.reports, est.errors) == (12, 2)
    assert not (tmp_path / "out").exists()  # a dry run writes nothing
    # README "Judge confidence": K samples per claim in one request each (n=K): the same
    # calls and prompts, K times the answer tokens.
    code, stdout, stderr = invoke(
        "eval-batch", str(manifest), "-o", str(tmp_path / "out"), "--scheduler", cluster,
        "--dry-run", "--no-cache", "-f", "json", "--confidence", "consistency", "--samples", "4",
        env=env,
    )  # fmt: skip
    assert code == 0, stderr
    k = DryRunSummary.model_validate_json(stdout)
    assert (k.claims, k.calls, k.prompt_tokens) == (est.claims, est.calls, est.prompt_tokens)
    assert k.completion_tokens == 4 * est.completion_tokens


# --------------------------------------------------------------------------- CLI errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.csv"], "Error: manifest not found: nope.csv\n"),
        (["m.txt"], "Error: unknown manifest type '.txt' (m.txt): use .csv, .jsonl or .parquet\n"),
        (["m.csv", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
         "Error: --workers starts a local cluster; with --scheduler the cluster has its own\n"),
    ],
)  # fmt: skip
def test_bad_usage_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.csv").write_text("report,repo\nr.md,.\n")
    assert invoke("eval-batch", *args) == (2, "", message)


def test_unreachable_scheduler_is_one_line(batch: tuple[Path, list[Row]], tmp_path: Path) -> None:
    import dask

    manifest, _ = batch
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code, stdout, stderr = invoke(
            "eval-batch", str(manifest), "-o", str(tmp_path / "o"), "--scheduler",
            "tcp://127.0.0.1:9", "--no-llm",
        )  # fmt: skip
    assert code == 2 and stdout == ""
    assert stderr.startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert stderr.count("\n") == 1


# --------------------------------------------------------------------------- a real cluster


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


def test_against_a_separately_started_scheduler_and_worker(
    batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    """`dask scheduler` + `dask worker` as processes, the installed `citecal` as a third."""
    manifest, rows = batch
    info = tmp_path / "scheduler.json"
    logs = [(tmp_path / "scheduler.log").open("w"), (tmp_path / "worker.log").open("w")]
    scheduler = subprocess.Popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", str(info)],
        stdout=logs[0], stderr=subprocess.STDOUT,
    )  # fmt: skip
    worker = None
    try:
        _wait_for(info, 60)
        address = json.loads(info.read_text())["address"]
        worker = subprocess.Popen(
            [str(BIN / "dask"), "worker", address, "--nworkers", "1", "--nthreads", "1",
             "--no-dashboard", "--host", "127.0.0.1", "--local-directory", str(tmp_path)],
            stdout=logs[1], stderr=subprocess.STDOUT,
        )  # fmt: skip
        out = tmp_path / "out"
        proc = subprocess.run(
            [str(BIN / "citecal"), "eval-batch", str(manifest), "-o", str(out),
             "--scheduler", address, "--no-llm"],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, **NO_JUDGE_ENV},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("evaluated 12 reports (2 errors) with 144 citations in ")
        assert "on 1 workers" in proc.stdout
        assert "error (manifest row 13): report not found: " in proc.stderr
        assert_each_report_once(BatchOutput(out), rows)
    finally:
        for p in (worker, scheduler):
            if p is not None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for log in logs:
            log.close()


def test_manifest_rows_can_be_jsonl(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    _, rows = batch
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        "\n".join(
            json.dumps({"report": str(r.report), "repo": str(r.repo), "rev": r.rev})
            for r in rows[:2]
        )
        + "\n"
    )
    code, stdout, stderr = invoke("eval-batch", str(manifest), "--scheduler", cluster, "--no-llm")
    assert code == 0, stderr
    assert stdout.startswith("evaluated 2 reports (0 errors) with 24 citations")
    assert (tmp_path / "m.eval" / "reports.parquet").is_dir()


def test_ctrl_c_is_one_line_and_resumable(batch: tuple[Path, list[Row]], tmp_path: Path) -> None:
    """SIGINT to the whole process group (a terminal's Ctrl-C), workers included."""
    manifest, rows = batch
    out = tmp_path / "out"
    with FakeOpenAIServer(latency_s=0.3) as srv:
        env = {**os.environ, **NO_JUDGE_ENV, "OPENAI_BASE_URL": srv.base_url,
               "CITECAL_CACHE_PATH": str(tmp_path / "c.db")}  # fmt: skip
        proc = subprocess.Popen(
            [str(BIN / "citecal"), "eval-batch", str(manifest), "-o", str(out),
             "--workers", "2", "--task-size", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not list((out / "reports.parquet").glob("part-*.parquet")):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no task finished"
                time.sleep(0.1)
            os.killpg(proc.pid, signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    assert proc.returncode == 130, stderr
    assert stdout == "" and "Traceback" not in stderr
    assert stderr.splitlines()[-1] == (
        f"Error: interrupted: finished reports are kept in {out}; continue with --resume"
    )
    done = BatchOutput(out).done_ids()
    assert 1 <= len(done) < len(rows) + len(BAD_ROWS)


def test_a_judge_error_that_stops_eval_stops_the_batch(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    manifest, _ = batch
    with FakeOpenAIServer(known_models=["gpt-4o-mini"]) as srv:
        url = srv.base_url
        code, stdout, stderr = invoke(
            "eval-batch", str(manifest), "-o", str(tmp_path / "out"), "--scheduler", cluster,
            "--model", "no-such-model", "--no-cache", env={"OPENAI_BASE_URL": url},
        )  # fmt: skip
    assert code == 2 and stdout == ""
    last = stderr.splitlines()[-1]
    assert last.startswith(f"Error: LLM judge API error: HTTP 404 from {url}")
    assert "check the model name 'no-such-model'" in last and "Traceback" not in stderr


def _worker_settings() -> tuple[object, object]:
    import dask.config

    return (
        dask.config.get("distributed.worker.profile.enabled"),
        dask.config.get("distributed.admin.tick.interval"),
    )


def test_the_local_cluster_workers_do_not_profile() -> None:
    """eval-batch's cluster runs without Dask's 10 ms stack sampler (docs/explanation/scale.md)."""
    import dask.config

    from citecal.batch._cluster import connect

    with connect(None, 1) as client:
        seen = list(client.run(_worker_settings).values())
    assert seen == [(False, "1s")]
    # Only the cluster citecal starts: the caller's own settings are left as they were.
    assert dask.config.get("distributed.worker.profile.enabled") is True


def test_correct_writes_a_corrections_table_push_can_read(
    cluster: str, batch: tuple[Path, list[Row]], tmp_path: Path
) -> None:
    """``eval-batch --correct``: each report's corrections, as `citecal correct` makes them,
    in corrections.parquet; its evaluation rows are eval's; `push --corrections` reads it."""
    import citecal.annotate  # noqa: F401  (citecal.correct._annotate needs it loaded first)
    from citecal.correct._annotate import read_corrections

    manifest, rows = batch
    out = tmp_path / "out"
    code, _, stderr = invoke(
        "eval-batch", str(manifest), "-o", str(out), "--scheduler", cluster, "--no-llm",
        "--correct", "-f", "json", "--task-size", "3",
    )  # fmt: skip
    assert code == 0, stderr
    output = BatchOutput(out)
    table = output.read("corrections")
    assert table.num_rows > 0
    for row in rows:
        code, fixes, err = invoke(
            "correct", str(row.report), "--repo", str(row.repo),
            *(["--rev", row.rev] if row.rev else []), "--no-llm", "-f", "json",
        )  # fmt: skip
        assert code == 0, err
        expected = json.loads(fixes)["corrections"] if fixes.startswith("{") else []
        got = read_corrections(out / "corrections.parquet", str(row.report))
        assert [c.model_dump(mode="json") for c in got.corrections] == expected
        assert [to_citation(r) for r in rows_of(output, row.id)] == eval_one(
            row, "--no-llm"
        ).citations
    assert invoke("eval-batch", str(manifest), "--correct", "--dry-run")[0] == 2
