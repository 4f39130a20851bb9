"""the longer masked-LM recipe (``mlm-long``) and what makes it affordable and resumable:

- the loss computed at the target positions only equals ``BertForMaskedLM``'s own loss over every position (value
  and gradients), so the saving changes nothing but the cost;
- BERT's 15 % 80/10/10 masking over whole words, counted over many sentences;
- a run stopped half-way and resumed from its checkpoint ends with the same weights as the run never stopped;
- the recipe is registered and ``EXWB_MLM`` (mlm-long, best) picks it;
- ``prepare_mlm`` stopped keeps the checkpoint and says how to resume; run again, it finishes from there.
"""
from __future__ import annotations

import dataclasses
import json
import random

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from models.errors import ModelError
from models.mlm import RECIPE, RECIPES, find_prepared_mlm, mlm_folder, prepare_mlm, read_mlm_manifest
from models.mlm.checkpoints import load_checkpoint
from models.mlm.loading import CHOICES, offline_recipe
from models.mlm.prepare import _collate, _Masker, masked_lm_loss, train_mlm
from models.mlm.recipe import LONG_RECIPE, checkpoint_folder
from tests.tiny_models import FILLER, VOCAB, tiny_tokenizer


def _tiny_masked_lm(dropout: float = 0.1) -> BertForMaskedLM:
    torch.manual_seed(5)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    return BertForMaskedLM(config)


def _sentences(n: int, seed: int = 0, shortest: int = 4, longest: int = 12) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(FILLER) for _ in range(rng.randint(shortest, longest))) for _ in range(n)]


def test_the_loss_at_target_positions_equals_the_loss_over_every_position():
    model = _tiny_masked_lm(dropout=0.0).train()
    tokenizer = tiny_tokenizer()
    masker = _Masker(tokenizer, dataclasses.replace(LONG_RECIPE, max_length=64))
    rng = random.Random(1)
    items = [item for item in (masker.example(s, rng) for s in _sentences(12)) if item is not None]
    ids, attention, labels = _collate(items, tokenizer.pad_token_id, "cpu")
    assert 0 < int((labels >= 0).sum()) < int(attention.sum())  # some positions are targets, not all

    ours = masked_lm_loss(model, ids, attention, labels)
    ours.backward()
    ours_grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    theirs = model(input_ids=ids, attention_mask=attention, labels=labels).loss  # projects every position
    theirs.backward()
    torch.testing.assert_close(ours, theirs)
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            torch.testing.assert_close(ours_grads[name], parameter.grad, msg=name)


def test_bert_masking_chooses_15_percent_of_the_words_and_splits_them_80_10_10():
    tokenizer = tiny_tokenizer()
    masker = _Masker(tokenizer, dataclasses.replace(LONG_RECIPE, max_length=64))
    rng = random.Random(0)
    words = masks = randoms = kept = 0
    for sentence in _sentences(2000, shortest=30, longest=40):
        ids, labels = masker.example(sentence, rng)
        original = [tokenizer.cls_token_id] + tokenizer(sentence, add_special_tokens=False)["input_ids"]
        words += len(original) - 1
        for position, label in enumerate(labels):
            if label < 0:
                continue
            assert label == original[position]  # the target is the word that was there
            masks += ids[position] == tokenizer.mask_token_id
            kept += ids[position] == label
            randoms += ids[position] not in (label, tokenizer.mask_token_id)
    chosen = masks + randoms + kept
    # every sentence has at least one target: a little over 15 % (P(no word chosen) < 1 % at 30 words)
    assert 0.145 <= chosen / words <= 0.16
    assert masks / chosen == pytest.approx(0.8, abs=0.02)
    # a random word can be the word itself (a 1-in-vocabulary chance), so "kept" holds a little of the 10 %
    assert randoms / chosen == pytest.approx(0.1, abs=0.02) and kept / chosen == pytest.approx(0.1, abs=0.02)


