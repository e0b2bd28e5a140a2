"""The Argilla stack for integration tests: a running server, or the project's own scripts.

Order: ``ARGILLA_API_URL`` (+ ``ARGILLA_API_KEY``) when set; else a server that
already answers on the local stack's port (6900, or ``CITECAL_ARGILLA_PORT``:
the same variable the stack scripts and the CLI read); else
``services/argilla/up.sh`` installs and starts the local stack there, and
``down.sh`` stops it at session end.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from annotate_factories import ROOT, Stack

from citecal.annotate._client import LOCAL_API_KEY
from citecal.config import local_argilla_url

SERVICES = ROOT / "services" / "argilla"
LOCAL_URL = local_argilla_url()
INSTALL_TIMEOUT_S = 45 * 60


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/status", timeout=3).status_code == 200
    except httpx.TransportError:
        return False


def _run(script: str, *args: str) -> None:
    proc = subprocess.run(
        [str(SERVICES / script), *args],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"services/argilla/{script} failed ({proc.returncode}):\n{proc.stderr[-4000:]}",
            pytrace=False,
        )


def _say(config: pytest.Config, line: str) -> None:
    """A line on the terminal even while pytest captures output: `make test` would otherwise
    wait for the stack in silence (issue 24, what a newcomer hit)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


@pytest.fixture(scope="session")
def argilla_stack(pytestconfig: pytest.Config) -> Iterator[Stack]:
    url = os.environ.get("ARGILLA_API_URL")
    if url:
        yield Stack(url.rstrip("/"), os.environ.get("ARGILLA_API_KEY") or LOCAL_API_KEY, False)
        return
    if answers(LOCAL_URL):
        yield Stack(LOCAL_URL, LOCAL_API_KEY, False)
        return
    started = time.monotonic()
    _say(
        pytestconfig,
        f"\nno Argilla server answers at {LOCAL_URL}: starting the local stack for the "
        "integration tests (services/argilla/up.sh: Redis, OpenSearch, argilla-server and its "
        "worker; the first start installs them, a few minutes; later starts ~25-45 s; "
        "log in .citecal/argilla/logs/) ...",
    )
    _run("up.sh")
    _say(pytestconfig, f"local Argilla stack up in {time.monotonic() - started:.0f} s")
    try:
        yield Stack(LOCAL_URL, LOCAL_API_KEY, True)
    finally:
        _run("down.sh")


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium (Playwright's own download does not work here)."""
    path = "/usr/bin/chromium"
    if not os.access(path, os.X_OK):
        _run("install.sh", "--browser-only")
    return path
