#!/usr/bin/env python
"""Each method against its floor, encoders, decoders and prompted models alike.

- perturbation methods: the explanation (original's logits not cached) against its batched-forward floor, the same
  batches of perturbed inputs replayed through ``predict_logits`` alone (recorded from a warm-up run, so the floor
  sees exactly the rows, lengths and batches the method sent). Targets: 1.15x (encoders), 1.2x (decoders, prompted);
- gradient methods: the explanation against the same Captum call made directly on the same Hugging Face model
  (word embeddings -> ``model(inputs_embeds=...)``), same steps and batch size. Target: 1.1x.

Subject and floor run interleaved (A, B, A, B), best of n; wall and CPU (``time.process_time``) seconds, peak
memory (CPU: the process's peak RSS so far; GPU: peak allocated per row), and the number of distinct parameter
storages across the classifier and its fast view (weight copies; at most two allowed).

    python bench/bench_floors.py                   # default-quick, the tiny GPT-2 decoder, minilm-causal if prepared
    python bench/bench_floors.py --quick           # fewer rounds, fewer methods
    python bench/bench_floors.py --methods samplers --models gpt2,prompted   # the sampling methods' rows only
    python bench/bench_floors.py --gradient-only   # the gradient rows alone (default-quick)
    EXWB_DEVICE=cuda python bench/bench_floors.py  # the same on a GPU (make bench with EXWB_DEVICE=cuda)
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the script's own folder is on sys.path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import torch  # noqa: E402
from captum.attr import InputXGradient, IntegratedGradients, Saliency  # noqa: E402
from transformers import GPT2Config, GPT2ForSequenceClassification, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402

from explainers import create, create_from_spec  # noqa: E402
from models import TextClassifier, load_classifier  # noqa: E402
from models.attention_kernel import eager_attention  # noqa: E402
from models.precision import fast_dtype  # noqa: E402
from models.prepare import find_prepared  # noqa: E402
from models.runtime import choose_device  # noqa: E402

TEXT = ("the film is a charming and often affecting journey , but its plot drags in the middle and the ending "
        "never quite earns the tears it asks for")
PERTURBATION = ["leave_one_out", "occlusion", "lime", "kernel_shap", "shapley_sampling", "lime:ferret",
                "partition_shap:ferret"]
SAMPLERS = ["lime", "kernel_shap", "shapley_sampling", "lime:ferret", "partition_shap:ferret"]
MODELS = ("encoder", "minilm-causal", "gpt2", "prompted")
GRADIENT = {"saliency": Saliency, "input_x_gradient": InputXGradient, "integrated_gradients": IntegratedGradients}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(function, device) -> tuple[float, float]:
    _sync(device)
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    _sync(device)
    return time.perf_counter() - wall, time.process_time() - cpu


def best_of(subject, floor, rounds: int, device) -> tuple[tuple[float, float], tuple[float, float]]:
    subject(), floor()  # first-call costs
    a, b = [], []
    for _ in range(rounds):
        a.append(timed(subject, device))
        b.append(timed(floor, device))
    return min(a), min(b)


def peak_mb(device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def weight_copies(classifier: TextClassifier) -> int:
    """Distinct storages holding the first parameter, across the classifier and its fast view."""
    views = [classifier, classifier.fast_variant(torch.bfloat16)]
    return len({next(v.model.parameters()).untyped_storage().data_ptr() for v in views})


def perturbation_rows(classifier, encoding, methods, rounds, target) -> list[str]:
    lines = []
    for method in methods:
        explainer = create_from_spec(method)
        batches, original = [], classifier.predict_logits

        def recording(batch, original=original):
            batches.append(batch)
            return original(batch)

        classifier._logits_cache.clear()
        classifier.predict_logits = recording  # an instance attribute: this warm-up run records its batches
        try:
            explainer.explain(classifier, encoding)
        finally:
            del classifier.predict_logits

        def subject():
            classifier._logits_cache.clear()
            explainer.explain(classifier, encoding)

        def floor():
            for batch in batches:
                classifier.predict_logits(batch)

        if classifier.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(classifier.device)
        (sw, sc), (fw, fc) = best_of(subject, floor, rounds, classifier.device)
        rows = sum(len(b) for b in batches)
        lines.append(f"  {method:22s} {rows:5d} rows {len(batches):3d} calls  method {sw:7.3f}s (cpu {sc:6.3f})  "
                     f"floor {fw:7.3f}s (cpu {fc:6.3f})  ratio {sw / fw:5.2f} (cpu {sc / fc:5.2f}, target "
                     f"{target})  peak {peak_mb(classifier.device):6.0f} MB")
    return lines


def direct_captum(classifier, encoding, method: str, params) -> None:
    """The Captum call of ``method`` made directly on the Hugging Face model (no project code in the loop)."""
    model = classifier.model
    tensors = classifier.tensors(encoding)
    mask = tensors["attention_mask"]
    embeds = model.get_input_embeddings()(tensors["input_ids"]).detach()

    def forward(inputs_embeds):
        return model(inputs_embeds=inputs_embeds, attention_mask=mask.expand(inputs_embeds.shape[0], -1)).logits

    algorithm = GRADIENT[method](forward)
    if method == "integrated_gradients":
        pad = torch.full_like(tensors["input_ids"], classifier.tokenizer.pad_token_id)
        baseline = model.get_input_embeddings()(pad).detach()
        algorithm.attribute(embeds, baselines=baseline, target=1, n_steps=params.n_steps, method=params.method,
                            internal_batch_size=params.internal_batch_size)
    else:
        algorithm.attribute(embeds.requires_grad_(True), target=1)


def gradient_rows(classifier, encoding, rounds) -> list[str]:
    lines = []
    for method in GRADIENT:
        explainer = create(method)
        if classifier.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(classifier.device)
        (sw, sc), (fw, fc) = best_of(lambda: explainer.explain(classifier, encoding, target=1),
                                     lambda: direct_captum(classifier, encoding, method, explainer.params),
                                     rounds, classifier.device)
        lines.append(f"  {method:22s} method {sw:7.3f}s (cpu {sc:6.3f})  direct Captum {fw:7.3f}s (cpu {fc:6.3f})  "
                     f"ratio {sw / fw:5.2f} (cpu {sc / fc:5.2f}, target 1.1)  peak {peak_mb(classifier.device):6.0f} MB")
    return lines


def kernel_and_precision_rows(classifier, encoding, rounds) -> list[str]:
    """SDPA against eager, and the fast view against full precision, on 64 copies of the input (one batch each)."""
    batch = [encoding] * 64

    def eager():
        with eager_attention(classifier.model):
            return classifier.predict_logits(batch)

    sdpa_logits, eager_logits = classifier.predict_logits(batch), eager()
    (sw, sc), (ew, ec) = best_of(lambda: classifier.predict_logits(batch), eager, rounds, classifier.device)
    lines = [f"  SDPA vs eager, 64 inputs: {sw:.3f}s (cpu {sc:.3f}) vs {ew:.3f}s (cpu {ec:.3f}), speed-up "
             f"{ew / sw:.2f} (cpu {ec / sc:.2f}); max |dlogit| {abs(sdpa_logits - eager_logits).max():.2e}"]
    dtype = torch.bfloat16 if device_has_fast(classifier) is None else device_has_fast(classifier)
    fast = classifier.fast_variant(dtype)
    (fw, fc), (pw, pc) = best_of(lambda: fast.predict_logits(batch), lambda: classifier.predict_logits(batch),
                                 rounds, classifier.device)
    native = "native" if device_has_fast(classifier) is not None else "emulated: fast mode stays off here"
    lines.append(f"  fast view ({str(dtype).removeprefix('torch.')}, {native}): {fw:.3f}s (cpu {fc:.3f}) vs full "
                 f"{pw:.3f}s (cpu {pc:.3f}), speed-up {pw / fw:.2f} (cpu {pc / fc:.2f}); max |dp| on the input "
                 f"{fast.precision_details(encoding)['max_abs_dp_vs_full']:.2e}")
    return lines


def device_has_fast(classifier):
    return fast_dtype(classifier.device)


def tiny_gpt2(device) -> TextClassifier:
    """A small GPT-2 decoder built in code (pad = eos, left padding, pooled-token read-out): the decoder path."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = sorted(set(TEXT.split()) | {"<|endoftext|>"})
    vocabulary = {w: i for i, w in enumerate(words)}
    backend = Tokenizer(models.WordLevel(vocabulary, unk_token="<|endoftext|>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>",
                                        unk_token="<|endoftext|>", model_max_length=128)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(words), n_embd=256, n_layer=4, n_head=4, n_positions=128, num_labels=2,
                        pad_token_id=vocabulary["<|endoftext|>"], eos_token_id=vocabulary["<|endoftext|>"])
    return TextClassifier(GPT2ForSequenceClassification(config).eval(), tokenizer, name="gpt2-4x256 (random)",
                          device=device, source="bench")


