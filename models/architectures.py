"""Where the parts of each supported architecture live, as data rather than if/else chains.

Layer randomization walks ``blocks`` from the top down and re-initializes ``head`` first and
``embeddings`` last; sequence-length limits use ``position_offset``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Architecture:
    model_type: str
    blocks: str  # dotted path to the ModuleList of transformer blocks
    embeddings: tuple[str, ...]  # dotted paths of the input embedding modules
    head: tuple[str, ...]  # dotted paths of the classification head modules, applied after the blocks
    position_offset: int = 0  # positions reserved by the model (RoBERTa's padding offset)
    summary_token: str = "first"  # the token the head reads: [CLS] first, or the last token (GPT-2)


ARCHITECTURES = {a.model_type: a for a in [
    Architecture("bert", "bert.encoder.layer", ("bert.embeddings",), ("bert.pooler", "classifier")),
    Architecture("roberta", "roberta.encoder.layer", ("roberta.embeddings",), ("classifier",), position_offset=2),
    Architecture("xlm-roberta", "roberta.encoder.layer", ("roberta.embeddings",), ("classifier",), position_offset=2),
    Architecture("electra", "electra.encoder.layer", ("electra.embeddings", "electra.embeddings_project"),
                 ("classifier",)),
    Architecture("camembert", "roberta.encoder.layer", ("roberta.embeddings",), ("classifier",), position_offset=2),
    # relative-position tables shared by every block count as embeddings (absent paths are skipped)
    Architecture("deberta-v2", "deberta.encoder.layer",
                 ("deberta.embeddings", "deberta.encoder.rel_embeddings", "deberta.encoder.LayerNorm"),
                 ("pooler", "classifier")),
    Architecture("mpnet", "mpnet.encoder.layer", ("mpnet.embeddings", "mpnet.encoder.relative_attention_bias"),
                 ("classifier",), position_offset=2),
    Architecture("distilbert", "distilbert.transformer.layer", ("distilbert.embeddings",),
                 ("pre_classifier", "classifier")),
    Architecture("causal-bert", "bert.encoder.layer", ("bert.embeddings",), ("bert.pooler", "classifier"),
                 summary_token="last"),
    Architecture("gpt2", "transformer.h", ("transformer.wte", "transformer.wpe"), ("transformer.ln_f", "score"),
                 summary_token="last"),
]}


def architecture_of(model: torch.nn.Module) -> Architecture | None:
    return ARCHITECTURES.get(getattr(model.config, "model_type", ""))


def get_module(model: torch.nn.Module, path: str) -> torch.nn.Module | None:
    """The submodule at a dotted path, or None where the model has none (e.g. BERT without a pooler)."""
    module = model
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module
