"""A causal (decoder-style) BERT classifier: the same blocks under a causal attention mask, read at the last token.

The architecture axis of the offline zoo (paper 003 compares encoders with decoders): MiniLM's
pretrained weights are kept and only the attention direction and the pooled token change, so a difference in the
explanations comes from causality, not from another pretraining. The head reads the last token the attention mask
keeps (found from the mask, never from a pad id, so the pad-token confound of paper 003's GPT-2 cannot occur; notes
003 section 6.3 item 1), through BERT's own pooler weights. Registered with the Auto classes (model type
``causal-bert``), so a saved folder loads like any classifier.

The two classes are built on first use (``causal_classes()``, or a plain ``from models.causal_bert import
CausalBertConfig``): subclassing BERT imports transformers' modeling code (``modeling_utils``, sympy,
torch.distributed), about 1.6 s that ``import models`` / ``import workbench`` should not pay.
``models.loading`` calls ``causal_classes()`` before it reads a folder, so a saved causal model still loads.
"""
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from transformers import BertConfig, BertForSequenceClassification

MODEL_TYPE = "causal-bert"
CLASS_NAMES = ("CausalBertConfig", "CausalBertForSequenceClassification")


def last_kept_positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """Index of the last position whose mask is 1, per row (right or left padding alike)."""
    width = attention_mask.shape[1]
    return width - 1 - attention_mask.flip(1).long().argmax(dim=1)


def at_last_kept(states: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
    """``states`` (batch, positions, ...) read at each row's last kept position (the last one without a mask):
    what a decoder's head pools."""
    rows = torch.arange(states.shape[0], device=states.device)
    if attention_mask is None:
        return states[rows, states.shape[1] - 1]
    return states[rows, last_kept_positions(attention_mask)]


@cache
def causal_classes() -> tuple[type[BertConfig], type[BertForSequenceClassification]]:
    """``(CausalBertConfig, CausalBertForSequenceClassification)``, created and registered with the Auto classes on
    the first call (the same two class objects on every later call)."""
    # lazy third-party import: BERT's modeling code costs ~1.6 s at import (tests/test_architecture.py, LAZY_HEAVY)
    from transformers import AutoConfig, AutoModelForSequenceClassification, BertConfig, BertForSequenceClassification
    from transformers.modeling_outputs import SequenceClassifierOutput

    class CausalBertConfig(BertConfig):
        model_type = MODEL_TYPE

        def __init__(self, **kwargs):
            kwargs["is_decoder"] = True  # BertModel builds a causal mask for decoders
            kwargs.setdefault("add_cross_attention", False)
            super().__init__(**kwargs)

    class CausalBertForSequenceClassification(BertForSequenceClassification):
        config_class = CausalBertConfig

        def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                    inputs_embeds=None, labels=None, output_attentions=None, output_hidden_states=None,
                    return_dict=None, **kwargs):
            outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                position_ids=position_ids, inputs_embeds=inputs_embeds,
                                output_attentions=output_attentions, output_hidden_states=output_hidden_states,
                                return_dict=True, **kwargs)
            summary = at_last_kept(outputs.last_hidden_state, attention_mask)
            pooled = self.bert.pooler.activation(self.bert.pooler.dense(summary))
            logits = self.classifier(self.dropout(pooled))
            loss = None
            if labels is not None:
                loss = torch.nn.functional.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))
            return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states,
                                            attentions=outputs.attentions)

    classes = (CausalBertConfig, CausalBertForSequenceClassification)
    for cls in classes:  # importable by name (pickle, torch.save of a whole model): models.causal_bert.<name>
        cls.__module__, cls.__qualname__ = __name__, cls.__name__
    globals().update({cls.__name__: cls for cls in classes})
    AutoConfig.register(MODEL_TYPE, CausalBertConfig, exist_ok=True)
    AutoModelForSequenceClassification.register(CausalBertConfig, CausalBertForSequenceClassification, exist_ok=True)
    return classes


def __getattr__(name: str):
    """``from models.causal_bert import CausalBertConfig`` builds the classes then (PEP 562)."""
    if name in CLASS_NAMES:
        return dict(zip(CLASS_NAMES, causal_classes()))[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
