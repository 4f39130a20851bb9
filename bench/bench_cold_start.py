#!/usr/bin/env python
"""Cold start: a fresh process's first explanation against its floor, each in its own new process.

- floor: import torch + transformers, load the model's folder with ``AutoModelForSequenceClassification`` and its
  tokenizer, one forward pass of the input;
- subject: import the project (``models``, ``explainers``), ``load_classifier``, and the first explanation of the
  same input by ``--method`` (default leave_one_out: every word deleted, one batch).

Runs floor and subject interleaved (A, B, A, B, ...), keeps the best of n of each, and prints wall and CPU seconds
(each child's ``time.process_time``), the ratio (target <= 1.3) and each process's peak resident memory. Also lists
the heavy optional libraries (ray, scikit-learn, plotly, captum, streamlit) the subject process had imported.

    python bench/bench_cold_start.py                 # 3 rounds, default-quick
    python bench/bench_cold_start.py --quick         # 1 round
    EXWB_DEVICE=cuda python bench/bench_cold_start.py
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import machine  # bench/machine.py: the script's own folder is on sys.path

ROOT = Path(__file__).resolve().parent.parent
TEXT = "the film is a charming and often affecting journey , but its plot drags in the middle ."
HEAVY = ("ray", "sklearn", "plotly", "captum", "streamlit", "altair", "scipy")

# each child prints one JSON line: wall and CPU seconds since its first statement, peak RSS, heavy modules loaded
PRELUDE = """
import time, resource, sys, json
wall0, cpu0 = time.perf_counter(), time.process_time()
"""
REPORT = """
device_peak = None
if "torch" in sys.modules and sys.modules["torch"].cuda.is_available():
    torch_module = sys.modules["torch"]
    torch_module.cuda.synchronize()
    device_peak = torch_module.cuda.max_memory_allocated() / 2**20
print(json.dumps({"wall": time.perf_counter() - wall0, "cpu": time.process_time() - cpu0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "device_peak_mb": device_peak, "heavy": [m for m in HEAVY if m in sys.modules]}))
"""
FLOOR = """
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch, transformers
threads = os.environ.get("EXWB_THREADS")
if threads: torch.set_num_threads(int(threads))
requested = os.environ.get("EXWB_DEVICE", "auto")
device = torch.device("cuda" if requested == "auto" and torch.cuda.is_available() else
                      ("cpu" if requested == "auto" else requested))
tokenizer = transformers.AutoTokenizer.from_pretrained(FOLDER)
model = transformers.AutoModelForSequenceClassification.from_pretrained(FOLDER, use_safetensors=True).to(device).eval()
with torch.inference_mode():
    logits = model(**tokenizer(TEXT, return_tensors="pt").to(device)).logits.cpu()
"""
SUBJECT = """
from models import load_classifier
from explainers import create
classifier = load_classifier(SPEC)
explanation = create(METHOD).explain(classifier, classifier.encode(TEXT))
"""


def child(body: str, **names) -> dict:
    constants = "".join(f"{k} = {v!r}\n" for k, v in {"TEXT": TEXT, "HEAVY": HEAVY, **names}.items())
    script = constants + PRELUDE + body + REPORT
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--method", default="leave_one_out")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import settings
    from models.prepare import find_prepared  # after sys.path: the bench runs from anywhere

    print(f"machine: {machine.describe()}", flush=True)
    folder = find_prepared(args.model)
    if folder is None:
        print(f"'{args.model}' is not prepared; run `python cli.py prepare --model {args.model}` first.")
        return 1
    rounds = 1 if args.quick else args.rounds
    floors, subjects = [], []
    for _ in range(rounds):  # interleaved: both see the same machine load
        floors.append(child(FLOOR, FOLDER=str(folder)))
        subjects.append(child(SUBJECT, SPEC=args.model, METHOD=args.method))
    floor, subject = min(floors, key=lambda r: r["wall"]), min(subjects, key=lambda r: r["wall"])
    print(f"load average {open('/proc/loadavg').read().split()[:3]}  device {settings.device_setting()}")
    print(f"{'':34s}{'wall s':>8s}{'cpu s':>8s}{'peak RSS MB':>13s}{'device MB':>11s}")
    for label, r in (("floor (import, load, 1 forward)", floor), (f"first explanation ({args.method})", subject)):
        device = f"{r['device_peak_mb']:.0f}" if r["device_peak_mb"] is not None else "-"
        print(f"{label:34s}{r['wall']:8.2f}{r['cpu']:8.2f}{r['peak_rss_mb']:13.0f}{device:>11s}")
    print(f"ratio wall {subject['wall'] / floor['wall']:.2f}  cpu {subject['cpu'] / floor['cpu']:.2f}  (target <= 1.3; "
          f"best of {rounds})")
    print(f"heavy libraries imported by the first explanation: {', '.join(subject['heavy']) or 'none'} "
          f"(floor: {', '.join(floor['heavy']) or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
