"""Benchmark: ``citecal calibrate`` on 1 000 000 annotation rows, end to end, time and memory.

A year of annotations: 250 000 records × 4 annotators over 2 000 reports (the seeded synthetic
table of ``calibrate_scale.py``, scaled up), written as Parquet the way ``citecal pull`` writes
it. Each run is the installed ``citecal`` command in its own process (imports, reading, every
figure with 1 000 cluster-bootstrap resamples, the three default breakdowns, every disagreement
categorised, output written), timed wall-clock; peak memory is that process's maximum resident
set size. Two outputs: the default table to a file, and ``-f json -o``. Target (issue 15):
≤ 10 s and ≤ 1 GB each.

Run: ``.venv/bin/python benchmarks/calibrate_million.py``
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from calibrate_scale import make_table

N_RECORDS = 250_000
N_ANNOTATORS = 4
N_REPORTS = 2_000
TARGET_S = 10.0
TARGET_MB = 1024.0


def main() -> None:
    exe = shutil.which("citecal", path=str(Path(sys.executable).parent)) or "citecal"
    with tempfile.TemporaryDirectory(prefix="citecal-bench-") as tmp:
        table = Path(tmp) / "annotations.parquet"
        make_table(n_records=N_RECORDS, n_reports=N_REPORTS).to_parquet(table, index=False)
        print(
            f"table: {N_RECORDS * N_ANNOTATORS:,} annotations, {N_RECORDS:,} records × "
            f"{N_ANNOTATORS} annotators, {N_REPORTS:,} reports, "
            f"{table.stat().st_size / 1e6:.1f} MB Parquet"
        )
        results = {}
        for name, extra in (
            ("table", []),
            ("json", ["-f", "json", "-o", str(Path(tmp) / "calibration.json")]),
        ):
            runs = [
                _measured([exe, "calibrate", str(table), *extra], Path(tmp) / f"{name}.out")
                for _ in range(2)
            ]
            best = min(runs)
            results[name] = best
            size = os.path.getsize(Path(tmp) / f"{name}.out")
            if name == "json":
                size = os.path.getsize(Path(tmp) / "calibration.json")
            print(
                f"citecal calibrate ({name}, {size / 1e3:,.0f} kB output): best {best[0]:.2f} s "
                f"(runs {', '.join(f'{r[0]:.2f}' for r in runs)}; CPU {best[2]:.2f} s), "
                f"peak RSS {best[1]:.0f} MB; load average {os.getloadavg()[0]:.1f}"
            )
        for name, (seconds, mb, _) in results.items():
            print(
                f"{name}: {seconds:.2f} s = {seconds / TARGET_S:.2f}× the {TARGET_S:g} s target "
                f"({'met' if seconds <= TARGET_S else 'NOT met'}); {mb:.0f} MB = "
                f"{mb / TARGET_MB:.2f}× the {TARGET_MB:.0f} MB target "
                f"({'met' if mb <= TARGET_MB else 'NOT met'})"
            )


def _measured(args: list[str], stdout: Path) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds of one run of ``args``.

    A small Python parent runs it, so RUSAGE_CHILDREN (which keeps the largest
    child so far) is this run's alone.
    """
    code = (
        "import resource, subprocess, sys, time\n"
        "t0 = time.perf_counter()\n"
        "with open(sys.argv[1], 'wb') as out:\n"
        "    rc = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE).returncode\n"
        "t = time.perf_counter() - t0\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(rc, t, u.ru_maxrss / 1024.0, u.ru_utime + u.ru_stime)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(stdout), *args], capture_output=True, text=True, check=True
    )
    rc, seconds, mb, cpu = proc.stdout.split()
    if rc != "0":
        sys.exit(f"citecal failed ({rc}): {' '.join(args)}")
    return float(seconds), float(mb), float(cpu)


if __name__ == "__main__":
    main()
