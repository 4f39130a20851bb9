"""Measure one pass's peak memory in a fresh process (run by tests/models/test_memory.py and bench/bench_scaling.py).

The peak is the growth of the process's resident set across the pass (Linux: the peak mark VmHWM, reset just
before it), after the model is built and a small warm-up pass has run: torch's CPU allocator hands large blocks back
to the system, so the resident set follows the live tensors (tracemalloc does not see torch's allocations). Prints one
JSON line: per pass kind {"peak_bytes": ..., "predicted_bytes": ...}, or for a method its peak and the budget.

    python tests/memory_probe.py pass tiny forward,backward ROWS LENGTH [eager|sdpa] [bfloat16]   # autocast
    python tests/memory_probe.py method base integrated_gradients        # a 512-token input, EXWB_MEMORY_GB
"""
from __future__ import annotations

import ctypes
import json
import os
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer  # noqa: E402

SIZES = {  # random-weight encoders built from configurations: nothing is downloaded
    "tiny": dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512),
    "base": {},  # BertConfig()'s defaults: BERT-base, 110 M parameters
}
LETTERS = string.ascii_lowercase


def bert(size: str, attention: str = "sdpa") -> BertForSequenceClassification:
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, **SIZES[size])
    config._attn_implementation = attention
    model = BertForSequenceClassification(config).eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def letter_tokenizer() -> BertTokenizer:
    """One token per letter (a word of k letters = k tokens): a 512-token input of a few words, so perturbation
    methods run a few forwards, not hundreds."""
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *LETTERS, *("##" + c for c in LETTERS)]
    return BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)


LONG_TEXT = " ".join([(LETTERS * 4)[i:i + 100] for i in range(5)] + ["abcdefgh"])  # 5 x 100 + 8 letters: 510 tokens


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def start_peak() -> int:
    """Reset the kernel's peak-RSS mark (``clear_refs`` 5: VmHWM = the current RSS) and return the current RSS:
    the peak of the pass alone, not of building the model before it."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed heap back to the system: memory reused by the pass shows as growth
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kb("VmRSS")


def peak_rss() -> int:
    return _status_kb("VmHWM")


def run_pass(model, kind: str, embeds: torch.Tensor, mask: torch.Tensor) -> None:
    if kind == "forward":
        with torch.inference_mode():
            model(inputs_embeds=embeds, attention_mask=mask)
        return
    embeds = embeds.clone().requires_grad_(True)
    output = model(inputs_embeds=embeds, attention_mask=mask).logits[:, 0].sum()
    gradient, = torch.autograd.grad(output, embeds, create_graph=kind == "double_backward")
    if kind == "double_backward":
        gradient.pow(2).sum().backward()


def measure_passes(size: str, kinds: list[str], rows: int, length: int, attention: str,
                   autocast: str | None = None) -> dict:
    """Each pass kind in turn on one model (the peak mark is reset before each): {kind: measured and predicted};
    ``autocast``: the passes under that reduced-precision autocast (the fast mode)."""
    from models import memory, precision

    model = bert(size, attention)
    embeds = torch.randn(rows, length, model.config.hidden_size)
    mask = torch.ones(rows, length, dtype=torch.long)
    found = {}
    dtype = getattr(torch, autocast) if autocast else None
    for kind in kinds:
        with precision.autocast(torch.device("cpu"), dtype):
            run_pass(model, kind, embeds[:1, :8], mask[:1, :8])  # warm-up: kernels and thread pools
            before = start_peak()
            run_pass(model, kind, embeds, mask)
        found[kind] = {"peak_bytes": peak_rss() - before,
                       "predicted_bytes": memory.predicted_bytes(memory.shape_of(model, dtype), rows, length, kind)}
    return found


def measure_method(size: str, method: str) -> dict:
    from evaluation.adversarial.attack import attack
    from evaluation.adversarial.config import AttackConfig
    from explainers import registry
    from models import TextClassifier, memory

    classifier = TextClassifier(bert(size), letter_tokenizer(), name=f"random-{size}", device="cpu")
    encoding = classifier.encode(LONG_TEXT)
    small = classifier.encode("abcdefghij klmnopqrst")  # 20 tokens: a warm-up the attack accepts
    options = {"integrated_gradients": {"n_steps": 4}, "smoothgrad": {"n_samples": 4}, "leave_one_out": {}}
    if method == "attack":
        config = AttackConfig(steps=2)
        attack(classifier, small, "saliency", config)  # warm-up
        before = start_peak()
        attack(classifier, encoding, "saliency", config)
    else:
        registry.create(method, **options[method]).explain(classifier, small)  # warm-up
        before = start_peak()
        registry.create(method, **options[method]).explain(classifier, encoding)
    return {"peak_bytes": peak_rss() - before, "tokens": encoding.n_tokens,
            "budget_bytes": memory.budget_bytes("cpu")}


if __name__ == "__main__":
    torch.set_num_threads(int(os.environ.get("PROBE_THREADS", "1")))
    what, size, *rest = sys.argv[1:]
    if what == "pass":
        kinds, rows, length = rest[0].split(","), int(rest[1]), int(rest[2])
        print(json.dumps(measure_passes(size, kinds, rows, length, rest[3] if len(rest) > 3 else "sdpa",
                                        rest[4] if len(rest) > 4 else None)))
    else:
        print(json.dumps(measure_method(size, rest[0])))
