"""Draw the citations for a blind second labelling pass (datasets/groundtruth/README.md).

The draw is seeded and recorded, so anyone can check which citations were drawn and that the
draw came before the second pass: ``python datasets/groundtruth/draw_second_opinion.py
--packages a,b,c --share 0.11 --seed N --out FILE``. The output lists, per drawn citation,
what a second labeller may see — the report, the citation and its claim — and nothing of the
first pass's label. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def natural_citations(packages: list[str]) -> list[dict[str, object]]:
    out = []
    for pkg in sorted(packages):
        for f in sorted((HERE / pkg).glob("labels-*.json")):
            data = json.loads(f.read_text(encoding="utf-8"))
            if data.get("origin") != "natural":
                continue
            for c in data["citations"]:
                if c.get("origin", "natural") != "natural":
                    continue
                out.append(
                    {
                        "id": c["id"],
                        "package": pkg,
                        "report": f"{pkg}/{data['report']}",
                        "citation": c["citation"],
                        "occurrence": c.get("occurrence", 0),
                        "claim": c["claim"],
                    }
                )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", required=True, help="comma-separated package directories")
    ap.add_argument("--share", type=float, default=0.11)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    pool = natural_citations([p.strip() for p in args.packages.split(",") if p.strip()])
    k = math.ceil(args.share * len(pool))
    drawn = sorted(random.Random(args.seed).sample(pool, k), key=lambda c: str(c["id"]))
    args.out.write_text(
        json.dumps(
            {
                "seed": args.seed,
                "share": args.share,
                "pool": len(pool),
                "packages": sorted(p.strip() for p in args.packages.split(",")),
                "drawn": drawn,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"drew {k} of {len(pool)} natural citations into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
