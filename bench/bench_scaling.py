#!/usr/bin/env python
"""How cost grows with model size: random-weight models built from configurations (nothing downloaded).

Models: MiniLM-L6 size (22 M parameters), BERT-base size (110 M), BERT-large size (335 M) and a 1.1 B Llama-style
decoder (TinyLlama's shape) prompted as a classifier (models/prompted.py: label words read at the prompt's last
token). Inputs of about 64 and 512 tokens: a letter-level WordPiece vocabulary makes a word of k letters k tokens,
so a 512-token input is 6 words and a perturbation method runs a handful of forwards, not hundreds.

Per model, length and method: seconds, peak memory (GPU: ``torch.cuda.max_memory_allocated``; CPU: the growth of
the resident set across the call, the kernel's peak mark reset before it) and the ratio to a reference measured in
the same run: perturbation methods against the model's own forward floor (one plain batched forward of the rows the
method ran; target <= 1.2), gradient methods against a direct Captum call on the same Hugging Face model (target
<= 1.1; bench/bench_floors.py does the same on the default model). Then the fitted growth: per method and length,
seconds ~ parameters^b by least squares on the logs.

    python bench/bench_scaling.py --quick              # the affordable CPU set (printed as such)
    python bench/bench_scaling.py --quick --models minilm-l6,bert-base --rounds 3   # best of 3, alternated
    python bench/bench_scaling.py --quick --tokens 64 --methods saliency --rounds 5     # a few rows again
    python bench/bench_scaling.py --precision bf16     # explanations under bf16 autocast (GPU), metrics untouched
    EXWB_DEVICE=cuda python bench/bench_scaling.py     # every model, length and method (bench/gpu_check.sh)
"""
from __future__ import annotations

import argparse
import ctypes
import math
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import machine  # noqa: E402  (bench/machine.py: the script's own folder is on sys.path)
import torch  # noqa: E402
from captum.attr import IntegratedGradients, Saliency  # noqa: E402
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertForSequenceClassification,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
)

from explainers import registry  # noqa: E402
from models import TextClassifier, runtime  # noqa: E402
from models.prompted import LabelWordHead, PromptedClassifier, label_token_ids  # noqa: E402

LETTERS = string.ascii_lowercase
CONFIGS = {
    "minilm-l6": dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536),
    "bert-base": dict(),
    "bert-large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
    "llama-1b": dict(hidden_size=2048, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
                     intermediate_size=5632, vocab_size=32000, max_position_embeddings=2048),
}
METHODS = {"saliency": "gradient", "integrated_gradients": "gradient", "leave_one_out": "perturbation"}
TARGETS = {"gradient": 1.1, "perturbation": 1.2}
# --quick on a 2-core CPU: fewer methods and lengths for the large models (a 1 B forward of 512 tokens is minutes)
QUICK = {"minilm-l6": {64: list(METHODS), 512: list(METHODS)},
         "bert-base": {64: list(METHODS), 512: ["saliency", "leave_one_out"]},
         "bert-large": {64: ["saliency", "leave_one_out"], 512: ["saliency"]},
         "llama-1b": {64: ["saliency"]}}
IG_STEPS = {True: 8, False: 32}
IG_STEPS_ASKED = 0  # --ig-steps: the steps of every IG row (0: IG_STEPS); the delta's 2-row forward weighs 2/(3 n)


def letter_vocabulary() -> dict[str, int]:
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ":", "review", "sentiment", "good", "bad",
             *LETTERS, *("##" + c for c in LETTERS)]
    return {w: i for i, w in enumerate(words)}


def letter_tokenizer(bert: bool) -> PreTrainedTokenizerFast:
    """WordPiece over letters: one token per letter, whole words for the prompt's and the label words."""
    from tokenizers import processors

    vocabulary = letter_vocabulary()
    backend = Tokenizer(models.WordPiece(vocabulary, unk_token="[UNK]", max_input_chars_per_word=1000))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if bert:
        backend.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", vocabulary["[CLS]"]), ("[SEP]", vocabulary["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=2048)


