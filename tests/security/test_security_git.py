"""git and ``.git/`` under a hostile report or repository (README "Security").

A report's revision line, a citation's path and the evaluated repository's
own ``.git/config`` are written by parties citecal does not trust. None of
them may turn into a git option, a program run by git, a read of another
repository, or evidence.
"""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.errors import StoreError
from citecal.source import GitStore, UnsafePath, open_store
from citecal.source._gitcmd import UnsafeGitArgument, git_command, run_git

CITECAL = Path(__file__).resolve().parents[2] / "citecal"
CODE = "def add(a, b):\n    return a + b\n\n"
SECRET = "AUTHORIZATION: bearer ghp_s3cretTokenOfTheUser"


def sh(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    res = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=env, check=True)
    return res.stdout.decode()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q")
    for rel, text in (files or {"src/app.py": CODE}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    sh(path, "add", ".")
    sh(path, "commit", "-qm", "one")
    sh(path, "tag", "v2")
    return path


def program(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that leaves a marker file when anything runs it."""
    marker = tmp_path / "program-ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def eval_json(report: Path, repo: Path, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli,
        ["eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json", *extra],
        env={"OPENAI_API_KEY": "", "CITECAL_CACHE_PATH": ""},
    )
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- item 1: options


def test_report_revision_line_never_reaches_git_as_an_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reproduced attack: ``<!-- citecal-rev: --output=victim.txt -->`` wrote a file."""
    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "r.md"
    report.write_text(
        "<!-- citecal-rev: --output=victim.txt -->\n"
        "The `add` function returns a sum [src/app.py:1-3].\n"
    )
    code, out, err = eval_json(report, repo, "--rev", "v2")
    assert code == 0, err
    assert not (repo / "victim.txt").exists()
    assert not (tmp_path / "victim.txt").exists()
    assert "'--output=victim.txt', which is not a revision" in err
    assert json.loads(out)["citations"][0]["valid"] is True


def test_fsmonitor_in_the_evaluated_repository_runs_no_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``core.fsmonitor`` in ``.git/config``: a program git runs when it looks at the work tree."""
    repo = make_repo(tmp_path / "repo")
    script, marker = program(tmp_path)
    sh(repo, "config", "core.fsmonitor", str(script))
    sh(repo, "config", "core.hooksPath", str(tmp_path))
    sh(repo, "config", "diff.external", str(script))
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "r.md"
    # one "revision" that is an option: git diff would compare the work tree and ask fsmonitor
    report.write_text("<!-- citecal-rev: --stat -->\nThe `add` function [src/app.py:1-3].\n")
    code, _, err = eval_json(report, repo, "--rev", "v2")
    assert code == 0, err
    assert not marker.exists()
    # and the helper itself: commands that look at the work tree or diff run nothing either
    for args in (("status",), ("diff",), ("diff", "HEAD")):
        run_git(repo, *args)
    assert not marker.exists()


def test_textconv_and_external_diff_drivers_do_not_run_in_rebase(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": CODE, ".gitattributes": "*.py diff=evil\n"})
    script, marker = program(tmp_path)
    sh(repo, "config", "diff.evil.textconv", str(script))
    sh(repo, "config", "diff.evil.command", str(script))
    (repo / "src/app.py").write_text("# moved\n" + CODE)
    sh(repo, "commit", "-qam", "two")
    report = tmp_path / "r.md"
    report.write_text("The `add` function returns a sum [src/app.py:1-2].\n")
    result = CliRunner().invoke(
        cli,
        ["rebase", str(report), "--repo", str(repo), "--from", "v2", "--to", "HEAD"],
        env={"OPENAI_API_KEY": "", "CITECAL_CACHE_PATH": ""},
    )
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()


@pytest.mark.parametrize("rev", ["--output=x", "-p", "a\nb", ""])
def test_a_revision_that_looks_like_an_option_is_refused_before_git_runs(
    tmp_path: Path, rev: str
) -> None:
    with pytest.raises(UnsafeGitArgument, match="not a revision"):
        git_command(tmp_path, "diff", revs=(rev,))


def test_revisions_follow_end_of_options_and_paths_follow_double_dash(tmp_path: Path) -> None:
    argv = git_command(tmp_path, "grep", "-e", "x", revs=("HEAD",), paths=(".",))
    assert argv[argv.index("--end-of-options") + 1] == "HEAD"
    assert argv[-2:] == ["--", "."]
    assert "core.fsmonitor=false" in argv and "protocol.allow=never" in argv


_PROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "getoutput"}
_ALLOWED = {
    CITECAL / "source" / "_gitcmd.py",  # the one helper that runs git
    CITECAL / "testing" / "openai_server.py",  # runs the user's own command, never git
}


def test_nothing_but_the_helper_starts_a_process() -> None:
    """One helper owns every git invocation: no other module of citecal starts a process."""
    offenders = []
    for path in sorted(CITECAL.rglob("*.py")):
        if path in _ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                name = owner.id if isinstance(owner, ast.Name) else ""
                if (name == "subprocess" and node.func.attr in _PROCESS_CALLS) or (
                    name == "os" and node.func.attr.startswith(("system", "exec", "spawn", "popen"))
                ):
                    offenders.append(f"{path.relative_to(CITECAL.parent)}:{node.lineno}")
    assert offenders == []


# --------------------------------------------------------------------------- item 2: .git/


@pytest.mark.parametrize("rev", [None, "v2"], ids=["directory", "revision"])
def test_git_directory_is_never_evidence(tmp_path: Path, rev: str | None) -> None:
    repo = make_repo(tmp_path / "repo")
    sh(repo, "config", "http.extraheader", SECRET)
    (repo / "cfg").symlink_to(".git/config")
    report = tmp_path / "r.md"
    report.write_text(
        "The repository is configured here [.git/config:1-11].\n\n"
        "The same file through a link [cfg:1-3].\n\n"
        "And with odd case [.GIT/config:1-3].\n"
    )
    code, out, err = eval_json(report, repo, *(("--rev", rev) if rev else ()))
    assert code == 0, err
    assert "ghp_s3cret" not in out + err
    rows = json.loads(out)["citations"]
    first = rows[0]
    assert first["failure_type"] == "invalid_file"
    assert first["error"] == (
        "Path is inside a git directory (.git/), which is never evidence: .git/config"
    )
    assert all(r["failure_type"] == "invalid_file" for r in rows)


def test_the_directory_a_git_file_points_to_is_never_evidence(tmp_path: Path) -> None:
    """``.git`` as a file (``gitdir: meta``) and the git directory kept inside the checkout."""
    repo = make_repo(tmp_path / "repo")
    sh(repo, "config", "http.extraheader", SECRET)
    (repo / ".git").rename(repo / "meta")
    (repo / ".git").write_text("gitdir: meta\n")
    with open_store(repo) as store:
        with pytest.raises(UnsafePath, match="never evidence: meta/config"):
            store.read("meta/config")
        assert store.read("src/app.py").line_count == 3


def test_an_excerpt_item_in_the_git_directory_says_why(tmp_path: Path) -> None:
    """Excerpt citations (``[[item:spec]]``) read the ``--context`` directory: same rule."""
    repo = make_repo(tmp_path / "repo")
    sh(repo, "config", "http.extraheader", SECRET)
    report = tmp_path / "r.md"
    report.write_text("The remote is configured [[.git/config:L1-3]].\n")
    code, out, err = eval_json(report, repo, "--context", str(repo))
    assert code == 0, err
    (row,) = json.loads(out)["citations"]
    assert row["failure_type"] == "invalid_file"
    assert row["error"] == (
        "Path is inside a git directory (.git/), which is never evidence: .git/config"
    )
    assert "ghp_s3cret" not in out + err


# --------------------------------------------------------------------------- item 3: --rev


def test_rev_does_not_follow_a_git_file_out_of_the_repository(tmp_path: Path) -> None:
    elsewhere = make_repo(tmp_path / "elsewhere", {"secret.txt": "the other repository\n"})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").write_text(f"gitdir: {os.path.relpath(elsewhere / '.git', repo)}\n")
    with pytest.raises(StoreError, match=r"outside .*citecal does not follow it"):
        GitStore(repo, "HEAD")
    report = tmp_path / "r.md"
    report.write_text("The other repository is read [secret.txt:1-1].\n")
    code, out, err = eval_json(report, repo, "--rev", "HEAD")
    assert code == 2 and out == ""
    assert "citecal does not follow it" in err and "Traceback" not in err
