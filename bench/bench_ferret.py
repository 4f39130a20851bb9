#!/usr/bin/env python
"""Head-to-head with ferret-xai in the same run (the speed target's reference): its six default explainers and its AOPC
comprehensiveness + sufficiency against this project at the same settings, on the default model.

Each tool runs in its own process, back to back, A B A B (``--rounds``): ferret in .venv-ferret
(``bash bench/ferret/setup.sh``; ``make bench-ferret`` does both), this project in this venv. Each process times
its first call (imports, model load, the six explainers on sentence 1), every sentence's six explanations,
and the comp + suff evaluation of the six, with wall and CPU seconds and its peak RSS. Then the scores of the
two tools are compared per sentence (Spearman on tokens for the gradient methods, on words for LIME and SHAP)
and the AOPC values side by side.

Settings on both sides (ferret's defaults): Partition SHAP (shap's Text masker tree, 500 evaluations, [MASK],
probability), LIME (min(n_tokens^2, 5000) samples, the lime package's kernel and Ridge, [MASK], probability),
Gradient (sum of |gradient| over the hidden units), Gradient x Input, IG and IG x Input (50 Gauss-Legendre
steps, baseline [CLS] [PAD]... [SEP]), all on the logit / probability of the predicted class; AOPC at 10..100 %
of the positive tokens, deleted, repeated thresholds dropped. This project's presets: ``partition_shap:ferret``,
``lime:ferret``, ``saliency:ferret``, ``input_x_gradient:ferret``, ``integrated_gradients:ferret-plain`` /
``:ferret`` and the ``ferret`` faithfulness evaluator. Definition differences: see docs/benchmarks.md.

    python bench/bench_ferret.py                # 20 SST-2 dev sentences, 2 rounds
    python bench/bench_ferret.py --quick        # 3 sentences, 1 round
    python bench/bench_ferret.py --profile      # also: each of our methods, warm, against its forward floors, and
                                                # the rows, batches and padded tokens of each section (RowLog)
    python bench/bench_ferret.py --ours-only --profile --sentences 5 --rounds 1   # no .venv-ferret needed
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the script's own folder is on sys.path

ROOT = Path(__file__).resolve().parent.parent
FERRET_PYTHON = ROOT / ".venv-ferret" / "bin" / "python"
# (ferret's explainer name, this project's "method:preset", compared on "tokens" or "words")
PAIRS = (
    ("Partition SHAP", "partition_shap:ferret", "words"),
    ("LIME", "lime:ferret", "words"),
    ("Gradient", "saliency:ferret", "tokens"),
    ("Gradient (x Input)", "input_x_gradient:ferret", "tokens"),
    ("Integrated Gradient", "integrated_gradients:ferret-plain", "tokens"),
    ("Integrated Gradient (x Input)", "integrated_gradients:ferret", "tokens"),
)
AOPC_NAMES = {"aopc_compr": "comprehensiveness-ferret", "aopc_suff": "sufficiency-ferret"}


# ----- this project's worker (runs in a fresh process, like ferret's) -----------------------------------
def run_ours(sentences_path: str, out_path: str, profile: bool) -> None:
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    import resource

    # Project imports here, not at the top: the parent process must stay light, and this process's first-call
    # time has to include them.
    sys.path.insert(0, str(ROOT))
    import settings
    settings.prepare_runtime()
    import numpy as np

    from evaluation.faithfulness.presets import BY_ID
    from evaluation.faithfulness.random_band import methods_and_random
    from explainers import create_from_spec
    from models import load_classifier

    job = json.loads(Path(sentences_path).read_text())
    classifier = load_classifier(job["model"])
    metrics = [BY_ID[m] for m in AOPC_NAMES.values()]
    rows, first_call = [], None
    for text in job["sentences"]:
        log = RowLog(classifier) if profile else None
        if log:
            log.section = "the input (target)"
        wall, cpu = time.perf_counter(), time.process_time()
        encoding = classifier.encode(text)
        target = int(np.argmax(classifier.logits_of(encoding)))
        explanations, per_method = {}, {}
        for _, spec, _ in PAIRS:
            if log:
                log.section = spec
            began, began_cpu = time.perf_counter(), time.process_time()
            explanations[spec] = create_from_spec(spec).explain(classifier, encoding, target)
            prov = explanations[spec].provenance
            per_method[spec] = {"seconds": time.perf_counter() - began, "cpu": time.process_time() - began_cpu,
                                "forward": prov["forward_passes"], "backward": prov["backward_passes"],
                                "batches": prov["batches"]}
        explain_wall, explain_cpu = time.perf_counter() - wall, time.process_time() - cpu
        if first_call is None:
            first_call = {"wall": time.perf_counter() - start_wall, "cpu": time.process_time() - start_cpu}
        if log:
            log.section = "comp+suff"
        wall, cpu = time.perf_counter(), time.process_time()
        per, _ = methods_and_random(classifier, encoding, metrics, {s: e.word_scores for s, e in explanations.items()},
                                    {"target": target}, n=0)
        evaluate_wall, evaluate_cpu = time.perf_counter() - wall, time.process_time() - cpu
        if log:
            log.close()
        if profile:  # each method again (warm) against its floor, interleaved A B A B, best of 2 (wall, CPU)
            for spec, record in per_method.items():
                record.update(profile_method(classifier, encoding, target, create_from_spec(spec), record["forward"]))
        rows.append({
            "text": text, "target": target, "tokens": list(encoding.tokens), "words": list(encoding.words),
            "token_word": list(encoding.token_word),
            "scores": {s: [float(v) for v in (e.token_scores if e.token_scores is not None else e.word_scores)]
                       for s, e in explanations.items()},
            "word_scores": {s: [float(v) for v in e.word_scores] for s, e in explanations.items()},
            "aopc": {s: dict(r.values) for s, r in per.items()}, "methods": per_method,
            "row_log": log.summary() if log else None,
            "explain_wall": explain_wall, "explain_cpu": explain_cpu,
            "evaluate_wall": evaluate_wall, "evaluate_cpu": evaluate_cpu})
    Path(out_path).write_text(json.dumps({
        "tool": "ours", "first_call": first_call, "rows": rows, "total_wall": time.perf_counter() - start_wall,
        "total_cpu": time.process_time() - start_cpu,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "threads": settings.torch_threads() or 0}))


class RowLog:
    """Every padded batch the classifier runs (its ``_run``, the one place a batch of token ids is padded), by
    section (an explainer, or comp + suff): rows, batches, real and padded tokens, rows repeated within the
    section, and rows an earlier section of the same sentence already ran (identical ids, so identical logits:
    what a per-sentence row memo shared by the methods would save). The gradient methods' passes go through
    ``forward_embeds`` and are not logged here (their counts are in the provenance)."""

    def __init__(self, classifier):
        self.classifier, self.section, self.sections = classifier, None, {}
        original = classifier._run

        def logged(chunk_ids, zeros, types):
            if self.section is not None:
                record = self.sections.setdefault(self.section, {"rows": 0, "batches": 0, "tokens": 0, "padded": 0,
                                                                 "seen": set(), "repeated": 0})
                width = max(len(ids) for ids in chunk_ids)
                record["batches"] += 1
                for ids, zero in zip(chunk_ids, zeros if zeros is not None else [None] * len(chunk_ids)):
                    key = (tuple(ids), None if zero is None else tuple(int(z) for z in zero))
                    record["repeated"] += key in record["seen"]
                    record["seen"].add(key)
                    record["rows"] += 1
                    record["tokens"] += len(ids)
                    record["padded"] += width
            return original(chunk_ids, zeros, types)

        classifier._run = logged  # an instance attribute: this sentence's batches are logged

    def close(self) -> None:
        del self.classifier._run

    def summary(self) -> dict:
        out, earlier = {}, set()
        for name, record in self.sections.items():
            out[name] = {k: v for k, v in record.items() if k != "seen"}
            out[name]["distinct"] = len(record["seen"])
            out[name]["run_before"] = len(record["seen"] & earlier)
            earlier |= record["seen"]
        return out


def profile_method(classifier, encoding, target: int, explainer, forwards: int) -> dict:
    """A method's warm seconds against two floors, interleaved A B C A B C, best of 2, wall and CPU: ``plain``,
    one batched forward of as many copies of the input as the method ran forwards; ``replay``, the very batches
    the method sent to ``predict_logits`` (recorded), replayed alone (what bench_floors.py calls the floor; none
    for the gradient methods, whose passes go through ``forward_embeds``)."""
    batches, original = [], classifier.predict_logits

    def recording(batch):
        batches.append(batch)
        return original(batch)

    classifier.predict_logits = recording  # an instance attribute: this run records its batches
    try:
        explainer.explain(classifier, encoding, target)
    finally:
        del classifier.predict_logits
    runs = {"warm": lambda: explainer.explain(classifier, encoding, target),
            "plain": lambda: classifier.predict_logits([encoding] * max(1, forwards)),
            "replay": lambda: [classifier.predict_logits(batch) for batch in batches]}
    if not batches:
        del runs["replay"]
    best = {name: (float("inf"), float("inf")) for name in runs}
    for _ in range(2):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            best[name] = min(best[name], (time.perf_counter() - wall, time.process_time() - cpu))
    replay = best.get("replay", (float("nan"), float("nan")))
    return {"warm": best["warm"][0], "warm_cpu": best["warm"][1], "floor": best["plain"][0],
            "floor_cpu": best["plain"][1], "replay": replay[0], "replay_cpu": replay[1]}


# ----- the comparison ----------------------------------------------------------------------------------
def spearman(a: list[float], b: list[float]) -> float:
    from scipy.stats import spearmanr  # scipy is in both venvs; only the parent compares
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def compare(ferret: dict, ours: dict) -> dict:
    """Per explainer: median Spearman between the tools' scores, and the mean |difference| of comp and suff."""
    out = {}
    for name, spec, unit in PAIRS:
        rhos, comp_gap, suff_gap, comp_pairs = [], [], [], []
        for f_row, o_row in zip(ferret["rows"], ours["rows"]):
            f_scores = f_row["scores"][name]
            if f_row["tokens"] != o_row["tokens"]:
                continue
            if unit == "tokens":
                rhos.append(spearman(f_scores, o_row["scores"][spec]))
            else:  # LIME and SHAP: ferret's token scores summed per word ([CLS]/[SEP] left out)
                words = [sum(s for s, w in zip(f_scores, o_row["token_word"]) if w == i)
                         for i in range(len(o_row["words"]))]
                rhos.append(spearman(words, o_row["word_scores"][spec]))
            f_aopc, o_aopc = f_row["aopc"][name], o_row["aopc"][spec]
            comp_gap.append(abs(f_aopc["aopc_compr"] - o_aopc[AOPC_NAMES["aopc_compr"]]))
            suff_gap.append(abs(f_aopc["aopc_suff"] - o_aopc[AOPC_NAMES["aopc_suff"]]))
            comp_pairs.append((f_aopc["aopc_compr"], o_aopc[AOPC_NAMES["aopc_compr"]]))
        finite = [r for r in rhos if r == r]
        out[name] = {"spearman_median": statistics.median(finite) if finite else float("nan"),
                     "spearman_min": min(finite) if finite else float("nan"), "sentences": len(rhos),
                     "comp_mean_abs_diff": statistics.fmean(comp_gap) if comp_gap else float("nan"),
                     "suff_mean_abs_diff": statistics.fmean(suff_gap) if suff_gap else float("nan"),
                     "comp_ferret_mean": statistics.fmean(p[0] for p in comp_pairs) if comp_pairs else float("nan"),
                     "comp_ours_mean": statistics.fmean(p[1] for p in comp_pairs) if comp_pairs else float("nan")}
    return out


