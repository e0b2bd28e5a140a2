"""Reading the eval-batch manifest: formats, relative paths, ids, bad rows vs bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from citecal.batch import ManifestEntry, default_report_id, make_tasks, read_manifest, task_key
from citecal.errors import InputError


def test_csv_paths_are_relative_to_the_manifest(tmp_path: Path) -> None:
    m = tmp_path / "sub" / "m.csv"
    m.parent.mkdir()
    m.write_text("report,repo,rev,id\nr/a.md,../repo,v1,first\n/abs/b.md,/abs/repo,,\n")
    a, b = read_manifest(m)
    sub = tmp_path / "sub"
    assert a == ManifestEntry("first", str(sub / "r" / "a.md"), str(sub / ".." / "repo"), "v1", 1)
    assert (b.report, b.repo, b.rev, b.row) == ("/abs/b.md", "/abs/repo", None, 2)
    assert b.id == default_report_id("/abs/b.md", "/abs/repo", None) and len(b.id) == 16


def test_jsonl_and_parquet_give_the_same_entries(tmp_path: Path) -> None:
    rows = [{"report": "a.md", "repo": "r", "rev": None}, {"report": "b.md", "repo": "r"}]
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    pd.DataFrame(rows).to_parquet(tmp_path / "m.parquet")
    (tmp_path / "m.csv").write_text("report,repo,rev\na.md,r,\nb.md,r,\n")
    got = [read_manifest(tmp_path / f"m.{s}") for s in ("jsonl", "parquet", "csv")]
    assert got[0] == got[1] == got[2] and [e.rev for e in got[0]] == [None, None]


def test_default_ids_depend_on_the_values_as_written() -> None:
    assert default_report_id("a.md", "r", None) == default_report_id("a.md", "r", "")
    assert default_report_id("a.md", "r", "v1") != default_report_id("a.md", "r", None)


def test_empty_cells_are_bad_rows_not_a_bad_manifest(tmp_path: Path) -> None:
    m = tmp_path / "m.csv"
    m.write_text("report,repo\n,r\na.md,\n")
    first, second = read_manifest(m)
    assert (first.problem, second.problem) == ("report is empty", "repo is empty")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("m.csv", "report,rev\na.md,v1\n", "lacks column(s) repo (has: report, rev;"),
        ("m.csv", "report,repo\n", "manifest is empty"),
        ("m.csv", "", "manifest is empty"),
        ("m.csv", "id,report,repo\nx,a.md,r\nx,b.md,r\n", "row 2 has the same id as row 1 ('x')"),
        ("m.csv", "report,repo\na.md,r\na.md,r\n", "row 2 has the same id as row 1"),
        ("m.json", "{}", "unknown manifest type '.json'"),
        ("m.parquet", "not parquet", "cannot read manifest"),
        ("m.jsonl", "{not json\n", "cannot read manifest"),
    ],
)
def test_a_bad_manifest_is_one_input_error(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as exc:
        read_manifest(tmp_path / name)
    assert "\n" not in str(exc.value)


def test_tasks_group_by_repository_and_revision(tmp_path: Path) -> None:
    def entry(i: int, repo: str, rev: str | None, problem: str | None = None) -> ManifestEntry:
        return ManifestEntry(f"r{i}", f"/{i}.md", repo, rev, i, problem)

    entries = [entry(1, "/a", None), entry(2, "/b", None), entry(3, "/a", None)]
    entries += [entry(4, "/a", "v1"), entry(5, "/a", None), entry(6, "", None, "repo is empty")]
    tasks = make_tasks(entries, task_size=2)
    assert [(t.repo, t.rev, [e.id for e in t.entries]) for t in tasks] == [
        ("/a", None, ["r1", "r3"]),
        ("/a", None, ["r5"]),
        ("/b", None, ["r2"]),
        ("/a", "v1", ["r4"]),
        ("", None, ["r6"]),
    ]
    again = make_tasks(entries, task_size=2)
    assert [t.key for t in tasks] == [t.key for t in again]  # a retry rewrites the same parts
    assert len({t.key for t in tasks}) == len(tasks)
    assert task_key("/a", None, entries[:1]) != task_key("/a", "v1", entries[:1])
