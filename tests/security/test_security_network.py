"""Network edges with real local sockets (issue 29, item 7; README "Security").

A server that trickles bytes hung ``push``/``status`` past 150 s and the judge past
300 s despite ``timeout_s = 60`` (httpx bounds each read, not the request), one that
accepts and never answers took 121 s and was reported as "cannot reach", and with
``ARGILLA_API_KEY`` unset the local stack's owner key went to whatever
``ARGILLA_API_URL`` said. The servers here are tiny socket servers in the test: one
that says nothing, one that trickles a byte at a time, one that writes down the
headers it is sent.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"


class TinyServer:
    """A loopback HTTP server that misbehaves as told: ``silent``, ``trickle`` or ``record``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[bytes] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        with conn:
            data = b""
            while b"\r\n\r\n" not in data and not self.stopped.is_set():
                try:
                    chunk = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                data += chunk
            self.requests.append(data)
            try:
                if self.mode == "record":
                    body = b'{"detail": "nope"}'
                    conn.sendall(
                        b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
                    return
                if self.mode == "trickle":
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100000\r\n\r\n"
                    )
                while not self.stopped.wait(0.1):  # silent: never answer; trickle: a byte
                    if self.mode == "trickle":
                        conn.sendall(b" ")
            except OSError:
                return

    def headers(self) -> list[str]:
        return [line.decode("latin-1") for r in self.requests for line in r.split(b"\r\n")]

    def close(self) -> None:
        self.stopped.set()
        self.sock.close()
        self.thread.join(timeout=2)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[TinyServer]:
    s = TinyServer(request.param)
    yield s
    s.close()


@pytest.fixture
def fast_config(tmp_path: Path) -> Path:
    path = tmp_path / "citecal.toml"
    path.write_text("[argilla]\ntimeout_s = 1.5\n\n[judge]\ntimeout_s = 1.0\nmax_retries = 0\n")
    return path


def run(args: list[str], env: dict[str, str | None]) -> tuple[int, str, float]:
    started = time.monotonic()
    res = CliRunner().invoke(cli, args, env=env)
    assert "Traceback" not in res.output
    return res.exit_code, res.output, time.monotonic() - started


# --------------------------------------------------------------------- Argilla


@pytest.mark.parametrize(
    ("server", "said"),
    [("silent", "the server accepted the connection and sent nothing back"),
     ("trickle", "bytes of an answer, too slowly")],
    indirect=["server"],
)  # fmt: skip
@pytest.mark.parametrize("command", [["status", "--dataset", "d"], ["pull", "--dataset", "d"]])
def test_argilla_requests_have_one_deadline(
    server: TinyServer, said: str, command: list[str], fast_config: Path, tmp_path: Path
) -> None:
    args = [*command, "--config", str(fast_config)]
    if command[0] == "pull":
        args += ["-o", str(tmp_path / "a.parquet")]
    code, out, took = run(args, {"ARGILLA_API_URL": server.url, "ARGILLA_API_KEY": "k"})
    assert code == 2, out
    assert said in out and "timeout_s" in out and "cannot reach" not in out
    assert took < 10  # the deadline is 1.5 s; trickling once kept this going past 150 s


@pytest.mark.parametrize("server", ["record"], indirect=True)
def test_the_local_key_goes_to_the_local_stack_only(server: TinyServer) -> None:
    env = {
        "ARGILLA_API_URL": server.url,
        "ARGILLA_API_KEY": None,
        "CITECAL_ARGILLA_OWNER_KEY": "owner-secret",
        "CITECAL_ARGILLA_PORT": None,
    }
    code, out, _ = run(["status", "--dataset", "d"], env)
    assert code == 2 and "ARGILLA_API_KEY is not set" in out
    assert server.requests == []  # nothing was sent, so no key either
    assert "owner-secret" not in out and "citecal.apikey" not in out


@pytest.mark.parametrize("server", ["record"], indirect=True)
def test_a_configured_key_goes_where_it_was_configured(server: TinyServer) -> None:
    env = {"ARGILLA_API_URL": server.url, "ARGILLA_API_KEY": "user-key"}
    code, _, _ = run(["status", "--dataset", "d"], env)
    assert code == 2
    keys = [h for h in server.headers() if h.lower().startswith("x-argilla-api-key")]
    assert keys and all(h.endswith("user-key") for h in keys)


@pytest.mark.parametrize("server", ["record"], indirect=True)
def test_is_local_stack_is_the_local_port_only(server: TinyServer) -> None:
    from citecal.annotate._client import is_local_stack

    assert is_local_stack("http://127.0.0.1:6900") and is_local_stack("http://localhost:6900")
    assert not is_local_stack("https://127.0.0.1:6900")
    assert not is_local_stack("http://127.0.0.1:6901")
    assert not is_local_stack("http://127.0.0.1.evil.example:6900")
    assert not is_local_stack(server.url)


# --------------------------------------------------------------------- the judge

REPORT = "The cart module manages the checkout flow for customers [cart.py:1-3].\n"


@pytest.fixture
def small_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "cart.py").write_text("def checkout(cart):\n    total = sum(cart)\n    return total\n")
    report = tmp_path / "report.md"
    report.write_text(REPORT)
    return report, repo


@pytest.mark.parametrize(
    ("server", "said"),
    [("silent", "the server accepted the connection and sent nothing back"),
     ("trickle", "part of an answer, too slowly")],
    indirect=["server"],
)  # fmt: skip
def test_a_judge_request_has_one_deadline(
    server: TinyServer, said: str, small_repo: tuple[Path, Path], fast_config: Path
) -> None:
    report, repo = small_repo
    code, out, took = run(
        ["eval", str(report), "--repo", str(repo), "-f", "json", "--config", str(fast_config),
         "--no-cache", "--yes"],
        {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-test"},
    )  # fmt: skip
    assert code == 0, out
    assert took < 15  # two attempts of 1 s each; trickling once kept the judge past 300 s
    result = json.loads(out[out.index("{") :])
    reasons = [c["reasoning"] for c in result["citations"] if c["method"] == "llm"]
    assert reasons and all(said in r and "asked twice" in r for r in reasons), reasons
