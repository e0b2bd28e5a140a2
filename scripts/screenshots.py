"""Take the screenshots the docs show (``make screenshots``): what annotators and readers see.

1. The local Argilla stack: a server already answering on the local port (6900, or
   ``CITECAL_ARGILLA_PORT``) is reused; otherwise ``services/argilla/up.sh`` starts it, and
   ``down.sh`` stops it at the end.
2. The bundled example is evaluated with the bundled local test judge
   (``python -m citecal.testing -- citecal eval …``) and pushed to a dataset.
3. Debian's headless Chromium (``/usr/bin/chromium``, driven by Playwright) signs in as the
   local owner and captures the Argilla annotation page, then the HTML calibration report of
   the bundled annotation table.

The images go to ``docs/images/`` (or ``--out DIR``), where README.md and the docs use them.
Usage: ``.venv/bin/python scripts/screenshots.py [--out DIR] [--dataset NAME]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
OWNER, OWNER_PASSWORD, OWNER_KEY, WORKSPACE = (
    "citecal",
    "citecal-local",
    "citecal.apikey",
    "citecal",
)


def say(line: str) -> None:
    print(f"[screenshots] {line}", flush=True)


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/status", timeout=3).status_code == 200
    except httpx.TransportError:
        return False


def run(argv: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode != 0:
        sys.exit(f"screenshots: {' '.join(argv[:3])} … failed ({done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")  # fmt: skip
    return done.stdout


def evaluate_and_push(url: str, dataset: str, tmp: Path) -> None:
    env = {**os.environ, "ARGILLA_API_URL": url, "ARGILLA_API_KEY": OWNER_KEY,
           "CITECAL_CACHE_PATH": str(tmp / "judge-cache.sqlite3")}  # fmt: skip
    say("evaluating the bundled example with the local test judge")
    run([str(BIN / "python"), "-m", "citecal.testing", "--", str(BIN / "citecal"), "eval",
         "datasets/examples/report.md", "--repo", "datasets/examples/shopcart",
         "-f", "json", "-o", str(tmp / "eval.json")], env)  # fmt: skip
    say(f"pushing it to dataset {dataset!r}")
    say(run([str(BIN / "citecal"), "push", str(tmp / "eval.json"), "--dataset", dataset], env)
        .splitlines()[0])  # fmt: skip


def dataset_id(url: str, dataset: str) -> str:
    headers = {"X-Argilla-Api-Key": OWNER_KEY}
    found = httpx.get(f"{url}/api/v1/me/datasets", headers=headers, timeout=30).json()["items"]
    return next(d["id"] for d in found if d["name"] == dataset)


def capture(url: str, dataset: str, out: Path, tmp: Path) -> None:
    from playwright.sync_api import sync_playwright

    report = tmp / "calibration.html"
    say("writing the HTML calibration report of the bundled annotation table")
    run([str(BIN / "citecal"), "calibrate", "datasets/annotations/annotations.parquet",
         "-f", "html", "-o", str(report)])  # fmt: skip
    ident = dataset_id(url, dataset)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{url}/sign-in", wait_until="networkidle")
            page.fill("input[name=Username]", OWNER)
            page.fill("input[name=Password]", OWNER_PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(lambda u: "sign-in" not in u, timeout=30_000)
            page.goto(f"{url}/dataset/{ident}/annotation-mode")
            page.get_by_text("Cited code (▶ = cited line)").wait_for(timeout=30_000)
            time.sleep(1.0)  # let the suggestion's highlight and fonts settle
            page.screenshot(path=str(out / "argilla-annotation.png"))
            say(f"wrote {out / 'argilla-annotation.png'}")
            page = browser.new_page(viewport={"width": 1150, "height": 1560})
            page.goto(report.as_uri(), wait_until="load")
            page.screenshot(path=str(out / "calibration-report.png"))
            say(f"wrote {out / 'calibration-report.png'}")
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--dataset", default="citecal-screenshots")
    args = parser.parse_args()
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit("screenshots: needs Debian's chromium (apt-get install chromium)")
    from citecal.config import local_argilla_url

    url = local_argilla_url()
    started = not answers(url)
    if started:
        say(f"no Argilla server at {url}: starting the local stack (services/argilla/up.sh)")
        run(["services/argilla/up.sh"])
    else:
        say(f"reusing the Argilla server at {url}")
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            evaluate_and_push(url, args.dataset, Path(tmp))
            capture(url, args.dataset, args.out, Path(tmp))
    finally:
        if started:
            say("stopping the stack this run started")
            run(["services/argilla/down.sh"])


if __name__ == "__main__":
    main()
