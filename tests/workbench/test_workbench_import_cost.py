"""What ``import workbench`` defers (its import time, docs/benchmarks.md): Captum, scipy.stats, scikit-learn, BERT's modeling code
(transformers.modeling_utils, with sympy and torch.distributed's tensor code) and torch._dynamo (via
transformers.masking_utils) are loaded on first use, not at import; what needed them still works from a fresh
interpreter: a saved causal-bert folder loads (its classes are registered on first use), a causal model pickles
by name, and an explanation runs Captum. Structural checks in fresh interpreters, no timings."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT
from tiny_models import VOCAB, tiny_tokenizer

from models.causal_bert import CausalBertConfig, CausalBertForSequenceClassification, causal_classes

DEFERRED = ("captum", "transformers.modeling_utils", "transformers.masking_utils", "torch._dynamo", "sympy", "scipy.stats",
            "sklearn")
TEXT = "a good film with a bad end"


def fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter with the checkout on the path; its last printed line, as JSON."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def tiny_causal_folder(folder):
    torch.manual_seed(0)
    config = CausalBertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=64, num_labels=2,
                              attn_implementation="eager")
    model = CausalBertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return model


@pytest.mark.slow  # a fresh interpreter per test: seconds each
def test_importing_the_face_loads_none_of_the_deferred_modules():
    seen = fresh("import json, sys, workbench\n"
                 f"print(json.dumps([m for m in {DEFERRED!r} if m in sys.modules]))")
    assert seen == []


@pytest.mark.slow  # a fresh interpreter per test: seconds each
def test_a_saved_causal_classifier_loads_from_a_fresh_interpreter_with_the_same_logits(tmp_path):
    model = tiny_causal_folder(tmp_path / "causal")
    batch = tiny_tokenizer()([TEXT], return_tensors="pt")
    with torch.no_grad():
        expected = model(**batch).logits[0].tolist()
    seen = fresh("import json, sys, torch, workbench\n"
                 f"classifier = workbench.load_model({str(tmp_path / 'causal')!r})\n"
                 f"batch = classifier.tokenizer([{TEXT!r}], return_tensors='pt')\n"
                 "with torch.no_grad():\n"
                 "    logits = classifier.model(**batch).logits[0].tolist()\n"
                 "print(json.dumps({'type': type(classifier.model).__qualname__, 'logits': logits,\n"
                 "                  'module': type(classifier.model).__module__}))")
    assert seen["type"] == "CausalBertForSequenceClassification" and seen["module"] == "models.causal_bert"
    # the same weights and forward; the two processes may use different thread counts (float summation order)
    np.testing.assert_allclose(seen["logits"], expected, rtol=1e-5, atol=1e-7)


@pytest.mark.slow  # a fresh interpreter per test: seconds each
def test_the_causal_classes_are_built_once_and_pickle_by_name(tmp_path):
    assert causal_classes() == (CausalBertConfig, CausalBertForSequenceClassification) == causal_classes()
    model = tiny_causal_folder(tmp_path / "causal")
    copy = pickle.loads(pickle.dumps(model))
    assert type(copy) is CausalBertForSequenceClassification
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), copy.state_dict().values()))
    (tmp_path / "model.pickle").write_bytes(pickle.dumps(model.config))
    seen = fresh(f"import json, pickle\nconfig = pickle.loads(open({str(tmp_path / 'model.pickle')!r}, 'rb').read())\n"
                 "print(json.dumps([type(config).__module__, type(config).__qualname__, config.is_decoder]))")
    assert seen == ["models.causal_bert", "CausalBertConfig", True]  # unpickled where the classes were not built