def test_a_stopped_run_resumes_from_its_checkpoint_to_the_same_weights(tmp_path):
    tokenizer = tiny_tokenizer()
    recipe = dataclasses.replace(LONG_RECIPE, continue_from="", steps=6, batch_size=4, trainable_layers=2,
                                 checkpoint_every=2, max_length=64)
    sentences = _sentences(40)
    straight = _tiny_masked_lm()
    whole = train_mlm(straight, tokenizer, sentences, recipe, device="cpu", checkpoint=tmp_path / "straight")
    assert whole["steps"] == 6 and whole["resumed_from_step"] == 0

    reached = {"step": 0}

    def progress(step, total, info):
        reached["step"] = step

    folder = tmp_path / "stopped"
    first = train_mlm(_tiny_masked_lm(), tokenizer, sentences, recipe, device="cpu", checkpoint=folder,
                      progress=progress, should_stop=lambda: reached["step"] >= 3)
    assert first["stopped"] and first["steps"] == 3 and load_checkpoint(folder)["step"] == 3
    resumed_model = _tiny_masked_lm()  # a fresh start: everything comes from the checkpoint
    resumed = train_mlm(resumed_model, tokenizer, sentences, recipe, device="cpu", checkpoint=folder)
    assert resumed["resumed_from_step"] == 3 and resumed["steps"] == 6 and not resumed["stopped"]
    assert resumed["cpu_seconds"] >= first["cpu_seconds"]  # the CPU time counts both parts
    trained = straight.state_dict()
    assert not torch.equal(trained["bert.encoder.layer.0.attention.self.query.weight"],
                           _tiny_masked_lm().state_dict()["bert.encoder.layer.0.attention.self.query.weight"])
    for name, value in resumed_model.state_dict().items():
        torch.testing.assert_close(value, trained[name], rtol=0, atol=0, msg=name)


def test_mlm_long_is_registered_and_selectable(isolated_cache, monkeypatch):
    assert RECIPES["mlm-long"] is LONG_RECIPE and "mlm-long" in CHOICES
    assert LONG_RECIPE.continue_from == "mlm" and LONG_RECIPE.masking == "bert-15" and LONG_RECIPE.train_embeddings
    assert len({r.key for r in RECIPES.values()}) == 3
    assert checkpoint_folder(LONG_RECIPE).name == mlm_folder(LONG_RECIPE).name + ".checkpoint"
    monkeypatch.setenv("EXWB_MLM", "mlm-long")
    assert offline_recipe() is LONG_RECIPE
    monkeypatch.setenv("EXWB_MLM", "best")
    assert offline_recipe() is RECIPE  # nothing better is prepared in this cache
    for recipe in (RECIPES["mlm-plus"], LONG_RECIPE):  # best = the longest-trained one that is prepared
        folder = mlm_folder(recipe)
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(json.dumps({"name": recipe.name}))
    assert offline_recipe() is LONG_RECIPE


@pytest.mark.slow
def test_prepare_mlm_stopped_keeps_its_checkpoint_and_the_same_command_finishes(isolated_cache):
    """The bundled MiniLM, a few steps: a stop leaves a checkpoint and says how to resume; the next run resumes
    from it, saves the model and removes the checkpoint."""
    recipe = dataclasses.replace(LONG_RECIPE, name="tiny-long", continue_from="", steps=3, batch_size=4,
                                 train_limit=40, eval_limit=2, trainable_layers=1, checkpoint_every=1,
                                 eval_data=("sst2:dev",))
    calls = {"n": 0}

    def stop_after_one_step() -> bool:
        calls["n"] += 1
        return calls["n"] > 1

    with pytest.raises(ModelError, match="stopped at step 1 of 3; .* run the same command again to resume"):
        prepare_mlm(recipe, should_stop=stop_after_one_step, log=lambda message: None)
    assert load_checkpoint(checkpoint_folder(recipe))["step"] == 1 and find_prepared_mlm(recipe) is None
    folder = prepare_mlm(recipe, log=lambda message: None)
    training = read_mlm_manifest(folder)["training"]
    assert training["resumed_from_step"] == 1 and training["steps"] == 3
    assert not checkpoint_folder(recipe).exists()
