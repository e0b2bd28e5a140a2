"""One input check for every file (issue 29, item 5; README "Security").

Annotation tables skipped the regular-file check other inputs got: a FIFO hung
``calibrate``, ``calibrate --cascade`` and ``estimate``, ``/dev/zero`` named ``.csv``
grew to 4.4 GB and ``/dev/urandom`` named ``.jsonl`` ended in a MemoryError. Cascade
files were not sanity-checked (thresholds of 0, negative or −inf decided everything,
NaN silently meant never, a 300 MB file was read), and ``Infinity``/``NaN`` or a
5 000-digit integer in any JSON input ended in a traceback with exit 1. Each case here
is one ``Error:`` line and exit 2, and nothing is written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"
JUDGED = ROOT / "datasets" / "annotations" / "judged.parquet"
EXAMPLES = ROOT / "datasets" / "examples"
DEFAULT_CASCADE = ROOT / "citecal" / "cascade" / "default_cascade.json"
HUGE = "9" * 5000


def run(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(cli, args)
    assert "Traceback" not in res.output
    assert isinstance(res.exception, SystemExit | None), repr(res.exception)
    return res.exit_code, res.output


def one_line_error(args: list[str], *words: str) -> str:
    code, out = run(args)
    assert code == 2, out
    errors = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, out
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


# --------------------------------------------------------------------- annotation tables


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO named like an annotation table, with a writer waiting (a read would not hang)."""
    path = tmp_path / "ann.parquet"
    os.mkfifo(path)

    def writer() -> None:
        try:
            with path.open("wb") as fh:  # blocks until a reader opens the pipe
                fh.write(TABLE.read_bytes())
        except BrokenPipeError:  # released by the fixture: nobody read it
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    yield path
    if thread.is_alive():  # nobody opened it: release the writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)


@pytest.mark.parametrize(
    "args",
    [
        ["calibrate", "{T}"],
        ["calibrate", "{T}", "--write-cascade", "{OUT}"],
        ["estimate", "{J}", "-a", "{T}"],
        ["estimate", "{T}", "-a", "{A}"],
        ["rejudge", "{T}", "--prompt", "v1", "--dry-run"],
    ],
)
def test_a_fifo_table_is_refused_without_reading_it(
    args: list[str], fifo: Path, tmp_path: Path
) -> None:
    names = {
        "{T}": str(fifo),
        "{J}": str(JUDGED),
        "{A}": str(TABLE),
        "{OUT}": str(tmp_path / "c.json"),
    }
    started = time.monotonic()
    one_line_error([names.get(a, a) for a in args], "a FIFO, not a regular file")
    assert time.monotonic() - started < 20
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize(("device", "name"), [("/dev/zero", "t.csv"), ("/dev/urandom", "t.jsonl")])
def test_a_device_named_like_a_table_is_refused(device: str, name: str, tmp_path: Path) -> None:
    link = tmp_path / name
    link.symlink_to(device)
    one_line_error(["calibrate", str(link)], "a character device")
    one_line_error(["estimate", str(JUDGED), "-a", str(link)], "a character device")


def test_a_table_past_its_bound_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citecal.annotations import _io

    monkeypatch.setattr(_io, "MAX_TABLE_BYTES", 1000)
    one_line_error(["calibrate", str(TABLE)], "more than the 1,000 bytes citecal reads")


# --------------------------------------------------------------------- cascade files


def cascade_with(tmp_path: Path, edit: str) -> Path:
    """The shipped cascade with one value replaced (the text of a JSON member)."""
    text = DEFAULT_CASCADE.read_text()
    key, _, value = edit.partition("=")
    path = tmp_path / "cascade.json"
    data = json.loads(text)
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    node[parts[-1]] = "@@"
    path.write_text(json.dumps(data, indent=2).replace('"@@"', value))
    return path


