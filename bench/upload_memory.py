"""Server memory taken by big user files, without and with the upload limits of shared mode.

The issue measured one 49.5 MB CSV plus one 100k-row file taking a server from 1.0 to 2.6 GB. This script writes
such files, then in a fresh process per scenario reads them the way the app does (``corpora.load_dataset`` of a
``file:`` id, kept in a cache like ``ui/widgets/loaders.dataset``) and prints the process's peak and current RSS:

- ``unlimited``: no size or row limit (the behaviour without shared mode's limits);
- ``shared``: EXWB_SHARED=1 defaults (25 MB, 50,000 rows): the 49.5 MB file is refused before it is parsed and
  the 100k-row file while it is read;
- ``shared, at the limit``: the largest file shared mode reads (50,000 rows of 33 words): what one entry of the
  app's dataset cache (at most 8 entries, ``ui/widgets/loaders.DATASET_ENTRIES``) can hold.

Run: ``python bench/upload_memory.py`` (a minute; nothing is timed). Figures in docs/benchmarks.md.

``python bench/upload_memory.py --responsiveness`` (a short run, a few minutes) measures what another session
sees while a big file is parsed: in a fresh process, a "server" thread wakes every 10 ms as a web
server's event loop does to answer ``/_stcore/health`` (it needs the interpreter lock for that), while the main
thread loads a hostile file the way the app does: in this process (``isolated=False``: before) or in a worker
process (``isolated=True``: ``corpora/isolated_parse.py``, after). Printed per file and way: the parse's wall
time, and the wake-up delay of the other thread (median, p99, max: how late a health check or a light page
would be answered). Files: 100k rows; one 24 MB JSONL line; a 6 MB Latin-1 file (its encoding guessed from the bytes).
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
sys.path.insert(0, str(ROOT))

from bench import machine  # noqa: E402

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


def wake_delays(path: str, isolated: bool) -> dict:
    """In this process: parse ``path`` while another thread wakes every 10 ms; that thread's delays."""
    sys.path.insert(0, str(ROOT))
    import statistics
    import threading
    import time

    from corpora import DataError, load_dataset

    delays, done = [], threading.Event()

    def other_session() -> None:
        while not done.is_set():
            start = time.perf_counter()
            time.sleep(0.01)
            delays.append(time.perf_counter() - start - 0.01)

    ticker = threading.Thread(target=other_session)
    ticker.start()
    time.sleep(0.2)  # the ticker's baseline
    start = time.perf_counter()
    try:
        rows = len(load_dataset(f"file:{path}", isolated=isolated))
    except DataError as error:  # refused: what matters is how long the refusal took and what it cost the others
        rows = f"refused: {str(error)[:70]}"
    finally:
        seconds = time.perf_counter() - start
        time.sleep(0.05)
        done.set()
        ticker.join()
    ms = sorted(1000 * d for d in delays)
    return {"rows": rows, "parse_s": round(seconds, 2), "wake_delay_ms": {
        "median": round(statistics.median(ms), 1), "p99": round(ms[int(0.99 * (len(ms) - 1))], 1),
        "max": round(ms[-1], 1)}}


def write_hostile(folder: Path) -> list[Path]:
    many = write_csv(folder / "rows100k.csv", 100_000, 12)
    line = folder / "one_line.jsonl"  # one example of 24 MB on a single line
    line.write_text(json.dumps({"text": " ".join(WORDS * (24_000_000 // 80)), "label": 1}) + "\n")
    latin = folder / "latin1.csv"  # not UTF-8: its encoding is guessed from its bytes
    rng = random.Random(1)
    latin.write_bytes(("text,label\n" + "".join(" ".join(rng.choice(WORDS + ["caf\u00e9", "na\u00efve"])
                                                          for _ in range(14)) + f",{i % 2}\n" for i in range(60_000))
                       ).encode("latin-1"))
    return [many, line, latin]


def responsiveness() -> None:
    print(machine.describe())
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "EXWB_UPLOAD_MB": "1000", "EXWB_UPLOAD_ROWS": "10000000", "EXWB_SHARED": "0",
               "EXWB_PARSE_SECONDS": "300", "EXWB_PARSE_MB": "4000"}
        for path in write_hostile(Path(folder)):
            for isolated in (False, True):
                out = subprocess.run([sys.executable, __file__, "--wake", str(path), str(int(isolated))],
                                     capture_output=True, text=True, env=env, check=True).stdout
                way = "worker process (after)" if isolated else "in the server process (before)"
                print(f"{path.name} ({path.stat().st_size / 1e6:.1f} MB), {way}: {out.strip()}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure(sys.argv[2:])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--wake":
        print(json.dumps(wake_delays(sys.argv[2], sys.argv[3] == "1")))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--responsiveness":
        responsiveness()
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
