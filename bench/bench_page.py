#!/usr/bin/env python
"""The Heatmaps page through Streamlit (AppTest): where a cold first visit spends its time, and cached reruns
(the speed targets).

Targets on the 2-core CPU: the 16 default methods on a 20-word sentence under 5 s cold, a cached rerun under 0.1 s.

- Cold start (a fresh process): the page's imports and the model load, wall and CPU seconds, and which heavy
  libraries the page path imports before any method runs.
- Cold page (after a warm-up visit with another sentence: imports, model load and first-call costs not counted): the
  first run of the page on the 20-word sentence, split into the methods' own work (``plan.run_now``: their forward
  and backward passes), the plan (cache look-ups, the cost model's one timed batch) and everything else (drawing).
- Cached reruns: the page script's own CPU seconds (its thread) and wall seconds, and AppTest's wall seconds
  (its harness included), best and median of n.
- ``--against TREE``: the same measures for another checkout of the project (e.g. main before a change), run
  alternately with this one in fresh processes (A, B, A, B), so both see the same machine load.

    python bench/bench_page.py                       # this tree, default model
    python bench/bench_page.py --against /tmp/old    # interleaved with another tree
    python bench/bench_page.py --fast --parts page   # the page with its opt-in fast mode on
    EXWB_THREADS=1 nice ... on a shared machine (report the figures as such, with the load average)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import machine  # bench/machine.py: the script's own folder is on sys.path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "transformers", "captum", "sklearn", "scipy", "plotly", "matplotlib", "pandas", "ray")


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "n/a"


# ----- run inside a fresh process, on the tree given (``--subject``) -------------------------------------------------
def cold_start(tree: Path, model: str) -> dict:
    """Imports of the page path and the model load, in this (fresh) process."""
    wall, cpu = time.perf_counter(), time.process_time()
    sys.path.insert(0, str(tree))
    import settings

    settings.prepare_runtime()
    import streamlit  # noqa: F401

    from ui.views import compare, export, heatmaps  # noqa: F401
    from ui.widgets import loaders, sidebar  # noqa: F401
    imports = (time.perf_counter() - wall, time.process_time() - cpu)
    heavy = [m for m in HEAVY if m in sys.modules]
    from models import load_classifier

    wall, cpu = time.perf_counter(), time.process_time()
    load_classifier(model)
    return {"imports_s": imports[0], "imports_cpu_s": imports[1], "heavy_imported": heavy,
            "model_load_s": time.perf_counter() - wall, "model_load_cpu_s": time.process_time() - cpu}


class Sections:
    """Wall and thread-CPU seconds spent in named functions of the page's modules (patched in place)."""

    def __init__(self):
        self.spent: dict[str, list[float]] = {}

    def watch(self, module, name: str, label: str) -> None:
        function = getattr(module, name)

        def timed(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent = self.spent.setdefault(label, [0.0, 0.0])
                spent[0] += time.perf_counter() - wall
                spent[1] += time.thread_time() - cpu

        setattr(module, name, timed)

    def take(self) -> dict[str, list[float]]:
        spent, self.spent = self.spent, {}
        return spent


def page_runs(tree: Path, model: str, warm_up_text: str, text: str, reruns: int, fast: bool = False) -> dict:
    """The page's cold run on ``text`` (after a warm-up visit) split into sections, then cached reruns. ``fast``: with
    the page's opt-in fast mode on (from the warm-up visit on)."""
    os.environ["EXWB_MODEL"] = model
    os.environ["EXWB_DISK_CACHE"] = "0"  # cold means computed
    os.environ.setdefault("EXWB_AUTORUN_SECONDS", "10000")  # every page method runs (a slow loaded machine's
    # estimates would leave the longest waiting for a Run click)
    sys.path.insert(0, str(tree))
    import settings

    settings.prepare_runtime()
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    from explainers import method_jobs, plan

    script = []  # (wall, thread CPU) of each script run
    run_script = script_runner.ScriptRunner._run_script

    def timed_run(self, rerun_data):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return run_script(self, rerun_data)
        finally:
            script.append((time.perf_counter() - wall, time.thread_time() - cpu))

    script_runner.ScriptRunner._run_script = timed_run
    sections = Sections()
    sections.watch(plan, "run_now", "methods (plan.run_now: their passes)")
    sections.watch(plan, "make_plan", "plan (cache look-ups, the timed batch)")
    sections.watch(plan, "cost_rows", "cost estimate table")
    at = AppTest.from_file(str(tree / "app.py"), default_timeout=900)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = warm_up_text
    if fast:
        at.session_state["fast-mode"] = True
    at.run()  # imports, model load, first-call costs: not counted
    while method_jobs.METHOD_JOBS.running():
        time.sleep(0.2)
    sections.take()
    at.text_area(key="text").set_value(text)
    wall, cpu = time.perf_counter(), time.process_time()
    at.run()
    cold = {"apptest_s": time.perf_counter() - wall, "process_cpu_s": time.process_time() - cpu,
            "script_s": script[-1][0], "script_cpu_s": script[-1][1], "sections": sections.take()}
    if at.exception:
        raise RuntimeError(f"the page failed: {at.exception}")
    shown = len(at.session_state["heatmaps:export"].explanations)
    runs = []
    for _ in range(reruns):
        wall, cpu = time.perf_counter(), time.process_time()
        at.run()
        runs.append({"apptest_s": time.perf_counter() - wall, "process_cpu_s": time.process_time() - cpu,
                     "script_s": script[-1][0], "script_cpu_s": script[-1][1]})
    widgets = sum(len(at.get(kind)) for kind in ("selectbox", "number_input", "checkbox", "text_input", "toggle",
                                                  "radio", "multiselect", "button"))
    return {"cold": cold, "reruns": runs, "methods_shown": shown, "widgets_on_rerun": widgets}


def subject(args) -> None:
    tree = Path(args.subject)
    result = {"tree": str(tree), "load": load()}
    if args.part == "cold-start":
        result.update(cold_start(tree, args.model))
    else:
        result.update(page_runs(tree, args.model, args.warm_up, args.text, args.reruns, args.fast))
    print("RESULT " + json.dumps(result))


# ----- the driver ----------------------------------------------------------------------------------------------------
def sentences() -> tuple[str, str]:
    """A warm-up sentence and the page's 20-word SST-2 dev sentence (as ``bench_methods.py`` picks them; corpora
    only: the driver imports no torch)."""
    sys.path.insert(0, str(ROOT))
    from corpora import load_dataset
    from corpora.records import split_words

    examples = load_dataset("sst2:dev")
    warm_up = next(e.text for e in examples if 12 <= len(split_words(e.text)) <= 30)
    return warm_up, next(e.text for e in examples if len(split_words(e.text)) == 20)


def run_subject(tree: Path, part: str, model: str, warm_up: str, text: str, reruns: int, fast: bool = False) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--subject", str(tree), "--part", part,
               "--model", model, "--warm-up", warm_up, "--text", text, "--reruns", str(reruns)] + \
        (["--fast"] if fast else [])
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"{tree} {part} failed:\n{done.stderr[-3000:]}")
    return json.loads(line[len("RESULT "):])