def tiny_prompted(device, folder: Path) -> TextClassifier:
    """A prompted causal LM: a small GPT-2 LM built in code, a prompt with the input slot and one label
    word per class, written as the JSON spec a user would write, and loaded like any model."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = sorted(set(TEXT.split()) | {"Review:", "Sentiment:", "bad", "good", "<|endoftext|>"})
    vocabulary = {w: i for i, w in enumerate(words)}
    backend = Tokenizer(models.WordLevel(vocabulary, unk_token="<|endoftext|>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>",
                                        unk_token="<|endoftext|>", model_max_length=128)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(words), n_embd=256, n_layer=4, n_head=4, n_positions=128,
                        bos_token_id=vocabulary["<|endoftext|>"], eos_token_id=vocabulary["<|endoftext|>"])
    GPT2LMHeadModel(config).save_pretrained(folder / "lm")
    tokenizer.save_pretrained(folder / "lm")
    spec = folder / "prompted.json"
    spec.write_text(json.dumps({"kind": "prompted-lm", "model": "lm", "template": "Review: {text} Sentiment:",
                                "labels": {"negative": " bad", "positive": " good"}}))
    return load_classifier(str(spec), device=str(device))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--methods", help="comma-separated method[:preset] specs, or 'samplers' (LIME, KernelSHAP, "
                        "Shapley sampling, LIME and Partition SHAP at ferret's settings); the gradient and kernel rows "
                        "run only without it")
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    parser.add_argument("--gradient-only", action="store_true", help="only the gradient rows (the encoder)")
    args = parser.parse_args()
    print(f"machine: {machine.describe()}", flush=True)
    device = choose_device()
    rounds = 1 if args.quick else args.rounds
    methods = PERTURBATION[:2] if args.quick else PERTURBATION
    if args.methods:
        methods = SAMPLERS if args.methods == "samplers" else args.methods.split(",")
    chosen = set(args.models.split(","))
    print(f"load average {open('/proc/loadavg').read().split()[:3]}  device {device}  threads "
          f"{torch.get_num_threads()}  best of {rounds}")
    encoder = load_classifier(args.model, device=str(device)) if "encoder" in chosen or args.gradient_only else None
    if args.gradient_only:
        encoding = encoder.encode(TEXT)
        print(f"\n{encoder.name}: {encoding.n_tokens} tokens, attention {encoder.attention_implementation}")
        for line in gradient_rows(encoder, encoding, rounds):
            print(line, flush=True)
        return 0
    models = [(encoder, "1.15")] if encoder is not None else []
    if "minilm-causal" in chosen and find_prepared("minilm-causal") is not None:
        models.append((load_classifier("minilm-causal", device=str(device)), "1.2"))
    if "gpt2" in chosen:
        models.append((tiny_gpt2(device), "1.2"))
    if "prompted" in chosen:
        models.append((tiny_prompted(device, Path(tempfile.mkdtemp(prefix="bench-prompted-"))), "1.2"))
    for classifier, target in models:
        encoding = classifier.encode(TEXT)
        print(f"\n{classifier.name}: {encoding.n_tokens} tokens, attention {classifier.attention_implementation}, "
              f"{classifier.max_batch_tokens} tokens per batch, weight copies with the fast view "
              f"{weight_copies(classifier)}")
        for line in perturbation_rows(classifier, encoding, methods, rounds, target):
            print(line, flush=True)
        if classifier is encoder and not args.methods:
            for line in kernel_and_precision_rows(classifier, encoding, rounds):
                print(line, flush=True)
            for line in gradient_rows(classifier, encoding, rounds):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
