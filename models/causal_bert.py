"""A causal (decoder-style) BERT classifier: the same blocks under a causal attention mask, read at the last token.

The architecture axis of the offline zoo (issue 15; paper 003 compares encoders with decoders): MiniLM's
pretrained weights are kept and only the attention direction and the pooled token change, so a difference in the
explanations comes from causality, not from another pretraining. The head reads the last token the attention mask
keeps (found from the mask, never from a pad id, so the pad-token confound of paper 003's GPT-2 cannot occur; notes
003 section 6.3 item 1), through BERT's own pooler weights. Registered with the Auto classes (model type
``causal-bert``), so a saved folder loads like any classifier.
"""
from __future__ import annotations

import torch
from transformers import AutoConfig, AutoModelForSequenceClassification, BertConfig, BertForSequenceClassification
from transformers.modeling_outputs import SequenceClassifierOutput

MODEL_TYPE = "causal-bert"


class CausalBertConfig(BertConfig):
    model_type = MODEL_TYPE

    def __init__(self, **kwargs):
        kwargs["is_decoder"] = True  # BertModel builds a causal mask for decoders
        kwargs.setdefault("add_cross_attention", False)
        super().__init__(**kwargs)


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


class CausalBertForSequenceClassification(BertForSequenceClassification):
    config_class = CausalBertConfig

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None, inputs_embeds=None,
                labels=None, output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
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


AutoConfig.register(MODEL_TYPE, CausalBertConfig, exist_ok=True)
AutoModelForSequenceClassification.register(CausalBertConfig, CausalBertForSequenceClassification, exist_ok=True)
