"""the offline masked LM's second recipe (``mlm-plus``) and the choice of which one ``mlm`` stands for.

- adding recipe fields did not move the default recipe's folder (CI's prepared ``mlm`` stays found): its key equals
  the hash of the fields it had before, computed here by hand;
- ``EXWB_MLM`` picks the recipe behind the name ``mlm`` (mlm, mlm-plus, best); a missing one says how to build it;
- a tiny recipe with ``train_embeddings`` trains the word embeddings (the tied decoder) too.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest
import torch
from transformers import BertForMaskedLM

from models.errors import ModelError
from models.mlm import PLUS_RECIPE, RECIPE, RECIPES, MaskedLMNotPrepared, mlm_folder, prepare_mlm
from models.mlm.loading import offline_recipe
from models.mlm.prepare import build_model
from models.prepare import base_version

NEW_FIELDS = ("train_embeddings", "continue_from", "masking", "checkpoint_every")  # added with mlm-plus / mlm-long


def test_the_default_recipe_keeps_its_folder():
    fields = {k: v for k, v in dataclasses.asdict(RECIPE).items() if k not in NEW_FIELDS}
    payload = json.dumps({**fields, "base": base_version()}, sort_keys=True, default=str)
    assert RECIPE.key == hashlib.sha256(payload.encode()).hexdigest()[:10]
    assert PLUS_RECIPE.key != RECIPE.key and set(RECIPES) == {"mlm", "mlm-plus", "mlm-long"}
    # the recipe mlm-plus continues from is part of its identity: another start is another model
    other_start = dataclasses.replace(PLUS_RECIPE, continue_from="mlm-plus")
    assert other_start.key != PLUS_RECIPE.key


def test_exwb_mlm_picks_the_recipe_behind_the_name_mlm(isolated_cache, monkeypatch):
    monkeypatch.delenv("EXWB_MLM", raising=False)
    assert offline_recipe() is RECIPE
    monkeypatch.setenv("EXWB_MLM", "best")
    assert offline_recipe() is RECIPE  # mlm-plus is not prepared in this cache
    plus = mlm_folder(PLUS_RECIPE)
    plus.mkdir(parents=True)
    (plus / "manifest.json").write_text(json.dumps({"name": "mlm-plus"}))
    assert offline_recipe() is PLUS_RECIPE  # best = mlm-plus once it is prepared
    monkeypatch.setenv("EXWB_MLM", "mlm")
    assert offline_recipe() is RECIPE
    monkeypatch.setenv("EXWB_MLM", "bert")
    with pytest.raises(ModelError, match="EXWB_MLM is 'bert'; use one of mlm, mlm-plus, mlm-long, best"):
        offline_recipe()
    monkeypatch.setenv("EXWB_MLM", "mlm-plus")
    assert "prepare-mlm --recipe mlm-plus" in str(MaskedLMNotPrepared())


def test_mlm_plus_needs_mlm_first(isolated_cache):
    with pytest.raises(ModelError, match="build that first with `python cli.py prepare-mlm --recipe mlm`"):
        prepare_mlm(PLUS_RECIPE, log=lambda message: None)


@pytest.mark.slow
def test_a_tiny_recipe_with_train_embeddings_trains_the_tied_decoder(isolated_cache):
    recipe = dataclasses.replace(RECIPE, name="tiny", steps=2, batch_size=4, train_limit=40, eval_limit=2,
                                 trainable_layers=1, train_embeddings=True, eval_data=("sst2:dev",))
    base, _ = build_model(trainable_layers=1, seed=0)
    folder = prepare_mlm(recipe, log=lambda message: None)
    trained = BertForMaskedLM.from_pretrained(folder)
    embeddings = trained.get_input_embeddings().weight
    assert trained.cls.predictions.decoder.weight.data_ptr() == embeddings.data_ptr()  # still tied
    assert not torch.equal(embeddings, base.get_input_embeddings().weight)  # the embeddings moved
    frozen = "bert.encoder.layer.0.attention.self.query.weight"  # below the one trainable block
    torch.testing.assert_close(trained.state_dict()[frozen], base.state_dict()[frozen], rtol=0, atol=0)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["training"]["cpu_seconds"] > 0 and manifest["continued_from"] is None
