"""The MLM-fill operator of the metrics uses the masked-LM loader's one cache: a re-prepared masked LM is picked up
after ``clear_loaded()`` (it used to stay hidden behind a second cache in the metrics until a restart)."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from tiny_models import VOCAB, tiny_tokenizer
from transformers import BertConfig, BertForMaskedLM

from evaluation.faithfulness import mlm_filler
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from models.mlm import MaskedLMFiller, clear_loaded, mlm_folder
from models.prepare import file_sha256

METRIC = BY_ID["deletion-bert-auc"]


def install_mlm(favourite: str, seed: int) -> BertForMaskedLM:
    """A tiny masked LM whose top-1 word is always ``favourite``, saved where ``load_filler('mlm')`` looks."""
    torch.manual_seed(seed)
    model = BertForMaskedLM(BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)).eval()
    with torch.no_grad():
        model.cls.predictions.bias[VOCAB.index(favourite)] = 40.0
    folder = mlm_folder()
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    manifest = {"name": "mlm", "stand_in": True, "weights_sha256": file_sha256(folder / "model.safetensors")}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return model


def test_a_re_prepared_masked_lm_reaches_the_metric_after_clear_loaded(keyword_classifier, isolated_cache):
    encoding = keyword_classifier.encode("the movie was excellent and long")
    scores = [0.1, 0.0, 0.2, 1.0, 0.0, 0.3]  # "excellent" first
    clear_loaded()
    install_mlm("excellent", seed=1)  # refills the keyword: the prediction stays positive
    first = evaluate_scores(keyword_classifier, encoding, [METRIC], scores, RemovalOptions())
    first_fingerprint = mlm_filler.load_filler().fingerprint

    replacement = install_mlm("dull", seed=2)  # a new masked LM in the same folder
    clear_loaded()
    second = evaluate_scores(keyword_classifier, encoding, [METRIC], scores, RemovalOptions())
    assert mlm_filler.load_filler().fingerprint != first_fingerprint
    direct = MaskedLMFiller(replacement, tiny_tokenizer(), name="direct", device="cpu")
    expected = evaluate_scores(keyword_classifier, encoding, [METRIC], scores, RemovalOptions(),
                               filler_options={"filler": direct})
    assert second.values[METRIC.id] == pytest.approx(expected.values[METRIC.id], rel=1e-9)
    # the two masked LMs fill differently, so a stale filler would have given the first value
    assert abs(second.values[METRIC.id] - first.values[METRIC.id]) > 0.05
    clear_loaded()