def summary(result: dict) -> str:
    if "imports_s" in result:
        return (f"cold start: imports {result['imports_s']:.2f} s wall / {result['imports_cpu_s']:.2f} s CPU, model "
                f"load {result['model_load_s']:.2f} s / {result['model_load_cpu_s']:.2f} s CPU; heavy libraries "
                f"imported by the page path: {', '.join(result['heavy_imported'])} (load {result['load']})")
    cold, runs = result["cold"], result["reruns"]
    cpu = sorted(r["script_cpu_s"] for r in runs)
    text = (f"cold page ({result['methods_shown']} methods): AppTest {cold['apptest_s']:.2f} s wall, script "
            f"{cold['script_s']:.2f} s wall / {cold['script_cpu_s']:.2f} s CPU; ")
    text += "; ".join(f"{name} {wall:.2f} s / {c:.2f} s CPU" for name, (wall, c) in cold["sections"].items())
    methods = cold["sections"].get("methods (plan.run_now: their passes)", [0.0, 0.0])
    text += (f"; everything else {cold['script_s'] - sum(w for w, _ in cold['sections'].values()):.2f} s / "
             f"{cold['script_cpu_s'] - sum(c for _, c in cold['sections'].values()):.2f} s CPU "
             f"(methods {methods[1] / max(cold['script_cpu_s'], 1e-9):.0%} of the script's CPU)\n")
    text += (f"  cached rerun ({len(runs)}): script CPU best {cpu[0] * 1000:.0f} ms, median "
             f"{statistics.median(cpu) * 1000:.0f} ms; script wall best {min(r['script_s'] for r in runs) * 1000:.0f}"
             f" ms; AppTest wall best {min(r['apptest_s'] for r in runs) * 1000:.0f} ms, process CPU best "
             f"{min(r['process_cpu_s'] for r in runs) * 1000:.0f} ms; {result['widgets_on_rerun']} widgets "
             f"(load {result['load']})")
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--model", default="default")
    parser.add_argument("--against", type=Path, help="another checkout, measured alternately with this one")
    parser.add_argument("--rounds", type=int, default=2, help="A, B rounds with --against")
    parser.add_argument("--reruns", type=int, default=10)
    parser.add_argument("--parts", default="cold-start,page", help="which measures (comma-separated)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--fast", action="store_true", help="the page with its opt-in fast mode on (reduced "
                        "precision where the device has native kernels for it)")
    parser.add_argument("--subject", help=argparse.SUPPRESS)
    parser.add_argument("--part", default="page", choices=("page", "cold-start"), help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", help=argparse.SUPPRESS)
    parser.add_argument("--text", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.subject:
        subject(args)
        return 0
    print(f"machine: {machine.describe()}", flush=True)
    warm_up, text = sentences()
    trees = [("this tree", ROOT)] + ([("against", args.against.resolve())] if args.against else [])
    figures = []
    for round_ in range(args.rounds if args.against else 1):
        for part in args.parts.split(","):
            for name, tree in trees:
                result = run_subject(tree, part, args.model, warm_up, text, args.reruns, args.fast)
                result.update(name=name, round=round_ + 1, part=part)
                figures.append(result)
                print(f"[{name}, round {round_ + 1}] {summary(result)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
