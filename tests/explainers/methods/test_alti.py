"""ALTI (Ferrando et al. 2022) against its formula computed by hand on a tiny one-layer BERT: attention weights,
value vectors, output projection, residual and the LayerNorm decomposition written out from the weights (no hooks),
then Eq. 9-10; and the method's scores against the rolled-out row of [CLS] on two layers."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification

from explainers import create
from explainers.methods.alti import alti_matrices
from models import ModelError, TextClassifier

TEXT = "the movie was excellent and the music was long"


def wide_bert(layers: int, seed: int = 4) -> TextClassifier:
    from tiny_models import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, initializer_range=0.2, num_labels=3)
    return TextClassifier(BertForSequenceClassification(config).eval(), tokenizer, name=f"alti-bert-{layers}",
                          device="cpu", source="tests")


def by_hand(classifier, encoding) -> np.ndarray:
    """Ferrando et al. section 3 for layer 0, from the weights: T_i(x_j) = LN-part(sum_h A^h_ij W_O^h v^h_j + [i=j] x_i)."""
    bert = classifier.model.bert
    ids = torch.tensor([encoding.input_ids])
    with torch.no_grad():
        x = bert.embeddings(input_ids=ids, token_type_ids=torch.tensor([encoding.token_type_ids]))[0].double()
        attention = bert.encoder.layer[0].attention
        q = x @ attention.self.query.weight.double().T + attention.self.query.bias.double()
        k = x @ attention.self.key.weight.double().T + attention.self.key.bias.double()
        v = x @ attention.self.value.weight.double().T + attention.self.value.bias.double()
        heads, size = 2, 16
        w_o = attention.output.dense.weight.double()  # (H, H): out = context @ w_o.T + b
        n, hidden = x.shape
        sent = torch.zeros(n, n, hidden, dtype=torch.float64)  # [i, j]
        for h in range(heads):
            part = slice(h * size, (h + 1) * size)
            a = torch.softmax(q[:, part] @ k[:, part].T / size ** 0.5, dim=-1)  # (i, j)
            projected = v[:, part] @ w_o[:, part].T  # (j, H): W_O^h v^h_j
            sent += a[:, :, None] * projected[None, :, :]
        u = sent + torch.eye(n, dtype=torch.float64)[:, :, None] * x[None, :, :]
        total = u.sum(dim=1) + attention.output.dense.bias.double()
        norm = attention.output.LayerNorm
        sigma = torch.sqrt(total.var(dim=-1, unbiased=False, keepdim=True) + norm.eps)
        transformed = norm.weight.double() * (u - u.mean(dim=-1, keepdim=True)) / sigma[:, None, :]
        y = transformed.sum(dim=1)
        c = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                c[i, j] = max(0.0, float(y[i].abs().sum() - (y[i] - transformed[i, j]).abs().sum()))
    return c / c.sum(axis=1, keepdims=True)


def test_alti_equals_its_formula_on_a_one_layer_model():
    classifier = wide_bert(layers=1)
    encoding = classifier.encode(TEXT)
    expected = by_hand(classifier, encoding)
    matrices, error = alti_matrices(classifier, encoding, rows_per_batch=3)  # several batches
    assert error < 1e-4  # the decomposition adds up to the model's own LayerNorm output
    assert matrices.shape == (1, encoding.n_tokens, encoding.n_tokens)
    assert np.abs(expected - np.eye(len(expected)) * expected).max() > 1e-2  # tokens mix: not a vacuous check
    np.testing.assert_allclose(matrices[0], expected, rtol=1e-4, atol=1e-6)


def test_alti_scores_are_the_rolled_out_row_of_cls():
    classifier = wide_bert(layers=2)
    encoding = classifier.encode(TEXT)
    matrices, _ = alti_matrices(classifier, encoding)
    explanation = create("alti").explain(classifier, encoding)
    np.testing.assert_allclose(explanation.token_scores, (matrices[1] @ matrices[0])[0], rtol=1e-6, atol=1e-9)
    last = create("alti", aggregation="last-layer").explain(classifier, encoding)
    np.testing.assert_allclose(last.token_scores, matrices[1][0], rtol=1e-6, atol=1e-9)
    assert explanation.token_scores.sum() == pytest.approx(1.0)
    assert not explanation.signed


def test_a_post_attention_norm_without_bias_is_refused_with_a_message():
    """torch's LayerNorm(bias=False) has a ``bias`` attribute that is None: ALTI's decomposition needs the bias, so
    the model gets ALTI's message, not an AttributeError from inside the decomposition."""
    classifier = wide_bert(layers=1)
    layer = classifier.model.bert.encoder.layer[0]
    trained = layer.attention.output.LayerNorm
    norm = torch.nn.LayerNorm(32, eps=trained.eps, bias=False)
    with torch.no_grad():
        norm.weight.copy_(trained.weight)
    layer.attention.output.LayerNorm = norm
    assert norm.bias is None and hasattr(norm, "bias")  # what the old attribute check let through
    with pytest.raises(ModelError, match="is not a LayerNorm with weight, bias and eps"):
        create("alti").explain(classifier, classifier.encode(TEXT))
