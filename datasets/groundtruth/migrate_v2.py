"""Rewrite schema-1 label files as schema 2 (datasets/groundtruth/README.md).

Usage: ``python datasets/groundtruth/migrate_v2.py`` (idempotent). Every v1
label was planted on purpose, so each gets ``origin: planted``; its category
is split into the claim's kind (literal, behaviour, design) or its fault
(off_range, wrong_file, ...). The same upgrade runs in memory when citecal
loads a v1 file (``citecal.bench._labels.upgrade_v1``).
"""

from __future__ import annotations

import json
from pathlib import Path

from citecal.bench._labels import LabelSet, upgrade_v1

HERE = Path(__file__).resolve().parent


def main() -> None:
    for path in sorted(HERE.glob("*/labels*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema_version") != 1:
            continue
        upgraded = LabelSet.model_validate(upgrade_v1(data)).model_dump(mode="json")
        path.write_text(json.dumps(upgraded, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"upgraded {path.relative_to(HERE)}")


if __name__ == "__main__":
    main()
