"""What the known-feature-long tests share: the tiny keyword model saved where the default model's short
known-feature twin lives (an isolated cache), and the tiny budget of the document twin's recipe."""
from __future__ import annotations

import json

TINY_BUDGET = "train_limit=4,eval_limit=2"  # a few steps of the tiny model: the flow, not the recipe


def save_short_twin(classifier) -> None:
    """The tiny keyword model stands in for the default model's short known-feature twin."""
    from evaluation.faithfulness.known_feature import RECIPE, model_dir

    short = model_dir(RECIPE)
    classifier.model.save_pretrained(short)
    classifier.tokenizer.save_pretrained(short)
    (short / "manifest.json").write_text(json.dumps({"accuracy": 1.0, "train_examples": 400,
                                                     "label_names": ["negative", "positive"]}))
