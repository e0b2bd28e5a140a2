"""Make targets a newcomer types answer in words, not with a make error (issue 24)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_argilla_status_of_a_stopped_stack_is_not_a_make_error(tmp_path: Path) -> None:
    # A stack home of its own on ports nothing listens on: every component is stopped, as
    # after `make argilla-down`; status.sh exits 3 for that, make must still exit 0.
    env = {
        **os.environ,
        "CITECAL_ARGILLA_HOME": str(tmp_path / "argilla"),
        "CITECAL_ARGILLA_PORT": "6977",
        "CITECAL_REDIS_PORT": "6978",
        "CITECAL_SEARCH_BASE_PORT": "9250",
        "CITECAL_SEARCH_TRANSPORT_PORT": "9350",
    }
    done = subprocess.run(
        ["make", "-s", "argilla-status"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stopped" in done.stdout
    assert "make argilla-up starts the stack" in done.stdout
    assert "Error" not in done.stderr
