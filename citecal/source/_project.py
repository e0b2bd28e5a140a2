"""The evaluated project's own names: a claim that names the project names no code.

"In `requests`, the `Session` class ..." does not ask for ``requests`` to occur
in the cited lines: the package name locates the code, as a file path does.
The names come from the repository's own manifests (read through the store,
so a git revision gives the names at that revision) and its directory name.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import PurePosixPath

from citecal.source._errors import SourceFileError
from citecal.source._store import SourceStore

_VERSION_SUFFIX = re.compile(r"[-_]v?\d+(?:\.\d+)*.*$")
_GO_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
_POM_ARTIFACT = re.compile(r"<artifactId>\s*([^<\s]+)\s*</artifactId>")


def _read(store: SourceStore, path: str) -> str | None:
    try:
        return store.read(path).text
    except (SourceFileError, OSError, ValueError):
        return None


def _from_manifests(store: SourceStore) -> set[str]:
    names: set[str] = set()
    for path in ("pyproject.toml", "Cargo.toml"):
        text = _read(store, path)
        if text is None:
            continue
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        for table in ("project", "package"):
            name = data.get(table, {}).get("name") if isinstance(data.get(table), dict) else None
            if isinstance(name, str):
                names.add(name)
    text = _read(store, "package.json")
    if text is not None:
        try:
            name = json.loads(text).get("name")
        except (json.JSONDecodeError, AttributeError):
            name = None
        if isinstance(name, str):
            names.add(name.rsplit("/", 1)[-1])  # @scope/name
    text = _read(store, "go.mod")
    if text is not None and (m := _GO_MODULE.search(text)):
        parts = [p for p in m.group(1).split("/") if not re.fullmatch(r"v\d+", p)]
        if parts:
            names.add(parts[-1])
    text = _read(store, "pom.xml")
    if text is not None and (m := _POM_ARTIFACT.search(text)):
        names.add(m.group(1))
    return names


def project_names(store: SourceStore) -> frozenset[str]:
    """Lower-cased names of the project: manifest names and the directory name without version."""
    names = _from_manifests(store)
    base = PurePosixPath(str(store.name).replace("\\", "/").rstrip("/")).name
    if base and base not in (".", ".."):
        names.add(_VERSION_SUFFIX.sub("", base) or base)
    out: set[str] = set()
    for name in names:
        low = name.lower()
        out.add(low)
        out.add(low.replace("-", "_"))
    return frozenset(n for n in out if n)


def file_names(path: str) -> frozenset[str]:
    """The cited file's stem (``serde.rs`` → ``serde``): it locates the code too."""
    stem = PurePosixPath(path).stem.lower()
    return (
        frozenset({stem}) if stem and stem not in ("index", "main", "mod", "lib") else frozenset()
    )


__all__ = ["file_names", "project_names"]