def summary(result: dict) -> dict:
    rows = result["rows"]
    return {"first_call_wall": result["first_call"]["wall"], "first_call_cpu": result["first_call"]["cpu"],
            "explain_total_wall": sum(r["explain_wall"] for r in rows),
            "explain_total_cpu": sum(r["explain_cpu"] for r in rows),
            "explain_median_wall": statistics.median(r["explain_wall"] for r in rows),
            "evaluate_total_wall": sum(r["evaluate_wall"] for r in rows),
            "evaluate_total_cpu": sum(r["evaluate_cpu"] for r in rows),
            "process_wall": result["total_wall"], "peak_rss_mib": result["peak_rss_mib"]}


def run_side(tool: str, sentences_path: str, threads: int, profile: bool) -> tuple[dict, float]:
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "EXWB_THREADS": str(threads),
           "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
    if tool == "ferret":
        command = [str(FERRET_PYTHON), str(ROOT / "bench" / "ferret" / "run_ferret.py"), sentences_path, out,
                   "--threads", str(threads)]
    else:
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", sentences_path, out] + \
            (["--profile"] if profile else [])
    began = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    spawn_wall = time.perf_counter() - began
    if done.returncode:
        sys.exit(f"The {tool} run failed:\n{done.stderr[-3000:]}")
    return json.loads(Path(out).read_text()), spawn_wall


