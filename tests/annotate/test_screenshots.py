"""`make screenshots` (scripts/screenshots.py) captures the two pages the docs show, from the
real stack with Debian's headless Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import argilla as rg
import pytest
from annotate_factories import ROOT, Stack
from PIL import Image

pytestmark = [pytest.mark.integration, pytest.mark.browser]


def test_screenshots_capture_the_annotation_page_and_the_report(
    argilla_stack: Stack, chromium: str, tmp_path: Path
) -> None:
    dataset = f"test_screenshots_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "ARGILLA_API_URL": argilla_stack.url}
    env["CITECAL_ARGILLA_PORT"] = argilla_stack.url.rsplit(":", 1)[-1]
    try:
        done = subprocess.run(
            [sys.executable, "scripts/screenshots.py", "--out", str(tmp_path),
             "--dataset", dataset],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "reusing the Argilla server" in done.stdout  # never a second stack
        for name, size in (("argilla-annotation.png", (1400, 900)),
                           ("calibration-report.png", (1150, 1560))):  # fmt: skip
            with Image.open(tmp_path / name) as im:
                assert im.size == size
                # a page, not a blank or an error screen: many distinct colours
                assert len(im.convert("RGB").getcolors(1 << 20) or []) > 200
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key)
            found = owner.datasets(dataset, workspace="citecal")
            if found is not None:
                found.delete()
