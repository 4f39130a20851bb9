"""Run every benchmark in bench/ one after another (``--quick`` passes --quick to each: seconds, not minutes).

Each script prints its figures next to a baseline measured in the same run; docs/benchmarks.md records them.
Run on a quiet machine: other processes on the same cores distort every figure. ``EXWB_DEVICE=cuda make bench``
runs the same scripts on a GPU (each reads the device from EXWB_DEVICE; the children inherit it).
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import machine  # bench/machine.py

HERE = Path(__file__).resolve().parent
ORDER = ["bench_methods.py", "bench_faithfulness.py", "bench_sanity.py", "bench_plausibility.py", "bench_mlm.py",
         "bench_mask_learning.py", "bench_errors.py", "bench_adversarial.py", "bench_roar.py", "bench_floors.py",
         "bench_cold_start.py", "bench_report_card.py", "bench_page.py", "bench_flop_floor.py"]
TAKES_QUICK = set(ORDER) - {"bench_page.py", "bench_flop_floor.py"}  # these two are short already


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    failed = []
    print(f"machine: {machine.describe()}", flush=True)  # every figure below depends on it
    for name in ORDER:
        command = [sys.executable, str(HERE / name)] + (["--quick"] if quick and name in TAKES_QUICK else [])
        print(f"\n=== {name} {'(quick)' if quick else ''}", flush=True)
        started = time.perf_counter()
        if subprocess.run(command, cwd=HERE.parent).returncode != 0:
            failed.append(name)
        print(f"=== {name}: {time.perf_counter() - started:.0f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