def text_of(tokens: int) -> str:
    """About ``tokens`` letter tokens in 6 words."""
    per_word = max(1, tokens // 6)
    return " ".join((LETTERS * 40)[i * 7:i * 7 + per_word] for i in range(6))


def build(name: str, device: torch.device) -> TextClassifier:
    torch.manual_seed(0)
    if name == "llama-1b":
        tokenizer = letter_tokenizer(bert=False)
        config = LlamaConfig(**CONFIGS[name], pad_token_id=0, bos_token_id=2, eos_token_id=3)
        with torch.device(device):
            lm = LlamaForCausalLM(config).eval()
        spec = {"kind": "prompted-lm", "model": "(random)", "template": "review : {text} sentiment :",
                "labels": {"negative": " bad", "positive": " good"}}
        head = LabelWordHead(lm, label_token_ids(tokenizer, spec["labels"]), list(spec["labels"]))
        return PromptedClassifier(head, tokenizer, spec=spec, name=name, device=device,
                                  manifest={"label_names": list(spec["labels"]), "prompt": spec})
    config = BertConfig(vocab_size=30522, **CONFIGS[name])
    with torch.device(device):
        model = BertForSequenceClassification(config).eval()
    return TextClassifier(model, letter_tokenizer(bert=True), name=name, device=device)


# ----- measuring ----------------------------------------------------------------------------------------------------
def _status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = CLOCKS["wall"]  # --clock cpu: the process's CPU seconds, which another process's load barely moves


def measured(function, device: torch.device) -> tuple[float, float]:
    """(seconds, peak MB above what was allocated before) of one call."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
    else:
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed heap back to the system: reused memory shows as growth
            Path("/proc/self/clear_refs").write_text("5")  # the peak mark restarts at the current RSS
        except OSError:
            pass
        before = _status_bytes("VmRSS")
    started = CLOCK()
    function()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        peak = torch.cuda.max_memory_allocated(device) - before
    else:
        peak = _status_bytes("VmHWM") - before
    return CLOCK() - started, max(0, peak) / 2 ** 20


def direct_captum(classifier: TextClassifier, encoding, method: str, params, target: int, delta: bool = False) -> None:
    """The Captum call made directly on the Hugging Face model (bench/bench_floors.py's reference); ``delta``: IG
    with Captum's convergence delta too, which the project's IG always returns (its provenance's ``delta``)."""
    model = classifier.model
    tensors = classifier.tensors(encoding)
    mask = tensors["attention_mask"]
    embeds = model.get_input_embeddings()(tensors["input_ids"]).detach()

    def forward(inputs_embeds):
        with torch.autocast(classifier.device.type, dtype=classifier.autocast_dtype,
                            enabled=classifier.autocast_dtype is not None):
            return model(inputs_embeds=inputs_embeds, attention_mask=mask.expand(inputs_embeds.shape[0], -1)).logits

    if method == "integrated_gradients":
        baseline = torch.zeros_like(embeds)
        IntegratedGradients(forward).attribute(embeds, baselines=baseline, target=target, n_steps=params.n_steps,
                                               method=params.method, internal_batch_size=params.internal_batch_size,
                                               return_convergence_delta=delta)
    else:
        Saliency(forward).attribute(embeds.requires_grad_(True), target=target)


def method_row(classifier: TextClassifier, encoding, method: str, quick: bool, rounds: int = 1) -> dict:
    options = {"integrated_gradients": {"n_steps": IG_STEPS[quick], "baseline": "zero"}}.get(method, {})
    if method == "integrated_gradients" and IG_STEPS_ASKED:
        options["n_steps"] = IG_STEPS_ASKED
    explainer = registry.create(method, **options)
    target = int(classifier.proba_of(encoding).argmax())
    if METHODS[method] == "gradient":
        def reference():
            direct_captum(classifier, encoding, method, explainer.params, target)
    else:  # the forward floor: the rows the method sends to the model, as plain batched forwards
        batches, original = [], classifier.predict_logits

        def recording(batch, original=original):
            batches.append(batch)
            return original(batch)

        classifier.predict_logits = recording
        try:
            explainer.explain(classifier, encoding, target)
        finally:
            del classifier.predict_logits

        def reference():
            for batch in batches:
                classifier.predict_logits(batch)

    def subject():
        explainer.explain(classifier, encoding, target)

    def with_delta():  # IG: the like-for-like call (the project's IG returns the convergence delta too)
        direct_captum(classifier, encoding, method, explainer.params, target, delta=True)

    subjects, references, deltas = [], [], []
    for _ in range(rounds):  # alternated, the best of each: a shared machine's load hits both alike
        subjects.append(measured(subject, classifier.device))
        references.append(measured(reference, classifier.device))
        if method == "integrated_gradients":
            deltas.append(measured(with_delta, classifier.device))
    (seconds, peak), (floor_seconds, floor_peak) = min(subjects), min(references)
    label = "direct Captum" if METHODS[method] == "gradient" else "forward floor"
    if deltas:
        label += f" (with its delta: {min(deltas)[0]:.2f} s, ratio {seconds / min(deltas)[0]:.2f})"
    return {"method": method, "seconds": seconds, "peak_mb": peak, "reference_seconds": floor_seconds,
            "reference_peak_mb": floor_peak, "ratio": seconds / floor_seconds,
            "target": TARGETS[METHODS[method]], "reference": label}


def growth(rows: list[dict]) -> list[str]:
    """seconds ~ parameters^b per method and length (least squares on the logs; 2+ models)."""
    lines = []
    for key in sorted({(r["method"], r["tokens_asked"]) for r in rows}):
        points = [(math.log(r["parameters"]), math.log(r["seconds"])) for r in rows
                  if (r["method"], r["tokens_asked"]) == key and r["seconds"] > 0]
        if len(points) < 2:
            continue
        mx, my = sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
        sxx = sum((x - mx) ** 2 for x, _ in points)
        b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")
        lines.append(f"| {key[0]} | {key[1]} | {len(points)} | {b:.2f} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true", help="the affordable CPU set (QUICK): fewer methods and "
                                                             "lengths for the large models, IG with 8 steps")
    parser.add_argument("--models", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--rounds", type=int, default=1, help="measure method and reference this many times, "
                                                                  "alternately, and keep the best of each")
    parser.add_argument("--tokens", default=None, help="comma-separated lengths of the plan to run (64, 512)")
    parser.add_argument("--methods", default=None, help="comma-separated methods of the plan to run: "
                                                        + ", ".join(METHODS))
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="bf16: explanations under the fast mode's autocast (metrics never use it)")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                        help="cpu: process CPU seconds (CPU runs on a shared machine: set EXWB_THREADS=1)")
    parser.add_argument("--ig-steps", type=int, default=0, help="IG's steps in every row (default: 8 with "
                                                                   "--quick, else 32)")
    args = parser.parse_args()
    global CLOCK, IG_STEPS_ASKED
    CLOCK, IG_STEPS_ASKED = CLOCKS[args.clock], args.ig_steps
    device = runtime.choose_device()
    print(f"machine: {machine.describe()}")
    print(f"device: {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}, precision "
          f"{args.precision}, torch threads {torch.get_num_threads()}, best of {args.rounds} round(s), "
          f"clock {args.clock}"
          f"{', --quick' if args.quick else ''}, load average {Path('/proc/loadavg').read_text().split()[0]}")
    print("| model | parameters | tokens | method | seconds | peak MB | reference | ref. seconds | ratio (target) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in args.models.split(","):
        started = time.perf_counter()
        classifier = build(name, device)
        if args.precision == "bf16":
            classifier = classifier.fast_variant(torch.bfloat16)
        parameters = sum(p.numel() for p in classifier.model.parameters())
        plan = QUICK[name] if args.quick else {64: list(METHODS), 512: list(METHODS)}
        plan = {tokens: [m for m in methods if not args.methods or m in args.methods.split(",")]
                for tokens, methods in plan.items() if not args.tokens or str(tokens) in args.tokens.split(",")}
        if not any(plan.values()):
            continue
        warm = classifier.encode(text_of(8))  # first-call costs (kernels, thread pools) paid before measuring
        for method in {m for methods in plan.values() for m in methods}:
            method_row(classifier, warm, method, args.quick)
        for tokens, methods in plan.items():
            encoding = classifier.encode(text_of(tokens - 2))
            for method in methods:
                row = method_row(classifier, encoding, method, args.quick, args.rounds)
                row.update(model=name, parameters=parameters, tokens=encoding.n_tokens, tokens_asked=tokens)
                rows.append(row)
                print(f"| {name} | {parameters / 1e6:.0f} M | {encoding.n_tokens} | {method} | {row['seconds']:.2f} | "
                      f"{row['peak_mb']:.0f} | {row['reference']} | {row['reference_seconds']:.2f} | "
                      f"{row['ratio']:.2f} ({row['target']}) |", flush=True)
        print(f"<!-- {name}: built and measured in {time.perf_counter() - started:.0f} s -->", flush=True)
        del classifier
        if device.type == "cuda":
            torch.cuda.empty_cache()
    fitted = growth(rows)
    if fitted:
        print("\nFitted growth, seconds ~ parameters^b:\n\n| method | tokens | models | b |\n|---|---|---|---|")
        print("\n".join(fitted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
