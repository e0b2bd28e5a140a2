"""An output never replaces an input of the same command (issue 29, item 4; README "Security").

``calibrate T --cascade T`` replaced the annotation table, ``bench groundtruth
--write-cascade <labels file>`` people's labels, ``align A -o A`` and ``calibrate
A -o A`` likewise, all with exit 0. Every command with an output now refuses a path
that names one of its inputs (also through a symlink or a hard link) before any
work, exit 2, and the input is left byte for byte; ``calibrate`` writes a cascade
with ``--write-cascade`` (``--cascade`` only reads one), and replacing an existing
cascade file needs ``--force``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"
EXAMPLES = ROOT / "datasets" / "examples"
GROUNDTRUTH = ROOT / "datasets" / "groundtruth"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def table(tmp_path: Path) -> Path:
    copy = tmp_path / "ann.parquet"
    shutil.copyfile(TABLE, copy)
    return copy


def refused(args: list[str], keep: Path) -> str:
    before = digest(keep)
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit | None)
    assert digest(keep) == before
    return res.output


def test_same_file_sees_symlinks_and_hard_links(tmp_path: Path) -> None:
    from citecal._io import refuse_clobber, same_file

    a = tmp_path / "a.txt"
    a.write_text("x")
    (tmp_path / "link").symlink_to(a)
    os.link(a, tmp_path / "hard")
    other = tmp_path / "b.txt"
    other.write_text("x")
    assert same_file(a, tmp_path / "link") and same_file(a, tmp_path / "hard")
    assert same_file(tmp_path / "new.json", tmp_path / "." / "new.json")  # neither exists yet
    assert not same_file(a, other)
    with pytest.raises(InputError, match="are the same file"):
        refuse_clobber([("-o", tmp_path / "n.json"), ("--save-map", tmp_path / "n.json")], [])
    refuse_clobber([("-o", Path(os.devnull))], [("X", Path(os.devnull))])  # written through


@pytest.mark.parametrize(
    "extra",
    [
        ["--write-cascade", "{T}"],
        ["-f", "json", "-o", "{T}"],
        ["--save-map", "{T}"],
        ["--compare", "{C}", "-o", "{C}"],
        ["-o", "{LINK}"],
        ["-o", "{HARD}"],
    ],
)
def test_calibrate_never_writes_over_its_input(extra: list[str], table: Path) -> None:
    compare = table.with_name("b.parquet")
    shutil.copyfile(table, compare)
    (table.parent / "link.parquet").symlink_to(table)
    os.link(table, table.parent / "hard.parquet")
    names = {
        "{T}": str(table),
        "{C}": str(compare),
        "{LINK}": str(table.parent / "link.parquet"),
        "{HARD}": str(table.parent / "hard.parquet"),
    }
    args = ["calibrate", str(table), *(names.get(a, a) for a in extra)]
    keep = compare if "{C}" in extra else table
    out = refused(args, keep)
    assert "is the input" in out and "nothing was written" in out


def test_calibrate_cascade_no_longer_writes(table: Path, tmp_path: Path) -> None:
    target = tmp_path / "mycascade.json"
    out = refused(["calibrate", str(table), "--cascade", str(target)], table)
    assert "--write-cascade" in out and not target.exists()
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        out = refused(["calibrate", str(table), "--cascade", "default"], table)
        out2 = refused(["calibrate", str(table), "--write-cascade", "default"], table)
    finally:
        os.chdir(cwd)
    assert not (tmp_path / "default").exists()
    assert "--write-cascade" in out and "shipped" in out2


def test_calibrate_keeps_an_existing_cascade_unless_forced(table: Path, tmp_path: Path) -> None:
    target = tmp_path / "cascade.json"
    target.write_text("my cascade\n")
    out = refused(["calibrate", str(table), "--write-cascade", str(target)], target)
    assert "--force" in out and target.read_text() == "my cascade\n"
    res = CliRunner().invoke(
        cli, ["calibrate", str(table), "--write-cascade", str(target), "--force"]
    )
    assert res.exit_code == 0, res.output
    assert '"schema_version": 1' in target.read_text()


def test_bench_never_writes_over_a_labels_file(tmp_path: Path) -> None:
    labels = next(GROUNDTRUTH.glob("*/labels*.json"))
    dataset = tmp_path / "gt"
    shutil.copytree(labels.parent, dataset / labels.parent.name)
    copy = dataset / labels.parent.name / labels.name
    for flag in ("--write-cascade", "--write-baseline", "-o"):
        out = refused(
            ["bench", "groundtruth", "--dataset", str(dataset), "--no-llm", flag, str(copy)], copy
        )
        assert "is the input" in out


def test_bench_write_cascade_needs_force_over_a_file(tmp_path: Path) -> None:
    target = tmp_path / "c.json"
    target.write_text("{}")
    out = refused(
        ["bench", "groundtruth", "--no-llm", "--only", "semver", "--write-cascade", str(target)],
        target,
    )
    assert "--force" in out


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "{R}", "--repo", "{REPO}", "--no-llm", "-o", "{R}"],
        ["eval", "{R}", "--repo", "{REPO}", "--no-llm", "--correct", "-o", "{R}"],
        ["correct", "{R}", "--repo", "{REPO}", "--no-llm", "--corrections", "{R}"],
        ["rebase", "{R}", "--repo", "{REPO}", "--to", "HEAD", "-o", "{R}"],
        ["chunks", "{R}", "-o", "{R}"],
        ["validate", "{R}", "-o", "{R}"],
    ],
)
def test_report_commands_never_write_over_the_report(args: list[str], tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    shutil.copyfile(EXAMPLES / "report.md", report)
    names = {"{R}": str(report), "{REPO}": str(EXAMPLES / "shopcart")}
    out = refused([names.get(a, a) for a in args], report)
    assert "is the input" in out


@pytest.mark.parametrize(
    "args",
    [
        ["align", "{T}", "--prompt", "v1", "-o", "{T}"],
        ["align", "{T}", "--prompt", "v1", "-o", "{P}", "--json", "{T}"],
        ["rejudge", "{T}", "--prompt", "v1", "-o", "{T}"],
        ["estimate", "{J}", "-a", "{T}", "-o", "{T}"],
        ["estimate", "{J}", "-a", "{T}", "-o", "{J}"],
    ],
)
def test_table_commands_never_write_over_the_table(
    args: list[str], table: Path, tmp_path: Path
) -> None:
    judged = tmp_path / "judged.parquet"
    shutil.copyfile(ROOT / "datasets" / "annotations" / "judged.parquet", judged)
    names = {"{T}": str(table), "{J}": str(judged), "{P}": str(tmp_path / "p.md")}
    keep = judged if args[-1] == "{J}" else table
    out = refused([names.get(a, a) for a in args], keep)
    assert "is the input" in out
