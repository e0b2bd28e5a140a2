"""Rebase across two real consecutive releases (issue 10): do citations land on the right lines?

Fetches two consecutive releases of two real packages from PyPI (itsdangerous
2.1.2 → 2.2.0, requests 2.31.0 → 2.32.0, which moved to a ``src/`` layout),
checks each archive's sha256 (``benchmarks/rebase_sources.json``; sources are
never committed, like ``datasets/groundtruth/fetch.py``), commits the old and
the new release into a fresh git repository per package, writes a report citing
every entry of ``benchmarks/rebase_cited.json`` at the old release, runs
``citecal rebase`` (the library call) and scores it against the expectations,
which were built from the code (Python's ``ast`` over both releases, and lines
read in the diff), never by running citecal.

    .venv/bin/python benchmarks/rebase_release.py [--dest DIR] [--verbose]

Targets: >= 95% of the citations of moved code land on exactly the right lines;
every deleted one is reported deleted.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "datasets" / "groundtruth"))
from fetch import fetch  # noqa: E402  (download, sha256 check, unpack; standard library)

from citecal.correct import rebase_report  # noqa: E402

HERE = Path(__file__).resolve().parent


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            *args,
        ],
        check=True,
        capture_output=True,
    )


def history(pkg: dict, dest: Path, work: Path) -> Path:
    """A git repository whose tags ``old`` and ``new`` hold the two releases."""
    repo = work / pkg["id"]
    repo.mkdir()
    _git(repo, "init", "-q")
    for tag in ("old", "new"):
        release = dict(pkg[tag], id=pkg["id"])
        unpacked = fetch(release, dest)
        for child in repo.iterdir():
            if child.name != ".git":
                subprocess.run(["rm", "-rf", str(child)], check=True)
        subprocess.run(["cp", "-a", f"{unpacked}/.", str(repo)], check=True)
        (repo / ".fetched").unlink(missing_ok=True)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"{pkg['id']} {release['version']}")
        _git(repo, "tag", tag)
    return repo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=ROOT / ".citecal" / "rebase")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    sources = json.loads((HERE / "rebase_sources.json").read_text())["packages"]
    cited = json.loads((HERE / "rebase_cited.json").read_text())["citations"]
    args.dest.mkdir(parents=True, exist_ok=True)
    totals: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for pkg in sources:
            repo = history(pkg, args.dest, Path(tmp))
            mine = [c for c in cited if c["package"] == pkg["id"]]
            report = "# Report\n\n" + "".join(
                f"The code of `{c['name'].split('#')[0]}` is here {c['citation']}.\n" for c in mine
            )
            started = time.perf_counter()
            run = rebase_report(report, repo, "old", "new", report_name=pkg["id"])
            seconds = time.perf_counter() - started
            got = run.result.citations
            assert len(got) == len(mine), "every cited line must be followed"
            c: collections.Counter[str] = collections.Counter()
            for want, row in zip(mine, got, strict=True):
                exp = want["expected"]
                new = str(row.new) if row.new is not None else None
                c[f"n_{exp}"] += 1
                if exp in ("moved", "unchanged"):
                    ok = new == want["new"]
                    c["moved_right"] += ok
                    c["moved_outcome"] += row.outcome in ("moved", "unchanged")
                elif exp == "changed":
                    ok = row.outcome != "deleted" and new is not None
                    c["changed_overlap"] += ok and _overlaps(new, want["new"])
                    c["changed_outcome"] += row.outcome == "changed"
                else:
                    ok = row.outcome == "deleted"
                    c["deleted_right"] += ok
                if args.verbose and not ok:
                    print(
                        f"  {pkg['id']}: {want['citation']} expected {exp} {want['new']}, "
                        f"got {row.outcome} {new} ({row.how})"
                    )
            moved = c["n_moved"] + c["n_unchanged"]
            print(
                f"{pkg['id']} {pkg['old']['version']} -> {pkg['new']['version']}: "
                f"{len(mine)} citations in {seconds:.2f}s; outcomes {dict(run.result.counts)}"
            )
            print(
                f"  moved/unchanged code on the right lines: {c['moved_right']}/{moved}; "
                f"changed: {c['changed_outcome']}/{c['n_changed']} reported changed, "
                f"{c['changed_overlap']} overlapping the definition's new lines; "
                f"deleted reported deleted: {c['deleted_right']}/{c['n_deleted']}"
            )
            totals.update(c)
    moved = totals["n_moved"] + totals["n_unchanged"]
    rate = totals["moved_right"] / moved if moved else 0.0
    print(
        f"all: moved code on the right lines {totals['moved_right']}/{moved} = {100 * rate:.1f}% "
        f"(target >= 95%); deleted reported deleted {totals['deleted_right']}/"
        f"{totals['n_deleted']} (target all); changed reported changed "
        f"{totals['changed_outcome']}/{totals['n_changed']}, overlapping "
        f"{totals['changed_overlap']}/{totals['n_changed']}"
    )
    return 0


def _overlaps(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    pa, la = a[1:-1].rsplit(":", 1)
    pb, lb = b[1:-1].rsplit(":", 1)
    a1, _, a2 = la.partition("-")
    b1, _, b2 = lb.partition("-")
    return pa == pb and int(a1) <= int(b2 or b1) and int(b1) <= int(a2 or a1)


if __name__ == "__main__":
    sys.exit(main())
