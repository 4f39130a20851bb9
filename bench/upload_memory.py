"""Server memory taken by big user files, without and with the upload limits of shared mode (issue 30).

The issue measured one 49.5 MB CSV plus one 100k-row file taking a server from 1.0 to 2.6 GB. This script writes
such files, then in a fresh process per scenario reads them the way the app does (``corpora.load_dataset`` of a
``file:`` id, kept in a cache like ``ui/widgets/loaders.dataset``) and prints the process's peak and current RSS:

- ``unlimited``: no size or row limit (the behaviour before issue 30);
- ``shared``: EXWB_SHARED=1 defaults (25 MB, 50,000 rows): the 49.5 MB file is refused before it is parsed and
  the 100k-row file while it is read;
- ``shared, at the limit``: the largest file shared mode reads (50,000 rows of 33 words): what one entry of the
  app's dataset cache (at most 8 entries, ``ui/widgets/loaders.DATASET_ENTRIES``) can hold.

Run: ``python bench/upload_memory.py`` (a minute; nothing is timed). Figures in docs/benchmarks.md.
"""
from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = "a fine film with warm and funny scenes but a dull plot that drags on for far too long".split()


def write_csv(path: Path, rows: int, words: int) -> Path:
    rng = random.Random(0)
    with open(path, "w") as handle:
        handle.write("text,label\n")
        for _ in range(rows):
            handle.write(" ".join(rng.choice(WORDS) for _ in range(words)) + f",{rng.randint(0, 1)}\n")
    return path


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def measure(paths: list[str]) -> dict:
    """In this process: load each file as the app does and keep what was loaded, as the shared cache does."""
    sys.path.insert(0, str(ROOT))
    from corpora import DataError, load_dataset

    kept, refused = [], []
    before = rss_mb()
    for path in paths:
        try:
            kept.append(load_dataset(f"file:{path}"))
        except DataError as error:
            refused.append(str(error)[:90])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"start_mb": round(before), "peak_mb": round(peak), "now_mb": round(rss_mb()),
            "rows_kept": sum(map(len, kept)), "refused": refused}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure(sys.argv[2:])))
        return
    with tempfile.TemporaryDirectory() as folder:
        big = write_csv(Path(folder) / "big.csv", 330_000, 33)     # ~49.5 MB
        many = write_csv(Path(folder) / "many.csv", 100_000, 12)   # 100k rows
        limit = write_csv(Path(folder) / "limit.csv", 50_000, 33)  # the most rows shared mode reads
        print(f"files: big.csv {big.stat().st_size / 1e6:.1f} MB, many.csv {many.stat().st_size / 1e6:.1f} MB "
              f"(100,000 rows)")
        shared = {"EXWB_SHARED": "1", "EXWB_CACHE_DIR": folder, "EXWB_DATA_FOLDERS": folder}
        for name, env, files in (("unlimited", {"EXWB_UPLOAD_MB": "1000", "EXWB_UPLOAD_ROWS": "10000000"},
                                  [big, many]),
                                 ("shared", shared, [big, many]),
                                 ("shared, at the limit", shared, [limit])):
            base = {k: v for k, v in os.environ.items() if not k.startswith("EXWB_UPLOAD") and k != "EXWB_SHARED"}
            out = subprocess.run([sys.executable, __file__, "--child", *map(str, files)], capture_output=True,
                                 text=True, env={**base, **env}, check=True).stdout
            print(name, out.strip())


if __name__ == "__main__":
    main()
