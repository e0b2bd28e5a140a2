"""``-o`` replaces only what it should, respects the umask and fails early (README "Security")."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "datasets" / "examples" / "report.md"
REPO = ROOT / "datasets" / "examples" / "shopcart"
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"
NO_KEY_ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={**NO_KEY_ENV, **(env or {})})
    return result.exit_code, result.stdout, result.stderr


def eval_to(output: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    code, _, err = run(
        "eval", str(REPORT), "--repo", str(REPO), "--no-llm", "-f", "json", "-o", str(output),
        *extra, env=env,
    )  # fmt: skip
    return code, err


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


# --------------------------------------------------------------------------- what is at -o


def test_symlink_target_is_written_and_the_link_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, err = eval_to(link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["schema_version"] == 1
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_character_device_is_written_through_not_replaced(tmp_path: Path) -> None:
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    except PermissionError:
        pytest.skip("mknod needs root")
    code, err = eval_to(dev)
    assert code == 0, err
    st = os.lstat(dev)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_fifo_is_written_through_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    exe = shutil.which("citecal", path=str(Path(sys.executable).parent))
    assert exe
    # Open the reading end first (non-blocking), so neither side waits for the other.
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    chunks: list[bytes] = []
    try:
        proc = subprocess.Popen(
            [exe, "eval", str(REPORT), "--repo", str(REPO), "--no-llm", "-f", "json", "-o",
             str(fifo)],
            stderr=subprocess.PIPE,
            env={**os.environ, **NO_KEY_ENV},
        )  # fmt: skip
        while True:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                with contextlib.suppress(BlockingIOError):
                    data = os.read(fd, 65536)
                    chunks.append(data)
                    if not data and proc.poll() is not None:
                        break
            elif proc.poll() is not None:
                with contextlib.suppress(BlockingIOError):
                    chunks.append(os.read(fd, 65536))
                break
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(fd)
    assert proc.returncode == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(b"".join(chunks))["schema_version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_directory_at_output_path_is_one_line_exit_2(tmp_path: Path) -> None:
    code, err = eval_to(tmp_path)
    assert code == 2 and "is a directory" in err and "Traceback" not in err


# --------------------------------------------------------------------------- modes


def test_new_output_file_mode_follows_the_umask(tmp_path: Path) -> None:
    with umask(0o022):
        code, err = eval_to(tmp_path / "eval.json")
        assert code == 0, err
        code, _, err = run("calibrate", str(TABLE), "-f", "json", "-o", str(tmp_path / "c.json"))
        assert code == 0, err
    assert stat.S_IMODE((tmp_path / "eval.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "c.json").stat().st_mode) == 0o644
    with umask(0o027):
        code, err = eval_to(tmp_path / "private.json")
        assert code == 0, err
    assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o640


def test_overwriting_keeps_the_existing_mode(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    out.write_text("old")
    out.chmod(0o664)
    with umask(0o077):
        code, err = eval_to(out)
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o664
    assert json.loads(out.read_text())["schema_version"] == 1


def test_table_writer_respects_umask(tmp_path: Path) -> None:
    """``pull`` and ``rejudge`` write through ``write_table`` (Parquet by path)."""
    import pandas as pd

    from citecal.annotations import write_table

    with umask(0o022):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet")
    assert stat.S_IMODE((tmp_path / "t.parquet").stat().st_mode) == 0o644


# --------------------------------------------------------------------------- early failure


@contextlib.contextmanager
def unwritable_directory(tmp_path: Path) -> Iterator[Path]:
    """A directory even root cannot add files to: immutable (chattr +i) where possible."""
    locked = tmp_path / "locked"
    locked.mkdir()
    chattr = shutil.which("chattr")
    if chattr and subprocess.run([chattr, "+i", str(locked)], check=False).returncode == 0:
        try:
            yield locked
        finally:
            subprocess.run([chattr, "-i", str(locked)], check=True)
        return
    if os.geteuid() != 0:
        locked.chmod(0o555)
        try:
            yield locked
        finally:
            locked.chmod(0o755)
        return
    yield Path("/proc")  # root without chattr: /proc takes no new files either


@pytest.mark.integration
@pytest.mark.parametrize("where", ["missing", "unwritable"])
def test_bad_output_directory_fails_before_any_judge_call(tmp_path: Path, where: str) -> None:
    with FakeOpenAIServer() as srv, unwritable_directory(tmp_path) as locked:
        target = (tmp_path / "no" / "such" if where == "missing" else locked) / "eval.json"
        env = {
            "OPENAI_BASE_URL": srv.base_url,
            "OPENAI_API_KEY": "k",
            "CITECAL_CACHE_PATH": str(tmp_path / "c.sqlite3"),
        }
        code, _, err = run(
            "eval", str(REPORT), "--repo", str(REPO), "-f", "json", "-o", str(target), env=env
        )
        assert srv.calls == 0 and srv.requests == []
    assert code == 2, err
    assert err.startswith("Error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "output directory" in err
    assert not (tmp_path / "c.sqlite3").exists()  # not even the cache was opened


@pytest.mark.parametrize(
    "command", ["calibrate", "pull", "rejudge", "chunks", "validate", "bench groundtruth"]
)
def test_other_commands_check_output_first(tmp_path: Path, command: str) -> None:
    """The input is missing too: the output is what they must complain about, first."""
    missing = str(tmp_path / "no-such-input")
    with unwritable_directory(tmp_path) as locked:
        target = locked / "out.parquet"
        args = {
            "calibrate": ["calibrate", missing, "-f", "json", "-o", str(target)],
            # Argilla at a closed port: reaching it would be a different error.
            "pull": ["pull", "--dataset", "x", "-o", str(target)],
            "rejudge": ["rejudge", missing, "--prompt", "v1", "-o", str(target)],
            "chunks": ["chunks", missing, "-o", str(target)],
            "validate": ["validate", missing, "-o", str(target)],
            "bench groundtruth": ["bench", "groundtruth", "--dataset", missing, "-o", str(target)],
        }[command]
        code, _, err = run(*args, env={"ARGILLA_API_URL": "http://127.0.0.1:9"})
    assert code == 2, err
    assert err.startswith("Error: cannot write to output directory") and err.count("\n") == 1


# --------------------------------------------------------------------------- leftovers


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_temp_file_of_a_killed_write_is_removed_by_the_next_write(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    stale = tmp_path / f".eval.json.citecal-{dead_pid()}-0badf00d.tmp"
    stale.write_text('{"half": ')
    live = tmp_path / f".eval.json.citecal-{os.getpid()}-0000beef.tmp"  # a writer still running
    live.write_text("")
    code, err = eval_to(out)
    assert code == 0, err
    assert not stale.exists() and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["eval.json", live.name])


def test_killed_write_leaves_only_a_temp_file_that_the_next_run_removes(tmp_path: Path) -> None:
    """A real kill: SIGKILL a writer inside ``atomic_path``, then write again."""
    out = tmp_path / "eval.json"
    out.write_text("previous")
    code = (
        "import os, signal\n"
        "from citecal._io import atomic_path\n"
        f"with atomic_path({str(out)!r}) as tmp:\n"
        "    tmp.write_text('half of it')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False)
    assert proc.returncode == -9
    left = [p.name for p in tmp_path.iterdir() if p.name != "eval.json"]
    assert len(left) == 1 and left[0].startswith(".eval.json.citecal-")
    assert out.read_text() == "previous"
    code_, err = eval_to(out)
    assert code_ == 0, err
    assert [p.name for p in tmp_path.iterdir()] == ["eval.json"]
