"""The document twin's recipe on a tiny budget: a tiny source model in an isolated cache, fine-tuned on a few
known-feature-long documents; the manifest's accuracy checked against the saved twin read by the document reader."""
import json

import numpy as np

from corpora import load_dataset
from models import load_classifier
from models.document_twin import DocumentTwinRecipe, estimate, is_prepared, prepare_document_twin, twin_dir
from models.prepare import models_dir
from models.training import TrainConfig
from models.windows import encode_document


def test_tiny_budget_twin_is_cached_by_recipe_and_reads_as_its_manifest_says(keyword_classifier, isolated_cache):
    source = models_dir() / "tiny-source"
    keyword_classifier.model.save_pretrained(source)
    keyword_classifier.tokenizer.save_pretrained(source)
    (source / "manifest.json").write_text(json.dumps({"label_names": ["negative", "positive"]}))
    recipe = DocumentTwinRecipe(source="tiny-source", train_limit=6, eval_limit=5,
                                train=TrainConfig(epochs=1.0, lr=1e-3, batch_size=3, max_length=512, seed=0))
    assert recipe.key != DocumentTwinRecipe(source="other").key and not is_prepared(recipe)
    cost = estimate(recipe)
    read = [encode_document(keyword_classifier, e.text) for e in load_dataset("known-feature-long:train")[:6]]
    assert cost["window_tokens"] == 64 and cost["train_windows"] == sum(len(d.windows) for d in read)
    assert cost["seconds"] >= 0
    messages = []
    folder = prepare_document_twin(recipe, log=messages.append)
    assert folder == twin_dir(recipe) and is_prepared(recipe) and len(messages) == 2
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["training"]["steps"] == 2 and manifest["window_tokens"] == 64 and manifest["source"] == "tiny-source"
    # another way: the saved twin loaded as any classifier and read by the document reader (models/windows.py)
    twin = load_classifier(str(folder))
    held = load_dataset("known-feature-long:dev")[:5]
    predicted = [int(twin.logits_of(encode_document(twin, e.text)).argmax()) for e in held]
    assert manifest["accuracy"] == round(float(np.mean([p == e.label for p, e in zip(predicted, held)])), 4)
    assert prepare_document_twin(recipe, log=messages.append) == folder and len(messages) == 2  # cached
