"""ferret-xai's side of bench/bench_ferret.py; runs in .venv-ferret (bench/ferret/setup.sh), never in the app's venv.

    .venv-ferret/bin/python bench/ferret/run_ferret.py SENTENCES.json OUT.json --threads 1

Times, in this one process: the first call (imports, model load, the six default explainers on sentence 1),
``Benchmark.explain`` per sentence (its six default explainers at its default settings, target = the predicted
class), and ``Benchmark.evaluate_explanations`` with AOPC comprehensiveness + sufficiency at ferret's default
evaluator arguments. Writes the times, the CPU seconds, the peak RSS, every score and every AOPC value as JSON.
"""
import time

START_WALL, START_CPU = time.perf_counter(), time.process_time()

import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402

# ferret/__init__ imports thermostat-datasets (and so spacy) for its Thermostat loader only, which this benchmark
# never uses; setup.sh does not install it, and an empty module stands in for it.
sys.modules.setdefault("thermostat", types.ModuleType("thermostat"))

warnings.filterwarnings("ignore")


def main() -> None:
    sentences_path, out_path = sys.argv[1], sys.argv[2]
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    with open(sentences_path) as handle:
        job = json.load(handle)
    import torch
    torch.set_num_threads(threads)
    from ferret import AOPC_Comprehensiveness_Evaluation, AOPC_Sufficiency_Evaluation, Benchmark
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(job["model"])
    model = AutoModelForSequenceClassification.from_pretrained(job["model"]).eval()
    evaluators = [AOPC_Comprehensiveness_Evaluation(model, tokenizer), AOPC_Sufficiency_Evaluation(model, tokenizer)]
    bench = Benchmark(model, tokenizer, evaluators=evaluators)
    rows = []
    first_call = None
    for text in job["sentences"]:
        wall, cpu = time.perf_counter(), time.process_time()
        with torch.no_grad():
            target = int(model(**tokenizer(text, return_tensors="pt")).logits.argmax(-1))
        explanations = bench.explain(text, target=target, show_progress=False)
        explain_wall, explain_cpu = time.perf_counter() - wall, time.process_time() - cpu
        if first_call is None:
            first_call = {"wall": time.perf_counter() - START_WALL, "cpu": time.process_time() - START_CPU}
        wall, cpu = time.perf_counter(), time.process_time()
        evaluations = bench.evaluate_explanations(explanations, target=target, show_progress=False)
        evaluate_wall, evaluate_cpu = time.perf_counter() - wall, time.process_time() - cpu
        rows.append({
            "text": text, "target": target, "tokens": list(explanations[0].tokens),
            "scores": {e.explainer: [float(v) for v in e.scores] for e in explanations},
            "aopc": {ev.explanation.explainer: {m.name: float(m.score) for m in ev.evaluation_scores}
                     for ev in evaluations},
            "explain_wall": explain_wall, "explain_cpu": explain_cpu,
            "evaluate_wall": evaluate_wall, "evaluate_cpu": evaluate_cpu})
    with open(out_path, "w") as handle:
        json.dump({"tool": "ferret", "first_call": first_call, "rows": rows,
                   "total_wall": time.perf_counter() - START_WALL, "total_cpu": time.process_time() - START_CPU,
                   "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   "threads": threads}, handle)


if __name__ == "__main__":
    main()
