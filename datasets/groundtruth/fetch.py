"""Fetch the pinned package sources the ground-truth reports cite.

Usage: ``python datasets/groundtruth/fetch.py [--dest DIR] [--only ID ...]``

Each archive in ``sources.json`` is downloaded from its registry, checked
against the recorded sha256 (a mismatch is an error: the labels were made
against exactly those bytes) and unpacked into ``DEST/<id>-<version>/`` with
the archive's top directory stripped. Already unpacked packages are skipped,
so the script is cheap to run before every test session. Standard library
only: it runs before the project is installed. See datasets/groundtruth/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
DEFAULT_DEST = HERE.parents[1] / ".citecal" / "groundtruth"
STAMP = ".fetched"


def _download(url: str, attempts: int = 3) -> bytes:
    for attempt in range(1, attempts + 1):
        try:
            with urllib.request.urlopen(url, timeout=60) as resp:
                return bytes(resp.read())
        except OSError as exc:
            if attempt == attempts:
                raise SystemExit(f"fetch: cannot download {url}: {exc}") from exc
            time.sleep(2 * attempt)
    raise AssertionError("unreachable")


def _members(data: bytes) -> list[tuple[str, bytes]]:
    """(posix path, content) of every regular file in a tar.gz, .crate, .tgz, .zip or .jar."""
    out: list[tuple[str, bytes]] = []
    if data[:2] == b"\x1f\x8b":
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for m in tar.getmembers():
                if m.isfile():
                    fh = tar.extractfile(m)
                    if fh is not None:
                        out.append((m.name, fh.read()))
    else:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    out.append((info.filename, zf.read(info)))
    return out


def _safe_relative(name: str, strip: str) -> PurePosixPath | None:
    path = PurePosixPath(name)
    if strip:
        prefix = PurePosixPath(strip)
        if path.parts[: len(prefix.parts)] != prefix.parts:
            return None
        path = PurePosixPath(*path.parts[len(prefix.parts) :])
    if not path.parts or path.is_absolute() or ".." in path.parts:
        return None
    return path


def fetch(pkg: dict[str, str], dest: Path) -> Path:
    """Download, verify and unpack one package; return its directory."""
    target = dest / f"{pkg['id']}-{pkg['version']}"
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text().strip() == pkg["sha256"]:
        return target
    data = _download(pkg["url"])
    digest = hashlib.sha256(data).hexdigest()
    if digest != pkg["sha256"]:
        raise SystemExit(
            f"fetch: {pkg['id']} {pkg['version']}: sha256 {digest} does not match "
            f"the recorded {pkg['sha256']}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{pkg['id']}-", dir=dest))
    try:
        for name, content in _members(data):
            rel = _safe_relative(name, pkg.get("strip", ""))
            if rel is None:
                continue
            out = tmp.joinpath(*rel.parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(content)
        (tmp / STAMP).write_text(pkg["sha256"] + "\n")
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("--only", nargs="*", default=None, help="package ids")
    args = parser.parse_args(argv)
    sources = json.loads((HERE / "sources.json").read_text())
    for pkg in sources["packages"]:
        if args.only and pkg["id"] not in args.only:
            continue
        path = fetch(pkg, args.dest)
        print(f"{pkg['id']:<14} {pkg['version']:<8} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
