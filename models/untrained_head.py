"""Is a classification head still at its initialization (saved before any training)?

The rule compares the head with what the model's own initializer draws (``model._init_weights`` applied to a copy
of the head, seeded): transformers initializes a new head's linear weights from a fixed distribution (N(0, 0.02)
for BERT, N(0, factor / sqrt(d_model)) for T5, ...) and its biases at exactly 0, and any training moves every bias
off 0 and the weights off that distribution. A head is judged untrained when

- every linear layer's weights have the fresh draw's statistics: a standard deviation within ``SPREAD`` (or four
  standard errors, for small layers) of the fresh draw's, a mean within four standard errors of 0, and a
  two-sample Kolmogorov-Smirnov test against the fresh draw that does not reject at ``KS_LEVEL``;
- and every bias the initializer sets to 0 is still exactly 0. A head without biases (GPT-2, Llama, ...) has
  only its weights to go by: they must pass the same tests, whatever the class names.

A model whose class has no ``_init_weights`` is compared with N(0, ``initializer_range``) (0.02 when unset).
"""
from __future__ import annotations

import copy
import math

import numpy as np  # noqa: E402
import torch  # noqa: E402

from models import runtime  # noqa: F401  (the process environment before torch is imported)
from models.classifier import generic_label_names

# top-level modules a classification checkpoint adds to its pre-trained model (BART and T5: classification_head)
HEAD_PREFIXES = ("classifier", "score", "pre_classifier", "logits_proj", "classification_head")
SPREAD = 0.3  # relative difference of standard deviations still counted as "the same"
KS_LEVEL = 1e-3  # a trained head's weights are a different distribution: the test rejects far below this
SEED = 0  # the fresh draw is seeded, so a model always gets the same verdict


def _heads(model) -> list[torch.nn.Module]:
    """The parts a classification checkpoint adds to its encoder (new at fine-tuning)."""
    return [m for m in (getattr(model, name, None) for name in HEAD_PREFIXES) if isinstance(m, torch.nn.Module)]


def _linear_layers(module: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in module.modules() if isinstance(m, torch.nn.Linear)]


@torch.no_grad()
def _fresh_draw(model, head: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``head`` re-initialized by the model's own initializer (children before parents, as
    ``Module.apply``), or from N(0, initializer_range) with zero biases where the model has none."""
    fresh = copy.deepcopy(head).to("cpu", torch.float32)
    for tensor in fresh.parameters():
        if hasattr(tensor, "_is_hf_initialized"):  # transformers' init helpers skip tensors flagged as loaded
            delattr(tensor, "_is_hf_initialized")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        init = getattr(model, "_init_weights", None)
        if init is not None:
            for sub in reversed(list(fresh.modules())):
                init(sub)
        else:
            std = float(getattr(model.config, "initializer_range", 0.02) or 0.02)
            for layer in _linear_layers(fresh):
                layer.weight.normal_(0.0, std)
                if layer.bias is not None:
                    layer.bias.zero_()
    return fresh


def _same_distribution(weight: torch.Tensor, fresh: torch.Tensor) -> bool:
    from scipy.stats import ks_2samp  # lazy: scipy.stats costs ~0.8 s at import
    values = weight.detach().double().cpu().numpy().ravel()
    draw = fresh.detach().double().numpy().ravel()
    n, expected = values.size, float(draw.std())
    if expected == 0:
        return bool(np.all(values == draw))
    standard_error = 1 / math.sqrt(2 * n)  # of a normal sample's standard deviation, relative
    if abs(float(values.std()) / expected - 1) >= max(SPREAD, 4 * math.sqrt(2) * standard_error):
        return False
    if abs(float(values.mean())) >= 4 * expected / math.sqrt(n):
        return False
    return bool(ks_2samp(values, draw).pvalue >= KS_LEVEL)


def untrained_head_warning(model) -> str | None:
    """A warning when the classification head looks never trained (module docstring), else None."""
    pairs = [(layer, fresh) for head in _heads(model)
             for layer, fresh in zip(_linear_layers(head), _linear_layers(_fresh_draw(model, head)))]
    if not pairs:
        return None
    if not all(_same_distribution(layer.weight, fresh.weight) for layer, fresh in pairs):
        return None
    zero_at_init = [layer.bias for layer, fresh in pairs
                    if layer.bias is not None and fresh.bias is not None and not bool(fresh.bias.abs().max() > 0)]
    if any(bool(bias.detach().abs().max() > 0) for bias in zero_at_init):
        return None
    stds = sorted({f"{float(fresh.weight.detach().std()):.2g}" for _, fresh in pairs})
    biases = ", biases exactly 0" if zero_at_init else ""
    names = " and generic class names (LABEL_0, LABEL_1, ...)" if generic_label_names(model.config) else ""
    return ("This model's classification head looks untrained: its weights are still at their initialization "
            f"statistics (standard deviation {' / '.join(stds)}{biases}){names}. Its predictions, and so these "
            "explanations, are probably meaningless; fine-tune the model first or pick a trained one.")
