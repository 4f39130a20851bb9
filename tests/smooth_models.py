"""Tiny classifiers whose outputs depend smoothly on their input (for value checks).

``smooth_classifier``: a tiny random BERT that reacts smoothly and clearly to every word. The untrained
``random_classifier`` barely reacts to its input (f(x) - f(baseline) ~ 1e-5) and the trained
``keyword_classifier`` is saturated (a near step function of the keyword); exact-value tests of gradient
and perturbation methods need a model in between: random weights drawn with std 0.3.

``smooth_keyword_classifier``: the keyword task (positive iff "excellent" appears) decided by a linear head on
the sum of the word embeddings, so the positive logit grows linearly with how much of the keyword's embedding
is present. Mask-learning methods (MaRC, AML) that interpolate embeddings see a gradient at every mask value,
where the trained keyword model is flat on both sides of a step.
"""
from __future__ import annotations

import torch
from tiny_models import KEYWORD, VOCAB, tiny_bert, tiny_tokenizer
from torch import nn
from transformers import PretrainedConfig
from transformers.modeling_outputs import BaseModelOutput, SequenceClassifierOutput

from models import TextClassifier


def smooth_classifier(seed: int = 1, std: float = 0.3, num_labels: int = 2) -> TextClassifier:
    model = tiny_bert(num_labels=num_labels, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * std)
    return TextClassifier(model, tiny_tokenizer(), name=f"tiny-smooth-{seed}", device="cpu",
                          source="tests/smooth_models.py")


class BagOfEmbeddings(nn.Module):
    """A backbone that returns its word embeddings as hidden states (no context): what AML's G starts from."""

    def __init__(self, config: PretrainedConfig, embeddings: torch.Tensor):
        super().__init__()
        self.config = config
        self.embeddings = nn.Embedding.from_pretrained(embeddings, freeze=False)

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, **_) -> BaseModelOutput:
        hidden = inputs_embeds if inputs_embeds is not None else self.embeddings(input_ids)
        return BaseModelOutput(last_hidden_state=hidden)


class SmoothKeywordModel(nn.Module):
    """logit(positive) - logit(negative) = strength * (keyword amount - 1/2): a linear head on the summed embeddings,
    where only the keyword's embedding has a component along the head's direction (coordinate 0)."""

    def __init__(self, strength: float = 8.0, hidden: int = 16, seed: int = 0):
        super().__init__()
        self.config = PretrainedConfig(num_labels=2, hidden_size=hidden, max_position_embeddings=64,
                                       id2label={0: "negative", 1: "positive"},
                                       label2id={"negative": 0, "positive": 1})
        embeddings = torch.randn(len(VOCAB), hidden, generator=torch.Generator().manual_seed(seed))
        embeddings[:, 0] = 0.0
        embeddings[VOCAB.index(KEYWORD), 0] = 1.0
        self.base_model = BagOfEmbeddings(self.config, embeddings)
        self.classifier = nn.Linear(hidden, 2)
        with torch.no_grad():
            self.classifier.weight.zero_()
            self.classifier.weight[1, 0] = strength
            self.classifier.bias.copy_(torch.tensor([0.0, -strength / 2]))

    def get_input_embeddings(self) -> nn.Embedding:
        return self.base_model.get_input_embeddings()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, **_) -> SequenceClassifierOutput:
        hidden = self.base_model(input_ids, attention_mask, inputs_embeds).last_hidden_state
        if attention_mask is not None:
            hidden = hidden * attention_mask.unsqueeze(-1).to(hidden.dtype)
        return SequenceClassifierOutput(logits=self.classifier(hidden.sum(dim=1)))


def smooth_keyword_classifier(strength: float = 8.0, seed: int = 0) -> TextClassifier:
    """The keyword task with a smooth decision: p(positive) = sigmoid(strength * (keyword amount - 1/2))."""
    return TextClassifier(SmoothKeywordModel(strength, seed=seed).eval(), tiny_tokenizer(),
                          name=f"tiny-smooth-keyword-{seed}", device="cpu", source="tests/smooth_models.py")
