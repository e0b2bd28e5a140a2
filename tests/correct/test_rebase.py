"""``citecal rebase`` on a real git history made here; the revision line; eval --rev warnings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.correct import rebase_report, report_revision, set_report_revision
from citecal.errors import StoreError

V1 = {
    "pkg/a.py": "import os\n\ndef alpha():\n    return 1\n\ndef beta(x):\n    y = x + 1\n"
    '    return y * 2\n\ndef gamma():\n    return "g"\n\ndef delta():\n    return os.getcwd()\n',
    "pkg/b.py": "def keep():\n    return 0\n",
    "pkg/old.py": 'def legacy():\n    return "old value"\n',
    "pkg/c.py": 'def doomed():\n    return "bye now"\n',
    "pkg/d.py": 'def first():\n    return "first one"\n\ndef second():\n    return "second one"\n',
    "pkg/e.py": "def walk(items):\n    total = 0\n    for item in items:\n        total += item\n"
    "    return total\n",
    "pkg/f.py": "def run(a):\n    x = a + 1\n    y = x * 2\n    z = y - 3\n    return z\n",
}
# v2: a header pushes `alpha` down, `beta` is rewritten, `delta` is gone, `epsilon` is new;
# old.py is renamed, c.py deleted; in d.py `second` moves above `first` (content anchor).
V2 = {
    "pkg/a.py": "# a module\n# with a header\nimport os\n\n\ndef alpha():\n    return 1\n\n"
    "def beta(x):\n    y = x + 2\n    return y * 2\n\ndef epsilon():\n    return 5\n\n"
    'def gamma():\n    return "g"\n',
    "pkg/b.py": "def keep():\n    return 0\n",
    "pkg/legacy.py": 'def legacy():\n    return "old value"\n',
    "pkg/d.py": 'def second():\n    return "second one"\n\n\n\ndef first():\n'
    '    return "first one"\n',
    "pkg/e.py": "def walk(items):\n    total = 0\n    return total + sum(items)\n",
    "pkg/f.py": "def run(a):\n    x = a + 1\n    y = x * 3\n    z = y - 3\n    return z\n",
}
REPORT = """# Report

