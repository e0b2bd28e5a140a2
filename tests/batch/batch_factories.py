"""Small generated repositories, reports and manifests for the eval-batch tests.

Seeded and tiny on purpose: three repositories (one a git repository with
two revisions), a few reports each, every outcome (supported, not
supported, abstractive, missing file, bad range) present.
"""

from __future__ import annotations

import csv
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

MODULE = (
    "class {C}:\n"
    '    """{C} keeps records."""\n'
    "\n"
    "    def __init__(self, limit):\n"
    "        self.limit = limit\n"
    "\n"
    "    def {f}(self, value):\n"
    "        # validate the value before storing it\n"
    "        if value > self.limit:\n"
    '            raise ValueError("{f} failed")\n'
    "        return value\n"
    "\n"
)

CLAIMS = (
    "The `{f}` method of `{C}` raises an error when the value exceeds the limit",
    "The {C} class validates values before storing them",
    "This module handles input validation for {C} records and ensures values stay small",
    "The `{f}` function returns the value unchanged when it is within the limit",
    "The `{C}` type caches results in a `LRUCache`",
)


@dataclass(frozen=True)
class Row:
    """One manifest row: what eval-batch gets and what `citecal eval` is run with."""

    id: str
    report: Path
    repo: Path
    rev: str | None = None


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
    )


def make_repo(root: Path, name: str, modules: int, seed: int, git: bool = False) -> Path:
    rng = random.Random(seed)
    repo = root / name
    for i in range(modules):
        blocks = [MODULE.format(C=f"{name.title()}{i}x{b}", f=f"check_{i}_{b}") for b in range(3)]
        path = repo / "pkg" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(blocks))
    (repo / "README.md").write_text(f"# {name}\n\nseed {rng.random()}\n")
    if git:
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", "one")
        _git(repo, "tag", "v1")
        # The second revision moves every method down two lines and renames one.
        for i in range(modules):
            path = repo / "pkg" / f"m{i}.py"
            text = path.read_text().replace("check_0_0", "check_renamed")
            path.write_text("# moved\n# down\n" + text)
        _git(repo, "commit", "-qam", "two")
    return repo


def make_report(path: Path, name: str, modules: int, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    lines = [f"# Report {path.stem}", ""]
    for k in range(n):
        i, b = rng.randrange(modules), rng.randrange(3)
        start = 12 * b + 1
        claim = rng.choice(CLAIMS).format(C=f"{name.title()}{i}x{b}", f=f"check_{i}_{b}")
        kind = rng.random()
        if kind < 0.75:
            cite = f"[pkg/m{i}.py:{start}-{start + 10}]"
        elif kind < 0.85:
            cite = f"[pkg/missing{i}.py:1-3]"
        else:
            cite = f"[pkg/m{i}.py:{start + 200}-{start + 210}]"
        if k % 5 == 0:
            lines += ["", f"## Part {k // 5}", ""]
        lines.append(f"{claim} {cite}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def make_batch(root: Path, reports_per_repo: int = 3, citations: int = 12) -> list[Row]:
    """Three repositories (``gamma`` in git at tag v1 and HEAD) and their reports."""
    rows: list[Row] = []
    specs = [("alpha", None), ("beta", None), ("gamma", "v1"), ("gamma", "HEAD")]
    repos = {
        "alpha": make_repo(root / "repos", "alpha", 3, seed=1),
        "beta": make_repo(root / "repos", "beta", 4, seed=2),
        "gamma": make_repo(root / "repos", "gamma", 3, seed=3, git=True),
    }
    for s, (name, rev) in enumerate(specs):
        for j in range(reports_per_repo):
            rid = f"{name}-{rev or 'dir'}-{j}"
            report = make_report(
                root / "reports" / f"{rid}.md", name, 3, citations, seed=100 * s + j
            )
            rows.append(Row(rid, report, repos[name], rev))
    return rows


def write_manifest(path: Path, rows: list[Row], extra: list[dict[str, str]] | None = None) -> Path:
    """A CSV manifest with paths relative to it (as a user would write one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["id", "report", "repo", "rev"])
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {
                    "id": r.id,
                    "report": str(r.report.relative_to(path.parent)),
                    "repo": str(r.repo.relative_to(path.parent)),
                    "rev": r.rev or "",
                }
            )
        for e in extra or []:
            writer.writerow(e)
    return path