@pytest.mark.parametrize(
    "edit",
    [
        "tiers.1.thresholds.supports.value=0",
        "tiers.1.thresholds.supports.value=-0.3",
        "tiers.1.thresholds.supports.value=-Infinity",
        "tiers.1.thresholds.supports.value=NaN",
        "tiers.1.thresholds.not_supports.value=0.2",
        "tiers.1.thresholds.supports.value=1.5",
        "agreement.supports=1.0",
        "agreement.supports=0.3",
        "delta=0",
        "delta=NaN",
        "delta=1",
        "labels.n=Infinity",
        "labels.n=NaN",
        f"labels.n={HUGE}",
        'labels.n="[/bold]"',
        "labels.n=-4",
        "tiers.0.reached=-1",
        "tiers.0.decided=3.5",
        "tiers.1.thresholds.supports.n=1e999",
        "abstained=-1",
        "tiers.1.cost_per_1000=-2",
        # README "Judge confidence": a judge tier's confidence source, the judge tiers' cost.
        'tiers.1.confidence="logprob"',  # the local tier has no confidence source
        'tiers.1.confidence="[/bold]"',
        'cost={"per_1000": -1, "baseline_model": "m", "baseline_per_1000": 1, "ratio": 0.5}',
        'cost={"per_1000": NaN, "baseline_model": "m", "baseline_per_1000": 1, "ratio": 0.5}',
        'cost={"per_1000": 1, "baseline_model": "m", "baseline_per_1000": Infinity, "ratio": 0}',
        'cost={"per_1000": 1, "baseline_model": "m", "baseline_per_1000": 2, "ratio": -0.5}',
        f'cost={{"per_1000": 1, "baseline_model": "{"m" * 300}", "baseline_per_1000": 2, '
        '"ratio": 0.5}',
    ],
)
def test_a_cascade_file_is_checked_before_use(edit: str, tmp_path: Path) -> None:
    cascade = cascade_with(tmp_path, edit)
    report = EXAMPLES / "report.md"
    one_line_error(
        ["eval", str(report), "--repo", str(EXAMPLES / "shopcart"), "--no-llm", "--cascade",
         str(cascade), "-o", str(tmp_path / "out.json")],
        str(cascade), "not a citecal cascade file",
    )  # fmt: skip
    assert not (tmp_path / "out.json").exists()


def test_the_shipped_cascade_passes_the_checks(tmp_path: Path) -> None:
    code, out = run(
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--cascade", str(cascade_with(tmp_path, "delta=0.1")), "-f", "json"]
    )  # fmt: skip
    assert code == 0, out


def test_a_cascade_with_judge_confidence_and_cost_passes_the_checks(tmp_path: Path) -> None:
    """The fields of README "Judge confidence" within their bounds load."""
    cascade = cascade_with(
        tmp_path,
        'cost={"per_1000": 1.5, "baseline_model": "gpt-4o", "baseline_per_1000": 4, '
        '"ratio": 0.375}',
    )
    data = json.loads(cascade.read_text())
    judge = json.loads(json.dumps(data["tiers"][1]))
    judge.update(name="judge:gpt-4o", kind="judge", model="gpt-4o", confidence="logprob")
    data["tiers"].append(judge)
    cascade.write_text(json.dumps(data))
    code, out = run(
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--cascade", str(cascade), "-f", "json"]
    )  # fmt: skip
    assert code == 0, out


def test_a_huge_cascade_file_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(300 * 2**20)  # sparse: 300 MB that cost nothing to make
    one_line_error(
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--cascade", str(big)],
        "cascade file is 300 MiB",
    )  # fmt: skip


def test_a_fifo_cascade_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    os.mkfifo(path)
    one_line_error(["bench", "groundtruth", "--no-llm", "--cascade", str(path)], "a FIFO")


# --------------------------------------------------------------------- other JSON inputs