def prepared_default() -> Path | None:
    """The folder of the prepared ``default`` model: ferret's side loads it with transformers 4 from there."""
    sys.path.insert(0, str(ROOT))
    from models.prepare import find_prepared  # the project's own lookup (its folder name carries a hash)
    return find_prepared("default")


def sentences(count: int) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from corpora import load_dataset  # the project's loader (no torch); the parent needs nothing else
    return [e.text for e in load_dataset("sst2:dev")[:count]]


def print_profile(rows: list[dict]) -> None:
    """--profile: each of our methods against its floors, and the rows each section ran."""
    print("\nour methods, warm, against one plain batch of as many input copies and against the replay of their "
          "own batches (best of 2, interleaved; wall s (CPU s))")
    print(f"{'our method':36s}{'warm':>16s}{'plain floor':>16s}{'ratio':>13s}{'replay floor':>16s}{'ratio':>13s}"
          f"{'fwd':>6s}{'bwd':>5s}")
    for _, spec, _ in PAIRS:
        total = {key: sum(r["methods"][spec][key] for r in rows)
                 for key in ("warm", "warm_cpu", "floor", "floor_cpu", "replay", "replay_cpu")}
        print(f"{spec:36s}{total['warm']:8.2f} ({total['warm_cpu']:5.2f}){total['floor']:8.2f} "
              f"({total['floor_cpu']:5.2f}){total['warm'] / total['floor']:6.2f} "
              f"({total['warm_cpu'] / total['floor_cpu']:4.2f}){total['replay']:8.2f} ({total['replay_cpu']:5.2f})"
              f"{total['warm'] / total['replay']:6.2f} ({total['warm_cpu'] / total['replay_cpu']:4.2f})"
              f"{sum(r['methods'][spec]['forward'] for r in rows):6d}"
              f"{sum(r['methods'][spec]['backward'] for r in rows):5d}")
    print("\nrows each section sent through the model, all sentences (RowLog; the gradient methods' passes go "
          "through forward_embeds and are counted in their provenance instead)")
    print(f"{'section':36s}{'rows':>7s}{'distinct':>9s}{'run before':>11s}{'batches':>8s}{'tokens':>8s}"
          f"{'padded':>8s}{'pad %':>7s}")
    sections = {}
    for row in rows:
        for name, record in (row["row_log"] or {}).items():
            total = sections.setdefault(name, dict.fromkeys(record, 0))
            for key, value in record.items():
                total[key] += value
    for name, t in sections.items():
        print(f"{name:36s}{t['rows']:7d}{t['distinct']:9d}{t['run_before']:11d}{t['batches']:8d}{t['tokens']:8d}"
              f"{t['padded']:8d}{100 * (t['padded'] - t['tokens']) / max(1, t['padded']):7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2, help="A B rounds (ferret, then this project)")
    sys.path.insert(0, str(ROOT))
    import settings

    parser.add_argument("--threads", type=int, default=settings.torch_threads() or 1)
    parser.add_argument("--quick", action="store_true", help="3 sentences, 1 round")
    parser.add_argument("--profile", action="store_true", help="our methods' seconds against the forward floor")
    parser.add_argument("--ours-only", action="store_true",
                        help="only this project's side (no .venv-ferret needed): its times and, with --profile, rows")
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        run_ours(args.worker[0], args.worker[1], args.profile)
        return
    print(f"machine: {machine.describe()}", flush=True)
    if not FERRET_PYTHON.exists() and not args.ours_only:
        sys.exit("No .venv-ferret: run `bash bench/ferret/setup.sh` (or `make bench-ferret`) first.")
    model = prepared_default()
    if model is None:
        sys.exit("No prepared default model: run `python cli.py prepare` (or `make prepare`) first.")
    count, rounds = (3, 1) if args.quick else (args.sentences, args.rounds)
    job = tempfile.NamedTemporaryFile(suffix=".json", delete=False, mode="w")
    json.dump({"model": str(model), "sentences": sentences(count)}, job)
    job.close()
    runs = {"ours": []} if args.ours_only else {"ferret": [], "ours": []}
    for _ in range(rounds):
        for tool in runs:
            result, spawn = run_side(tool, job.name, args.threads, args.profile)
            result["spawn_wall"] = spawn
            runs[tool].append(result)
            print(f"{tool:6s} done: {summary(result)['explain_total_wall']:.1f} s explain, "
                  f"{summary(result)['evaluate_total_wall']:.2f} s comp+suff", flush=True)
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    best = {tool: min((summary(r) for r in results), key=lambda s: s["explain_total_wall"])
            for tool, results in runs.items()}
    if args.ours_only:
        print(f"\n{count} SST-2 dev sentences, this project only, {args.threads} thread(s); load average "
              f"{' '.join(load)}: " + ", ".join(f"{k} {v:.2f}" for k, v in best["ours"].items()))
        if args.profile:
            print_profile(runs["ours"][-1]["rows"])
        return
    print(f"\n{count} SST-2 dev sentences, default model, {args.threads} thread(s), {rounds} round(s) A B; "
          f"load average {' '.join(load)} (shared machine: noisy)")
    print(f"{'':34s}{'ferret':>12s}{'ours':>12s}{'ratio':>8s}")
    for key, label in (("explain_total_wall", "six explainers, total wall s"),
                       ("explain_total_cpu", "six explainers, total CPU s"),
                       ("explain_median_wall", "per sentence, median wall s"),
                       ("evaluate_total_wall", "comp + suff, total wall s"),
                       ("evaluate_total_cpu", "comp + suff, total CPU s"),
                       ("first_call_wall", "first call wall s"), ("first_call_cpu", "first call CPU s"),
                       ("peak_rss_mib", "peak RSS MiB")):
        f, o = best["ferret"][key], best["ours"][key]
        print(f"{label:34s}{f:12.2f}{o:12.2f}{f / o if o else float('nan'):8.2f}")
    print("every round (explain wall s, ferret / ours):",
          [round(summary(r)["explain_total_wall"], 1) for r in runs["ferret"]], "/",
          [round(summary(r)["explain_total_wall"], 1) for r in runs["ours"]])
    agreement = compare(runs["ferret"][-1], runs["ours"][-1])
    print(f"\n{'explainer':32s}{'Spearman med':>13s}{'min':>7s}{'|d comp|':>10s}{'|d suff|':>10s}"
          f"{'comp f':>8s}{'comp o':>8s}")
    for name, a in agreement.items():
        print(f"{name:32s}{a['spearman_median']:13.3f}{a['spearman_min']:7.2f}{a['comp_mean_abs_diff']:10.4f}"
              f"{a['suff_mean_abs_diff']:10.4f}{a['comp_ferret_mean']:8.3f}{a['comp_ours_mean']:8.3f}")
    if args.profile:
        print_profile(runs["ours"][-1]["rows"])
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "best": best, "agreement": agreement, "load": load},
                                              indent=1))


if __name__ == "__main__":
    main()
