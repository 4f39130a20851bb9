"""Import time of the library face: `import workbench` against `import torch, transformers`, the floor
any user of the library pays anyway. Each measured in a fresh interpreter (nothing cached in the process; the
operating system's file cache warmed by one untimed run of each first), alternating, median of N. Wall-clock and
CPU seconds (the child's ``time.process_time``): on a shared, loaded machine the CPU figure is the steadier one.

    .venv/bin/python bench/bench_import.py --repeats 5
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine import describe  # noqa: E402

CASES = {"torch + transformers": "import torch, transformers",
         # what loading any model pays anyway: transformers imports its modeling code lazily, on first use
         "torch + transformers + a model class": "import torch, transformers; "
                                                 "from transformers import BertForSequenceClassification",
         "workbench": "import workbench",
         "workbench + a model": "import workbench; workbench.load_model('default-quick')"}
TIMER = ("import time; t = time.perf_counter(); c = time.process_time(); {code}; "
         "print(time.perf_counter() - t, time.process_time() - c)")


def seconds(code: str) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of ``code`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "EXWB_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", TIMER.format(code=code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(describe())
    for code in CASES.values():  # warm the file cache
        seconds(code)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in CASES}
    for _ in range(args.repeats):
        for name, code in CASES.items():
            times[name].append(seconds(code))
    print(f"load average {os.getloadavg()[0]:.1f} (1 min)")
    for clock, column in (("wall", 0), ("cpu", 1)):
        floor = statistics.median(t[column] for t in times["torch + transformers"])
        for name, pairs in times.items():
            values = [t[column] for t in pairs]
            median = statistics.median(values)
            print(f"{clock:4s} {name:38s} median {median:6.2f} s  (min {min(values):.2f}, max {max(values):.2f})  "
                  f"{median / floor:4.2f}x torch + transformers")


if __name__ == "__main__":
    main()