`alpha` returns 1 [pkg/a.py:3-4].
`beta` adds one and doubles [pkg/a.py:6-8].
`gamma` returns `"g"` [pkg/a.py:10-11].
`delta` returns the working directory [pkg/a.py:13-14].
`keep` returns 0 [pkg/b.py:1-2].
`legacy` returns the old value [pkg/old.py:1-2].
`doomed` says bye [pkg/c.py:1-2].
`second` returns "second one" [pkg/d.py:4-5].
`first` returns "first one" [pkg/d.py:1-2].
`walk` adds the items in a loop [pkg/e.py:2-4].
`run` computes `z` [pkg/f.py:2-4].
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def history(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for version, files in (("v1", V1), ("v2", V2)):
        for old in repo.glob("pkg/*.py"):
            old.unlink()
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", version)
        _git(repo, "tag", version)
    return repo


def test_outcomes(history: Path) -> None:
    run = rebase_report(REPORT, history, "v1", "v2")
    got = {c.citation: (c.outcome, str(c.new) if c.new else None) for c in run.result.citations}
    assert got == {
        "[pkg/a.py:3-4]": ("moved", "[pkg/a.py:6-7]"),
        "[pkg/a.py:6-8]": ("changed", "[pkg/a.py:9-11]"),
        "[pkg/a.py:10-11]": ("moved", "[pkg/a.py:16-17]"),
        "[pkg/a.py:13-14]": ("deleted", None),
        "[pkg/b.py:1-2]": ("unchanged", "[pkg/b.py:1-2]"),
        "[pkg/old.py:1-2]": ("moved", "[pkg/legacy.py:1-2]"),
        "[pkg/c.py:1-2]": ("deleted", None),
        "[pkg/d.py:4-5]": ("moved", "[pkg/d.py:1-2]"),
        "[pkg/d.py:1-2]": ("moved", "[pkg/d.py:6-7]"),
        # the loop was replaced (one line of three is left): the lines cited inside `walk`
        # are gone, not `walk`
        "[pkg/e.py:2-4]": ("deleted", None),
        # one of three lines rewritten inside `run`: the surviving ends carry the citation
        "[pkg/f.py:2-4]": ("changed", "[pkg/f.py:2-4]"),
    }
    how = {c.citation: c.how for c in run.result.citations}
    assert how["[pkg/d.py:1-2]"] == "content"  # the hunk removed it; found again by its lines
    how = {c.citation: c.how for c in run.result.citations}
    assert how["[pkg/a.py:6-8]"] == "definition" and how["[pkg/f.py:2-4]"] == "ends"
    assert all(c.verdict is not None for c in run.result.citations if c.outcome == "changed")
    assert run.result.counts == {"unchanged": 1, "moved": 5, "changed": 2, "deleted": 3}
    assert report_revision(run.rebased) == run.result.to_commit
    body = run.rebased.split("\n", 1)[1]
    assert body == (
        REPORT.replace("[pkg/a.py:3-4]", "[pkg/a.py:6-7]")
        .replace("[pkg/a.py:6-8]", "[pkg/a.py:9-11]")
        .replace("[pkg/a.py:10-11]", "[pkg/a.py:16-17]")
        .replace("[pkg/old.py:1-2]", "[pkg/legacy.py:1-2]")
        .replace("[pkg/d.py:1-2]", "[pkg/d.py:6-7]")
        .replace("[pkg/d.py:4-5]", "[pkg/d.py:1-2]")
    )


def test_unknown_revision(history: Path) -> None:
    with pytest.raises(StoreError, match="unknown revision 'v9'"):
        rebase_report(REPORT, history, "v1", "v9")


def test_cli_writes_report_and_reads_the_revision_line(history: Path, tmp_path: Path) -> None:
    report, out = tmp_path / "r.md", tmp_path / "out.md"
    report.write_text(REPORT)
    r = CliRunner().invoke(cli, ["rebase", str(report), "--repo", str(history), "--to", "v2"])
    assert r.exit_code == 2 and "records no revision" in r.output
    r = CliRunner().invoke(
        cli,
        ["rebase", str(report), "--repo", str(history), "--from", "v1", "--to", "v2",
         "-f", "json", "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    data = json.loads(r.output.split("\nwrote ")[0])
    assert data["schema_version"] == 1 and data["counts"]["deleted"] == 3
    # The rebased report records v2: rebasing it again to v2 changes nothing.
    r = CliRunner().invoke(cli, ["rebase", str(out), "--repo", str(history), "--to", "v2"])
    assert r.exit_code == 0, r.output
    assert "0 moved, 0 changed" in r.output and "+" not in r.output.split("┘")[-1]
    r = CliRunner().invoke(
        cli, ["rebase", str(report), "--repo", str(history), "--from", "v1", "--to", "nope"]
    )
    assert r.exit_code == 2 and r.output.startswith("Error: unknown revision 'nope'")


def test_eval_rev_warns_about_files_changed_since(history: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    report.write_text(set_report_revision(REPORT, "v1"))
    r = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(history), "--rev", "v2", "--no-llm", "-f", "json"]
    )
    assert r.exit_code == 0
    warning = next(line for line in r.output.splitlines() if "changed since" in line)
    assert "10 citation(s) cite files changed since the report's revision v1" in warning
    assert warning.endswith(
        "pkg/a.py (4), pkg/c.py (1), pkg/d.py (2), pkg/e.py (1), pkg/f.py (1), pkg/old.py (1)"
    )
    report.write_text(set_report_revision(REPORT, "v2"))
    r = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(history), "--rev", "v2", "--no-llm", "-f", "json"]
    )
    assert "changed since" not in r.output


def test_revision_line() -> None:
    assert report_revision("# x\n") is None
    text = set_report_revision("# x\n", "abc")
    assert text == "<!-- citecal-rev: abc -->\n# x\n" and report_revision(text) == "abc"
    assert set_report_revision(text, "def") == "<!-- citecal-rev: def -->\n# x\n"
    front = "---\ntitle: t\ncitecal-rev: abc\n---\n# x\n"
    assert report_revision(front) == "abc"
    assert set_report_revision(front, "def") == front.replace("abc", "def")
    plain_front = "---\ntitle: t\n---\n# x\n"
    assert set_report_revision(plain_front, "abc") == (
        "---\ntitle: t\n---\n<!-- citecal-rev: abc -->\n# x\n"
    )
