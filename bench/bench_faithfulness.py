#!/usr/bin/env python
"""Benchmark of the faithfulness metrics: comprehensiveness + sufficiency (ERASER preset, with the
10-ordering random baseline) for six methods over SST-2 dev sentences with the ``default`` model.

Figures:
- end to end: a dataset run exactly as `cli.py evaluate` does it (explanations computed cold, metrics, random
  baseline, per-example storage), seconds per sentence and the projection to all 872 dev sentences.
  Target on the 2-core CPU: < 12 minutes for the 872. ``--executor processes`` runs the cells in worker
  processes with one torch thread each; ``--compare-executors`` runs the same sentences with the local executor and
  then the processes executor, each in a fresh cache, and prints the ratio.
- the metric part alone (explanations already cached): batched (every keep mask of both curves of all six
  methods and of the 10 random orderings in one engine call, each distinct perturbed input once) against the
  baseline measured in the same run: one forward pass per perturbed copy. Ratio = batched / unbatched.

    python bench/bench_faithfulness.py --limit 40      # 40 sentences, projection to 872
    python bench/bench_faithfulness.py --limit 120 --compare-executors   # local vs processes, same run
    python bench/bench_faithfulness.py                 # all 872 sentences (the lead's run)
    python bench/bench_faithfulness.py --quick         # 6 sentences, default-quick model: seconds
    python bench/bench_faithfulness.py --quick --only-newer   # just the issue-18 section below
    python bench/bench_faithfulness.py --quick --only-naopc-run   # its NAOPC vs AOPC through a dataset run

Newer measures (``newer_measures``): the metric part of each newer measure against the measure it refines,
explanations cached, six methods and the 10 random orderings of a sentence as a dataset run scores them:
NAOPC vs AOPC (target <= 2x, as used in a run and for one method alone; exact bounds up to ``naopc_exact_words``
words, beam above, and a sweep of both searches by sentence length to show where the beam takes over), soft vs hard
comprehensiveness + sufficiency (target <= 1.5x), ROAD-text vs DeletionBERT (target <= 1.5x per curve: MoRF and
LeRF are separate values). Ends with a one-line verdict per target, then NAOPC vs AOPC through a dataset run
(``naopc_in_a_run``: ``run_evaluation`` with its batch hook, which searches a window's bounds in lockstep). ``--all-presets`` adds the kept old defaults
and the passes per curve point of ROAD and DeletionBERT.
    EXWB_THREADS=1 nice -n 19 python bench/bench_faithfulness.py --quick --only-newer            # shared machine
    EXWB_THREADS=2 python bench/bench_faithfulness.py --quick --only-newer --repeats 1           # idle machine
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the script's own folder is on sys.path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import settings  # noqa: E402

settings.prepare_runtime()

DEV_SIZE = 872
TARGET_SECONDS = 12 * 60  # the 872 SST-2 dev sentences in 12 minutes on the 2-core CPU
PREFERRED = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention", "occlusion",
             "random")


def isolated_cache() -> Path:
    """A fresh cache directory (cold explanations, empty result store) that still sees the prepared models."""
    real_models = settings.cache_dir() / "models"
    folder = Path(tempfile.mkdtemp(prefix="bench-faithfulness-"))
    (folder / "models").symlink_to(real_models, target_is_directory=True)
    os.environ["EXWB_CACHE_DIR"] = str(folder)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--limit", type=int, default=DEV_SIZE, help="SST-2 dev sentences (default: all 872)")
    parser.add_argument("--quick", action="store_true", help="6 sentences with default-quick: runs in seconds")
    parser.add_argument("--model", default=None, help="default (default-quick with --quick)")
    parser.add_argument("--methods", default=None, help="comma-separated (default: six methods, see PREFERRED)")
    parser.add_argument("--metric-sample", type=int, default=30, help="sentences for the batched/unbatched ratio")
    parser.add_argument("--only-newer", action="store_true", help="only the issue-18 section (newer measures)")
    parser.add_argument("--random-orderings", type=int, default=10,
                        help="random-baseline orderings per sentence (10 as in every table; 0 = metrics only)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="issue-18 section: A/B repeats per pair, best of (2 on a shared machine, 1 when idle)")
    parser.add_argument("--all-presets", action="store_true",
                        help="issue-18 section: also the kept old defaults (soft-20-masks, naopc-exact-10, ...)")
    parser.add_argument("--only-naopc-run", action="store_true",
                        help="only NAOPC vs AOPC through a dataset run (run_evaluation), part of the issue-18 section")
    parser.add_argument("--executor", choices=("local", "processes"), default="local",
                        help="end to end: the run's executor (processes: one worker per core, one thread each)")
    parser.add_argument("--workers", type=int, default=None, help="workers of --executor processes")
    parser.add_argument("--compare-executors", action="store_true",
                        help="only the end-to-end run, local then processes, each cold; prints the ratio")
    args = parser.parse_args()
    limit = 6 if args.quick else args.limit
    model = args.model or ("default-quick" if args.quick else "default")
    folder = isolated_cache()

    import numpy as np

    from corpora import load_dataset
    from evaluation.faithfulness.curves import RemovalOptions, keep_rows, rank_words
    from evaluation.faithfulness.presets import BY_ID
    from evaluation.faithfulness.random_band import methods_and_random
    from evaluation.runs.store import ResultStore
    from evaluation.suite.runner import run_evaluation
    from explainers import REGISTRY, create
    from explainers.cache import explain_cached
    from models import load_classifier, metered
    from models.perturb import perturbed_logits

    methods = args.methods.split(",") if args.methods else [m for m in PREFERRED if m in REGISTRY][:6]
    classifier = load_classifier(model)
    print(f"machine: {machine.describe()}", flush=True)
    print(f"model {model} ({classifier.fingerprint}) on {classifier.device}; threads: "
          f"{settings.torch_threads() or 'default'}; methods: {', '.join(methods)}; cache: {folder}")

    if args.compare_executors:
        return compare_executors(model, methods, limit, args.random_orderings, args.workers)
    if args.only_naopc_run:
        return naopc_in_a_run(model, classifier, methods, limit, args.random_orderings, args.repeats, folder)
    if args.only_newer:
        return newer_measures(classifier, methods, limit, args.random_orderings, args.repeats, args.all_presets,
                              model, folder)

    # ----- end to end, as cli.py evaluate runs it -------------------------------------------------------
    store = ResultStore(folder / "results.sqlite")
    started = time.perf_counter()
    with metered() as meter:
        store, summary = run_evaluation(model, "sst2:dev", methods, ["eraser"], limit=limit,
                                        options={"random_orderings": args.random_orderings, "seed": 0},
                                        store=store, executor=args.executor, workers=args.workers)
    total = time.perf_counter() - started
    if args.executor == "processes":
        print("(processes executor: the pass counts below are the parent's only; the workers count their own)")
    per_sentence = total / max(1, summary.done)
    projected = per_sentence * DEV_SIZE
    print(f"\nend to end: {summary.done} sentences x {len(methods)} methods, comp + suff (ERASER) + random baseline "
          f"({args.random_orderings} orderings): {total:.1f} s = {per_sentence:.3f} s / sentence; "
          f"{meter.forward_passes} forward, "
          f"{meter.backward_passes} backward passes in {meter.batches} batches")
    print(f"projected to all {DEV_SIZE} dev sentences: {projected / 60:.1f} min (target < {TARGET_SECONDS / 60:.0f} "
          f"min: {'met' if projected < TARGET_SECONDS else 'NOT met'}){'' if limit < DEV_SIZE else ' (measured)'}")
    if summary.errors:
        print(f"warning: {len(summary.errors)} failed: {next(iter(summary.errors.values()))}")
    explain_seconds = {m: 0.0 for m in methods}
    for cell in store.cells(summary.run_id).values():
        for method, info in cell.get("explanations", {}).items():
            explain_seconds[method] += info["seconds"]
    explaining = sum(explain_seconds.values())
    print("  explanations: " + ", ".join(f"{m} {s:.1f} s" for m, s in explain_seconds.items()) +
          f" (total {explaining:.1f} s = {explaining / max(total, 1e-9):.0%})")
    print(f"  metrics + random baseline + storage: {total - explaining:.1f} s "
          f"({(total - explaining) / max(1, summary.done):.3f} s / sentence)")

    # ----- the metric part: batched vs one forward per perturbed copy ------------------------------------
    metrics = [BY_ID["comprehensiveness-eraser"], BY_ID["sufficiency-eraser"]]
    examples = load_dataset("sst2:dev", limit=min(limit, args.metric_sample))
    encodings = [classifier.encode(e.text) for e in examples]
    explanations = [{m: explain_cached(create(m), classifier, enc) for m in methods} for enc in encodings]
    options = RemovalOptions()

    def batched() -> float:
        out = 0.0
        for enc, per_method in zip(encodings, explanations):
            scores = {m: e.word_scores for m, e in per_method.items()}
            results, baseline = methods_and_random(classifier, enc, metrics, scores, options, n=args.random_orderings)
            out += sum(r.values[metrics[0].id] for r in results.values())
        return out

    def unbatched() -> float:
        out = 0.0
        for enc, per_method in zip(encodings, explanations):
            classifier.predict_logits([enc])
            orders = [rank_words(e.word_scores) for e in per_method.values()]
            shuffled = np.tile(np.arange(enc.n_words), (args.random_orderings, 1))
            orders += list(np.random.default_rng(0).permuted(shuffled, axis=1))
            for order in orders:
                for metric in metrics:
                    counts, _ = metric.points(enc.n_words, enc.n_words)
                    for row in keep_rows(np.asarray(order), counts, metric.mode):
                        out += float(perturbed_logits(classifier, enc, row[None, :], "delete")[0, 0])
        return out

    timings = {}
    for name, function in (("batched", batched), ("unbatched", unbatched)):
        function()  # warm-up (tokenizer, allocator)
        started = time.perf_counter()
        function()
        timings[name] = time.perf_counter() - started
    pairs = len(encodings) * len(methods)
    print(f"\nmetric part on {len(encodings)} sentences ({pairs} method curves + {args.random_orderings} random "
          f"orderings each, "
          f"2 curves x 5 points):")
    print(f"  batched   {timings['batched']:.2f} s ({timings['batched'] / len(encodings) * 1000:.0f} ms / sentence)")
    print(f"  unbatched {timings['unbatched']:.2f} s (one forward per perturbed copy; baseline, same run)")
    print(f"  ratio batched / unbatched = {timings['batched'] / timings['unbatched']:.2f}")
    print(f"  metric share of the end-to-end time: "
          f"{timings['batched'] / len(encodings) / per_sentence:.0%}")
    return newer_measures(classifier, methods, limit, args.random_orderings, args.repeats, args.all_presets, model,
                          folder)


def newer_measures(classifier, methods: list[str], limit: int, n_random: int, repeats: int = 2,
                   all_presets: bool = False, model: str | None = None, folder: Path | None = None) -> int:
    """The cost of NAOPC, soft suff / comp and ROAD-text against the measures they refine, as a dataset
    run scores them (every method and ``n_random`` random orderings of a sentence, explanations cached).

    Each subject is timed interleaved with its baseline in the same run (A, B, A, B; best of ``repeats`` CPU
    seconds), so the ratio survives a loaded machine; the forward-pass counts (classifier sequences, and the
    masked LM's sequences for the fill) are exact and load-free. Ends with a one-line verdict per target."""
    import numpy as np

    from corpora import load_dataset
    from evaluation.baselines import orderings_seed
    from evaluation.batch import evaluate_batch
    from evaluation.faithfulness import naopc, naopc_bounds
    from evaluation.faithfulness.curves import RemovalOptions, evaluate_orders, random_orders, rank_words
    from evaluation.faithfulness.mlm_filler import load_filler
    from evaluation.faithfulness.presets import BY_ID, EVALUATOR_METRICS
    from explainers import create
    from explainers.cache import explain_cached
    from models import UserFacingError, metered

    examples = load_dataset("sst2:dev", limit=limit)
    encodings = [classifier.encode(e.text) for e in examples]
    explanations = [{m: explain_cached(create(m), classifier, enc) for m in methods} for enc in encodings]
    options = {"seed": 0, "random_orderings": n_random}
    try:
        filler = load_filler()
    except UserFacingError as error:
        filler = None
        print(f"  (no masked-LM filler, ROAD and DeletionBERT skipped: {error})")
    # the NAOPC default and the preset of the other beam width (whichever the measured decision made the default)
    width = naopc_bounds.NaopcOptions().naopc_beam
    other = next(p for p in naopc.PRESETS if p.option == "naopc_beam" and p.value != width)

    def fresh_memos() -> None:  # measure every search and fill, not a memo of the previous row's
        naopc_bounds._cache.clear()
        if filler is not None:
            with filler._fills_lock:
                filler._fills.clear()

    def timed(function) -> tuple[float, float, int, int]:
        """(wall s, CPU s, classifier + masked-LM sequences, masked-LM sequences)"""
        fresh_memos()
        with metered() as meter:
            started, cpu = time.perf_counter(), time.process_time()
            function()
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        mlm = masked_lm_sequences()
        return wall, cpu, meter.forward_passes + mlm, mlm

    def masked_lm_sequences() -> int:  # the fill memo was cleared: one joint-fill sequence per remembered set
        if filler is None:
            return 0
        with filler._fills_lock:
            return len(filler._fills)

    def runs(evaluator_ids):
        def run():
            for enc, per_method in zip(encodings, explanations):
                evaluate_batch(evaluator_ids, classifier, enc, None, per_method, options, n_random)
        return run

    def orders_of(enc, per_method, count=None):
        ranked = [rank_words(e.word_scores) for e in per_method.values()][:count]
        return np.vstack(ranked + [random_orders(enc.n_words, 0 if count else n_random,
                                                 orderings_seed(0, enc.key))])

    def raw_aopc():  # the full one-word-step AOPC curves NAOPC normalizes, without the bounds, same orderings
        for enc, per_method in zip(encodings, explanations):
            evaluate_orders(classifier, enc, list(naopc_bounds.METRICS), orders_of(enc, per_method), RemovalOptions())

    def curve_passes(longer_than: int = 0, count=None) -> int:  # AOPC curves of every (or ``count``) ordering
        with metered() as meter:
            for enc, per_method in zip(encodings, explanations):
                if enc.n_words > longer_than:
                    evaluate_orders(classifier, enc, list(naopc_bounds.METRICS), orders_of(enc, per_method, count),
                                    RemovalOptions())
        return meter.forward_passes

    def points(evaluator_ids) -> int:  # curve points of one ordering, summed over the sentences (a load-free count)
        metrics = [BY_ID[m] for e in evaluator_ids for m in EVALUATOR_METRICS[e]]
        return sum(len(m.points(enc.n_words, enc.n_words)[0]) for m in metrics for enc in encodings)

    lengths = [e.n_words for e in encodings]
    print(f"\nnewer measures: {len(encodings)} sentences ({min(lengths)}-{max(lengths)} words, "
          f"{sum(n <= 8 for n in lengths)} with <= 8), {len(methods)} methods + {n_random} random orderings each, "
          f"explanations cached; A/B interleaved, best of {repeats} CPU seconds")
    hard, deletion_bert, aopc = ("hard comp + suff (ERASER AOPC)", runs(["eraser"])), \
        ("DeletionBERT", runs(["deletion-bert"])), ("AOPC, every step (comp + suff)", raw_aopc)
    # (subject, baseline, target, curves the subject has per curve of the baseline, verdict label)
    pairs = [(("soft comp + suff (1 mask, default)", runs(["soft"])), hard, 1.5, 1, "soft comp/suff vs hard")]
    if all_presets:
        pairs += [(("soft comp + suff (soft-20-masks)", runs(["soft-20-masks"])), hard, 1.5, 1, None)]
    if filler is not None:
        pairs += [(("ROAD on DeletionBERT's grid", runs(["road-deletionbert-grid"])), deletion_bert, 1.5, 2,
                   "ROAD (DeletionBERT's grid) vs DeletionBERT"),
                  (("ROAD (road, Rong et al. grid)", runs(["road"])), deletion_bert, 1.5, 2,
                   "ROAD (Rong et al.'s 10..90 % grid) vs DeletionBERT")]
        if all_presets:
            pairs += [(("road-deletionbert-grid + DeletionBERT", runs(["road-deletionbert-grid", "deletion-bert"])),
                       deletion_bert, 1.5, 2, None)]
    pairs += [((f"NAOPC (naopc, default: beam {width})", runs(["naopc"])), aopc, 2, 1,
               f"NAOPC default (beam {width}) vs AOPC, as used"),
              ((f"NAOPC ({other.id}, beam {other.value})", runs([other.id])), aopc, 2, 1,
               f"NAOPC {other.id} vs AOPC, as used")]
    if all_presets:
        pairs += [(("NAOPC (naopc-exact-10)", runs(["naopc-exact-10"])), aopc, 2, 1, None)]
    runs(["eraser", "deletion-bert"] if filler is not None else ["eraser"])()  # warm-up: tokenizer, filler
    print(f"  load average {open('/proc/loadavg').read().split()[:3]} (shared machine: ratios, not seconds)")
    # the fill memo is cleared before each row, so every masked-LM sequence of an mlm row is one distinct removed
    # set (joint fill); the classifier scores each distinct filled sentence once (``token_sequences.distinct_sequences``).
    # passes = classifier sequences + masked-LM sequences (of which "MLM")
    print(f"  {'measure':42s} {'wall s':>8s} {'CPU s':>8s} {'passes':>7s} {'MLM':>6s}")
    verdicts, naopc_rows = [], {}
    for (name, subject), (base_name, baseline), target, curves, verdict in pairs:
        best = {}
        for _ in range(repeats):  # A, B, A, B
            for label, function in ((name, subject), (base_name, baseline)):
                measured = timed(function)
                if label not in best or measured[1] < best[label][1]:
                    best[label] = measured
        for label in (name, base_name):
            wall, cpu, passes, mlm = best[label]
            print(f"  {label:42s} {wall:8.2f} {cpu:8.2f} {passes:7d} {mlm:6d}", flush=True)
        a, b = best[name], best[base_name]
        if name.startswith("NAOPC") and "exact-10" not in name:  # the default threshold
            naopc_rows[name] = a[2]
        ratio_cpu, ratio_passes = a[1] / max(b[1], 1e-9), a[2] / max(1, b[2])
        per_curve = (f"; per curve {ratio_passes / curves:.2f}x passes, {ratio_cpu / curves:.2f}x CPU"
                     if curves > 1 else "")
        print(f"    ratio {ratio_cpu:.2f}x CPU, {ratio_passes:.2f}x forward passes{per_curve} (target <= {target}x)",
              flush=True)
        if verdict:
            shown = ratio_passes / curves
            verdicts.append(f"{verdict}{' per curve' if curves > 1 else ''}: {shown:.2f}x passes, "
                            f"{ratio_cpu / curves:.2f}x CPU (target {target}x): "
                            f"{'met' if shown <= target else 'NOT met'} in passes, "
                            f"{'met' if ratio_cpu / curves <= target else 'NOT met'} in CPU on this run")

    # NAOPC's worst case: one method alone (no random ordering shares its bounds); exact counts from the rows above:
    # NAOPC as used = bounds + (above the exact threshold) the curves of every ordering; below it the curves are read
    # off the exact search's subset table
    threshold = naopc_bounds.NaopcOptions().naopc_exact_words
    every, one, alone = curve_passes(threshold), curve_passes(threshold, 1), curve_passes(count=1)
    for name in naopc_rows:
        bounds = naopc_rows[name] - every
        print(f"  one method alone, {name}: bounds {bounds} + curves {one} passes = {bounds + one} against AOPC's "
              f"{alone}: {(bounds + one) / max(alone, 1):.2f}x (worst case; a run shares the bounds among "
              f"{len(methods)} methods + {n_random} random orderings)", flush=True)

    if filler is not None and all_presets:  # equal work per point: passes per curve point of one ordering
        for name, ids in (("ROAD (Rong et al. grid)", ["road"]), ("ROAD (DeletionBERT's grid)",
                                                                   ["road-deletionbert-grid"]),
                          ("DeletionBERT", ["deletion-bert"])):
            fresh_memos()
            with metered() as meter:
                for enc, per_method in zip(encodings, explanations):
                    evaluate_batch(ids, classifier, enc, None, per_method, options, 0)
            rows = points(ids) * len(methods)
            print(f"  {name:28s} {rows:5d} curve points (methods only, no random): {meter.forward_passes} classifier "
                  f"passes ({meter.forward_passes / max(rows, 1):.2f} / point), "
                  f"{masked_lm_sequences()} masked-LM sequences")

    # where the beam takes over: the bounds alone, exact vs beam 5 and beam 1, by sentence length
    print("\n  NAOPC bounds of one sentence (comp + suff share one search), by length: forward passes, CPU s")
    by_length = {}
    for example in sorted(load_dataset("sst2:dev", limit=200), key=lambda e: len(e.text.split())):
        encoding = classifier.encode(example.text)
        if 4 <= encoding.n_words <= 11 and encoding.n_words not in by_length:
            by_length[encoding.n_words] = encoding
    removal = RemovalOptions()
    for n, encoding in sorted(by_length.items()):
        target = int(np.argmax(classifier.logits_of(encoding)))
        cells = []
        for exact_words, beam in ((16, 5), (1, 5), (1, 1)):
            search = naopc_bounds.NaopcOptions(naopc_exact_words=exact_words, naopc_beam=beam)
            naopc_bounds._cache.clear()
            with metered() as meter:
                cpu = time.process_time()
                naopc_bounds.aopc_bounds(classifier, encoding, removal, search, target)
                cells.append((meter.forward_passes, time.process_time() - cpu))
        print(f"    {n:2d} words: exact {cells[0][0]:5d} ({cells[0][1]:5.2f} s), beam 5 {cells[1][0]:5d} "
              f"({cells[1][1]:5.2f} s), beam 1 {cells[2][0]:5d} ({cells[2][1]:5.2f} s)", flush=True)

    print("\nverdicts (passes are exact; CPU ratios from this run, a loaded machine's unless it was idle):")
    for line in verdicts:
        print(f"  {line}")
    if model is not None:
        naopc_in_a_run(model, classifier, methods, limit, n_random, repeats, folder)
    return 0


def naopc_in_a_run(model: str, classifier, methods: list[str], limit: int, n_random: int, repeats: int,
                   folder: Path) -> int:
    """NAOPC against the AOPC it normalizes THROUGH A DATASET RUN (``run_evaluation``: cells, store, the
    run's batch hook, whose lockstep search scores every input's beam step in one engine call), same sentences,
    same methods, ``n_random`` random orderings, explanations cached. A: the AOPC curves of every one-word step (comp
    + suff, the curves NAOPC rescales, as a removal evaluator registered here); B: ``naopc`` (default: exact <= 8
    words, beam 1 above); C: ``naopc`` with the cells run one at a time without the batch hook (each cell searches its
    own bounds: the cost before the lockstep). Interleaved A, B, C; best of ``repeats`` CPU seconds; a fresh result
    store and empty bound memos per run."""
    from dataclasses import replace

    from corpora import load_dataset
    from evaluation.faithfulness import naopc_bounds
    from evaluation.faithfulness.presets import register_removal
    from evaluation.metric import EVALUATORS
    from evaluation.runs.jobs import run_cells
    from evaluation.runs.store import ResultStore
    from evaluation.suite.runner import evaluate_example, run_evaluation, start_evaluation
    from explainers import create
    from explainers.cache import explain_cached
    from models import metered

    aopc = "aopc-every-step"  # the baseline only: the two raw curves NAOPC normalizes, under ids of their own
    if aopc not in EVALUATORS:
        register_removal(aopc, "every-step AOPC (comp + suff), the curves NAOPC normalizes (benchmark baseline)",
                         tuple(replace(m, id=f"aopc-every-step-{m.curve}", preset=aopc) for m in naopc_bounds.METRICS))
    examples = load_dataset("sst2:dev", limit=limit)
    for example in examples:  # explanations cached: the runs serve them from the explanation cache
        encoding = classifier.encode(example.text)
        for method in methods:
            explain_cached(create(method), classifier, encoding)
    options = {"seed": 0, "random_orderings": n_random}
    counter = iter(range(10 ** 6))

    def store() -> ResultStore:
        return ResultStore(Path(folder) / f"naopc-run-{next(counter)}.sqlite")

    def with_hook(evaluator):
        def run():
            _, summary = run_evaluation(model, "sst2:dev", methods, [evaluator], limit, options, store())
            assert summary.status == "finished", summary.errors
        return run

    def without_hook():
        fresh_store, run_id, cells = start_evaluation(model, "sst2:dev", methods, ["naopc"], limit, options, store())
        assert run_cells(fresh_store, run_id, cells, evaluate_example).status == "finished"

    subjects = (("AOPC every step, in a run", with_hook(aopc)), ("NAOPC (naopc), in a run", with_hook("naopc")),
                ("NAOPC, cells alone (no lockstep)", without_hook))
    subjects[0][1]()  # warm-up: tokenizer, store, the clean passes' memos
    best = {}
    for _ in range(repeats):  # A, B, C, A, B, C
        for name, function in subjects:
            naopc_bounds._cache.clear()
            with metered() as meter:
                started, cpu = time.perf_counter(), time.process_time()
                function()
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            if name not in best or cpu < best[name][1]:
                best[name] = (wall, cpu, meter.forward_passes, meter.batches)
    lengths = [classifier.encode(e.text).n_words for e in examples]
    print(f"\n  NAOPC vs AOPC through a dataset run (run_evaluation): {len(examples)} sentences ({min(lengths)}-"
          f"{max(lengths)} words), {len(methods)} methods + {n_random} random orderings, explanations cached; A/B/C "
          f"interleaved, best of {repeats} CPU s; load average {open('/proc/loadavg').read().split()[:3]}")
    print(f"  {'run':36s} {'wall s':>8s} {'CPU s':>8s} {'passes':>7s} {'batches':>8s}")
    for name, (wall, cpu, passes, batches) in best.items():
        print(f"  {name:36s} {wall:8.2f} {cpu:8.2f} {passes:7d} {batches:8d}")
    (aw, ac, ap, ab), (nw, nc, np_, nb), (lw, lc, lp, lb) = best.values()
    print(f"  NAOPC / AOPC in a run: {np_ / ap:.2f}x passes, {nb / ab:.2f}x batches, {nw / aw:.2f}x wall, "
          f"{nc / ac:.2f}x CPU (target 2x); without the lockstep: {lp / ap:.2f}x passes, {lb / ab:.2f}x batches, "
          f"{lw / aw:.2f}x wall, {lc / ac:.2f}x CPU", flush=True)
    return 0


def compare_executors(model: str, methods: list[str], limit: int, n_random: int, workers: int | None) -> int:
    """The same end-to-end run (fresh explanation cache and store each) with the local executor (one process, the
    configured threads) and the processes executor (one thread per worker); wall and CPU (this process and its
    children), peak RSS, and the ratio. The values of both runs are compared too (they must agree)."""
    import resource

    import numpy as np

    from evaluation.runs.store import ResultStore
    from evaluation.suite.runner import run_evaluation
    from evaluation.summary import results_frame

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    figures, frames = {}, {}
    for executor in ("local", "processes"):
        folder = isolated_cache()
        started, cpu0 = time.perf_counter(), cpu()
        store, summary = run_evaluation(model, "sst2:dev", methods, ["eraser"], limit=limit,
                                        options={"random_orderings": n_random, "seed": 0},
                                        store=ResultStore(folder / "results.sqlite"), executor=executor,
                                        workers=workers)
        figures[executor] = (time.perf_counter() - started, cpu() - cpu0, summary.done)
        frames[executor] = results_frame(store, summary.run_id).sort_values(["example_id", "method", "metric"])
        wall, spent, done = figures[executor]
        print(f"{executor:>9}: {done} sentences {wall:.1f} s wall, {spent:.1f} s CPU (with its workers), "
              f"projected to {DEV_SIZE}: {wall / max(1, done) * DEV_SIZE / 60:.1f} min; load {os.getloadavg()[0]:.2f}",
              flush=True)
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    gap = float(np.nanmax(np.abs(frames["local"]["value"].to_numpy() - frames["processes"]["value"].to_numpy())))
    ratio = figures["processes"][0] / figures["local"][0]
    projected = figures["processes"][0] / max(1, figures["processes"][2]) * DEV_SIZE
    print(f"processes / local wall: {ratio:.2f}x; projected {projected / 60:.1f} min for the {DEV_SIZE} (target "
          f"{TARGET_SECONDS / 60:.0f} min: {'met' if projected < TARGET_SECONDS else 'NOT met'}); largest |value "
          f"difference| {gap:.2e}; peak RSS this process {own.ru_maxrss / 1024:.0f} MiB, largest worker "
          f"{kids.ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