@pytest.mark.parametrize("number", [HUGE, "NaN", "Infinity", "1e999"])
def test_a_calibration_map_with_an_absurd_number_is_one_line(number: str, tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    path.write_text(
        '{"schema_version": 1, "method": "isotonic", "n": N, "x": [0, 1], "y": [0, 1]}'.replace(
            "N", number
        )
    )
    one_line_error(
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--calibration", str(path)],
        "is not a `citecal calibrate --save-map` file",
    )  # fmt: skip


def test_a_baseline_calibration_with_a_huge_integer_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.write_text('{"overall": {"n_records": N}, "judge": null}'.replace("N", HUGE))
    one_line_error(["calibrate", str(TABLE), "--baseline", str(path)], "5,000 digits")


@pytest.mark.parametrize("number", [HUGE, "NaN", "-Infinity"])
def test_an_eval_json_with_an_absurd_number_is_one_line(number: str, tmp_path: Path) -> None:
    good = tmp_path / "eval.json"
    res = CliRunner().invoke(
        cli,
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "-f", "json", "-o", str(good)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    bad = tmp_path / "bad.json"
    bad.write_text(
        good.read_text().replace('"total_citations": 44', f'"total_citations": {number}')
    )
    assert bad.read_text() != good.read_text()
    one_line_error(["estimate", str(bad), "-a", str(TABLE)], "not a `citecal eval --format json`")


@pytest.mark.parametrize(
    ("name", "line"),
    [
        (
            "a.jsonl",
            '{"id": 1, "question": "q", "answer": "a", "citations": [{"evidence_idx": %s}]}',
        ),
        ("a.json", '{"items": [{"id": 1, "question": "q", "answer": "a", "x": %s}]}'),
    ],
)
def test_validate_answers_with_a_huge_integer_are_malformed_not_a_traceback(
    name: str, line: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_text(line.replace("%s", HUGE) + "\n")
    code, out = run(["validate", str(path), "--strict"])
    assert code == 2 and "5,000 digits" in out
    code, out = run(["validate", str(path), "-f", "json"])
    assert code == 1 and "5,000 digits" in out  # reported as a malformed record, gate FAIL


def test_a_label_file_with_a_huge_integer_is_one_line(tmp_path: Path) -> None:
    source = next((ROOT / "datasets" / "groundtruth").glob("semver/labels.json"))
    dataset = tmp_path / "gt"
    shutil.copytree(source.parent, dataset / "semver")
    labels = dataset / "semver" / "labels.json"
    data = json.loads(labels.read_text())
    data["version"] = "@@"
    labels.write_text(json.dumps(data).replace('"@@"', HUGE))
    one_line_error(["bench", "groundtruth", "--dataset", str(dataset), "--no-llm"], "5,000 digits")


# --------------------------------------------------------------------- scores and options


@pytest.mark.parametrize("score", [99, -1, float("inf"), float("nan"), "abc"])
def test_write_cascade_checks_human_scores_as_calibrate_does(score: object, tmp_path: Path) -> None:
    table = pd.read_parquet(TABLE)
    table["human_score"] = table["human_score"].astype(object)
    table.loc[3, "human_score"] = score
    path = tmp_path / "ann.csv"
    table.to_csv(path, index=False)
    out = tmp_path / "c.json"
    one_line_error(["calibrate", str(path)], "human_score must be an integer 0–3")
    one_line_error(
        ["calibrate", str(path), "--write-cascade", str(out)], "human_score must be an integer 0–3"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["calibrate", "{T}", "--write-cascade", "{OUT}", "--delta", "nan"],
        ["bench", "groundtruth", "--no-llm", "--write-cascade", "{OUT}", "--delta", "nan"],
        ["calibrate", "{T}", "--drift-margin", "nan"],
        ["calibrate", "{T}", "--threshold", "nan"],
        ["estimate", "{J}", "-a", "{T}", "--target-width", "nan"],
        ["estimate", "{J}", "-a", "{T}", "--level", "nan"],
        ["rejudge", "{T}", "--prompt", "v1", "--anchor", "--min-agreement", "nan"],
    ],
)
def test_nan_is_not_a_number_option(args: list[str], tmp_path: Path) -> None:
    names = {"{T}": str(TABLE), "{J}": str(JUDGED), "{OUT}": str(tmp_path / "c.json")}
    code, out = run([names.get(a, a) for a in args])
    assert code == 2 and "'nan' is not a number" in out
    assert not (tmp_path / "c.json").exists()


def test_an_agreement_given_twice_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    one_line_error(
        ["calibrate", str(TABLE), "--write-cascade", str(out), "--agreement",
         "supports=0.9,supports=0.6,not_supports=0.9"],
        "--agreement", "supports twice",
    )  # fmt: skip
    assert not out.exists()


def test_dev_full_as_an_output_is_one_line() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    one_line_error(["calibrate", str(TABLE), "-f", "json", "-o", "/dev/full"], "cannot write")
    one_line_error(
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "-o", "/dev/full"],
        "cannot write /dev/full",
    )  # fmt: skip
    exe = Path(sys.executable).parent / "citecal"
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [str(exe), "calibrate", str(TABLE), "-f", "json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert proc.returncode == 2
    assert proc.stderr == "Error: cannot write to standard output: No space left on device\n"
